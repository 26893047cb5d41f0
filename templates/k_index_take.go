package templates

import (
	"cmp"
)

// Helpers of the ops that only move elements (TopK, Compress, Unique,
// ReverseSequence, MaxUnpool): they compute a source index per output
// element and copy with miscTake, so they work for every dtype.

// miscTake sets dst[i] = src[idx[i]] (the zero value when idx[i] < 0);
// dst must already have src's dtype and len(idx) elements.
func miscTake(dst, src *Tensor, idx []int) {
	switch s := src.Data.(type) {
	case []float32:
		miscTakeT(dst.Data.([]float32), s, idx)
	case []float64:
		miscTakeT(dst.Data.([]float64), s, idx)
	case []uint16:
		miscTakeT(dst.Data.([]uint16), s, idx)
	case []int8:
		miscTakeT(dst.Data.([]int8), s, idx)
	case []uint8:
		miscTakeT(dst.Data.([]uint8), s, idx)
	case []int16:
		miscTakeT(dst.Data.([]int16), s, idx)
	case []int32:
		miscTakeT(dst.Data.([]int32), s, idx)
	case []int64:
		miscTakeT(dst.Data.([]int64), s, idx)
	case []uint32:
		miscTakeT(dst.Data.([]uint32), s, idx)
	case []uint64:
		miscTakeT(dst.Data.([]uint64), s, idx)
	case []bool:
		miscTakeT(dst.Data.([]bool), s, idx)
	case []string:
		miscTakeT(dst.Data.([]string), s, idx)
	}
}

func miscTakeT[E any](dst, src []E, idx []int) {
	var zero E
	for i, j := range idx {
		if j < 0 {
			dst[i] = zero
		} else {
			dst[i] = src[j]
		}
	}
}

// miscCmpAt compares elements i and j of t (NaN sorts above everything).
func miscCmpAt(t *Tensor, i, j int) int {
	switch d := t.Data.(type) {
	case []float32:
		return miscCmpF(float64(d[i]), float64(d[j]))
	case []float64:
		return miscCmpF(d[i], d[j])
	case []int64:
		return cmp.Compare(d[i], d[j])
	case []int32:
		return cmp.Compare(d[i], d[j])
	case []uint64:
		return cmp.Compare(d[i], d[j])
	case []string:
		return cmp.Compare(d[i], d[j])
	}
	return miscCmpF(ewF64At(t, i), ewF64At(t, j))
}

func miscCmpF(a, b float64) int {
	an, bn := a != a, b != b
	switch {
	case an && bn:
		return 0
	case an:
		return 1
	case bn:
		return -1
	}
	return cmp.Compare(a, b)
}

// miscSplitAxis returns (outer, length, inner) of shape around axis.
func miscSplitAxis(shape []int, axis int) (int, int, int) {
	outer, inner := 1, 1
	for _, d := range shape[:axis] {
		outer *= d
	}
	for _, d := range shape[axis+1:] {
		inner *= d
	}
	return outer, shape[axis], inner
}
