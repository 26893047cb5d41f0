package templates

// CumProd (opset 26): running products along the axis given by input 1,
// optionally exclusive (the first product is 1) and/or reversed. Integer
// products wrap like the dtype; floats accumulate in float64.
func CumProd(n *Node) error {
	x, err := ewIn0(n)
	if err != nil {
		return err
	}
	at := n.Input(1)
	if at == nil || at.Len() != 1 {
		return n.Errorf("want a scalar axis")
	}
	r := len(x.Shape)
	ax, ok := ewAxis(ewI64At(at, 0), r)
	if !ok {
		return n.Errorf("axis %d out of range for rank %d", ewI64At(at, 0), r)
	}
	excl, rev := n.Attrs.Int("exclusive", 0) != 0, n.Attrs.Int("reverse", 0) != 0
	out := n.Out[0]
	out.Resize(x.DType, x.Shape...)
	o, m, in := ewSize(x.Shape[:ax]), x.Shape[ax], ewSize(x.Shape[ax+1:])
	switch x.DType {
	case F32:
		cumProdT[float32, float64](out.F32(), x.F32(), o, m, in, excl, rev)
	case F64:
		cumProdT[float64, float64](out.F64(), x.F64(), o, m, in, excl, rev)
	case I32:
		cumProdT[int32, int32](out.I32(), x.I32(), o, m, in, excl, rev)
	case I64:
		cumProdT[int64, int64](out.I64(), x.I64(), o, m, in, excl, rev)
	case U32:
		cumProdT[uint32, uint32](out.Data.([]uint32), x.Data.([]uint32), o, m, in, excl, rev)
	case U64:
		cumProdT[uint64, uint64](out.Data.([]uint64), x.Data.([]uint64), o, m, in, excl, rev)
	case I8:
		cumProdT[int8, int8](out.I8(), x.I8(), o, m, in, excl, rev)
	case I16:
		cumProdT[int16, int16](out.Data.([]int16), x.Data.([]int16), o, m, in, excl, rev)
	case U8:
		cumProdT[uint8, uint8](out.U8(), x.U8(), o, m, in, excl, rev)
	case U16:
		cumProdT[uint16, uint16](out.U16(), x.U16(), o, m, in, excl, rev)
	case F16, BF16:
		for i := 0; i < o; i++ {
			for j := 0; j < in; j++ {
				acc := 1.0
				for s := 0; s < m; s++ {
					k := s
					if rev {
						k = m - 1 - s
					}
					p := (i*m+k)*in + j
					v := ewF64At(x, p)
					if excl {
						ewSetF64(out, p, acc)
						acc *= v
					} else {
						acc *= v
						ewSetF64(out, p, acc)
					}
				}
			}
		}
	default:
		return n.Errorf("dtype %s not supported", x.DType)
	}
	return nil
}

func cumProdT[T, W ewNum](out, x []T, outer, n, inner int, excl, rev bool) {
	for o := 0; o < outer; o++ {
		for in := 0; in < inner; in++ {
			acc := W(1)
			for s := 0; s < n; s++ {
				j := s
				if rev {
					j = n - 1 - s
				}
				i := (o*n+j)*inner + in
				v := W(x[i])
				if excl {
					out[i] = T(acc)
					acc *= v
				} else {
					acc *= v
					out[i] = T(acc)
				}
			}
		}
	}
}
