package templates

import (
	"fmt"
	"math"
	"math/rand"
	"testing"
)

// miscResizeRef follows the ONNX reference implementation's structure:
// N-D interpolation as nested 1-D interpolations, neighbours chosen so
// that the ratio lies in (0, 1], edge padding, coefficient renormalising
// for exclude_outside.
type miscResizeRefCfg struct {
	mode, coord, nearest string
	a                    float64
	exclude              bool
	extrap               float64
	scales               []float64
	outW                 []float64
	roi                  []float64
	antialias            bool  // Resize-18
	outInt               []int // output sizes, for half_pixel_symmetric
}

func miscRef1D(c *miscResizeRefCfg, data []float64, axis int, x float64) float64 {
	inW := float64(len(data))
	scale, outW := c.scales[axis], c.outW[axis]
	var xo float64
	switch c.coord {
	case "align_corners":
		if outW == 1 {
			xo = 0
		} else {
			xo = x * (inW - 1) / (outW - 1)
		}
	case "asymmetric":
		xo = x / scale
	case "tf_crop_and_resize":
		r0, r1 := c.roi[axis], c.roi[len(c.scales)+axis]
		if outW == 1 {
			xo = (r1 - r0) * (inW - 1) / 2
		} else {
			xo = x * (r1 - r0) * (inW - 1) / (outW - 1)
		}
		xo += r0 * (inW - 1)
		if xo < 0 || xo > inW-1 {
			return c.extrap
		}
	case "pytorch_half_pixel":
		if outW == 1 {
			xo = 0
		} else {
			xo = (x+0.5)/scale - 0.5
		}
	case "half_pixel":
		xo = (x+0.5)/scale - 0.5
	case "tf_half_pixel_for_nn":
		xo = (x + 0.5) / scale
	case "half_pixel_symmetric":
		adj := float64(c.outInt[axis]) / outW
		xo = inW/2*(1-adj) + (x+0.5)/scale - 0.5
	}
	xi := math.Floor(xo)
	ratio := xo - xi
	if ratio == 0 {
		ratio = 1
	}
	var coeffs []float64
	switch c.mode {
	case "nearest":
		switch {
		case ratio == 1:
			coeffs = []float64{0, 1}
		case c.nearest == "round_prefer_floor":
			coeffs = []float64{b2f(ratio <= 0.5), b2f(ratio > 0.5)}
		case c.nearest == "round_prefer_ceil":
			coeffs = []float64{b2f(ratio < 0.5), b2f(ratio >= 0.5)}
		case c.nearest == "floor":
			coeffs = []float64{1, 0}
		case c.nearest == "ceil":
			coeffs = []float64{0, 1}
		}
	case "linear", "cubic":
		if !c.antialias {
			break
		}
		// The filter stretched by 1/scale when shrinking, taps at
		// i - ratio for i in [start, 2-start), normalised.
		sc := min(scale, 1)
		support := 1.0
		if c.mode == "cubic" {
			support = 2
		}
		start := int(math.Floor(-support/sc)) + 1
		sum := 0.0
		for i := start; i < 2-start; i++ {
			u := math.Abs(sc * (float64(i) - ratio))
			var v float64
			if c.mode == "linear" {
				v = math.Max(0, 1-u)
			} else {
				A := c.a
				switch {
				case u <= 1:
					v = (A+2)*u*u*u - (A+3)*u*u + 1
				case u < 2:
					v = A*u*u*u - 5*A*u*u + 8*A*u - 4*A
				}
			}
			coeffs = append(coeffs, v)
			sum += v
		}
		for i := range coeffs {
			coeffs[i] /= sum
		}
	}
	switch {
	case coeffs != nil:
	case c.mode == "linear":
		coeffs = []float64{1 - ratio, ratio}
	case c.mode == "cubic":
		A := c.a
		coeffs = []float64{
			((A*(ratio+1)-5*A)*(ratio+1)+8*A)*(ratio+1) - 4*A,
			((A+2)*ratio-(A+3))*ratio*ratio + 1,
			((A+2)*(1-ratio)-(A+3))*(1-ratio)*(1-ratio) + 1,
			((A*((1-ratio)+1)-5*A)*((1-ratio)+1)+8*A)*((1-ratio)+1) - 4*A,
		}
	}
	nb := len(coeffs)
	var first int // ratio in (0,1]: neighbours lean left
	if ratio == 1 {
		first = int(xo) - nb/2
	} else {
		first = int(xi) - nb/2 + 1
	}
	if c.exclude {
		sum := 0.0
		for k := range coeffs {
			if i := first + k; i < 0 || i >= len(data) {
				coeffs[k] = 0
			}
			sum += coeffs[k]
		}
		for k := range coeffs {
			coeffs[k] /= sum
		}
	}
	v := 0.0
	for k, cf := range coeffs {
		i := min(max(first+k, 0), len(data)-1)
		v += cf * data[i]
	}
	return v
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// miscRefND interpolates data (shape) at output coordinate x.
func miscRefND(c *miscResizeRefCfg, data []float64, shape []int, axis int, x []int) float64 {
	if len(shape) == 1 {
		return miscRef1D(c, data, axis, float64(x[0]))
	}
	inner := len(data) / shape[0]
	row := make([]float64, shape[0])
	for i := range row {
		row[i] = miscRefND(c, data[i*inner:(i+1)*inner], shape[1:], axis+1, x[1:])
	}
	return miscRef1D(c, row, axis, float64(x[0]))
}

func TestResize(t *testing.T) {
	type tc struct {
		op      string
		version int
		shape   []int
		scales  []float64 // nil: sizes
		sizes   []int64
		attrs   Attrs
		roi     []float64
	}
	cases := []tc{
		{"Resize", 13, []int{1, 2, 5, 7}, []float64{1, 1, 2.5, 1.7}, nil, Attrs{"mode": "nearest"}, nil},
		{"Resize", 13, []int{2, 3, 7}, []float64{1, 1, 0.6}, nil, Attrs{"mode": "nearest", "nearest_mode": "ceil", "coordinate_transformation_mode": "asymmetric"}, nil},
		{"Resize", 11, []int{1, 1, 6, 5}, nil, []int64{1, 1, 11, 3}, Attrs{"mode": "nearest", "nearest_mode": "floor", "coordinate_transformation_mode": "align_corners"}, nil},
		{"Resize", 13, []int{1, 1, 4, 5}, nil, []int64{1, 1, 9, 7}, Attrs{"mode": "nearest", "nearest_mode": "round_prefer_ceil", "coordinate_transformation_mode": "tf_half_pixel_for_nn"}, nil},
		{"Resize", 13, []int{1, 2, 5, 7}, []float64{1, 1, 2.5, 1.7}, nil, Attrs{"mode": "linear"}, nil},
		{"Resize", 13, []int{1, 1, 6, 9}, []float64{1, 1, 0.6, 0.45}, nil, Attrs{"mode": "linear", "coordinate_transformation_mode": "align_corners"}, nil},
		{"Resize", 13, []int{3, 5, 4}, nil, []int64{3, 1, 7}, Attrs{"mode": "linear", "coordinate_transformation_mode": "pytorch_half_pixel"}, nil},
		{"Resize", 13, []int{2, 3, 4, 5}, nil, []int64{3, 2, 5, 4}, Attrs{"mode": "linear", "coordinate_transformation_mode": "asymmetric"}, nil},
		{"Resize", 13, []int{1, 1, 5, 6}, []float64{1, 1, 1.8, 2.3}, nil, Attrs{"mode": "cubic"}, nil},
		{"Resize", 13, []int{1, 1, 7, 6}, []float64{1, 1, 0.7, 0.5}, nil, Attrs{"mode": "cubic", "cubic_coeff_a": float32(-0.5), "exclude_outside": int64(1)}, nil},
		{"Resize", 11, []int{1, 2, 5, 4}, nil, []int64{1, 2, 8, 9}, Attrs{"mode": "cubic", "coordinate_transformation_mode": "align_corners"}, nil},
		{"Resize", 13, []int{1, 1, 6, 5}, []float64{1, 1, 1.5, 2}, nil, Attrs{"mode": "cubic", "coordinate_transformation_mode": "asymmetric"}, nil},
		{"Resize", 13, []int{1, 1, 7, 8}, nil, []int64{1, 1, 4, 5}, Attrs{"mode": "linear", "coordinate_transformation_mode": "tf_crop_and_resize", "extrapolation_value": float32(2.5)},
			[]float64{0, 0, -0.2, 0.4, 1, 1, 0.7, 1.3}},
		{"Resize", 13, []int{1, 1, 5, 6}, nil, []int64{1, 1, 3, 1}, Attrs{"mode": "nearest", "coordinate_transformation_mode": "tf_crop_and_resize"},
			[]float64{0, 0, 0.2, 0.3, 1, 1, 0.9, 0.8}},
		{"Resize", 13, []int{1, 1, 5, 6}, nil, []int64{1, 1, 4, 4}, Attrs{"mode": "cubic", "coordinate_transformation_mode": "tf_crop_and_resize"},
			[]float64{0, 0, 0.1, 0.3, 1, 1, 0.9, 0.8}},
		{"Resize", 10, []int{1, 2, 5, 7}, []float64{1, 1, 2, 3}, nil, Attrs{"mode": "nearest"}, nil},
		{"Resize", 10, []int{1, 2, 5, 7}, []float64{1, 1, 0.6, 1.5}, nil, Attrs{"mode": "linear"}, nil},
		{"Upsample", 9, []int{1, 2, 3, 4}, []float64{1, 1, 2, 3}, nil, Attrs{"mode": "nearest"}, nil},
		{"Upsample", 7, []int{2, 3, 4}, []float64{1, 2, 2.5}, nil, Attrs{"mode": "linear"}, nil},
		// Channels last (the layout pass's NHWC Resize): H and W resized,
		// odd and vector-sized channel counts, every mode.
		{"Resize", 13, []int{1, 5, 7, 13}, []float64{1, 2, 2, 1}, nil, Attrs{"mode": "nearest"}, nil},
		{"Resize", 13, []int{2, 6, 5, 9}, []float64{1, 1.7, 0.6, 1}, nil, Attrs{"mode": "nearest", "nearest_mode": "floor", "coordinate_transformation_mode": "asymmetric"}, nil},
		{"Resize", 13, []int{1, 7, 6, 17}, []float64{1, 2, 2, 1}, nil, Attrs{"mode": "linear"}, nil},
		{"Resize", 13, []int{1, 5, 6, 24}, nil, []int64{1, 9, 13, 24}, Attrs{"mode": "linear", "coordinate_transformation_mode": "align_corners"}, nil},
		{"Resize", 13, []int{2, 4, 7, 11}, []float64{1, 0.6, 2.3, 1}, nil, Attrs{"mode": "linear", "coordinate_transformation_mode": "pytorch_half_pixel"}, nil},
		{"Resize", 13, []int{1, 6, 5, 19}, []float64{1, 1.5, 2, 1}, nil, Attrs{"mode": "cubic"}, nil},
		{"Resize", 13, []int{1, 7, 6, 8}, []float64{1, 0.7, 0.5, 1}, nil, Attrs{"mode": "cubic", "cubic_coeff_a": float32(-0.5), "exclude_outside": int64(1)}, nil},
		{"Resize", 13, []int{1, 7, 8, 9}, nil, []int64{1, 4, 5, 9}, Attrs{"mode": "linear", "coordinate_transformation_mode": "tf_crop_and_resize", "extrapolation_value": float32(2.5)},
			[]float64{0, -0.2, 0.4, 0, 1, 0.7, 1.3, 1}},
		{"Resize", 10, []int{1, 5, 7, 10}, []float64{1, 2, 3, 1}, nil, Attrs{"mode": "nearest"}, nil},
		{"Upsample", 9, []int{1, 3, 4, 16}, []float64{1, 2, 3, 1}, nil, Attrs{"mode": "linear"}, nil},
		// Big enough to split over threads.
		{"Resize", 13, []int{1, 20, 24, 32}, []float64{1, 2, 2, 1}, nil, Attrs{"mode": "linear"}, nil},
		{"Resize", 13, []int{1, 9, 40, 44}, []float64{1, 1, 2, 2}, nil, Attrs{"mode": "nearest"}, nil},
	}
	for ci, c := range cases {
		for _, dt := range []DType{F32, F64, F16, U8} {
			if dt == U8 && ci%3 != 0 {
				continue
			}
			t.Run(fmt.Sprintf("%d_%s%d_%v_%s", ci, c.op, c.version, c.attrs["mode"], dt), func(t *testing.T) {
				rng := rand.New(rand.NewSource(int64(ci)))
				x := miscRandF64(rng, c.shape...)
				var xt *Tensor
				if dt == U8 {
					for i := range x {
						x[i] = math.Round((x[i] + 1) * 100)
					}
					xt = &Tensor{}
					xt.Resize(U8, c.shape...)
					for i, v := range x {
						xt.U8()[i] = uint8(v)
					}
				} else {
					x = miscRepr(dt, x)
					xt = miscTensorF(dt, x, c.shape...)
				}
				rank := len(c.shape)
				rc := &miscResizeRefCfg{mode: c.attrs.String("mode", "nearest"), coord: c.attrs.String("coordinate_transformation_mode", "half_pixel"),
					nearest: c.attrs.String("nearest_mode", "round_prefer_floor"), a: float64(c.attrs.Float("cubic_coeff_a", -0.75)),
					exclude: c.attrs.Int("exclude_outside", 0) == 1, extrap: float64(c.attrs.Float("extrapolation_value", 0)),
					scales: make([]float64, rank), outW: make([]float64, rank), roi: c.roi}
				out := make([]int, rank)
				var in []*Tensor
				var attrs = Attrs{}
				for k, v := range c.attrs {
					attrs[k] = v
				}
				if c.scales != nil {
					s32 := make([]float32, rank)
					for i, s := range c.scales {
						s32[i] = float32(s)
						rc.scales[i] = float64(s32[i])
						rc.outW[i] = rc.scales[i] * float64(c.shape[i])
						out[i] = int(math.Floor(rc.outW[i]))
					}
					st := &Tensor{}
					st.Resize(F32, rank)
					copy(st.F32(), s32)
					switch {
					case c.op == "Upsample" && c.version < 9:
						attrs["scales"] = s32
						in = []*Tensor{xt}
					case c.version < 11:
						in = []*Tensor{xt, st}
					default:
						in = []*Tensor{xt, nil, st}
					}
				} else {
					for i, s := range c.sizes {
						out[i] = int(s)
						rc.scales[i] = float64(s) / float64(c.shape[i])
						rc.outW[i] = float64(s)
					}
					in = []*Tensor{xt, nil, nil, miscTensorI64(c.sizes, rank)}
					if c.version == 11 {
						in[2] = &Tensor{DType: F32, Shape: []int{0}, Data: []float32{}}
					}
				}
				if c.roi != nil {
					in[1] = miscTensorF(F32, c.roi, len(c.roi))
					rc.roi = miscRepr(F32, c.roi)
				}
				if c.version < 11 {
					rc.coord = "asymmetric"
					if rc.mode == "nearest" {
						// Integral up-scales: truncation equals floor.
						rc.nearest = "floor"
						for _, s := range rc.scales {
							if s < 1 {
								rc.nearest = "ceil"
							}
						}
					}
				}
				want := make([]float64, 0)
				var ties []int // want indices whose reference is a tie
				idx := make([]int, rank)
				total := 1
				for _, o := range out {
					total *= o
				}
				for i := 0; i < total; i++ {
					rem := i
					for d := rank - 1; d >= 0; d-- {
						idx[d] = rem % out[d]
						rem /= out[d]
					}
					v := miscRefND(rc, x, c.shape, 0, idx)
					if dt == U8 {
						// Within 1e-9 of a tie the float64 reference cannot
						// tell which way the kernel's own float64 sums round
						// (another summation order, FMA on arm64): either
						// neighbour is right.
						if f := v - math.Floor(v); math.Abs(f-0.5) < 1e-9 {
							ties = append(ties, len(want))
						}
						v = math.Max(0, math.Min(255, math.RoundToEven(v)))
					}
					want = append(want, v)
				}
				n := &Node{Name: "rs", Op: c.op, Version: c.version, Attrs: attrs, In: in, Out: []*Tensor{{}}}
				k := Resize
				if c.op == "Upsample" {
					k = Upsample
				}
				if err := k(n); err != nil {
					t.Fatal(err)
				}
				tol := miscTol(dt)
				if dt == U8 {
					tol = 1e-9
					got := n.Out[0].Data.([]uint8)
					for _, i := range ties {
						if d := float64(got[i]) - want[i]; d == 1 || d == -1 {
							want[i] = float64(got[i])
						}
					}
				}
				miscCheckClose(t, "Y", n.Out[0], want, out, tol)
				miscNoAllocs(t, n, k)
				for _, threads := range []int{2, 3} {
					m := &Node{Name: "rs", Op: c.op, Version: c.version, Attrs: attrs, In: in, Out: []*Tensor{{}}}
					m.Pool = NewWorkPool(WithThreads(threads))
					err := k(m)
					m.Pool.Close()
					if err != nil {
						t.Fatal(err)
					}
					miscCheckClose(t, fmt.Sprintf("Y at %d threads", threads), m.Out[0], want, out, tol)
				}
			})
		}
	}
}

// Values from the ONNX operator documentation's examples.
func TestResizeSpecExamples(t *testing.T) {
	x := miscTensorF(F32, []float64{1, 2, 3, 4, 5, 6, 7, 8}, 1, 1, 2, 4)
	sc := miscTensorF(F32, []float64{1, 1, 0.6, 0.6}, 4)
	n := &Node{Op: "Resize", Version: 13, Attrs: Attrs{"mode": "linear", "coordinate_transformation_mode": "align_corners"},
		In: []*Tensor{x, nil, sc}, Out: []*Tensor{{}}}
	if err := Resize(n); err != nil {
		t.Fatal(err)
	}
	miscCheckClose(t, "align_corners", n.Out[0], []float64{1, 3.142857}, []int{1, 1, 1, 2}, 1e-6)

	n.Attrs = Attrs{"mode": "linear"}
	if err := Resize(n); err != nil {
		t.Fatal(err)
	}
	miscCheckClose(t, "half_pixel", n.Out[0], []float64{2.6666665, 4.3333331}, []int{1, 1, 1, 2}, 1e-6)
}

// TestResize19 checks Resize-18/19's axes, antialias,
// keep_aspect_ratio_policy and half_pixel_symmetric against the float64
// reference on odd sizes.
func TestResize19(t *testing.T) {
	type tc struct {
		shape  []int
		axes   []int64 // nil: all
		scales []float64
		sizes  []int64
		attrs  Attrs
	}
	cases := []tc{
		{[]int{1, 2, 9, 11}, nil, []float64{1, 1, 0.6, 0.45}, nil, Attrs{"mode": "linear", "antialias": int64(1)}},
		{[]int{1, 1, 13, 7}, nil, []float64{1, 1, 0.3, 0.8}, nil, Attrs{"mode": "cubic", "antialias": int64(1)}},
		{[]int{2, 7, 10}, []int64{2, 1}, nil, []int64{3, 4}, Attrs{"mode": "linear", "antialias": int64(1)}},
		{[]int{1, 1, 11, 9}, nil, nil, []int64{1, 1, 4, 5}, Attrs{"mode": "cubic", "antialias": int64(1), "exclude_outside": int64(1), "cubic_coeff_a": float32(-0.5)}},
		{[]int{1, 1, 5, 7}, nil, []float64{1, 1, 1.7, 0.55}, nil, Attrs{"mode": "linear", "coordinate_transformation_mode": "half_pixel_symmetric"}},
		{[]int{1, 3, 5, 7}, []int64{-1, -2}, []float64{2.3, 1.4}, nil, Attrs{"mode": "nearest"}},
		{[]int{1, 1, 5, 7}, []int64{2, 3}, nil, []int64{4, 11}, Attrs{"mode": "nearest", "keep_aspect_ratio_policy": "not_larger"}},
		{[]int{1, 1, 5, 7}, []int64{3, 2}, nil, []int64{4, 11}, Attrs{"mode": "linear", "keep_aspect_ratio_policy": "not_smaller"}},
		{[]int{3, 6, 5}, []int64{1}, nil, []int64{3}, Attrs{"mode": "cubic", "coordinate_transformation_mode": "half_pixel_symmetric", "antialias": int64(1)}},
	}
	for ci, c := range cases {
		t.Run(fmt.Sprint(ci), func(t *testing.T) {
			rng := rand.New(rand.NewSource(int64(100 + ci)))
			rank := len(c.shape)
			x := miscRepr(F32, miscRandF64(rng, c.shape...))
			axes := c.axes
			if axes == nil {
				for i := range rank {
					axes = append(axes, int64(i))
				}
			}
			rc := &miscResizeRefCfg{mode: c.attrs.String("mode", "nearest"), coord: c.attrs.String("coordinate_transformation_mode", "half_pixel"),
				nearest: "round_prefer_floor", a: float64(c.attrs.Float("cubic_coeff_a", -0.75)),
				exclude: c.attrs.Int("exclude_outside", 0) == 1, antialias: c.attrs.Int("antialias", 0) == 1,
				scales: make([]float64, rank), outW: make([]float64, rank), outInt: make([]int, rank)}
			for i := range rank {
				rc.scales[i], rc.outW[i], rc.outInt[i] = 1, float64(c.shape[i]), c.shape[i]
			}
			attrs := Attrs{}
			for k, v := range c.attrs {
				attrs[k] = v
			}
			if c.axes != nil {
				attrs["axes"] = c.axes
			}
			in := []*Tensor{miscTensorF(F32, x, c.shape...), nil, nil, nil}
			norm := func(a int64) int {
				if a < 0 {
					a += int64(rank)
				}
				return int(a)
			}
			if c.scales != nil {
				s32 := make([]float32, len(c.scales))
				for i, s := range c.scales {
					s32[i] = float32(s)
					a := norm(axes[i])
					rc.scales[a] = float64(s32[i])
					rc.outW[a] = rc.scales[a] * float64(c.shape[a])
					rc.outInt[a] = int(math.Floor(rc.outW[a]))
				}
				in[2] = &Tensor{}
				in[2].Resize(F32, len(s32))
				copy(in[2].F32(), s32)
			} else {
				in[3] = miscTensorI64(c.sizes, len(c.sizes))
				policy := c.attrs.String("keep_aspect_ratio_policy", "stretch")
				s := 0.0
				for i, v := range c.sizes {
					a := norm(axes[i])
					si := float64(v) / float64(c.shape[a])
					if i == 0 || policy == "not_larger" && si < s || policy == "not_smaller" && si > s {
						s = si
					}
					rc.scales[a], rc.outW[a], rc.outInt[a] = si, float64(v), int(v)
				}
				if policy != "stretch" {
					for _, v := range axes {
						a := norm(v)
						rc.scales[a] = s
						rc.outW[a] = s * float64(c.shape[a])
						rc.outInt[a] = int(rc.outW[a] + 0.5)
					}
				}
			}
			n := &Node{Op: "Resize", Version: 19, Attrs: attrs, In: in, Out: []*Tensor{{}}}
			miscRun(t, Resize, n)
			total := 1
			for _, o := range rc.outInt {
				total *= o
			}
			want := make([]float64, total)
			idx := make([]int, rank)
			for i := range want {
				rem := i
				for d := rank - 1; d >= 0; d-- {
					idx[d] = rem % rc.outInt[d]
					rem /= rc.outInt[d]
				}
				want[i] = miscRefND(rc, x, c.shape, 0, idx)
			}
			miscCheckClose(t, "Y", n.Out[0], want, rc.outInt, 1e-5)
		})
	}
}

// BenchmarkResizeUpsample16: the last Resize of DeepLab/LR-ASPP heads, 21
// classes from 20x20 to 320x320 (linear, half_pixel), NCHW and NHWC.
func BenchmarkResizeUpsample16(b *testing.B) {
	for _, c := range []struct {
		name   string
		shape  []int
		scales []float32
	}{
		{"NCHW", []int{1, 21, 20, 20}, []float32{1, 1, 16, 16}},
		{"NHWC", []int{1, 20, 20, 21}, []float32{1, 16, 16, 1}},
	} {
		b.Run(c.name, func(b *testing.B) {
			rng := rand.New(rand.NewSource(1))
			x := miscTensorF(F32, miscRandF64(rng, c.shape...), c.shape...)
			sc := &Tensor{}
			sc.Resize(F32, 4)
			copy(sc.F32(), c.scales)
			n := &Node{Name: "rs", Op: "Resize", Version: 13, Attrs: Attrs{"mode": "linear"},
				In: []*Tensor{x, nil, sc}, Out: []*Tensor{{}}}
			n.Pool = NewWorkPool(WithThreads(1))
			for i := 0; i < b.N; i++ {
				if err := Resize(n); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n.Out[0].Len()), "ns/elem")
		})
	}
}
