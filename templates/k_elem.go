package templates

import "math"

// Broadcasting binary and variadic elementwise kernels. Each op is a table
// of scalar functions, one per number class: floats are computed in
// float64 (f32 may add a native float32 function for speed), signed
// integers in int64 and unsigned in uint64, then narrowed. Narrowing after
// +, -, * and shifts wraps exactly like the native type; division and
// comparison of widened values give the native result too.

type ewBin struct {
	f   func(a, b float64) float64
	f32 func(a, b float32) float32
	i   func(a, b int64) int64
	u   func(a, b uint64) uint64
}

type ewCmp struct {
	f func(a, b float64) bool
	i func(a, b int64) bool
	u func(a, b uint64) bool
	b func(a, b bool) bool
	s func(a, b string) bool
}

// ewLoop2 computes out = f(a, b) over a walk (operands out, a, b), each
// value widened to W.
func ewLoop2[T, W ewNum](w *ewWalk, out, a, b []T, f func(W, W) W) {
	n, so, sa, sb, _ := w.inner()
	for it := w.iter(); it.next(); {
		o, ia, ib := it.off[0], it.off[1], it.off[2]
		switch {
		case so == 1 && sa == 1 && sb == 1:
			oo, aa, bb := out[o:o+n], a[ia:ia+n], b[ib:ib+n]
			for k := range oo {
				oo[k] = T(f(W(aa[k]), W(bb[k])))
			}
		case so == 1 && sa == 1 && sb == 0:
			oo, aa, y := out[o:o+n], a[ia:ia+n], W(b[ib])
			for k := range oo {
				oo[k] = T(f(W(aa[k]), y))
			}
		case so == 1 && sa == 0 && sb == 1:
			oo, x, bb := out[o:o+n], W(a[ia]), b[ib:ib+n]
			for k := range oo {
				oo[k] = T(f(x, W(bb[k])))
			}
		default:
			for k := 0; k < n; k++ {
				out[o+k*so] = T(f(W(a[ia+k*sa]), W(b[ib+k*sb])))
			}
		}
	}
}

// ewLoop2H is ewLoop2 for f16/bf16 bits.
func ewLoop2H(w *ewWalk, out, a, b []uint16, f func(x, y float64) float64, dec func(uint16) float32, enc func(float64) uint16) {
	n, so, sa, sb, _ := w.inner()
	for it := w.iter(); it.next(); {
		o, ia, ib := it.off[0], it.off[1], it.off[2]
		for k := 0; k < n; k++ {
			out[o+k*so] = enc(f(float64(dec(a[ia+k*sa])), float64(dec(b[ib+k*sb]))))
		}
	}
}

// ewLoop2To computes out = f(a, b) with a result type of its own.
func ewLoop2To[T any, W any, O any](w *ewWalk, out []O, a, b []T, conv func(T) W, f func(W, W) O) {
	n, so, sa, sb, _ := w.inner()
	for it := w.iter(); it.next(); {
		o, ia, ib := it.off[0], it.off[1], it.off[2]
		for k := 0; k < n; k++ {
			out[o+k*so] = f(conv(a[ia+k*sa]), conv(b[ib+k*sb]))
		}
	}
}

func ewWiden[T, W ewNum](x T) W { return W(x) }
func ewSame[T any](x T) T       { return x }
func ewF16To64(x uint16) float64 {
	return float64(F16ToF32(x))
}
func ewBF16To64(x uint16) float64 { return float64(BF16ToF32(x)) }

// ewBinOut sizes out to the broadcast shape of a and b with dtype dt and
// sets w up to walk out, a and b, honouring the legacy (opset < 7)
// broadcast/axis attributes.
func ewBinOut(n *Node, w *ewWalk, a, b, out *Tensor, dt DType) error {
	var os, bs ewShape
	bs.set(b.Shape)
	if n.Attrs.Int("broadcast", 0) == 1 && n.Attrs.Has("axis") {
		axis := int(n.Attrs.Int("axis", 0))
		if axis < 0 {
			axis += len(a.Shape)
		}
		if axis < 0 || axis+len(b.Shape) > len(a.Shape) {
			return n.Errorf("legacy broadcast: B%v does not fit A%v at axis %d", b.Shape, a.Shape, axis)
		}
		bs.n = len(a.Shape)
		for i := range bs.n {
			bs.d[i] = 1
		}
		copy(bs.d[axis:], b.Shape)
	}
	if !ewBroadcastShape(&os, a.Shape, bs.s()) {
		return n.Errorf("shapes %v and %v do not broadcast", a.Shape, b.Shape)
	}
	out.Resize(dt, os.s()...)
	w.initBroadcast(os.s(), a.Shape, bs.s())
	return nil
}

