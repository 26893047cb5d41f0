package templates

// The unfused float32 Sigmoid, HardSwish, Swish, Exp, Tanh, Mish, Elu and
// HardSigmoid kernels run the vector
// rows of k_elem_act.go (the epilogues and cuvil::Elementwise use them
// too, so fused and unfused graphs agree); other dtypes, and Swish with
// alpha other than 1, the float64 functions of k_elem_math.go. In a file
// of their own so that a model of other element-wise ops copies no
// assembly (gen's TestClosureGolden).

// Sigmoid is 1/(1+e^-x).
func Sigmoid(n *Node) error {
	if ok, err := ewUnaryRow32(n, func(y []float32, _, _ float32) { sigmoid32(y) }, 0, 0); ok {
		return err
	}
	return ewUnary(n, &ewOpSigmoid, 0, 0)
}

// ewUnaryRow32 runs the float32 row kernel row (with parameters a, b) on
// n's float32 input (the vector activations of k_elem_act.go, which the
// fused epilogues and cuvil::Elementwise use too), split over n's pool
// for large tensors (the rows' bits do not depend on the split),
// reporting false for other dtypes.
func ewUnaryRow32(n *Node, row func(y []float32, a, b float32), a, b float32) (bool, error) {
	if len(n.In) < 1 || n.In[0] == nil || len(n.Out) < 1 || n.In[0].DType != F32 {
		return false, nil
	}
	x, out := n.In[0], n.Out[0]
	out.Resize(F32, x.Shape...)
	t := parTaskOf[ewUnaryTask](n)
	*t = ewUnaryTask{x32: x.F32(), y32: out.F32(), row: row, a: a, b: b}
	n.Pool.Run(ewParts(n, len(t.y32)), t)
	*t = ewUnaryTask{}
	return true, nil
}

// HardSwish (and cuvil::HardSwish) is x*max(0, min(1, x/6 + 1/2)).
func HardSwish(n *Node) error {
	if ok, err := ewUnaryRow32(n, func(y []float32, _, _ float32) { hardSwish32(y) }, 0, 0); ok {
		return err
	}
	return ewUnary(n, &ewOpHardSwish, 0, 0)
}

// Swish (opset 24, and cuvil::Swish) is x*sigmoid(alpha*x).
func Swish(n *Node) error {
	if ewAttrF(n, "alpha", 1) == 1 {
		// SiLU: the float32 vector row (k_elem_act.go).
		if ok, err := ewUnaryRow32(n, func(y []float32, _, _ float32) { silu32(y) }, 0, 0); ok {
			return err
		}
	}
	return ewUnary(n, &ewOpSwish, ewAttrF(n, "alpha", 1), 0)
}

// Exp is e^x.
func Exp(n *Node) error {
	if ok, err := ewUnaryRow32(n, func(y []float32, _, _ float32) { exp32(y) }, 0, 0); ok {
		return err
	}
	return ewUnary(n, &ewOpExp, 0, 0)
}

// Tanh is the hyperbolic tangent.
func Tanh(n *Node) error {
	if ok, err := ewUnaryRow32(n, func(y []float32, _, _ float32) { tanh32(y) }, 0, 0); ok {
		return err
	}
	return ewUnary(n, &ewOpTanh, 0, 0)
}

// Mish is x*tanh(softplus(x)).
func Mish(n *Node) error {
	if ok, err := ewUnaryRow32(n, func(y []float32, _, _ float32) { mish32(y) }, 0, 0); ok {
		return err
	}
	return ewUnary(n, &ewOpMish, 0, 0)
}

// Elu is x, or alpha*(e^x - 1) below 0.
func Elu(n *Node) error {
	alpha := n.Attrs.Float("alpha", 1)
	if ok, err := ewUnaryRow32(n, func(y []float32, a, _ float32) { elu32(y, a) }, alpha, 0); ok {
		return err
	}
	return ewUnary(n, &ewOpElu, float64(alpha), 0)
}

