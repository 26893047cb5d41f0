package templates

import (
	"math"
)

// Det is ONNX Det: determinants of the trailing square matrices, by LU
// decomposition with partial pivoting in float64.
func Det(n *Node) error {
	x := n.Input(0)
	if x == nil || len(x.Shape) < 2 || x.Shape[len(x.Shape)-1] != x.Shape[len(x.Shape)-2] {
		return n.Errorf("input must be [..., M, M]")
	}
	m := x.Shape[len(x.Shape)-1]
	batch := x.Len() / max(m*m, 1)
	if m == 0 {
		batch = 1
		for _, d := range x.Shape[:len(x.Shape)-2] {
			batch *= d
		}
	}
	y := n.Out[0]
	y.Resize(x.DType, x.Shape[:len(x.Shape)-2]...)
	a := miscScr[float64](n).get(0, m*m)
	for b := 0; b < batch; b++ {
		for i := range a {
			a[i] = ewF64At(x, b*m*m+i)
		}
		det := 1.0
		for c := 0; c < m; c++ {
			p := c
			for r := c + 1; r < m; r++ {
				if math.Abs(a[r*m+c]) > math.Abs(a[p*m+c]) {
					p = r
				}
			}
			if a[p*m+c] == 0 {
				det = 0
				break
			}
			if p != c {
				for j := 0; j < m; j++ {
					a[c*m+j], a[p*m+j] = a[p*m+j], a[c*m+j]
				}
				det = -det
			}
			piv := a[c*m+c]
			det *= piv
			for r := c + 1; r < m; r++ {
				f := a[r*m+c] / piv
				for j := c + 1; j < m; j++ {
					a[r*m+j] -= f * a[c*m+j]
				}
			}
		}
		miscSetAt(y, b, det)
	}
	return nil
}

// miscEinsumState caches operand slices for Einsum (no per-run
// allocation).
type miscEinsumState[E miscNum] struct {
	ops   [][]E
	ints  [][]int
	shape []int
}

func (s *miscEinsumState[E]) get(slot, size int) []int { return miscGrow(&s.ints, slot, size) }

// miscEinsumLabel maps a subscript letter to a label id (ASCII order:
// A-Z are 0..25, a-z are 26..51); ellipsis dims take ids from 52 on.
func miscEinsumLabel(c byte) int {
	switch {
	case c >= 'A' && c <= 'Z':
		return int(c - 'A')
	case c >= 'a' && c <= 'z':
		return 26 + int(c-'a')
	}
	return -1
}

const miscEinsumEll = 52

// Einsum is ONNX Einsum: any equation (explicit or implicit output,
// ellipsis with broadcasting, repeated subscripts taking diagonals),
// evaluated by one loop over all labels.
func Einsum(n *Node) error {
	if ok, err := nnViaF32(n, Einsum); ok {
		return err
	}
	if len(n.In) == 0 || n.In[0] == nil {
		return n.Errorf("needs at least one input")
	}
	switch n.In[0].DType {
	case F32:
		return miscEinsum[float32](n)
	case F64:
		return miscEinsum[float64](n)
	case I32:
		return miscEinsum[int32](n)
	case I64:
		return miscEinsum[int64](n)
	case U32:
		return miscEinsum[uint32](n)
	case U64:
		return miscEinsum[uint64](n)
	case I8:
		return miscEinsum[int8](n)
	case U8:
		return miscEinsum[uint8](n)
	case I16:
		return miscEinsum[int16](n)
	case U16:
		return miscEinsum[uint16](n)
	}
	return n.Errorf("unsupported dtype %s", n.In[0].DType)
}