// ewBinIn returns a binary node's inputs, which must share a dtype, and
// its output.
func ewBinIn(n *Node) (a, b, out *Tensor, err error) {
	if len(n.In) < 2 || n.In[0] == nil || n.In[1] == nil || len(n.Out) < 1 {
		return nil, nil, nil, n.Errorf("want 2 inputs and 1 output")
	}
	a, b, out = n.In[0], n.In[1], n.Out[0]
	if a.DType != b.DType {
		return nil, nil, nil, n.Errorf("input dtypes differ: %s and %s", a.DType, b.DType)
	}
	return a, b, out, nil
}

// ewBinNum runs op on same-typed operands whose Go element type is T.
func ewBinNum[T ewNum](w *ewWalk, dt DType, out, a, b any, op *ewBin) bool {
	o, x, y := out.([]T), a.([]T), b.([]T)
	switch {
	case dt == F32 && op.f32 != nil:
		ewLoop2(w, o, x, y, op.f32)
	case ewIsFloat(dt) && op.f != nil:
		ewLoop2(w, o, x, y, op.f)
	case ewIsSigned(dt) && op.i != nil:
		ewLoop2(w, o, x, y, op.i)
	case ewIsUnsigned(dt) && op.u != nil:
		ewLoop2(w, o, x, y, op.u)
	default:
		return false
	}
	return true
}

// ewBinData dispatches op on data slices of dtype dt laid over w.
func ewBinData(w *ewWalk, dt DType, out, a, b any, op *ewBin) bool {
	switch dt {
	case F32:
		return ewBinNum[float32](w, dt, out, a, b, op)
	case F64:
		return ewBinNum[float64](w, dt, out, a, b, op)
	case F16, BF16:
		if op.f == nil {
			return false
		}
		dec, enc := F16ToF32, ewF64ToF16
		if dt == BF16 {
			dec, enc = BF16ToF32, ewF64ToBF16
		}
		ewLoop2H(w, out.([]uint16), a.([]uint16), b.([]uint16), op.f, dec, enc)
		return true
	case I8:
		return ewBinNum[int8](w, dt, out, a, b, op)
	case I16:
		return ewBinNum[int16](w, dt, out, a, b, op)
	case I32:
		return ewBinNum[int32](w, dt, out, a, b, op)
	case I64:
		return ewBinNum[int64](w, dt, out, a, b, op)
	case U8:
		return ewBinNum[uint8](w, dt, out, a, b, op)
	case U16:
		return ewBinNum[uint16](w, dt, out, a, b, op)
	case U32:
		return ewBinNum[uint32](w, dt, out, a, b, op)
	case U64:
		return ewBinNum[uint64](w, dt, out, a, b, op)
	}
	return false
}

// ewBinary runs a broadcasting binary op whose output has the inputs'
// dtype.
func ewBinary(n *Node, op *ewBin) error {
	a, b, out, err := ewBinIn(n)
	if err != nil {
		return err
	}
	var w ewWalk
	if err := ewBinOut(n, &w, a, b, out, a.DType); err != nil {
		return err
	}
	if !ewBinData(&w, a.DType, out.Data, a.Data, b.Data, op) {
		return n.Errorf("dtype %s not supported", a.DType)
	}
	return nil
}

func ewCmpNum[T ewNum](w *ewWalk, dt DType, out []bool, a, b any, op *ewCmp) bool {
	x, y := a.([]T), b.([]T)
	switch {
	case ewIsFloat(dt) && op.f != nil:
		ewLoop2To(w, out, x, y, ewWiden[T, float64], op.f)
	case ewIsSigned(dt) && op.i != nil:
		ewLoop2To(w, out, x, y, ewWiden[T, int64], op.i)
	case ewIsUnsigned(dt) && op.u != nil:
		ewLoop2To(w, out, x, y, ewWiden[T, uint64], op.u)
	default:
		return false
	}
	return true
}

