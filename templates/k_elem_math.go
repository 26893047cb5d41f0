package templates

import "math"

// Unary elementwise kernels. Float math runs in float64 with up to two
// parameters (alpha, beta); integer variants, where the spec allows
// integers, run in int64/uint64.

type ewUn struct {
	f func(x, p, q float64) float64
	i func(x int64) int64
	u func(x uint64) uint64
}

func ewMapH(out, in []uint16, f func(x, p, q float64) float64, p, q float64, dec func(uint16) float32, enc func(float64) uint16) {
	in = in[:len(out)]
	for k, v := range in {
		out[k] = enc(f(float64(dec(v)), p, q))
	}
}

func ewMapW[T, W ewNum](out, in []T, f func(W) W) {
	in = in[:len(out)]
	for k, v := range in {
		out[k] = T(f(W(v)))
	}
}

// ewMapFloat applies f to float data of dtype dt (out may alias in).
func ewMapFloat(dt DType, out, in any, f func(x, p, q float64) float64, p, q float64) bool {
	switch dt {
	case F32:
		ewMapF(out.([]float32), in.([]float32), f, p, q)
	case F64:
		ewMapF(out.([]float64), in.([]float64), f, p, q)
	case F16:
		ewMapH(out.([]uint16), in.([]uint16), f, p, q, F16ToF32, ewF64ToF16)
	case BF16:
		ewMapH(out.([]uint16), in.([]uint16), f, p, q, BF16ToF32, ewF64ToBF16)
	default:
		return false
	}
	return true
}

func ewMapInt[T ewNum](dt DType, out, in any, op *ewUn) bool {
	o, x := out.([]T), in.([]T)
	switch {
	case ewIsSigned(dt) && op.i != nil:
		ewMapW(o, x, op.i)
	case ewIsUnsigned(dt) && op.u != nil:
		ewMapW(o, x, op.u)
	default:
		return false
	}
	return true
}

// ewUnaryData applies op to data of dtype dt.
func ewUnaryData(dt DType, out, in any, op *ewUn, p, q float64) bool {
	if ewIsFloat(dt) {
		return op.f != nil && ewMapFloat(dt, out, in, op.f, p, q)
	}
	switch dt {
	case I8:
		return ewMapInt[int8](dt, out, in, op)
	case I16:
		return ewMapInt[int16](dt, out, in, op)
	case I32:
		return ewMapInt[int32](dt, out, in, op)
	case I64:
		return ewMapInt[int64](dt, out, in, op)
	case U8:
		return ewMapInt[uint8](dt, out, in, op)
	case U16:
		return ewMapInt[uint16](dt, out, in, op)
	case U32:
		return ewMapInt[uint32](dt, out, in, op)
	case U64:
		return ewMapInt[uint64](dt, out, in, op)
	}
	return false
}

// ewUnary runs op from input 0 to output 0 (same dtype and shape).
func ewUnary(n *Node, op *ewUn, p, q float64) error {
	if len(n.In) < 1 || n.In[0] == nil || len(n.Out) < 1 {
		return n.Errorf("want 1 input and 1 output")
	}
	x, out := n.In[0], n.Out[0]
	out.Resize(x.DType, x.Shape...)
	if parts := ewParts(n, x.Len()); parts > 1 && op.f != nil && (x.DType == F32 || x.DType == F64) {
		t := parTaskOf[ewUnaryTask](n)
		*t = ewUnaryTask{dt: x.DType, in: x.Data, out: out.Data, op: op, p: p, q: q, n: x.Len()}
		n.Pool.Run(parts, t)
		*t = ewUnaryTask{}
		return nil
	}
	if !ewUnaryData(x.DType, out.Data, x.Data, op, p, q) {
		return n.Errorf("dtype %s not supported", x.DType)
	}
	return nil
}

// ewParElems is the least elements an unfused element-wise op splits
// over the pool for, ewParPart the least each part takes.
const (
	ewParElems = 1 << 15
	ewParPart  = 1 << 13
)

// ewParts is how many parts an unfused element-wise op of total elements
// runs in on n's pool.
func ewParts(n *Node, total int) int {
	if n.Pool == nil || total < ewParElems {
		return 1
	}
	return max(1, min(n.Pool.Threads(), total/ewParPart))
}

