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
	case "linear":
		coeffs = []float64{1 - ratio, ratio}
	case "cubic":
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
				}
				miscCheckClose(t, "Y", n.Out[0], want, out, tol)
				miscNoAllocs(t, n, k)
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