// ewCompare runs a broadcasting op with a bool result (comparisons and
// logic).
func ewCompare(n *Node, op *ewCmp) error {
	a, b, out, err := ewBinIn(n)
	if err != nil {
		return err
	}
	var w ewWalk
	if err := ewBinOut(n, &w, a, b, out, Bool); err != nil {
		return err
	}
	o := out.Bool()
	ok := false
	switch a.DType {
	case F32:
		ok = ewCmpNum[float32](&w, a.DType, o, a.Data, b.Data, op)
	case F64:
		ok = ewCmpNum[float64](&w, a.DType, o, a.Data, b.Data, op)
	case F16:
		if ok = op.f != nil; ok {
			ewLoop2To(&w, o, a.U16(), b.U16(), ewF16To64, op.f)
		}
	case BF16:
		if ok = op.f != nil; ok {
			ewLoop2To(&w, o, a.U16(), b.U16(), ewBF16To64, op.f)
		}
	case I8:
		ok = ewCmpNum[int8](&w, a.DType, o, a.Data, b.Data, op)
	case I16:
		ok = ewCmpNum[int16](&w, a.DType, o, a.Data, b.Data, op)
	case I32:
		ok = ewCmpNum[int32](&w, a.DType, o, a.Data, b.Data, op)
	case I64:
		ok = ewCmpNum[int64](&w, a.DType, o, a.Data, b.Data, op)
	case U8:
		ok = ewCmpNum[uint8](&w, a.DType, o, a.Data, b.Data, op)
	case U16:
		ok = ewCmpNum[uint16](&w, a.DType, o, a.Data, b.Data, op)
	case U32:
		ok = ewCmpNum[uint32](&w, a.DType, o, a.Data, b.Data, op)
	case U64:
		ok = ewCmpNum[uint64](&w, a.DType, o, a.Data, b.Data, op)
	case Bool:
		if ok = op.b != nil; ok {
			ewLoop2To(&w, o, a.Bool(), b.Bool(), ewSame[bool], op.b)
		}
	case String:
		if ok = op.s != nil; ok {
			ewLoop2To(&w, o, a.Str(), b.Str(), ewSame[string], op.s)
		}
	}
	if !ok {
		return n.Errorf("dtype %s not supported", a.DType)
	}
	return nil
}

// ewVariadic folds op over all inputs with multidirectional broadcasting
// (Sum, Mean, Max, Min). Mean divides by the input count afterwards.
func ewVariadic(n *Node, op *ewBin, mean bool) error {
	if len(n.In) == 0 || len(n.Out) < 1 {
		return n.Errorf("want at least 1 input")
	}
	var os ewShape
	os.n = 0
	for _, t := range n.In {
		if t == nil {
			return n.Errorf("missing input")
		}
		if t.DType != n.In[0].DType {
			return n.Errorf("input dtypes differ: %s and %s", n.In[0].DType, t.DType)
		}
		prev := os
		if !ewBroadcastShape(&os, prev.s(), t.Shape) {
			return n.Errorf("input shapes do not broadcast: %v and %v", append([]int(nil), prev.s()...), t.Shape)
		}
	}
	dt := n.In[0].DType
	out := n.Out[0]
	out.Resize(dt, os.s()...)
	var w ewWalk
	w.initBroadcast(os.s(), n.In[0].Shape)
	ewCopyWalkAny(&w, out.Data, n.In[0].Data)
	for _, t := range n.In[1:] {
		w.initBroadcast(os.s(), os.s(), t.Shape)
		if !ewBinData(&w, dt, out.Data, out.Data, t.Data, op) {
			return n.Errorf("dtype %s not supported", dt)
		}
	}
	if mean {
		if !ewIsFloat(dt) {
			return n.Errorf("dtype %s not supported", dt)
		}
		ewMapFloat(dt, out.Data, out.Data, ewOpScale.f, 1/float64(len(n.In)), 0)
	}
	return nil
}

func ewDivI(a, b int64) int64 {
	if b == 0 {
		return 0 // undefined in ONNX; avoid Go's panic
	}
	return a / b
}

func ewDivU(a, b uint64) uint64 {
	if b == 0 {
		return 0
	}
	return a / b
}

func ewMaxF(a, b float64) float64 {
	if a != a || a > b {
		return a
	}
	return b
}

func ewMinF(a, b float64) float64 {
	if a != a || a < b {
		return a
	}
	return b
}

