package templates

import "math"

// Elementwise kernels that do not fit the binary/unary tables: Pow with
// mixed dtypes, Clip, predicates, Not, Where, Identity and Dropout.

// Pow raises input 0 to input 1, broadcasting. From opset 12 the exponent
// may have another numeric dtype; the result has the base's dtype.
func Pow(n *Node) error {
	if len(n.In) < 2 || n.In[0] == nil || n.In[1] == nil {
		return n.Errorf("want 2 inputs")
	}
	a, b, out := n.In[0], n.In[1], n.Out[0]
	if a.DType == b.DType {
		return ewBinary(n, &ewOpPow)
	}
	if !ewIsNumeric(b.DType) {
		return n.Errorf("exponent dtype %s not supported", b.DType)
	}
	var w ewWalk
	if err := ewBinOut(n, &w, a, b, out, a.DType); err != nil {
		return err
	}
	e := ewScr(n).F64(b.Len())
	intExp := !ewIsFloat(b.DType)
	for i := range e {
		e[i] = ewF64At(b, i)
	}
	switch a.DType {
	case F32:
		ewPowMixed(&w, out.F32(), a.F32(), e, false)
	case F64:
		ewPowMixed(&w, out.F64(), a.F64(), e, false)
	case F16, BF16:
		dec, enc := F16ToF32, ewF64ToF16
		if a.DType == BF16 {
			dec, enc = BF16ToF32, ewF64ToBF16
		}
		n, so, sa, sb, _ := w.inner()
		o, x := out.U16(), a.U16()
		for it := w.iter(); it.next(); {
			for k := 0; k < n; k++ {
				o[it.off[0]+k*so] = enc(math.Pow(float64(dec(x[it.off[1]+k*sa])), e[it.off[2]+k*sb]))
			}
		}
	case I32:
		ewPowMixed(&w, out.I32(), a.I32(), e, intExp)
	case I64:
		ewPowMixed(&w, out.I64(), a.I64(), e, intExp)
	case I8:
		ewPowMixed(&w, out.I8(), a.I8(), e, intExp)
	case I16:
		ewPowMixed(&w, out.Data.([]int16), a.Data.([]int16), e, intExp)
	case U8:
		ewPowMixed(&w, out.U8(), a.U8(), e, intExp)
	case U16:
		ewPowMixed(&w, out.U16(), a.U16(), e, intExp)
	case U32:
		ewPowMixed(&w, out.Data.([]uint32), a.Data.([]uint32), e, intExp)
	case U64:
		ewPowMixed(&w, out.Data.([]uint64), a.Data.([]uint64), e, intExp)
	default:
		return n.Errorf("base dtype %s not supported", a.DType)
	}
	return nil
}

// ewPowMixed computes out = a ** e with e already in float64. Integer
// bases with integer exponents are raised exactly.
func ewPowMixed[T ewNum](w *ewWalk, out, a []T, e []float64, intExp bool) {
	n, so, sa, sb, _ := w.inner()
	for it := w.iter(); it.next(); {
		for k := 0; k < n; k++ {
			x, y := a[it.off[1]+k*sa], e[it.off[2]+k*sb]
			if intExp {
				out[it.off[0]+k*so] = T(ewPowI(int64(x), int64(y)))
			} else {
				out[it.off[0]+k*so] = T(math.Pow(float64(x), y))
			}
		}
	}
}

// Clip limits input 0 to [min, max]: attributes before opset 11, optional
// scalar inputs after. NaN passes through; min > max gives max (numpy).
func Clip(n *Node) error {
	if len(n.In) < 1 || n.In[0] == nil {
		return n.Errorf("want an input")
	}
	x, out := n.In[0], n.Out[0]
	out.Resize(x.DType, x.Shape...)
	if n.Version < 11 {
		lo := ewAttrF(n, "min", -math.MaxFloat32)
		hi := ewAttrF(n, "max", math.MaxFloat32)
		if !n.Attrs.Has("min") {
			lo = math.Inf(-1)
		}
		if !n.Attrs.Has("max") {
			hi = math.Inf(1)
		}
		if !ewMapFloat(x.DType, out.Data, x.Data, ewClipF, lo, hi) {
			return n.Errorf("dtype %s not supported", x.DType)
		}
		return nil
	}
	lo, hi := n.Input(1), n.Input(2)
	for _, b := range []*Tensor{lo, hi} {
		if b != nil && (b.DType != x.DType || b.Len() != 1) {
			return n.Errorf("min/max must be %s scalars, have %s", x.DType, b)
		}
	}
	switch x.DType {
	case F16, BF16:
		l, h := math.Inf(-1), math.Inf(1)
		if lo != nil {
			l = ewF64At(lo, 0)
		}
		if hi != nil {
			h = ewF64At(hi, 0)
		}
		ewMapFloat(x.DType, out.Data, x.Data, ewClipF, l, h)
	case F32:
		ewClipT[float32](out.Data, x.Data, lo, hi)
	case F64:
		ewClipT[float64](out.Data, x.Data, lo, hi)
	case I8:
		ewClipT[int8](out.Data, x.Data, lo, hi)
	case I16:
		ewClipT[int16](out.Data, x.Data, lo, hi)
	case I32:
		ewClipT[int32](out.Data, x.Data, lo, hi)
	case I64:
		ewClipT[int64](out.Data, x.Data, lo, hi)
	case U8:
		ewClipT[uint8](out.Data, x.Data, lo, hi)
	case U16:
		ewClipT[uint16](out.Data, x.Data, lo, hi)
	case U32:
		ewClipT[uint32](out.Data, x.Data, lo, hi)
	case U64:
		ewClipT[uint64](out.Data, x.Data, lo, hi)
	default:
		return n.Errorf("dtype %s not supported", x.DType)
	}
	return nil
}

