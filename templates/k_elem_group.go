package templates

import "math"

// CuvilElementwise runs the program fuse-elementwise made of a group of
// element-wise ops (cuvil::Elementwise, ir/ops_cuvil.go) in one pass over
// memory: chunk by chunk (ewChunk elements, so every operand of a chunk
// stays in L1), each instruction applied to the whole chunk, instead of
// one pass over the whole tensor per op.
//
// The program is the node's attributes: ops (one name per instruction),
// args (the operands, one for a unary op, two for a binary one, in order),
// consts (inline scalar constants) and outputs (the operand whose value
// each output is). An operand r names input r when r < #inputs, the result
// of instruction r-#inputs above that, and consts[-r-1] when r < 0. Input 0
// has the output's shape; every other input has that shape too or one
// element (broadcast). Each op computes what its unfused kernel computes,
// so results equal the unfused graph's: most transcendental ops in
// float64 then rounded; in float32, Sigmoid, Swish with alpha 1 (SiLU)
// and HardSwish through the vector rows of k_elem_act.go (sigmoid and
// HardSwish within 3 ulp of float64 math, SiLU within 4; the unfused
// float32 kernels use the same rows) and GELU through the fused activation's vector kernel. Parts of a
// large tensor run on the session's pool with the same chunking at any
// thread count, and the row kernels' results do not depend on where a
// chunk ends.
func CuvilElementwise(n *Node) error {
	if len(n.In) == 0 || n.In[0] == nil {
		return n.Errorf("needs at least one input")
	}
	switch n.In[0].DType {
	case F32:
		return ewRun[float32](n)
	case F64:
		return ewRun[float64](n)
	}
	return n.Errorf("dtype %s not supported (f32, f64)", n.In[0].DType)
}

// ewChunk is the number of elements one instruction handles at a time: a
// program of 16 instructions keeps its chunks (2 KiB each in f32) in L1.
const ewChunk = 512

// Program op codes: binary ops first.
const (
	ewpAdd = iota
	ewpSub
	ewpMul
	ewpDiv
	ewpMax
	ewpMin
	ewpPow
	ewpLeakyRelu // x, alpha
	ewpSwish     // x, alpha
	ewpElu       // x, alpha
	ewpBinaryEnd
	ewpRelu = iota - 1
	ewpNeg
	ewpAbs
	ewpSqrt
	ewpReciprocal
	ewpExp
	ewpLog
	ewpSigmoid
	ewpTanh
	ewpErf
	ewpFloor
	ewpCeil
	ewpSoftplus
	ewpHardSwish
	ewpGelu
	ewpGeluTanh
	ewpMish
)

// ewpCodes maps the program's op names to op codes.
var ewpCodes = map[string]int{
	"Add": ewpAdd, "Sub": ewpSub, "Mul": ewpMul, "Div": ewpDiv, "Max": ewpMax, "Min": ewpMin,
	"Pow": ewpPow, "LeakyRelu": ewpLeakyRelu,
	"Relu": ewpRelu, "Neg": ewpNeg, "Abs": ewpAbs, "Sqrt": ewpSqrt, "Reciprocal": ewpReciprocal,
	"Exp": ewpExp, "Log": ewpLog, "Sigmoid": ewpSigmoid, "Tanh": ewpTanh, "Erf": ewpErf,
	"Floor": ewpFloor, "Ceil": ewpCeil, "Softplus": ewpSoftplus, "HardSwish": ewpHardSwish,
	"Gelu": ewpGelu, "GeluTanh": ewpGeluTanh, "Swish": ewpSwish, "Elu": ewpElu, "Mish": ewpMish,
}

// ewInstr is one decoded instruction: operands and result are slots
// (inputs, then constants, then instruction results).
type ewInstr struct {
	op, a, b, dst int
}

// ewProg is a decoded program.
type ewProg struct {
	nIn, nConst int
	instrs      []ewInstr
	consts      []float64
	outs        []int // slot of each output
	// buf is the temporary chunk buffer of each result slot (-1: the
	// result is written straight into the output outOf names).
	buf   []int
	outOf []int
	nBuf  int
}

