package templates

// Kernels of ONNX's sequence and optional ops. Sequences and optionals are
// Tensors whose Data is a *Sequence or an *OptionalValue (see rt_seq.go).

func seqIn(n *Node, i int) (*Sequence, error) {
	t := n.Input(i)
	if t == nil {
		return nil, n.Errorf("input %d is missing", i)
	}
	s, ok := t.Data.(*Sequence)
	if !ok {
		return nil, n.Errorf("input %d is %s, want a sequence", i, t.String())
	}
	return s, nil
}

// seqPos reads an optional position input: def when absent; negative
// positions count from the end. The result lies in [0, limit].
func seqPos(n *Node, i, def, length, limit int) (int, error) {
	t := n.Input(i)
	if t == nil {
		return def, nil
	}
	p, err := ScalarInt(t)
	if err != nil {
		return 0, n.Errorf("position: %v", err)
	}
	if p < 0 {
		p += int64(length)
	}
	if p < 0 || p > int64(limit) {
		return 0, n.Errorf("position %d is outside a sequence of %d", p, length)
	}
	return int(p), nil
}

func SequenceConstruct(n *Node) error {
	if len(n.In) == 0 {
		return n.Errorf("want at least one input")
	}
	s := MakeSequence(n.Out[0], n.In[0].DType)
	for i, t := range n.In {
		if t.DType != n.In[0].DType {
			return n.Errorf("input %d has dtype %s, input 0 %s", i, t.DType, n.In[0].DType)
		}
		CopyValue(s.Append(), t)
	}
	return nil
}

func SequenceEmpty(n *Node) error {
	MakeSequence(n.Out[0], DType(n.Attrs.Int("dtype", int64(F32))))
	return nil
}

func SequenceAt(n *Node) error {
	s, err := seqIn(n, 0)
	if err != nil {
		return err
	}
	if n.Input(1) == nil {
		return n.Errorf("position is missing")
	}
	p, err := seqPos(n, 1, 0, s.Len(), s.Len()-1)
	if err != nil {
		return err
	}
	CopyValue(n.Out[0], s.Elems[p])
	return nil
}

func SequenceInsert(n *Node) error {
	s, err := seqIn(n, 0)
	if err != nil {
		return err
	}
	t := n.Input(1)
	if t == nil {
		return n.Errorf("tensor to insert is missing")
	}
	if s.Len() > 0 && t.DType != n.In[0].DType {
		return n.Errorf("inserting a %s tensor into a sequence of %s", t.DType, n.In[0].DType)
	}
	p, err := seqPos(n, 2, s.Len(), s.Len(), s.Len())
	if err != nil {
		return err
	}
	out := MakeSequence(n.Out[0], t.DType)
	for i, e := range s.Elems {
		if i == p {
			CopyValue(out.Append(), t)
		}
		CopyValue(out.Append(), e)
	}
	if p == s.Len() {
		CopyValue(out.Append(), t)
	}
	return nil
}

func SequenceErase(n *Node) error {
	s, err := seqIn(n, 0)
	if err != nil {
		return err
	}
	if s.Len() == 0 {
		return n.Errorf("erasing from an empty sequence")
	}
	p, err := seqPos(n, 1, s.Len()-1, s.Len(), s.Len()-1)
	if err != nil {
		return err
	}
	out := MakeSequence(n.Out[0], n.In[0].DType)
	for i, e := range s.Elems {
		if i != p {
			CopyValue(out.Append(), e)
		}
	}
	return nil
}

func SequenceLength(n *Node) error {
	s, err := seqIn(n, 0)
	if err != nil {
		return err
	}
	SetScalarI64(n.Out[0], int64(s.Len()))
	return nil
}

