package templates

import "math"

// Resize (v10, v11, v13) and Upsample (v7, v9; v1's height/width scales).
// Each output coordinate maps, per axis, to a short list of (input index,
// weight) pairs: one for nearest, two for linear, four for cubic. The
// lists are built per axis, then every output element sums the products
// over axes, which covers N-D inputs and any combination of modes.
// float32 tensors resized along at most two adjacent axes (NCHW images:
// H and W; NHWC ones, which the layout pass makes: H and W with the
// channels last) take miscResizeBand: a row of output pixels at a time,
// each pixel's channels (the axes after the band) one vector operation
// per tap.

// Resize is ONNX Resize.
func Resize(n *Node) error { return miscResizeOp(n, false) }

// Upsample is ONNX Upsample (deprecated in v10 in favour of Resize).
func Upsample(n *Node) error { return miscResizeOp(n, true) }

const (
	miscCoordHalfPixel = iota
	miscCoordPytorchHalfPixel
	miscCoordAlignCorners
	miscCoordAsymmetric
	miscCoordTFHalfPixelNN
	miscCoordTFCropAndResize
	miscCoordHalfPixelSymmetric
)

const (
	miscNearestRoundFloor = iota
	miscNearestRoundCeil
	miscNearestFloor
	miscNearestCeil
	miscNearestSimple // Resize-10 and Upsample: ceil when shrinking, else truncate
)

type miscResizeCfg struct {
	mode      int // 0 nearest, 1 linear, 2 cubic
	coord     int
	nearest   int
	cubicA    float64
	exclude   bool
	extrap    float64
	outShape  []int
	scales    []float64 // per axis
	outWidths []float64 // scale*in, or the requested size
	roi       []float64 // starts then ends, one per axis
	antialias bool      // Resize-18: widen linear/cubic filters by 1/scale when shrinking
}

