package templates

import "math"

// Helpers shared by the kernels in k_rnn.go, k_resize.go, k_quant.go and
// k_misc.go. Names carry a "misc" prefix so they never collide with the
// helpers of other kernel groups.

// miscFloat is the set of element types the float kernels are written for;
// f16 and bf16 run through miscViaF32.
type miscFloat interface{ ~float32 | ~float64 }

// miscScratch is a per-node set of reusable buffers, kept in Node.Cache.
// Slots are small integers chosen by each kernel.
type miscScratch[T any] struct {
	bufs [][]T
	ints [][]int
	i64  [][]int64
	f64  [][]float64
}

// miscScr returns the node's scratch for element type T, creating it on
// first use.
func miscScr[T any](n *Node) *miscScratch[T] {
	if s, ok := n.Cache.(*miscScratch[T]); ok {
		return s
	}
	s := &miscScratch[T]{}
	n.Cache = s
	return s
}

func miscGrow[E any](b *[][]E, slot, size int) []E {
	for len(*b) <= slot {
		*b = append(*b, nil)
	}
	if cap((*b)[slot]) < size {
		(*b)[slot] = make([]E, size)
	}
	return (*b)[slot][:size]
}

func (s *miscScratch[T]) get(slot, size int) []T       { return miscGrow(&s.bufs, slot, size) }
func (s *miscScratch[T]) getInts(slot, size int) []int { return miscGrow(&s.ints, slot, size) }
func (s *miscScratch[T]) getI64(slot, size int) []int64 {
	return miscGrow(&s.i64, slot, size)
}
func (s *miscScratch[T]) getF64(slot, size int) []float64 {
	return miscGrow(&s.f64, slot, size)
}

// miscHalfState is the Node.Cache of a node whose f16/bf16 inputs are
// widened to f32: a shadow node that runs the f32 kernel.
type miscHalfState struct {
	shadow Node
	ins    []Tensor
	outs   []Tensor
}

// miscViaF32 runs k on f32 copies of n's f16/bf16 inputs and narrows the
// f32 outputs back to the half type. It reports whether n had half inputs
// (and so was handled).
func miscViaF32(n *Node, k Kernel) (bool, error) {
	var half DType
	for _, t := range n.In {
		if t != nil && (t.DType == F16 || t.DType == BF16) {
			half = t.DType
			break
		}
	}
	if half == Undefined {
		return false, nil
	}
	st, ok := n.Cache.(*miscHalfState)
	if !ok {
		st = &miscHalfState{
			shadow: Node{Name: n.Name, Op: n.Op, Version: n.Version, Attrs: n.Attrs,
				In: make([]*Tensor, len(n.In)), Out: make([]*Tensor, len(n.Out))},
			ins:  make([]Tensor, len(n.In)),
			outs: make([]Tensor, len(n.Out)),
		}
		n.Cache = st
	}
	sh := &st.shadow
	for i, t := range n.In {
		sh.In[i] = t
		if t == nil || (t.DType != F16 && t.DType != BF16) {
			continue
		}
		w := &st.ins[i]
		miscResize(w, F32, t.Shape...)
		dst, src := w.F32(), t.U16()
		if t.DType == F16 {
			for j, h := range src {
				dst[j] = F16ToF32(h)
			}
		} else {
			for j, h := range src {
				dst[j] = BF16ToF32(h)
			}
		}
		sh.In[i] = w
	}
	for i, t := range n.Out {
		sh.Out[i] = nil
		if t != nil {
			sh.Out[i] = &st.outs[i]
		}
	}
	if err := k(sh); err != nil {
		return true, err
	}
	for i, t := range n.Out {
		if t == nil {
			continue
		}
		o := &st.outs[i]
		if o.DType != F32 {
			miscCopyTensor(t, o)
			continue
		}
		miscResize(t, half, o.Shape...)
		dst, src := t.U16(), o.F32()
		if half == F16 {
			for j, f := range src {
				dst[j] = F32ToF16(f)
			}
		} else {
			for j, f := range src {
				dst[j] = F32ToBF16(f)
			}
		}
	}
	return true, nil
}

