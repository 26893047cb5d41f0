package templates

// CumSum (opset 11, 14) and CumProd (opset 26): running sums or products
// along the axis given by input 1, optionally exclusive (the first value is
// 0, or 1) and/or reversed. Integers accumulate in 64 bits and wrap like
// the dtype; floats accumulate in float64.

// CumSum is ONNX CumSum.
func CumSum(n *Node) error { return ewCumulate(n, false) }

// CumProd is ONNX CumProd.
func CumProd(n *Node) error { return ewCumulate(n, true) }

func ewCumulate(n *Node, prod bool) error {
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
	c := ewCum{excl: n.Attrs.Int("exclusive", 0) != 0, rev: n.Attrs.Int("reverse", 0) != 0, prod: prod}
	out := n.Out[0]
	out.Resize(x.DType, x.Shape...)
	c.outer, c.n, c.inner = ewSize(x.Shape[:ax]), x.Shape[ax], ewSize(x.Shape[ax+1:])
	switch x.DType {
	case F32:
		ewCumT[float32, float64](c, out.F32(), x.F32())
	case F64:
		ewCumT[float64, float64](c, out.F64(), x.F64())
	case I32:
		ewCumT[int32, int64](c, out.I32(), x.I32())
	case I64:
		ewCumT[int64, int64](c, out.I64(), x.I64())
	case U32:
		ewCumT[uint32, uint64](c, out.Data.([]uint32), x.Data.([]uint32))
	case U64:
		ewCumT[uint64, uint64](c, out.Data.([]uint64), x.Data.([]uint64))
	case I8:
		ewCumT[int8, int64](c, out.I8(), x.I8())
	case I16:
		ewCumT[int16, int64](c, out.Data.([]int16), x.Data.([]int16))
	case U8:
		ewCumT[uint8, uint64](c, out.U8(), x.U8())
	case U16:
		ewCumT[uint16, uint64](c, out.U16(), x.U16())
	case F16, BF16:
		ewCumHalf(c, out, x)
	default:
		return n.Errorf("dtype %s not supported", x.DType)
	}
	return nil
}

// ewCum is one cumulative walk: outer x n x inner, along n.
type ewCum struct {
	outer, n, inner int
	excl, rev, prod bool
}

// ewCumHalf is ewCumT for float16 and bfloat16 (uint16 bits), through
// float64.
func ewCumHalf(c ewCum, out, x *Tensor) {
	for o := 0; o < c.outer; o++ {
		for in := 0; in < c.inner; in++ {
			acc := 0.0
			if c.prod {
				acc = 1
			}
			for s := 0; s < c.n; s++ {
				j := s
				if c.rev {
					j = c.n - 1 - s
				}
				i := (o*c.n+j)*c.inner + in
				v := ewF64At(x, i)
				if c.excl {
					ewSetF64(out, i, acc)
				}
				if c.prod {
					acc *= v
				} else {
					acc += v
				}
				if !c.excl {
					ewSetF64(out, i, acc)
				}
			}
		}
	}
}

func ewCumT[T, W ewNum](c ewCum, out, x []T) {
	for o := 0; o < c.outer; o++ {
		for in := 0; in < c.inner; in++ {
			acc := W(0)
			if c.prod {
				acc = 1
			}
			for s := 0; s < c.n; s++ {
				j := s
				if c.rev {
					j = c.n - 1 - s
				}
				i := (o*c.n+j)*c.inner + in
				v := W(x[i])
				if c.excl {
					out[i] = T(acc)
				}
				if c.prod {
					acc *= v
				} else {
					acc += v
				}
				if !c.excl {
					out[i] = T(acc)
				}
			}
		}
	}
}