func miscResizeOp(n *Node, upsample bool) error {
	self := Resize
	if upsample {
		self = Upsample
	}
	if ok, err := nnViaF32(n, self); ok {
		return err
	}
	x := n.Input(0)
	if x == nil {
		return n.Errorf("missing input X")
	}
	rank := len(x.Shape)
	st := miscScr[float64](n)
	cfg := miscResizeCfg{coord: miscCoordHalfPixel, nearest: miscNearestRoundFloor, cubicA: -0.75}
	switch m := n.Attrs.String("mode", "nearest"); m {
	case "nearest":
	case "linear", "bilinear", "trilinear":
		cfg.mode = 1
	case "cubic", "bicubic":
		cfg.mode = 2
	default:
		return n.Errorf("unknown mode %q", m)
	}
	cfg.outShape = st.getInts(0, rank)
	cfg.scales = st.getF64(0, rank)
	cfg.outWidths = st.getF64(1, rank)

	legacy := upsample || n.Version < 11
	var scales, sizes, roi *Tensor
	switch {
	case upsample && n.Version < 9:
		if a := n.Attrs.Floats("scales"); a != nil {
			if len(a) != rank {
				return n.Errorf("scales has %d entries, want %d", len(a), rank)
			}
			for i, s := range a {
				cfg.scales[i] = float64(s)
			}
		} else if n.Attrs.Has("height_scale") || n.Attrs.Has("width_scale") {
			if rank != 4 {
				return n.Errorf("height_scale/width_scale need a 4-D input")
			}
			cfg.scales[0], cfg.scales[1] = 1, 1
			cfg.scales[2] = float64(n.Attrs.Float("height_scale", 1))
			cfg.scales[3] = float64(n.Attrs.Float("width_scale", 1))
		} else {
			return n.Errorf("missing scales attribute")
		}
	case legacy:
		scales = n.Input(1)
	default:
		roi = n.Input(1)
		scales, sizes = n.Input(2), n.Input(3)
		if sizes != nil && sizes.Len() == 0 {
			sizes = nil
		}
		if scales != nil && scales.Len() == 0 {
			scales = nil
		}
	}
	// Resize-18 axes: scales, sizes and roi name only these axes; the
	// others keep their size (scale 1, roi [0, 1]).
	axes := st.getInts(7, rank)
	for i := range axes {
		axes[i] = i
	}
	if a := n.Attrs.Ints("axes"); a != nil && n.Version >= 18 && !upsample {
		if len(a) > rank {
			return n.Errorf("axes %v has more entries than rank %d", a, rank)
		}
		axes = axes[:len(a)]
		seen := 0
		for i, v := range a {
			if v < 0 {
				v += int64(rank)
			}
			if v < 0 || v >= int64(rank) || seen&(1<<v) != 0 {
				return n.Errorf("axes %v out of range or repeated for rank %d", a, rank)
			}
			seen |= 1 << v
			axes[i] = int(v)
		}
	}
	na := len(axes)
	if !upsample || n.Version >= 9 {
		for i := range rank {
			cfg.scales[i] = 1
			cfg.outShape[i] = x.Shape[i]
			cfg.outWidths[i] = float64(x.Shape[i])
		}
	}
	switch {
	case sizes != nil:
		if scales != nil {
			return n.Errorf("only one of scales and sizes may be given")
		}
		if sizes.Len() != na {
			return n.Errorf("sizes has %d entries, want %d", sizes.Len(), na)
		}
		policy := "stretch"
		if n.Version >= 18 {
			policy = n.Attrs.String("keep_aspect_ratio_policy", "stretch")
		}
		for i, a := range axes {
			cfg.outShape[a] = int(ewI64At(sizes, i))
			cfg.outWidths[a] = float64(cfg.outShape[a])
			cfg.scales[a] = float64(cfg.outShape[a]) / float64(x.Shape[a])
		}
		if policy != "stretch" {
			if policy != "not_larger" && policy != "not_smaller" {
				return n.Errorf("unknown keep_aspect_ratio_policy %q", policy)
			}
			s := cfg.scales[axes[0]]
			for _, a := range axes[1:] {
				if policy == "not_larger" {
					s = min(s, cfg.scales[a])
				} else {
					s = max(s, cfg.scales[a])
				}
			}
			for _, a := range axes {
				cfg.scales[a] = s
				cfg.outWidths[a] = s * float64(x.Shape[a])
				cfg.outShape[a] = int(cfg.outWidths[a] + 0.5)
			}
		}
	case scales != nil:
		if scales.Len() != na {
			return n.Errorf("scales has %d entries, want %d", scales.Len(), na)
		}
		for i, a := range axes {
			cfg.scales[a] = ewF64At(scales, i)
		}
		fallthrough
	case upsample && n.Version < 9:
		for i := range rank {
			s := cfg.scales[i]
			if !(s > 0) {
				return n.Errorf("scale %v on axis %d must be positive", s, i)
			}
			cfg.outWidths[i] = s * float64(x.Shape[i])
			cfg.outShape[i] = int(math.Floor(cfg.outWidths[i]))
		}
	default:
		return n.Errorf("needs scales or sizes")
	}
	if roi != nil && roi.Len() > 0 {
		if roi.Len() != 2*na {
			return n.Errorf("roi has %d entries, want %d", roi.Len(), 2*na)
		}
		cfg.roi = st.getF64(3, 2*rank)
		for i := range rank {
			cfg.roi[i], cfg.roi[rank+i] = 0, 1
		}
		for i, a := range axes {
			cfg.roi[a], cfg.roi[rank+a] = ewF64At(roi, i), ewF64At(roi, na+i)
		}
	}

	if legacy {
		cfg.coord = miscCoordAsymmetric
		cfg.nearest = miscNearestSimple
		if cfg.mode == 2 {
			return n.Errorf("mode cubic needs Resize-11 or later")
		}
	} else {
		switch c := n.Attrs.String("coordinate_transformation_mode", "half_pixel"); c {
		case "half_pixel":
		case "pytorch_half_pixel":
			cfg.coord = miscCoordPytorchHalfPixel
		case "align_corners":
			cfg.coord = miscCoordAlignCorners
		case "asymmetric":
			cfg.coord = miscCoordAsymmetric
		case "tf_half_pixel_for_nn":
			cfg.coord = miscCoordTFHalfPixelNN
		case "half_pixel_symmetric":
			if n.Version < 19 {
				return n.Errorf("coordinate_transformation_mode half_pixel_symmetric needs Resize-19")
			}
			cfg.coord = miscCoordHalfPixelSymmetric
		case "tf_crop_and_resize":
			cfg.coord = miscCoordTFCropAndResize
			if cfg.roi == nil {
				return n.Errorf("tf_crop_and_resize needs roi")
			}
		default:
			return n.Errorf("unknown coordinate_transformation_mode %q", c)
		}
		switch m := n.Attrs.String("nearest_mode", "round_prefer_floor"); m {
		case "round_prefer_floor":
		case "round_prefer_ceil":
			cfg.nearest = miscNearestRoundCeil
		case "floor":
			cfg.nearest = miscNearestFloor
		case "ceil":
			cfg.nearest = miscNearestCeil
		default:
			return n.Errorf("unknown nearest_mode %q", m)
		}
		cfg.cubicA = float64(n.Attrs.Float("cubic_coeff_a", -0.75))
		cfg.exclude = n.Attrs.Int("exclude_outside", 0) != 0
		cfg.extrap = float64(n.Attrs.Float("extrapolation_value", 0))
		cfg.antialias = n.Version >= 18 && n.Attrs.Int("antialias", 0) != 0 && cfg.mode != 0
	}
	y := n.Out[0]
	if y == nil {
		return nil
	}
	y.Resize(x.DType, cfg.outShape...)
	switch x.DType {
	case F32:
		miscResizeRun(n, &cfg, x, x.F32(), y.F32())
	case F64:
		miscResizeRun(n, &cfg, x, x.F64(), y.F64())
	case I8:
		miscResizeRun(n, &cfg, x, x.I8(), y.I8())
	case U8:
		miscResizeRun(n, &cfg, x, x.U8(), y.U8())
	case I16:
		miscResizeRun(n, &cfg, x, x.Data.([]int16), y.Data.([]int16))
	case U16:
		miscResizeRun(n, &cfg, x, x.U16(), y.U16())
	case I32:
		miscResizeRun(n, &cfg, x, x.I32(), y.I32())
	case I64:
		miscResizeRun(n, &cfg, x, x.I64(), y.I64())
	case U32:
		miscResizeRun(n, &cfg, x, x.Data.([]uint32), y.Data.([]uint32))
	case U64:
		miscResizeRun(n, &cfg, x, x.Data.([]uint64), y.Data.([]uint64))
	default:
		return n.Errorf("unsupported dtype %s", x.DType)
	}
	return nil
}