// ewUnaryTask is an unfused element-wise op split into contiguous parts
// (cut at multiples of 16 elements): a float32 row kernel (row, a, b on
// x32 into y32) or, for float32 and float64, op's function.
type ewUnaryTask struct {
	x32, y32 []float32
	row      func(y []float32, a, b float32)
	a, b     float32

	dt      DType
	in, out any
	op      *ewUn
	p, q    float64
	n       int
}

func (t *ewUnaryTask) runPart(i, parts int) {
	if t.row != nil {
		lo, hi := parSplit(len(t.y32), parts, i, 16)
		y := t.y32[lo:hi]
		copy(y, t.x32[lo:hi])
		t.row(y, t.a, t.b)
		return
	}
	lo, hi := parSplit(t.n, parts, i, 16)
	switch t.dt {
	case F32:
		ewMapF(t.out.([]float32)[lo:hi], t.in.([]float32)[lo:hi], t.op.f, t.p, t.q)
	case F64:
		ewMapF(t.out.([]float64)[lo:hi], t.in.([]float64)[lo:hi], t.op.f, t.p, t.q)
	}
}

func ewSoftplus(x float64) float64 { return actSoftplus64(x) }

var (
	ewOpScale = ewUn{f: func(x, p, _ float64) float64 { return x * p }}
	ewOpSqrt  = ewUn{f: func(x, _, _ float64) float64 { return math.Sqrt(x) }}
	ewOpExp   = ewUn{f: func(x, _, _ float64) float64 { return math.Exp(x) }}
	ewOpLog   = ewUn{f: func(x, _, _ float64) float64 { return math.Log(x) }}
	ewOpNeg   = ewUn{
		f: func(x, _, _ float64) float64 { return -x },
		i: func(x int64) int64 { return -x },
	}
	ewOpAbs = ewUn{
		f: func(x, _, _ float64) float64 { return math.Abs(x) },
		i: func(x int64) int64 {
			if x < 0 {
				return -x
			}
			return x
		},
		u: func(x uint64) uint64 { return x },
	}
	ewOpReciprocal = ewUn{f: func(x, _, _ float64) float64 { return 1 / x }}
	ewOpFloor      = ewUn{f: func(x, _, _ float64) float64 { return math.Floor(x) }}
	ewOpCeil       = ewUn{f: func(x, _, _ float64) float64 { return math.Ceil(x) }}
	ewOpRound      = ewUn{f: func(x, _, _ float64) float64 { return math.RoundToEven(x) }}
	ewOpSign       = ewUn{
		f: func(x, _, _ float64) float64 {
			switch {
			case x > 0:
				return 1
			case x < 0:
				return -1
			}
			return x // 0 (keeps NaN)
		},
		i: func(x int64) int64 {
			switch {
			case x > 0:
				return 1
			case x < 0:
				return -1
			}
			return 0
		},
		u: func(x uint64) uint64 {
			if x > 0 {
				return 1
			}
			return 0
		},
	}
	ewOpRelu = ewUn{
		f: func(x, _, _ float64) float64 {
			if x < 0 {
				return 0
			}
			return x
		},
		i: func(x int64) int64 { return max(x, 0) },
	}
	ewOpLeakyRelu = ewUn{f: func(x, a, _ float64) float64 {
		if x < 0 {
			return a * x
		}
		return x
	}}
	ewOpElu             = ewUn{f: actElu64}
	ewOpSelu            = ewUn{f: actSelu64}
	ewOpCelu            = ewUn{f: actCelu64}
	ewOpThresholdedRelu = ewUn{f: func(x, a, _ float64) float64 {
		if x > a {
			return x
		}
		return 0
	}}
	ewOpSigmoid = ewUn{f: func(x, _, _ float64) float64 {
		if x >= 0 {
			return 1 / (1 + math.Exp(-x))
		}
		e := math.Exp(x)
		return e / (1 + e)
	}}
	ewOpHardSigmoid = ewUn{f: actHardSigmoid64}
	ewOpHardSwish   = ewUn{f: func(x, _, _ float64) float64 {
		return x * math.Max(0, math.Min(1, x/6+0.5))
	}}
	ewOpSoftplus = ewUn{f: func(x, _, _ float64) float64 { return ewSoftplus(x) }}
	ewOpSoftsign = ewUn{f: func(x, _, _ float64) float64 { return x / (1 + math.Abs(x)) }}
	ewOpMish     = ewUn{f: actMish64}
	ewOpTanh     = ewUn{f: func(x, _, _ float64) float64 { return math.Tanh(x) }}
	ewOpErf      = ewUn{f: func(x, _, _ float64) float64 { return math.Erf(x) }}
	ewOpSin      = ewUn{f: func(x, _, _ float64) float64 { return math.Sin(x) }}
	ewOpCos      = ewUn{f: func(x, _, _ float64) float64 { return math.Cos(x) }}
	ewOpTan      = ewUn{f: func(x, _, _ float64) float64 { return math.Tan(x) }}
	ewOpAsin     = ewUn{f: func(x, _, _ float64) float64 { return math.Asin(x) }}
	ewOpAcos     = ewUn{f: func(x, _, _ float64) float64 { return math.Acos(x) }}
	ewOpAtan     = ewUn{f: func(x, _, _ float64) float64 { return math.Atan(x) }}
	ewOpSinh     = ewUn{f: func(x, _, _ float64) float64 { return math.Sinh(x) }}
	ewOpCosh     = ewUn{f: func(x, _, _ float64) float64 { return math.Cosh(x) }}
	ewOpAsinh    = ewUn{f: func(x, _, _ float64) float64 { return math.Asinh(x) }}
	ewOpAcosh    = ewUn{f: func(x, _, _ float64) float64 { return math.Acosh(x) }}
	ewOpAtanh    = ewUn{f: func(x, _, _ float64) float64 { return math.Atanh(x) }}
)