// ewDecode checks and decodes n's program.
func ewDecode(n *Node) (*ewProg, error) {
	ops, args, outs := n.Attrs.Strings("ops"), n.Attrs.Ints("args"), n.Attrs.Ints("outputs")
	cs := n.Attrs.Floats("consts")
	p := &ewProg{nIn: len(n.In), nConst: len(cs)}
	for _, c := range cs {
		p.consts = append(p.consts, float64(c))
	}
	base := p.nIn + p.nConst
	slot := func(r int64, k int) (int, error) {
		switch {
		case r < 0 && -r-1 < int64(len(cs)):
			return p.nIn + int(-r-1), nil
		case r >= 0 && r < int64(p.nIn):
			if n.In[r] == nil {
				return 0, n.Errorf("input %d is missing", r)
			}
			return int(r), nil
		case r >= int64(p.nIn) && r < int64(p.nIn+k):
			return base + int(r) - p.nIn, nil
		}
		return 0, n.Errorf("instruction %d: operand %d names no input, constant or earlier result", k, r)
	}
	j := 0
	for k, name := range ops {
		code, ok := ewpCodes[name]
		if !ok {
			return nil, n.Errorf("instruction %d: unknown op %q", k, name)
		}
		arity := 1
		if code < ewpBinaryEnd {
			arity = 2
		}
		if j+arity > len(args) {
			return nil, n.Errorf("args too short for %d instructions", len(ops))
		}
		in := ewInstr{op: code, dst: base + k}
		var err error
		if in.a, err = slot(args[j], k); err != nil {
			return nil, err
		}
		in.b = in.a
		if arity == 2 {
			if in.b, err = slot(args[j+1], k); err != nil {
				return nil, err
			}
		}
		j += arity
		p.instrs = append(p.instrs, in)
	}
	if j != len(args) {
		return nil, n.Errorf("%d args for %d instructions, want %d", len(args), len(ops), j)
	}
	if len(outs) != len(n.Out) || len(outs) == 0 {
		return nil, n.Errorf("%d outputs listed, node has %d", len(outs), len(n.Out))
	}
	p.outOf = make([]int, base+len(ops))
	for i := range p.outOf {
		p.outOf[i] = -1
	}
	for i, r := range outs {
		s, err := slot(r, len(ops))
		if err != nil {
			return nil, err
		}
		if s < base || p.outOf[s] >= 0 {
			return nil, n.Errorf("output %d must be a result of its own", i)
		}
		p.outs = append(p.outs, s)
		p.outOf[s] = i
	}
	// Temporary buffers: a result that is not an output takes a free
	// buffer; operands give theirs back at their last reader, before its
	// result takes one (every op reads element i before writing it).
	last := make([]int, len(p.outOf))
	for k, in := range p.instrs {
		last[in.a], last[in.b] = k, k
	}
	p.buf = make([]int, len(p.outOf))
	var free []int
	for k, in := range p.instrs {
		for i, s := range []int{in.a, in.b} {
			if (i == 0 || in.b != in.a) && s >= base && last[s] == k && p.outOf[s] < 0 {
				free = append(free, p.buf[s])
			}
		}
		p.buf[in.dst] = -1
		if p.outOf[in.dst] < 0 {
			if len(free) > 0 {
				p.buf[in.dst], free = free[len(free)-1], free[:len(free)-1]
			} else {
				p.buf[in.dst] = p.nBuf
				p.nBuf++
			}
		}
	}
	return p, nil
}

// ewTask is one CuvilElementwise call split into parts of whole chunks.
type ewTask[T float32 | float64] struct {
	prog  *ewProg
	in    [][]T // input data; a one-element input of a larger output broadcasts
	out   [][]T
	total int
	bufs  []T // per part: nBuf chunks
	// per part: the operand slices and scalars of the current chunk.
	vec [][][]T
	sc  [][]T
}

func ewRun[T float32 | float64](n *Node) error {
	t := parTaskOf[ewTask[T]](n)
	if t.prog == nil {
		p, err := ewDecode(n)
		if err != nil {
			return err
		}
		t.prog = p
	}
	p := t.prog
	x0 := n.In[0]
	total := 1
	for _, d := range x0.Shape {
		total *= d
	}
	t.in = t.in[:0]
	for i, x := range n.In {
		if x.DType != x0.DType {
			return n.Errorf("input %d has dtype %s, want %s", i, x.DType, x0.DType)
		}
		d, ok := x.Data.([]T)
		if !ok {
			return n.Errorf("input %d: data does not match dtype %s", i, x.DType)
		}
		// One element of rank <= input 0's broadcasts to input 0's shape
		// (also when that shape holds one element: [] against [1] gives
		// [1]); any other input must have that shape exactly.
		if len(d) != 1 || len(x.Shape) > len(x0.Shape) {
			if len(x.Shape) != len(x0.Shape) || len(d) != total {
				return n.Errorf("input %d has shape %v: want %v or one element of rank <= %d", i, x.Shape, x0.Shape, len(x0.Shape))
			}
			for k := range x.Shape {
				if x.Shape[k] != x0.Shape[k] {
					return n.Errorf("input %d has shape %v: want %v or one element of rank <= %d", i, x.Shape, x0.Shape, len(x0.Shape))
				}
			}
		}
		t.in = append(t.in, d)
	}
	t.out = t.out[:0]
	for _, y := range n.Out {
		y.Resize(x0.DType, x0.Shape...)
		t.out = append(t.out, y.Data.([]T))
	}
	t.total = total
	parts := 1
	if n.Pool != nil && total >= parMinElems {
		parts = max(1, min(n.Pool.Threads(), (total+ewChunk-1)/ewChunk))
	}
	if len(t.vec) < parts {
		t.vec = make([][][]T, parts)
		t.sc = make([][]T, parts)
	}
	slots := p.nIn + p.nConst + len(p.instrs)
	for i := 0; i < parts; i++ {
		if len(t.vec[i]) < slots {
			t.vec[i] = make([][]T, slots)
			t.sc[i] = make([]T, slots)
		}
	}
	if need := parts * p.nBuf * ewChunk; len(t.bufs) < need {
		t.bufs = make([]T, need)
	}
	n.Pool.Run(parts, t)
	return nil
}