// miscNum is every numeric element type.
type miscNum interface {
	~float32 | ~float64 | ~int8 | ~uint8 | ~int16 | ~uint16 | ~int32 | ~int64 | ~uint32 | ~uint64
}

// miscFromF64 converts v to E: as is for floats, rounded half to even and
// saturated for integers.
func miscFromF64[E miscNum](v float64) E {
	var z E
	switch any(z).(type) {
	case float32, float64:
		return E(v)
	}
	v = math.RoundToEven(v)
	lo, hi := miscIntRange(any(z))
	if v < lo {
		v = lo
	}
	if v > hi {
		v = hi
	}
	return E(v)
}

func miscIntRange(z any) (float64, float64) {
	switch z.(type) {
	case int8:
		return math.MinInt8, math.MaxInt8
	case uint8:
		return 0, math.MaxUint8
	case int16:
		return math.MinInt16, math.MaxInt16
	case uint16:
		return 0, math.MaxUint16
	case int32:
		return math.MinInt32, math.MaxInt32
	case uint32:
		return 0, math.MaxUint32
	case uint64:
		return 0, 18446744073709549568 // largest float64 below 2^64
	}
	return -9223372036854775808, 9223372036854774784 // int64
}

// miscResizeCoord maps output coordinate o on one axis to the input.
func miscResizeCoord(cfg *miscResizeCfg, axis, o, inLen int) float64 {
	x, scale, outW := float64(o), cfg.scales[axis], cfg.outWidths[axis]
	in := float64(inLen)
	switch cfg.coord {
	case miscCoordPytorchHalfPixel:
		if outW <= 1 {
			return 0
		}
		return (x+0.5)/scale - 0.5
	case miscCoordAlignCorners:
		if outW == 1 {
			return 0
		}
		return x * (in - 1) / (outW - 1)
	case miscCoordAsymmetric:
		return x / scale
	case miscCoordTFHalfPixelNN:
		return (x + 0.5) / scale
	case miscCoordTFCropAndResize:
		rank := len(cfg.scales)
		start, end := cfg.roi[axis], cfg.roi[rank+axis]
		if outW == 1 {
			return (end-start)*(in-1)/2 + start*(in-1)
		}
		return start*(in-1) + x*(end-start)*(in-1)/(outW-1)
	case miscCoordHalfPixelSymmetric:
		// The centre of the input maps to the centre of the output even
		// when the output size was rounded from scale*in.
		adj := float64(cfg.outShape[axis]) / outW
		return in/2*(1-adj) + (x+0.5)/scale - 0.5
	}
	return (x+0.5)/scale - 0.5
}

