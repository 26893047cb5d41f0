package templates

// TensorScatter is ONNX TensorScatter (opset 24): present_cache is
// past_cache with update written along axis (default -2, never the batch
// axis 0) from position write_indices[b] for batch b (0 without the input);
// mode circular wraps positions modulo the cache length, linear requires
// them in range.
func TensorScatter(n *Node) error {
	past, upd, wi := n.Input(0), n.Input(1), n.Input(2)
	if past == nil || upd == nil {
		return n.Errorf("needs inputs past_cache and update")
	}
	r := len(past.Shape)
	if len(upd.Shape) != r || upd.DType != past.DType {
		return n.Errorf("update %v %v does not match past_cache %v %v", upd.DType, upd.Shape, past.DType, past.Shape)
	}
	axis, err := nnAxis(n, n.Attrs.Int("axis", -2), r)
	if err != nil {
		return err
	}
	if axis == 0 {
		return n.Errorf("axis must not be the batch axis 0")
	}
	for i := range past.Shape {
		if i != axis && past.Shape[i] != upd.Shape[i] || i == axis && upd.Shape[i] > past.Shape[i] {
			return n.Errorf("update %v does not fit past_cache %v along axis %d", upd.Shape, past.Shape, axis)
		}
	}
	circular := false
	switch m := n.Attrs.String("mode", "linear"); m {
	case "linear":
	case "circular":
		circular = true
	default:
		return n.Errorf("unknown mode %q", m)
	}
	B := past.Shape[0]
	var idx []int64
	if wi != nil {
		idx = wi.I64()
		if len(idx) != B {
			return n.Errorf("write_indices has %d entries for batch %d", len(idx), B)
		}
	}
	maxLen, seq := past.Shape[axis], upd.Shape[axis]
	inner := nnProd(past.Shape[axis+1:])
	outer := nnProd(past.Shape[1:axis]) // per batch
	tsResize(n.Out[0], past)
	// dst/src element offsets of each copied block of inner elements.
	copyBlocks := func(blk func(d, s int)) error {
		for b := 0; b < B; b++ {
			w := 0
			if idx != nil {
				w = int(idx[b])
			}
			for o := 0; o < outer; o++ {
				p := b*outer + o
				for s := 0; s < seq; s++ {
					c := w + s
					if circular {
						c = ((c % maxLen) + maxLen) % maxLen
					} else if c < 0 || c >= maxLen {
						return n.Errorf("write index %d + %d is outside the cache length %d", w, s, maxLen)
					}
					blk((p*maxLen+c)*inner, (p*seq+s)*inner)
				}
			}
		}
		return nil
	}
	switch d := n.Out[0].Data.(type) {
	case []float32:
		return tsScatter(d, past.Data.([]float32), upd.Data.([]float32), inner, copyBlocks)
	case []float64:
		return tsScatter(d, past.Data.([]float64), upd.Data.([]float64), inner, copyBlocks)
	case []uint16:
		return tsScatter(d, past.Data.([]uint16), upd.Data.([]uint16), inner, copyBlocks)
	case []int8:
		return tsScatter(d, past.Data.([]int8), upd.Data.([]int8), inner, copyBlocks)
	case []uint8:
		return tsScatter(d, past.Data.([]uint8), upd.Data.([]uint8), inner, copyBlocks)
	case []int16:
		return tsScatter(d, past.Data.([]int16), upd.Data.([]int16), inner, copyBlocks)
	case []int32:
		return tsScatter(d, past.Data.([]int32), upd.Data.([]int32), inner, copyBlocks)
	case []uint32:
		return tsScatter(d, past.Data.([]uint32), upd.Data.([]uint32), inner, copyBlocks)
	case []int64:
		return tsScatter(d, past.Data.([]int64), upd.Data.([]int64), inner, copyBlocks)
	case []uint64:
		return tsScatter(d, past.Data.([]uint64), upd.Data.([]uint64), inner, copyBlocks)
	case []bool:
		return tsScatter(d, past.Data.([]bool), upd.Data.([]bool), inner, copyBlocks)
	case []string:
		return tsScatter(d, past.Data.([]string), upd.Data.([]string), inner, copyBlocks)
	case []complex64:
		return tsScatter(d, past.Data.([]complex64), upd.Data.([]complex64), inner, copyBlocks)
	case []complex128:
		return tsScatter(d, past.Data.([]complex128), upd.Data.([]complex128), inner, copyBlocks)
	}
	return n.Errorf("unsupported dtype %v", past.DType)
}

// tsResize gives t the dtype and shape of like.
func tsResize(t, like *Tensor) { nnResize(t, like.DType, like.Shape...) }

func tsScatter[T any](dst, past, upd []T, inner int, blocks func(func(d, s int)) error) error {
	copy(dst, past)
	return blocks(func(d, s int) { copy(dst[d:d+inner], upd[s:s+inner]) })
}