func ewClipF(x, lo, hi float64) float64 {
	if x < lo {
		x = lo
	}
	if x > hi {
		x = hi
	}
	return x
}

func ewClipT[T ewNum](out, in any, lo, hi *Tensor) {
	o, x := out.([]T), in.([]T)
	x = x[:len(o)]
	var l, h T
	hasL, hasH := lo != nil, hi != nil
	if hasL {
		l = lo.Data.([]T)[0]
	}
	if hasH {
		h = hi.Data.([]T)[0]
	}
	for i, v := range x {
		if hasL && v < l {
			v = l
		}
		if hasH && v > h {
			v = h
		}
		o[i] = v
	}
}

// ewPredicate writes f(x) for each float element of in.
func ewPredicate(n *Node, f func(x float64, neg, pos bool) bool, neg, pos bool) error {
	if len(n.In) < 1 || n.In[0] == nil {
		return n.Errorf("want an input")
	}
	x, out := n.In[0], n.Out[0]
	out.Resize(Bool, x.Shape...)
	o := out.Bool()
	switch x.DType {
	case F32:
		for i, v := range x.F32()[:len(o)] {
			o[i] = f(float64(v), neg, pos)
		}
	case F64:
		for i, v := range x.F64()[:len(o)] {
			o[i] = f(v, neg, pos)
		}
	case F16:
		for i, v := range x.U16()[:len(o)] {
			o[i] = f(float64(F16ToF32(v)), neg, pos)
		}
	case BF16:
		for i, v := range x.U16()[:len(o)] {
			o[i] = f(float64(BF16ToF32(v)), neg, pos)
		}
	default:
		return n.Errorf("dtype %s not supported", x.DType)
	}
	return nil
}

func ewIsNaN(x float64, _, _ bool) bool { return x != x }
func ewIsInf(x float64, neg, pos bool) bool {
	return (pos && math.IsInf(x, 1)) || (neg && math.IsInf(x, -1))
}

func IsNaN(n *Node) error { return ewPredicate(n, ewIsNaN, false, false) }

// IsInf: detect_negative and detect_positive (both default 1).
func IsInf(n *Node) error {
	return ewPredicate(n, ewIsInf, n.Attrs.Int("detect_negative", 1) != 0, n.Attrs.Int("detect_positive", 1) != 0)
}

func Not(n *Node) error {
	if len(n.In) < 1 || n.In[0] == nil || n.In[0].DType != Bool {
		return n.Errorf("want a bool input")
	}
	x, out := n.In[0], n.Out[0]
	out.Resize(Bool, x.Shape...)
	o := out.Bool()
	for i, v := range x.Bool()[:len(o)] {
		o[i] = !v
	}
	return nil
}

func ewWhere[T any](w *ewWalk, out any, c []bool, x, y any) {
	o, a, b := out.([]T), x.([]T), y.([]T)
	n, so, sc, sa, sb := w.inner()
	for it := w.iter(); it.next(); {
		for k := 0; k < n; k++ {
			if c[it.off[1]+k*sc] {
				o[it.off[0]+k*so] = a[it.off[2]+k*sa]
			} else {
				o[it.off[0]+k*so] = b[it.off[3]+k*sb]
			}
		}
	}
}