// miscCopyTensor makes dst a copy of src (dtype, shape and data).
func miscCopyTensor(dst, src *Tensor) {
	miscResize(dst, src.DType, src.Shape...)
	switch s := src.Data.(type) {
	case []float32:
		copy(dst.Data.([]float32), s)
	case []float64:
		copy(dst.Data.([]float64), s)
	case []uint16:
		copy(dst.Data.([]uint16), s)
	case []int8:
		copy(dst.Data.([]int8), s)
	case []uint8:
		copy(dst.Data.([]uint8), s)
	case []int16:
		copy(dst.Data.([]int16), s)
	case []int32:
		copy(dst.Data.([]int32), s)
	case []int64:
		copy(dst.Data.([]int64), s)
	case []uint32:
		copy(dst.Data.([]uint32), s)
	case []uint64:
		copy(dst.Data.([]uint64), s)
	case []bool:
		copy(dst.Data.([]bool), s)
	case []string:
		copy(dst.Data.([]string), s)
	}
}

// miscAt reads element i of a numeric tensor as float64.
func miscAt(t *Tensor, i int) float64 {
	switch d := t.Data.(type) {
	case []float32:
		return float64(d[i])
	case []float64:
		return d[i]
	case []int64:
		return float64(d[i])
	case []int32:
		return float64(d[i])
	case []int8:
		return float64(d[i])
	case []uint8:
		return float64(d[i])
	case []int16:
		return float64(d[i])
	case []uint16:
		switch t.DType {
		case F16:
			return float64(F16ToF32(d[i]))
		case BF16:
			return float64(BF16ToF32(d[i]))
		}
		return float64(d[i])
	case []uint32:
		return float64(d[i])
	case []uint64:
		return float64(d[i])
	case []bool:
		if d[i] {
			return 1
		}
		return 0
	}
	panic("templates: not a numeric tensor: " + t.DType.String())
}

// miscIntAt reads element i of an integer tensor as int64.
func miscIntAt(t *Tensor, i int) int64 {
	switch d := t.Data.(type) {
	case []int64:
		return d[i]
	case []int32:
		return int64(d[i])
	case []int8:
		return int64(d[i])
	case []uint8:
		return int64(d[i])
	case []int16:
		return int64(d[i])
	case []uint16:
		return int64(d[i])
	case []uint32:
		return int64(d[i])
	case []uint64:
		return int64(d[i])
	case []bool:
		if d[i] {
			return 1
		}
		return 0
	}
	return int64(miscAt(t, i))
}

// miscStrides fills st with the row-major strides of shape and returns it.
func miscStrides(shape []int, st []int) []int {
	st = st[:len(shape)]
	s := 1
	for i := len(shape) - 1; i >= 0; i-- {
		st[i] = s
		s *= shape[i]
	}
	return st
}

// miscAxis normalises a possibly negative axis against rank r.
func miscAxis(n *Node, axis int64, r int) (int, error) {
	if axis < 0 {
		axis += int64(r)
	}
	if axis < 0 || axis >= int64(r) {
		return 0, n.Errorf("axis %d out of range for rank %d", axis, r)
	}
	return int(axis), nil
}

// miscRoundEven rounds half to even, as ONNX quantization requires.
func miscRoundEven(x float64) float64 { return math.RoundToEven(x) }

// miscSameShape reports whether two shapes are equal.
func miscSameShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// miscResize is Tensor.Resize that does nothing when t already has the
// dtype and shape: Resize re-boxes the slice into Data, which allocates.
func miscResize(t *Tensor, dt DType, shape ...int) {
	if t.DType == dt && t.Data != nil && miscSameShape(t.Shape, shape) && miscDataLen(t) == t.Len() {
		return
	}
	t.Resize(dt, shape...)
}

// miscDataLen is the length of t's data slice.
func miscDataLen(t *Tensor) int {
	switch d := t.Data.(type) {
	case []float32:
		return len(d)
	case []float64:
		return len(d)
	case []uint16:
		return len(d)
	case []int8:
		return len(d)
	case []uint8:
		return len(d)
	case []int16:
		return len(d)
	case []int32:
		return len(d)
	case []int64:
		return len(d)
	case []uint32:
		return len(d)
	case []uint64:
		return len(d)
	case []bool:
		return len(d)
	case []string:
		return len(d)
	}
	return -1
}