// miscAATaps is the antialiased filter's tap count on axis d: the
// linear kernel's support [-1, 1] or the cubic's [-2, 2] stretched by
// 1/scale when shrinking.
func miscAATaps(cfg *miscResizeCfg, d int) int {
	sc := min(cfg.scales[d], 1)
	r := 1.0
	if cfg.mode == 2 {
		r = 2
	}
	return 2 - 2*(int(math.Floor(-r/sc))+1)
}

// miscCubicW is the cubic convolution kernel with coefficient a.
func miscCubicW(x, a float64) float64 {
	x = math.Abs(x)
	if x <= 1 {
		return ((a+2)*x-(a+3))*x*x + 1
	}
	if x < 2 {
		return ((a*x-5*a)*x+8*a)*x - 4*a
	}
	return 0
}

func miscCubic(t, a float64) [4]float64 {
	c := func(x float64) float64 {
		x = math.Abs(x)
		if x <= 1 {
			return ((a+2)*x-(a+3))*x*x + 1
		}
		if x < 2 {
			return ((a*x-5*a)*x+8*a)*x - 4*a
		}
		return 0
	}
	return [4]float64{c(1 + t), c(t), c(1 - t), c(2 - t)}
}

func miscResizeRun[E miscNum](n *Node, cfg *miscResizeCfg, x *Tensor, xd, yd []E) {
	rank := len(x.Shape)
	st := miscScr[float64](n)
	per := [...]int{1, 2, 4}[cfg.mode]
	if cfg.antialias {
		for d := 0; d < rank; d++ {
			per = max(per, miscAATaps(cfg, d))
		}
	}
	total := 0
	for _, o := range cfg.outShape {
		total += o
	}
	// For axis d and output coordinate o (row r = base[d]+o): cnt[r]
	// entries at idx/wt[r*per:], cnt -1 meaning "outside the crop".
	base := st.getInts(1, rank)
	cnt := st.getInts(2, total)
	idx := st.getInts(3, total*per)
	wt := st.getF64(2, total*per)
	b := 0
	for d := 0; d < rank; d++ {
		base[d] = b
		inLen := x.Shape[d]
		for o := 0; o < cfg.outShape[d]; o++ {
			r := b + o
			xo := miscResizeCoord(cfg, d, o, inLen)
			if cfg.coord == miscCoordTFCropAndResize && (xo < 0 || xo > float64(inLen-1)) {
				cnt[r] = -1
				continue
			}
			ix, w := idx[r*per:(r+1)*per], wt[r*per:(r+1)*per]
			switch cfg.mode {
			case 0:
				var i float64
				switch cfg.nearest {
				case miscNearestRoundFloor:
					i = math.Ceil(xo - 0.5)
				case miscNearestRoundCeil:
					i = math.Floor(xo + 0.5)
				case miscNearestFloor:
					i = math.Floor(xo)
				case miscNearestCeil:
					i = math.Ceil(xo)
				case miscNearestSimple:
					if cfg.scales[d] < 1 {
						i = math.Ceil(xo)
					} else {
						i = math.Trunc(xo)
					}
				}
				ix[0], w[0] = int(i), 1
			case 1, 2:
				f := math.Floor(xo)
				t := xo - f
				if cfg.antialias {
					// Filter taps f+i for i in [lo, 1-lo], weights the
					// kernel at (i-t)*scale, normalised to sum 1.
					sc := min(cfg.scales[d], 1)
					k := miscAATaps(cfg, d)
					lo := 1 - k/2
					sum := 0.0
					for j := 0; j < k; j++ {
						u := (float64(lo+j) - t) * sc
						var v float64
						if cfg.mode == 1 {
							v = max(0, 1-math.Abs(u))
						} else {
							v = miscCubicW(u, cfg.cubicA)
						}
						ix[j], w[j] = int(f)+lo+j, v
						sum += v
					}
					for j := 0; j < k; j++ {
						w[j] /= sum
					}
					for j := k; j < per; j++ {
						ix[j], w[j] = 0, 0
					}
				} else if cfg.mode == 1 {
					ix[0], ix[1] = int(f), int(f)+1
					w[0], w[1] = 1-t, t
				} else {
					c := miscCubic(t, cfg.cubicA)
					for k := 0; k < 4; k++ {
						ix[k] = int(f) - 1 + k
						w[k] = c[k]
					}
				}
			}
			if cfg.exclude && per > 1 {
				sum := 0.0
				for k := range ix {
					if ix[k] < 0 || ix[k] >= inLen {
						w[k] = 0
					}
					sum += w[k]
				}
				for k := range w {
					w[k] /= sum
				}
			}
			// Clamp to the edge and drop zero weights.
			m := 0
			for k := range ix {
				if w[k] == 0 && per > 1 {
					continue
				}
				ix[m], w[m] = min(max(ix[k], 0), inLen-1), w[k]
				m++
			}
			cnt[r] = m
		}
		b += cfg.outShape[d]
	}

	if y32, ok := any(yd).([]float32); ok && !miscResizeGeneric && miscResizeBand(n, st, cfg, x.Shape, any(xd).([]float32), y32, base, cnt, idx, wt, per) {
		return
	}
	inStr := miscStrides(x.Shape, st.getInts(4, rank))
	coord := st.getInts(5, rank)
	sel := st.getInts(6, rank)
	clear(coord)
	extrap := miscFromF64[E](cfg.extrap)
	for oi := range yd {
		outside, empty := false, false
		for d := 0; d < rank; d++ {
			c := cnt[base[d]+coord[d]]
			if c < 0 {
				outside = true
			}
			if c == 0 {
				empty = true
			}
		}
		if outside {
			yd[oi] = extrap
		} else if empty {
			yd[oi] = 0
		} else {
			clear(sel)
			sum := 0.0
			for {
				w, off := 1.0, 0
				for d := 0; d < rank; d++ {
					e := (base[d]+coord[d])*per + sel[d]
					w *= wt[e]
					off += idx[e] * inStr[d]
				}
				sum += float64(w * float64(xd[off])) // rounded: no FMA, the same bits on every GOARCH
				d := rank - 1
				for ; d >= 0; d-- {
					sel[d]++
					if sel[d] < cnt[base[d]+coord[d]] {
						break
					}
					sel[d] = 0
				}
				if d < 0 {
					break
				}
			}
			yd[oi] = miscFromF64[E](sum)
		}
		for d := rank - 1; d >= 0; d-- {
			coord[d]++
			if coord[d] < cfg.outShape[d] {
				break
			}
			coord[d] = 0
		}
	}
}