// ewPowI raises an integer to an integer power exactly (wrapping like the
// native type after narrowing). Negative exponents follow float pow and
// truncate.
func ewPowI(a, b int64) int64 {
	if b < 0 {
		return int64(math.Pow(float64(a), float64(b)))
	}
	r := int64(1)
	for b > 0 {
		if b&1 == 1 {
			r *= a
		}
		a *= a
		b >>= 1
	}
	return r
}

func ewPowU(a, b uint64) uint64 {
	r := uint64(1)
	for b > 0 {
		if b&1 == 1 {
			r *= a
		}
		a *= a
		b >>= 1
	}
	return r
}

var (
	ewOpAdd = ewBin{
		f:   func(a, b float64) float64 { return a + b },
		f32: func(a, b float32) float32 { return a + b },
		i:   func(a, b int64) int64 { return a + b },
		u:   func(a, b uint64) uint64 { return a + b },
	}
	ewOpSub = ewBin{
		f:   func(a, b float64) float64 { return a - b },
		f32: func(a, b float32) float32 { return a - b },
		i:   func(a, b int64) int64 { return a - b },
		u:   func(a, b uint64) uint64 { return a - b },
	}
	ewOpMul = ewBin{
		f:   func(a, b float64) float64 { return a * b },
		f32: func(a, b float32) float32 { return a * b },
		i:   func(a, b int64) int64 { return a * b },
		u:   func(a, b uint64) uint64 { return a * b },
	}
	ewOpDiv = ewBin{
		f:   func(a, b float64) float64 { return a / b },
		f32: func(a, b float32) float32 { return a / b },
		i:   ewDivI,
		u:   ewDivU,
	}
	ewOpPow = ewBin{f: math.Pow, i: ewPowI, u: ewPowU}
	ewOpMax = ewBin{
		f: ewMaxF,
		i: func(a, b int64) int64 { return max(a, b) },
		u: func(a, b uint64) uint64 { return max(a, b) },
	}
	ewOpMin = ewBin{
		f: ewMinF,
		i: func(a, b int64) int64 { return min(a, b) },
		u: func(a, b uint64) uint64 { return min(a, b) },
	}
	ewOpSum = ewBin{f: ewOpAdd.f, f32: ewOpAdd.f32}
	// Mod with fmod=0: the result takes the divisor's sign (Python %).
	ewOpModPy = ewBin{
		f: func(a, b float64) float64 {
			r := math.Mod(a, b)
			if r != 0 && (r < 0) != (b < 0) {
				r += b
			}
			return r
		},
		i: func(a, b int64) int64 {
			if b == 0 {
				return 0
			}
			r := a % b
			if r != 0 && (r < 0) != (b < 0) {
				r += b
			}
			return r
		},
		u: func(a, b uint64) uint64 {
			if b == 0 {
				return 0
			}
			return a % b
		},
	}
	// Mod with fmod=1: the result takes the dividend's sign (C fmod).
	ewOpModC = ewBin{
		f: math.Mod,
		i: func(a, b int64) int64 {
			if b == 0 {
				return 0
			}
			return a % b
		},
		u: ewOpModPy.u,
	}
	ewOpShl   = ewBin{u: func(a, b uint64) uint64 { return a << b }}
	ewOpShr   = ewBin{u: func(a, b uint64) uint64 { return a >> b }}
	ewOpPRelu = ewBin{
		f: func(x, s float64) float64 {
			if x < 0 {
				return x * s
			}
			return x
		},
		i: func(x, s int64) int64 {
			if x < 0 {
				return x * s
			}
			return x
		},
		u: func(x, s uint64) uint64 { return x },
	}

	ewCmpEqual = ewCmp{
		f: func(a, b float64) bool { return a == b },
		i: func(a, b int64) bool { return a == b },
		u: func(a, b uint64) bool { return a == b },
		b: func(a, b bool) bool { return a == b },
		s: func(a, b string) bool { return a == b },
	}
	ewCmpLess = ewCmp{
		f: func(a, b float64) bool { return a < b },
		i: func(a, b int64) bool { return a < b },
		u: func(a, b uint64) bool { return a < b },
	}
	ewCmpGreater = ewCmp{
		f: func(a, b float64) bool { return a > b },
		i: func(a, b int64) bool { return a > b },
		u: func(a, b uint64) bool { return a > b },
	}
	ewCmpLessEq = ewCmp{
		f: func(a, b float64) bool { return a <= b },
		i: func(a, b int64) bool { return a <= b },
		u: func(a, b uint64) bool { return a <= b },
	}
	ewCmpGreaterEq = ewCmp{
		f: func(a, b float64) bool { return a >= b },
		i: func(a, b int64) bool { return a >= b },
		u: func(a, b uint64) bool { return a >= b },
	}
	ewCmpAnd = ewCmp{b: func(a, b bool) bool { return a && b }}
	ewCmpOr  = ewCmp{b: func(a, b bool) bool { return a || b }}
	ewCmpXor = ewCmp{b: func(a, b bool) bool { return a != b }}
)