// SplitToSequence splits along axis into pieces of the sizes the split
// input gives (a scalar: equal pieces, the last one shorter; a list: each
// size), or into pieces of one, dropping the axis unless keepdims.
func SplitToSequence(n *Node) error {
	x := n.Input(0)
	if x == nil {
		return n.Errorf("input is missing")
	}
	r := len(x.Shape)
	axis := int(n.Attrs.Int("axis", 0))
	if axis < 0 {
		axis += r
	}
	if axis < 0 || axis >= r {
		return n.Errorf("axis %d is outside rank %d", n.Attrs.Int("axis", 0), r)
	}
	dim := x.Shape[axis]
	// Pieces: count of them, each of size step except the listed sizes.
	count, step := dim, 1
	var list []int
	squeeze := false
	if sp := n.Input(1); sp == nil {
		squeeze = n.Attrs.Int("keepdims", 1) == 0
	} else if len(sp.Shape) == 0 {
		k, err := ScalarInt(sp)
		if err != nil {
			return n.Errorf("split: %v", err)
		}
		if k <= 0 {
			return n.Errorf("split size %d, want > 0", k)
		}
		step = int(k)
		count = (dim + step - 1) / step
	} else {
		list = ewInts(sp, n.ScratchInts(sp.Len()))
		total := 0
		for _, k := range list {
			if k < 0 {
				return n.Errorf("split size %d, want >= 0", k)
			}
			total += k
		}
		if total != dim {
			return n.Errorf("split sizes add up to %d, axis %d has %d", total, axis, dim)
		}
		count = len(list)
	}
	outer, _, inner := axisSplit(x.Shape, axis)
	s := MakeSequence(n.Out[0], x.DType)
	var shape [8]int
	start := 0
	for i := 0; i < count; i++ {
		k := min(step, dim-start)
		if list != nil {
			k = list[i]
		}
		e := s.Append()
		sh := append(shape[:0], x.Shape...)
		sh[axis] = k
		if squeeze {
			sh = append(sh[:axis], sh[axis+1:]...)
		}
		e.Resize(x.DType, sh...)
		for o := 0; o < outer; o++ {
			ewMove(e.Data, o*k*inner, x.Data, (o*dim+start)*inner, k*inner)
		}
		start += k
	}
	return nil
}

// ConcatFromSequence concatenates the elements along axis, or stacks them
// along a new axis when new_axis is 1.
func ConcatFromSequence(n *Node) error {
	s, err := seqIn(n, 0)
	if err != nil {
		return err
	}
	if s.Len() == 0 {
		return n.Errorf("sequence is empty")
	}
	first := s.Elems[0]
	newAxis := n.Attrs.Int("new_axis", 0) != 0
	r := len(first.Shape)
	if newAxis {
		r++
	}
	axis := int(n.Attrs.Int("axis", 0))
	if axis < 0 {
		axis += r
	}
	if axis < 0 || axis >= r {
		return n.Errorf("axis %d is outside rank %d", n.Attrs.Int("axis", 0), r)
	}
	var shape [8]int
	sh := append(shape[:0], first.Shape...)
	if newAxis {
		sh = append(sh[:axis], append([]int{0}, first.Shape[axis:]...)...)
	} else {
		sh[axis] = 0
	}
	for i, e := range s.Elems {
		if e.DType != first.DType || len(e.Shape) != len(first.Shape) {
			return n.Errorf("element %d is %s, element 0 %s", i, e.String(), first.String())
		}
		for k, d := range e.Shape {
			if d != first.Shape[k] && (newAxis || k != axis) {
				return n.Errorf("element %d is %s, element 0 %s", i, e.String(), first.String())
			}
		}
		if newAxis {
			sh[axis]++
		} else {
			sh[axis] += e.Shape[axis]
		}
	}
	out := n.Out[0]
	out.Resize(first.DType, sh...)
	outer, total, _ := axisSplit(sh, axis)
	start := 0
	for _, e := range s.Elems {
		k := 1
		inner := e.Len()
		if !newAxis {
			_, k, inner = axisSplit(e.Shape, axis)
		} else if outer > 0 {
			inner /= outer
		}
		for o := 0; o < outer; o++ {
			ewMove(out.Data, (o*total+start)*inner, e.Data, o*k*inner, k*inner)
		}
		start += k
	}
	return nil
}

// Optional wraps its input, or makes an empty optional of the output's
// element type (set by the session) when there is none.
func Optional(n *Node) error {
	out := n.Out[0]
	o := MakeOptional(out, out.DType)
	if v := n.Input(0); v != nil {
		out.DType = v.DType
		CopyValue(o.Set(), v)
	}
	return nil
}

// OptionalHasElement is true for a non-empty optional and, from opset 18,
// for a plain tensor or sequence; false for an omitted input.
func OptionalHasElement(n *Node) error {
	has := false
	if v := n.Input(0); v != nil {
		if o, ok := v.Data.(*OptionalValue); ok {
			has = o.Value != nil
		} else {
			has = true
		}
	}
	SetScalarBool(n.Out[0], has)
	return nil
}

// OptionalGetElement returns the optional's value (from opset 18 a plain
// tensor or sequence passes through).
func OptionalGetElement(n *Node) error {
	v := n.Input(0)
	if v == nil {
		return n.Errorf("input is missing")
	}
	if o, ok := v.Data.(*OptionalValue); ok {
		if o.Value == nil {
			return n.Errorf("optional is empty")
		}
		v = o.Value
	}
	CopyValue(n.Out[0], v)
	return nil
}

// IdentityValue is Identity on any value: tensor, sequence or optional. gen
// calls it for Identity nodes whose input is not a tensor.
func IdentityValue(n *Node) error {
	if n.Input(0) == nil {
		return n.Errorf("want an input")
	}
	CopyValue(n.Out[0], n.In[0])
	return nil
}