// miscResizeGeneric makes every resize take the generic loop (tests
// compare the two paths' speed with it).
var miscResizeGeneric = false

// miscResizeBand runs a float32 resize whose axes outside a band of two
// adjacent ones [a, a+1] map every coordinate to itself with weight 1
// (NCHW: a = 2; NHWC: a = 1, the channels after the band) and reports
// whether it did. Output rows of the band (outer index, row) are split
// over the pool. The resize is separable: an input row resized along the
// band's second axis (each output pixel's vec values, vec the product of
// the axes after the band, the column taps' float32 weighted sum) is made
// once per part and kept while the output rows reading it last (a 16x
// upsample reads each input row for 16 output rows); an output row is then
// the row taps' weighted sum of those rows, whole-row vector multiply-adds
// (axpy32) whatever vec is, so NCHW (vec 1) runs at vector speed too.
func miscResizeBand(n *Node, st *miscScratch[float64], cfg *miscResizeCfg, xs []int, x, y []float32, base, cnt, idx []int, wt []float64, per int) bool {
	rank := len(xs)
	if rank < 2 {
		return false
	}
	identity := func(d int) bool {
		if cfg.outShape[d] != xs[d] {
			return false
		}
		for o := 0; o < xs[d]; o++ {
			r := base[d] + o
			if cnt[r] != 1 || idx[r*per] != o || wt[r*per] != 1 {
				return false
			}
		}
		return true
	}
	lo, hi := -1, -1
	for d := 0; d < rank; d++ {
		if !identity(d) {
			if lo < 0 {
				lo = d
			}
			hi = d
		}
	}
	if lo < 0 {
		lo, hi = rank-2, rank-1
	}
	if hi-lo > 1 {
		return false
	}
	a := min(lo, rank-2)
	t, _ := st.task.(*miscResizeTask)
	if t == nil {
		t = &miscResizeTask{}
		st.task = t
	}
	*t = miscResizeTask{x: x, y: y, cnt: cnt, idx: idx, wt: wt, per: per, bh: base[a], bw: base[a+1],
		H: xs[a], W: xs[a+1], OH: cfg.outShape[a], OW: cfg.outShape[a+1], outer: 1, vec: 1, extrap: float32(cfg.extrap),
		rows: t.rows, keys: t.keys}
	for d := 0; d < a; d++ {
		t.outer *= xs[d]
	}
	for d := a + 2; d < rank; d++ {
		t.vec *= xs[d]
	}
	rows := t.outer * t.OH
	parts := 1
	if threads := n.Pool.Threads(); threads > 1 && len(y)*per >= parMinFlops/4 {
		parts = min(threads, rows)
	}
	t.prepare(parts)
	for ow := 0; ow < t.OW; ow++ {
		t.cropCols = t.cropCols || cnt[t.bw+ow] <= 0
	}
	n.Pool.Run(parts, t)
	t.x, t.y, t.cnt, t.idx, t.wt = nil, nil, nil, nil, nil // keep only the row cache
	return true
}