func Add(n *Node) error { return ewArith(n, &ewOpAdd, ewaAdd) }
func Sub(n *Node) error { return ewArith(n, &ewOpSub, ewaSub) }
func Mul(n *Node) error { return ewArith(n, &ewOpMul, ewaMul) }
func Div(n *Node) error { return ewArith(n, &ewOpDiv, ewaDiv) }

// ewArith's op codes (its own: the program codes of k_elem_group.go would
// make a model of Add alone copy the groups and the epilogues).
const (
	ewaAdd = iota
	ewaSub
	ewaMul
	ewaDiv
)

// ewArith is Add, Sub, Mul or Div (op, code ewa*): float32 runs typed
// loops over the broadcast walk (no
// call per element; the same float32 operation, so the same bits as
// op.f32) split along the walk's first dimension over n's pool for large
// outputs; other dtypes ewBinary.
func ewArith(n *Node, op *ewBin, code int) error {
	a, b, out, err := ewBinIn(n)
	if err != nil {
		return err
	}
	if a.DType != F32 {
		return ewBinary(n, op)
	}
	t := parTaskOf[ewArithTask](n)
	if err := ewBinOut(n, &t.w, a, b, out, F32); err != nil {
		return err
	}
	t.out, t.a, t.b, t.op = out.F32(), a.F32(), b.F32(), code
	parts := ewParts(n, len(t.out))
	if t.w.rank == 1 {
		parts = min(parts, max(1, t.w.dims[0]/16))
	} else {
		parts = min(parts, max(1, t.w.dims[0]))
	}
	n.Pool.Run(parts, t)
	t.out, t.a, t.b = nil, nil, nil
	return nil
}

// ewArithTask is a float32 Add/Sub/Mul/Div over walk w, each part a range
// of the walk's first dimension (of whole vectors of 16 when it is the
// only one).
type ewArithTask struct {
	w         ewWalk
	out, a, b []float32
	op        int
}

func (t *ewArithTask) runPart(i, parts int) {
	w := t.w
	align := 1
	if w.rank == 1 {
		align = 16
	}
	lo, hi := parSplit(w.dims[0], parts, i, align)
	if lo >= hi {
		return
	}
	for k := 0; k < w.nops; k++ {
		w.base[k] += lo * w.st[k][0]
	}
	w.dims[0] = hi - lo
	n, so, sa, sb, _ := w.inner()
	for it := w.iter(); it.next(); {
		o, ia, ib := it.off[0], it.off[1], it.off[2]
		switch {
		case so == 1 && sa == 1 && sb == 1:
			ewArithVV(t.op, t.out[o:o+n], t.a[ia:ia+n], t.b[ib:ib+n])
		case so == 1 && sa == 1 && sb == 0:
			ewArithVS(t.op, t.out[o:o+n], t.a[ia:ia+n], t.b[ib])
		case so == 1 && sa == 0 && sb == 1:
			ewArithSV(t.op, t.out[o:o+n], t.a[ia], t.b[ib:ib+n])
		default:
			for k := 0; k < n; k++ {
				t.out[o+k*so] = ewArith1(t.op, t.a[ia+k*sa], t.b[ib+k*sb])
			}
		}
	}
}

func ewArith1(op int, a, b float32) float32 {
	switch op {
	case ewaAdd:
		return a + b
	case ewaSub:
		return a - b
	case ewaMul:
		return a * b
	}
	return a / b
}

func ewArithVV(op int, dst, a, b []float32) {
	a, b = a[:len(dst)], b[:len(dst)]
	switch op {
	case ewaAdd:
		for i := range dst {
			dst[i] = a[i] + b[i]
		}
	case ewaSub:
		for i := range dst {
			dst[i] = a[i] - b[i]
		}
	case ewaMul:
		for i := range dst {
			dst[i] = a[i] * b[i]
		}
	default:
		for i := range dst {
			dst[i] = a[i] / b[i]
		}
	}
}

