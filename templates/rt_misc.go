package templates

import "math"

// Helpers shared by the kernels in k_rnn.go, k_resize.go, k_quant.go and
// k_index_*.go. Names carry a "misc" prefix so they never collide with the
// helpers of other kernel groups.

// miscFloat is the set of element types the float kernels are written for;
// f16 and bf16 run through nnViaF32.
type miscFloat interface{ ~float32 | ~float64 }

// miscScratch is a per-node set of reusable buffers, kept in Node.Cache.
// Slots are small integers chosen by each kernel.
type miscScratch[T any] struct {
	bufs [][]T
	ints [][]int
	i64  [][]int64
	f64  [][]float64
	task any // a kernel's parallel task, reused across runs
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