// miscResizeTask is miscResizeBand's work: the band's taps are rows bh+o
// (output row o) and bw+o (column o) of cnt/idx/wt; rows holds each part's
// per resized input rows, keys which (outer index, input row) each holds.
type miscResizeTask struct {
	x, y         []float32
	cnt, idx     []int
	wt           []float64
	per, bh, bw  int
	H, W, OH, OW int
	outer, vec   int
	extrap       float32
	cropCols     bool // some column has no taps or is outside a crop
	rows         []float32
	keys         []int
}

// prepare sizes t's per-part row cache for parts parts.
func (t *miscResizeTask) prepare(parts int) {
	n := parts * t.per * t.OW * t.vec
	if cap(t.rows) < n {
		t.rows = make([]float32, n)
	}
	t.rows = t.rows[:n]
	if cap(t.keys) < parts*t.per {
		t.keys = make([]int, parts*t.per)
	}
	t.keys = t.keys[:parts*t.per]
	for i := range t.keys {
		t.keys[i] = -1
	}
}

// hrow resizes input row xr (W*vec values) along the columns into h
// (OW*vec), columns outside a crop left for the caller to fill.
func (t *miscResizeTask) hrow(h, xr []float32) {
	vec, per := t.vec, t.per
	for ow := 0; ow < t.OW; ow++ {
		hp := h[ow*vec : (ow+1)*vec]
		cw := t.cnt[t.bw+ow]
		if cw <= 0 {
			continue
		}
		wi, ww := t.idx[(t.bw+ow)*per:][:cw], t.wt[(t.bw+ow)*per:][:cw]
		if cw == 1 && ww[0] == 1 {
			copy(hp, xr[wi[0]*vec:])
			continue
		}
		if vec >= 8 {
			clear(hp)
			for b, iw := range wi {
				axpy32(hp, xr[iw*vec:], float32(ww[b]))
			}
			continue
		}
		for k := range hp {
			var s float32
			for b, iw := range wi {
				s += float32(ww[b]) * xr[iw*vec+k]
			}
			hp[k] = s
		}
	}
}