// Where picks X where cond is true and Y elsewhere, broadcasting all three.
func Where(n *Node) error {
	if len(n.In) < 3 || n.In[0] == nil || n.In[1] == nil || n.In[2] == nil {
		return n.Errorf("want 3 inputs")
	}
	c, x, y, out := n.In[0], n.In[1], n.In[2], n.Out[0]
	if c.DType != Bool || x.DType != y.DType {
		return n.Errorf("want bool condition and equal X/Y dtypes, have %s, %s, %s", c.DType, x.DType, y.DType)
	}
	var os ewShape
	if !ewBroadcastShape(&os, c.Shape, x.Shape, y.Shape) {
		return n.Errorf("shapes %v, %v, %v do not broadcast", c.Shape, x.Shape, y.Shape)
	}
	out.Resize(x.DType, os.s()...)
	var w ewWalk
	w.initBroadcast(os.s(), c.Shape, x.Shape, y.Shape)
	cb := c.Bool()
	switch x.Data.(type) {
	case []float32:
		ewWhere[float32](&w, out.Data, cb, x.Data, y.Data)
	case []float64:
		ewWhere[float64](&w, out.Data, cb, x.Data, y.Data)
	case []uint16:
		ewWhere[uint16](&w, out.Data, cb, x.Data, y.Data)
	case []int8:
		ewWhere[int8](&w, out.Data, cb, x.Data, y.Data)
	case []uint8:
		ewWhere[uint8](&w, out.Data, cb, x.Data, y.Data)
	case []int16:
		ewWhere[int16](&w, out.Data, cb, x.Data, y.Data)
	case []int32:
		ewWhere[int32](&w, out.Data, cb, x.Data, y.Data)
	case []int64:
		ewWhere[int64](&w, out.Data, cb, x.Data, y.Data)
	case []uint32:
		ewWhere[uint32](&w, out.Data, cb, x.Data, y.Data)
	case []uint64:
		ewWhere[uint64](&w, out.Data, cb, x.Data, y.Data)
	case []bool:
		ewWhere[bool](&w, out.Data, cb, x.Data, y.Data)
	case []string:
		ewWhere[string](&w, out.Data, cb, x.Data, y.Data)
	default:
		return n.Errorf("dtype %s not supported", x.DType)
	}
	return nil
}

// Identity copies its input.
func Identity(n *Node) error {
	if len(n.In) < 1 || n.In[0] == nil {
		return n.Errorf("want an input")
	}
	ewCopyTensor(n.Out[0], n.In[0])
	return nil
}

// Dropout is the identity at inference (the mask, when asked for, is all
// true; before opset 10 it has the input's dtype and holds ones). With
// training_mode (opset 12+) and a non-zero ratio it drops elements at
// random (element i is kept when the i-th draw of k_random.go's generator,
// seeded by the seed attribute, is at least ratio, as numpy computes
// uniform(0, 1, shape) >= ratio), and scales the rest by 1/(1-ratio).
func Dropout(n *Node) error {
	if len(n.In) < 1 || n.In[0] == nil {
		return n.Errorf("want an input")
	}
	x := n.In[0]
	out := n.Out[0]
	var mask *Tensor
	if len(n.Out) > 1 {
		mask = n.Out[1]
	}
	ratio := float64(n.Attrs.Float("ratio", 0.5))
	training := false
	if n.Version >= 12 {
		if r := n.Input(1); r != nil {
			ratio = ewF64At(r, 0)
		}
		if t := n.Input(2); t != nil {
			training = t.Bool()[0]
		}
	}
	if !training || ratio == 0 {
		ewCopyTensor(out, x)
		if mask != nil {
			if n.Version < 10 {
				mask.Resize(x.DType, x.Shape...)
				ewMapFloat(x.DType, mask.Data, x.Data, ewOne, 0, 0)
			} else {
				mask.Resize(Bool, x.Shape...)
				m := mask.Bool()
				for i := range m {
					m[i] = true
				}
			}
		}
		return nil
	}
	if !ewIsFloat(x.DType) {
		return n.Errorf("dtype %s not supported", x.DType)
	}
	if ratio < 0 || ratio > 1 {
		return n.Errorf("ratio %v outside [0, 1]", ratio)
	}
	s := rngScr(n)
	rng := s.rng
	out.Resize(x.DType, x.Shape...)
	keep := s.F64(x.Len())
	scale := 0.0
	if ratio < 1 {
		scale = 1 / (1 - ratio)
	}
	for i := range keep {
		keep[i] = 0
		if rng.Float64() >= ratio {
			keep[i] = scale
		}
	}
	if mask != nil {
		mask.Resize(Bool, x.Shape...)
		m := mask.Bool()
		for i := range m {
			m[i] = keep[i] != 0
		}
	}
	switch x.DType {
	case F32:
		ewScaleBy(out.F32(), x.F32(), keep)
	case F64:
		ewScaleBy(out.F64(), x.F64(), keep)
	default:
		o, xs := out.U16(), x.U16()
		for i, v := range xs {
			if x.DType == F16 {
				o[i] = ewF64ToF16(float64(F16ToF32(v)) * keep[i])
			} else {
				o[i] = ewF64ToBF16(float64(BF16ToF32(v)) * keep[i])
			}
		}
	}
	return nil
}

func ewOne(_, _, _ float64) float64 { return 1 }

func ewScaleBy[T ewNum](out, x []T, s []float64) {
	x = x[:len(out)]
	for i, v := range x {
		out[i] = T(float64(v) * s[i])
	}
}