func miscEinsum[E miscNum](n *Node) error {
	st, ok := n.Cache.(*miscEinsumState[E])
	if !ok {
		st = &miscEinsumState[E]{}
		n.Cache = st
	}
	eq := n.Attrs.String("equation", "")
	nin := len(n.In)
	// Split the equation: terms[i] = [start, end) of operand i, output
	// term after "->" (if any).
	terms := st.get(0, 2*nin)
	arrow := -1
	t, start := 0, 0
	for i := 0; i < len(eq); i++ {
		switch {
		case eq[i] == ',':
			if t >= nin {
				return n.Errorf("equation %q has more terms than inputs", eq)
			}
			terms[2*t], terms[2*t+1] = start, i
			t++
			start = i + 1
		case eq[i] == '-' && i+1 < len(eq) && eq[i+1] == '>':
			if t >= nin {
				return n.Errorf("equation %q has more terms than inputs", eq)
			}
			terms[2*t], terms[2*t+1] = start, i
			t++
			arrow = i + 2
			i = len(eq)
		}
	}
	if arrow < 0 {
		if t >= nin {
			return n.Errorf("equation %q has more terms than inputs", eq)
		}
		terms[2*t], terms[2*t+1] = start, len(eq)
		t++
	}
	if t != nin {
		return n.Errorf("equation %q has %d terms, node has %d inputs", eq, t, nin)
	}
	// Ellipsis rank: the largest number of dims "..." stands for.
	ellRank := 0
	for i := 0; i < nin; i++ {
		letters, hasEll := 0, false
		for p := terms[2*i]; p < terms[2*i+1]; p++ {
			if miscEinsumLabel(eq[p]) >= 0 {
				letters++
			} else if eq[p] == '.' {
				hasEll = true
			}
		}
		r := len(n.In[i].Shape)
		if hasEll {
			ellRank = max(ellRank, r-letters)
		} else if r != letters {
			return n.Errorf("input %d has rank %d, equation term has %d subscripts", i, r, letters)
		}
	}
	nl := miscEinsumEll + ellRank
	size := st.get(1, nl) // -1: label unused
	for i := range size {
		size[i] = -1
	}
	uses := st.get(2, nl)
	clear(uses)
	// axisLab[i] lists operand i's axis labels; offsets into one buffer.
	total := 0
	for i := 0; i < nin; i++ {
		total += len(n.In[i].Shape)
	}
	axisLab := st.get(3, total)
	ax := 0
	for i := 0; i < nin; i++ {
		shape := n.In[i].Shape
		letters := 0
		for p := terms[2*i]; p < terms[2*i+1]; p++ {
			if miscEinsumLabel(eq[p]) >= 0 {
				letters++
			}
		}
		k := 0 // axis within operand
		for p := terms[2*i]; p < terms[2*i+1]; p++ {
			c := eq[p]
			if c == ' ' {
				continue
			}
			if c == '.' {
				if p+2 >= terms[2*i+1] || eq[p+1] != '.' || eq[p+2] != '.' {
					return n.Errorf("bad ellipsis in equation %q", eq)
				}
				p += 2
				ne := len(shape) - letters
				for e := 0; e < ne; e++ {
					axisLab[ax+k] = miscEinsumEll + ellRank - ne + e
					k++
				}
				continue
			}
			l := miscEinsumLabel(c)
			if l < 0 {
				return n.Errorf("bad subscript %q in equation %q", c, eq)
			}
			axisLab[ax+k] = l
			k++
		}
		for a := 0; a < len(shape); a++ {
			l, d := axisLab[ax+a], shape[a]
			uses[l]++
			switch {
			case size[l] < 0 || size[l] == 1:
				size[l] = d
			case d != size[l] && d != 1:
				return n.Errorf("subscript dimension %d of input %d is %d, elsewhere %d", a, i, d, size[l])
			}
		}
		ax += len(shape)
	}
	// Output labels.
	outLab := st.get(4, nl)[:0]
	if arrow >= 0 {
		for p := arrow; p < len(eq); p++ {
			c := eq[p]
			if c == ' ' {
				continue
			}
			if c == '.' {
				p += 2
				for e := 0; e < ellRank; e++ {
					outLab = append(outLab, miscEinsumEll+e)
				}
				continue
			}
			l := miscEinsumLabel(c)
			if l < 0 || size[l] < 0 {
				return n.Errorf("output subscript %q not among the inputs in %q", c, eq)
			}
			outLab = append(outLab, l)
		}
	} else {
		for e := 0; e < ellRank; e++ {
			outLab = append(outLab, miscEinsumEll+e)
		}
		for l := 0; l < miscEinsumEll; l++ {
			if uses[l] == 1 {
				outLab = append(outLab, l)
			}
		}
	}
	// All labels, output first, then summed ones.
	inOut := st.get(5, nl)
	clear(inOut)
	loop := st.get(6, nl)[:0]
	for _, l := range outLab {
		loop = append(loop, l)
		inOut[l] = 1
	}
	for l := 0; l < nl; l++ {
		if size[l] >= 0 && inOut[l] == 0 {
			loop = append(loop, l)
		}
	}
	nOut := len(outLab)
	// strides[i*len(loop)+j]: operand i's stride for loop label j.
	strides := st.get(7, nin*len(loop))
	clear(strides)
	ax = 0
	for i := 0; i < nin; i++ {
		shape := n.In[i].Shape
		s := 1
		for a := len(shape) - 1; a >= 0; a-- {
			for j, l := range loop {
				if l == axisLab[ax+a] && shape[a] != 1 {
					strides[i*len(loop)+j] += s
				}
			}
			s *= shape[a]
		}
		ax += len(shape)
	}
	if cap(st.shape) < nOut {
		st.shape = make([]int, nOut)
	}
	oshape := st.shape[:nOut]
	for j := range oshape {
		oshape[j] = max(size[loop[j]], 0)
	}
	y := n.Out[0]
	y.Resize(n.In[0].DType, oshape...)
	yd := y.Data.([]E)
	for len(st.ops) < nin {
		st.ops = append(st.ops, nil)
	}
	ops := st.ops[:nin]
	for i := range ops {
		ops[i] = n.In[i].Data.([]E)
	}
	idx := st.get(8, len(loop))
	clear(idx)
	off := st.get(9, nin)
	clear(off)
	sumVol := 1
	for _, l := range loop[nOut:] {
		sumVol *= size[l]
	}
	for o := range yd {
		var acc E
		for s := 0; s < sumVol; s++ {
			p := E(1)
			for i, op := range ops {
				p *= op[off[i]]
			}
			acc += p
			// Advance the summed labels (innermost), carrying offsets.
			miscEinsumStep(idx, off, strides, size, loop, nOut, len(loop))
		}
		yd[o] = acc
		miscEinsumStep(idx, off, strides, size, loop, 0, nOut)
	}
	return nil
}

// miscEinsumStep advances the odometer over loop labels [lo, hi),
// updating each operand's offset; labels wrap to 0 past their size.
func miscEinsumStep(idx, off, strides, size, loop []int, lo, hi int) {
	nl := len(loop)
	for j := hi - 1; j >= lo; j-- {
		idx[j]++
		for i := range off {
			off[i] += strides[i*nl+j]
		}
		if idx[j] < size[loop[j]] {
			return
		}
		for i := range off {
			off[i] -= strides[i*nl+j] * idx[j]
		}
		idx[j] = 0
	}
}