// HardSigmoid is max(0, min(1, alpha*x + beta)).
func HardSigmoid(n *Node) error {
	alpha, beta := n.Attrs.Float("alpha", 0.2), n.Attrs.Float("beta", 0.5)
	if ok, err := ewUnaryRow32(n, hardSigmoid32, alpha, beta); ok {
		return err
	}
	return ewUnary(n, &ewOpHardSigmoid, float64(alpha), float64(beta))
}

// LeakyRelu is x, or alpha*x below 0.
func LeakyRelu(n *Node) error {
	alpha := n.Attrs.Float("alpha", 0.01)
	if ok, err := ewUnaryRow32(n, func(y []float32, a, _ float32) { leakyRelu32(y, a) }, alpha, 0); ok {
		return err
	}
	return ewUnary(n, &ewOpLeakyRelu, float64(alpha), 0)
}

// preluRows32 runs float32 PRelu as vector rows when the slope (shape
// ss, already aligned as PRelu's broadcast sees it) does not grow x and
// varies along one axis k only (a slope per channel: each run of the
// trailing axes one leakyRelu32 row) or along the trailing axes only (a
// channel-last slope: each outer block one prelu32 row), reporting false
// otherwise.
func preluRows32(n *Node, x *Tensor, slope []float32, ss []int) bool {
	r := len(x.Shape)
	if len(ss) > r {
		return false
	}
	s := n.ScratchInts(r)
	for i := range s {
		s[i] = 1
	}
	copy(s[r-len(ss):], ss)
	first, last := -1, -1
	for i, d := range s {
		if d != 1 {
			if d != x.Shape[i] {
				return false
			}
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	for i := first; i <= last && first >= 0; i++ {
		if s[i] != x.Shape[i] {
			// A slope with 1s between its varying axes: the general walk.
			return false
		}
	}
	inner := 1
	for _, d := range x.Shape[last+1:] {
		inner *= d
	}
	if first >= 0 && first != last && inner > 1 {
		return false
	}
	out := n.Out[0]
	out.Resize(F32, x.Shape...)
	t := parTaskOf[preluTask](n)
	*t = preluTask{x: x.F32(), y: out.F32(), slope: slope, unit: len(x.F32())}
	switch {
	case first < 0:
		// One slope: split like any row.
		t.one, t.unit, t.units = true, 16, (len(t.y)+15)/16
	case inner > 1:
		t.c, t.unit, t.units = s[first], inner, len(t.y)/max(inner, 1)
	default:
		block := 1
		for _, d := range s[first : last+1] {
			block *= d
		}
		t.unit, t.units = block, len(t.y)/max(block, 1)
	}
	n.Pool.Run(min(ewParts(n, len(t.y)), max(t.units, 1)), t)
	*t = preluTask{}
	return true
}

// preluTask is preluRows32 split over runs of unit elements: with one
// slope (one) leakyRelu32 on runs of 16, with a slope per
// channel (c > 0) leakyRelu32 on run r with slope[r%c], with a trailing
// slope block prelu32 on each run.
type preluTask struct {
	x, y, slope []float32
	one         bool
	c           int
	unit, units int
}

func (t *preluTask) runPart(i, parts int) {
	u0, u1 := parSplit(t.units, parts, i, 1)
	lo, hi := min(u0*t.unit, len(t.y)), min(u1*t.unit, len(t.y))
	copy(t.y[lo:hi], t.x[lo:hi])
	switch {
	case t.one:
		leakyRelu32(t.y[lo:hi], t.slope[0])
	case t.c > 0:
		for u := u0; u < u1; u++ {
			leakyRelu32(t.y[u*t.unit:(u+1)*t.unit], t.slope[u%t.c])
		}
	default:
		for u := u0; u < u1; u++ {
			prelu32(t.y[u*t.unit:(u+1)*t.unit], t.slope)
		}
	}
}
