package templates

// Small helpers several kernel families share (k_elem_shrink.go,
// k_linalg.go, k_roi.go, k_conv.go, k_conv_deform.go, k_pool.go,
// k_image_grid.go), so none of them reaches another family's file for one.

// miscSetAt stores v into element i of a numeric tensor (integers
// truncate toward zero, as a C cast would).
func miscSetAt(t *Tensor, i int, v float64) {
	switch d := t.Data.(type) {
	case []float32:
		d[i] = float32(v)
	case []float64:
		d[i] = v
	case []int64:
		d[i] = int64(v)
	case []int32:
		d[i] = int32(v)
	case []int8:
		d[i] = int8(v)
	case []uint8:
		d[i] = uint8(v)
	case []int16:
		d[i] = int16(v)
	case []uint16:
		switch t.DType {
		case F16:
			d[i] = F32ToF16(float32(v))
		case BF16:
			d[i] = F32ToBF16(float32(v))
		default:
			d[i] = uint16(v)
		}
	case []uint32:
		d[i] = uint32(v)
	case []uint64:
		d[i] = uint64(v)
	}
}

// miscReflect folds v into [lo, hi] by reflecting at the borders.
func miscReflect(v, lo, hi float64) float64 {
	rng := hi - lo
	if rng <= 0 {
		return lo
	}
	switch {
	case v < lo:
		d := lo - v
		k := int(d / rng)
		r := d - float64(k)*rng
		if k%2 == 0 {
			return lo + r
		}
		return hi - r
	case v > hi:
		d := v - hi
		k := int(d / rng)
		r := d - float64(k)*rng
		if k%2 == 0 {
			return hi - r
		}
		return lo + r
	}
	return v
}

// nnNext advances a row-major multi-index over dims, wrapping to zero.
func nnNext(idx, dims []int) {
	for d := len(idx) - 1; d >= 0; d-- {
		idx[d]++
		if idx[d] < dims[d] {
			return
		}
		idx[d] = 0
	}
}