func (t *miscResizeTask) runPart(i, parts int) {
	r0, r1 := parSplit(t.outer*t.OH, parts, i, 1)
	vec, per := t.vec, t.per
	rowLen := t.OW * vec
	rows := t.rows[i*per*rowLen : (i+1)*per*rowLen]
	keys := t.keys[i*per : (i+1)*per]
	// slot returns the cached resized row for key (outer o, input row ih),
	// making it in a slot none of need holds.
	slot := func(o, ih int, need []int) []float32 {
		key := o*t.H + ih
		for s, k := range keys {
			if k == key {
				return rows[s*rowLen : (s+1)*rowLen]
			}
		}
		s := 0
	find:
		for ; s < per; s++ {
			for _, ih2 := range need {
				if keys[s] == o*t.H+ih2 {
					continue find
				}
			}
			break
		}
		keys[s] = key
		h := rows[s*rowLen : (s+1)*rowLen]
		t.hrow(h, t.x[(o*t.H+ih)*t.W*vec:(o*t.H+ih+1)*t.W*vec])
		return h
	}
	for r := r0; r < r1; r++ {
		o, oh := r/t.OH, r%t.OH
		yrow := t.y[r*rowLen : (r+1)*rowLen]
		ch := t.cnt[t.bh+oh]
		if ch <= 0 {
			v := float32(0)
			if ch < 0 {
				v = t.extrap
			}
			for k := range yrow {
				yrow[k] = v
			}
			continue
		}
		hi, hw := t.idx[(t.bh+oh)*per:][:ch], t.wt[(t.bh+oh)*per:][:ch]
		if ch == 1 && hw[0] == 1 {
			copy(yrow, slot(o, hi[0], hi))
		} else {
			clear(yrow)
			for a, ih := range hi {
				axpy32(yrow, slot(o, ih, hi), float32(hw[a]))
			}
		}
		// Columns outside a crop (tf_crop_and_resize) or with no taps.
		for ow := 0; t.cropCols && ow < t.OW; ow++ {
			if cw := t.cnt[t.bw+ow]; cw <= 0 {
				v := float32(0)
				if cw < 0 {
					v = t.extrap
				}
				for k := ow * vec; k < (ow+1)*vec; k++ {
					yrow[k] = v
				}
			}
		}
	}
}