func ewArithVS(op int, dst, a []float32, b float32) {
	a = a[:len(dst)]
	switch op {
	case ewaAdd:
		for i := range dst {
			dst[i] = a[i] + b
		}
	case ewaSub:
		for i := range dst {
			dst[i] = a[i] - b
		}
	case ewaMul:
		for i := range dst {
			dst[i] = a[i] * b
		}
	default:
		for i := range dst {
			dst[i] = a[i] / b
		}
	}
}

func ewArithSV(op int, dst []float32, a float32, b []float32) {
	b = b[:len(dst)]
	switch op {
	case ewaAdd:
		for i := range dst {
			dst[i] = a + b[i]
		}
	case ewaSub:
		for i := range dst {
			dst[i] = a - b[i]
		}
	case ewaMul:
		for i := range dst {
			dst[i] = a * b[i]
		}
	default:
		for i := range dst {
			dst[i] = a / b[i]
		}
	}
}
func Equal(n *Node) error          { return ewCompare(n, &ewCmpEqual) }
func Less(n *Node) error           { return ewCompare(n, &ewCmpLess) }
func Greater(n *Node) error        { return ewCompare(n, &ewCmpGreater) }
func LessOrEqual(n *Node) error    { return ewCompare(n, &ewCmpLessEq) }
func GreaterOrEqual(n *Node) error { return ewCompare(n, &ewCmpGreaterEq) }
func And(n *Node) error            { return ewCompare(n, &ewCmpAnd) }
func Or(n *Node) error             { return ewCompare(n, &ewCmpOr) }
func Xor(n *Node) error            { return ewCompare(n, &ewCmpXor) }
func Sum(n *Node) error            { return ewVariadic(n, &ewOpSum, false) }
func Mean(n *Node) error           { return ewVariadic(n, &ewOpSum, true) }
func Max(n *Node) error            { return ewVariadic(n, &ewOpMax, false) }
func Min(n *Node) error            { return ewVariadic(n, &ewOpMin, false) }

// Mod: fmod=0 gives the divisor's sign (integers), fmod=1 the dividend's.
func Mod(n *Node) error {
	if n.Attrs.Int("fmod", 0) == 1 {
		return ewBinary(n, &ewOpModC)
	}
	return ewBinary(n, &ewOpModPy)
}

// BitShift shifts unsigned integers; direction is "LEFT" or "RIGHT".
func BitShift(n *Node) error {
	switch d := n.Attrs.String("direction", ""); d {
	case "LEFT":
		return ewBinary(n, &ewOpShl)
	case "RIGHT":
		return ewBinary(n, &ewOpShr)
	default:
		return n.Errorf("direction %q, want LEFT or RIGHT", d)
	}
}

// PRelu: y = x < 0 ? slope*x : x, slope broadcast to x. Before opset 7 a
// 1-D slope of length C applies per channel (axis 1).
func PRelu(n *Node) error {
	if len(n.In) < 2 || n.In[0] == nil || n.In[1] == nil {
		return n.Errorf("want 2 inputs")
	}
	x, s, out := n.In[0], n.In[1], n.Out[0]
	if x.DType != s.DType {
		return n.Errorf("input dtypes differ: %s and %s", x.DType, s.DType)
	}
	var ss ewShape
	ss.set(s.Shape)
	if n.Version < 7 && len(s.Shape) == 1 && len(x.Shape) > 2 && s.Shape[0] == x.Shape[1] && s.Shape[0] != 1 {
		ss.n = len(x.Shape) - 1
		ss.d[0] = s.Shape[0]
		for i := 1; i < ss.n; i++ {
			ss.d[i] = 1
		}
	}
	var os ewShape
	if !ewBroadcastShape(&os, x.Shape, ss.s()) {
		return n.Errorf("slope %v does not broadcast to %v", s.Shape, x.Shape)
	}
	if x.DType == F32 && len(os.s()) == len(x.Shape) && preluRows32(n, x, s.F32(), ss.s()) {
		// One slope, a slope per channel or a channel-last slope: the
		// float32 vector rows (the product as the walk below rounds it).
		return nil
	}
	out.Resize(x.DType, os.s()...)
	var w ewWalk
	w.initBroadcast(os.s(), x.Shape, ss.s())
	if !ewBinData(&w, x.DType, out.Data, x.Data, s.Data, &ewOpPRelu) {
		return n.Errorf("dtype %s not supported", x.DType)
	}
	return nil
}