func ewAttrF(n *Node, name string, def float32) float64 {
	return float64(n.Attrs.Float(name, def))
}

func Sqrt(n *Node) error       { return ewUnary(n, &ewOpSqrt, 0, 0) }
func Log(n *Node) error        { return ewUnary(n, &ewOpLog, 0, 0) }
func Neg(n *Node) error        { return ewUnary(n, &ewOpNeg, 0, 0) }
func Abs(n *Node) error        { return ewUnary(n, &ewOpAbs, 0, 0) }
func Reciprocal(n *Node) error { return ewUnary(n, &ewOpReciprocal, 0, 0) }
func Floor(n *Node) error      { return ewUnary(n, &ewOpFloor, 0, 0) }
func Ceil(n *Node) error       { return ewUnary(n, &ewOpCeil, 0, 0) }
func Round(n *Node) error      { return ewUnary(n, &ewOpRound, 0, 0) }
func Sign(n *Node) error       { return ewUnary(n, &ewOpSign, 0, 0) }
func Relu(n *Node) error       { return ewUnary(n, &ewOpRelu, 0, 0) }

func Selu(n *Node) error {
	return ewUnary(n, &ewOpSelu, ewAttrF(n, "alpha", 1.67326319217681884765625),
		ewAttrF(n, "gamma", 1.05070102214813232421875))
}
func Celu(n *Node) error { return ewUnary(n, &ewOpCelu, ewAttrF(n, "alpha", 1), 0) }
func ThresholdedRelu(n *Node) error {
	return ewUnary(n, &ewOpThresholdedRelu, ewAttrF(n, "alpha", 1), 0)
}
func Softplus(n *Node) error { return ewUnary(n, &ewOpSoftplus, 0, 0) }
func Softsign(n *Node) error { return ewUnary(n, &ewOpSoftsign, 0, 0) }
func Erf(n *Node) error      { return ewUnary(n, &ewOpErf, 0, 0) }
func Sin(n *Node) error      { return ewUnary(n, &ewOpSin, 0, 0) }
func Cos(n *Node) error      { return ewUnary(n, &ewOpCos, 0, 0) }
func Tan(n *Node) error      { return ewUnary(n, &ewOpTan, 0, 0) }
func Asin(n *Node) error     { return ewUnary(n, &ewOpAsin, 0, 0) }
func Acos(n *Node) error     { return ewUnary(n, &ewOpAcos, 0, 0) }
func Atan(n *Node) error     { return ewUnary(n, &ewOpAtan, 0, 0) }
func Sinh(n *Node) error     { return ewUnary(n, &ewOpSinh, 0, 0) }
func Cosh(n *Node) error     { return ewUnary(n, &ewOpCosh, 0, 0) }
func Asinh(n *Node) error    { return ewUnary(n, &ewOpAsinh, 0, 0) }
func Acosh(n *Node) error    { return ewUnary(n, &ewOpAcosh, 0, 0) }
func Atanh(n *Node) error    { return ewUnary(n, &ewOpAtanh, 0, 0) }