func (t *ewTask[T]) runPart(part, parts int) {
	p := t.prog
	lo, hi := parSplit(t.total, parts, part, ewChunk)
	vec, sc := t.vec[part], t.sc[part]
	bufs := t.bufs[part*p.nBuf*ewChunk : (part+1)*p.nBuf*ewChunk]
	for i, c := range p.consts {
		vec[p.nIn+i], sc[p.nIn+i] = nil, T(c)
	}
	for c0 := lo; c0 < hi; c0 += ewChunk {
		c1 := min(c0+ewChunk, hi)
		m := c1 - c0
		for i, d := range t.in {
			if len(d) == t.total {
				vec[i] = d[c0:c1]
			} else {
				vec[i], sc[i] = nil, d[0]
			}
		}
		for _, in := range p.instrs {
			var dst []T
			if o := p.outOf[in.dst]; o >= 0 {
				dst = t.out[o][c0:c1]
			} else {
				b := p.buf[in.dst] * ewChunk
				dst = bufs[b : b+m]
			}
			ewApply(in.op, dst, vec[in.a], vec[in.b], sc[in.a], sc[in.b])
			vec[in.dst] = dst
		}
	}
}

// ewApply computes dst = op(a, b) (op(a) for a unary op); a nil operand
// slice stands for its scalar sa or sb broadcast over dst.
func ewApply[T float32 | float64](op int, dst, a, b []T, sa, sb T) {
	if op < ewpBinaryEnd {
		switch {
		case a == nil && b == nil:
			ewpFill(dst, ewBin1(op, sa, sb))
		case b == nil:
			ewBinVS(op, dst, a[:len(dst)], sb)
		case a == nil:
			ewBinSV(op, dst, sa, b[:len(dst)])
		default:
			ewBinVV(op, dst, a[:len(dst)], b[:len(dst)])
		}
		return
	}
	if a == nil {
		ewpFill(dst, sa)
	} else if &a[0] != &dst[0] {
		copy(dst, a)
	}
	ewUnaryInPlace(op, dst)
}

func ewpFill[T float32 | float64](dst []T, v T) {
	for i := range dst {
		dst[i] = v
	}
}

// ewBin1 is one binary op on scalars, as the unfused kernels compute it.
func ewBin1[T float32 | float64](op int, a, b T) T {
	switch op {
	case ewpAdd:
		return a + b
	case ewpSub:
		return a - b
	case ewpMul:
		return a * b
	case ewpDiv:
		return a / b
	case ewpMax:
		if a != a || a > b {
			return a
		}
		return b
	case ewpMin:
		if a != a || a < b {
			return a
		}
		return b
	case ewpPow:
		return T(math.Pow(float64(a), float64(b)))
	case ewpLeakyRelu:
		if a < 0 {
			return b * a
		}
		return a
	case ewpSwish:
		return T(ewOpSwish.f(float64(a), float64(b), 0))
	case ewpElu:
		return T(ewOpElu.f(float64(a), float64(b), 0))
	}
	panic("ewBin1: bad op")
}

// ewBinVV, ewBinVS and ewBinSV are the chunk loops of the binary ops;
// the common arithmetic has loops of its own, the rest goes through ewBin1.
func ewBinVV[T float32 | float64](op int, dst, a, b []T) {
	switch op {
	case ewpAdd:
		for i := range dst {
			dst[i] = a[i] + b[i]
		}
	case ewpSub:
		for i := range dst {
			dst[i] = a[i] - b[i]
		}
	case ewpMul:
		for i := range dst {
			dst[i] = a[i] * b[i]
		}
	case ewpDiv:
		for i := range dst {
			dst[i] = a[i] / b[i]
		}
	default:
		for i := range dst {
			dst[i] = ewBin1(op, a[i], b[i])
		}
	}
}

func ewBinVS[T float32 | float64](op int, dst, a []T, b T) {
	if d, ok := any(dst).([]float32); ok && op == ewpSwish && b == 1 {
		// SiLU: the float32 vector row, as the unfused Swish kernel.
		copy(d, any(a).([]float32))
		silu32(d)
		return
	}
	if d, ok := any(dst).([]float32); ok && op == ewpPow && b == 2 {
		// x*x: float32(math.Pow(x, 2)) rounds the exact float64 square
		// once, as the float32 product does (YOLO heads' (2*sigmoid)^2:
		// math.Pow cost ~50 ns an element).
		x := any(a).([]float32)
		for i := range d {
			d[i] = x[i] * x[i]
		}
		return
	}
	if d, ok := any(dst).([]float32); ok && op == ewpLeakyRelu {
		// The float32 vector row, as the unfused LeakyRelu kernel.
		copy(d, any(a).([]float32))
		leakyRelu32(d, any(b).(float32))
		return
	}
	if d, ok := any(dst).([]float32); ok && op == ewpElu {
		// The float32 vector row, as the unfused Elu kernel.
		copy(d, any(a).([]float32))
		elu32(d, any(b).(float32))
		return
	}
	switch op {
	case ewpAdd:
		for i := range dst {
			dst[i] = a[i] + b
		}
	case ewpSub:
		for i := range dst {
			dst[i] = a[i] - b
		}
	case ewpMul:
		for i := range dst {
			dst[i] = a[i] * b
		}
	case ewpDiv:
		for i := range dst {
			dst[i] = a[i] / b
		}
	default:
		for i := range dst {
			dst[i] = ewBin1(op, a[i], b)
		}
	}
}

func ewBinSV[T float32 | float64](op int, dst []T, a T, b []T) {
	switch op {
	case ewpAdd:
		for i := range dst {
			dst[i] = a + b[i]
		}
	case ewpSub:
		for i := range dst {
			dst[i] = a - b[i]
		}
	case ewpMul:
		for i := range dst {
			dst[i] = a * b[i]
		}
	case ewpDiv:
		for i := range dst {
			dst[i] = a / b[i]
		}
	default:
		for i := range dst {
			dst[i] = ewBin1(op, a, b[i])
		}
	}
}

// ewUnaryInPlace applies unary op to y in place: cheap ops in T, the
// others through the unfused kernels' float64 functions (k_elem_math.go),
// GELU through the fused activation (the vector kernel for f32).
func ewUnaryInPlace[T float32 | float64](op int, y []T) {
	var f func(x, p, q float64) float64
	switch op {
	case ewpRelu:
		for i, v := range y {
			if v < 0 {
				y[i] = 0
			}
		}
		return
	case ewpNeg:
		for i, v := range y {
			y[i] = -v
		}
		return
	case ewpAbs:
		f = ewOpAbs.f
	case ewpSqrt:
		f = ewOpSqrt.f
	case ewpReciprocal:
		f = ewOpReciprocal.f
	case ewpExp:
		if d, ok := any(y).([]float32); ok {
			exp32(d)
			return
		}
		f = ewOpExp.f
	case ewpLog:
		f = ewOpLog.f
	case ewpSigmoid:
		if d, ok := any(y).([]float32); ok {
			sigmoid32(d)
			return
		}
		f = ewOpSigmoid.f
	case ewpTanh:
		if d, ok := any(y).([]float32); ok {
			tanh32(d)
			return
		}
		f = ewOpTanh.f
	case ewpErf:
		f = ewOpErf.f
	case ewpFloor:
		f = ewOpFloor.f
	case ewpCeil:
		f = ewOpCeil.f
	case ewpSoftplus:
		f = ewOpSoftplus.f
	case ewpHardSwish:
		if d, ok := any(y).([]float32); ok {
			hardSwish32(d)
			return
		}
		f = ewOpHardSwish.f
	case ewpMish:
		if d, ok := any(y).([]float32); ok {
			mish32(d)
			return
		}
		f = ewOpMish.f
	case ewpGelu:
		fusedActRow(fusedAct{kind: fusedActGelu}, y)
		return
	case ewpGeluTanh:
		fusedActRow(fusedAct{kind: fusedActGeluTanh}, y)
		return
	default:
		panic("ewUnaryInPlace: bad op")
	}
	// Through the unfused kernels' own loop: the same loop written here
	// (generic or for float32 alone) ran 4x slower on Sigmoid (f32, 200K
	// elements); the cause was not found (a register choice that chains
	// the float conversions of consecutive elements?). Measure before
	// inlining it again.
	switch d := any(y).(type) {
	case []float32:
		ewMapFloat(F32, d, d, f, 0, 0)
	case []float64:
		ewMapFloat(F64, d, d, f, 0, 0)
	}
}
