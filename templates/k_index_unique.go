package templates

import (
	"cmp"
	"slices"
)

// Unique is ONNX Unique: unique elements (or slices along axis), sorted or
// in order of first occurrence, with indices, inverse indices and counts.
func Unique(n *Node) error {
	x := n.Input(0)
	if x == nil {
		return n.Errorf("missing input X")
	}
	hasAxis := n.Attrs.Has("axis")
	outer, L, inner := 1, x.Len(), 1
	axis := 0
	if hasAxis {
		var err error
		axis, err = miscAxis(n, n.Attrs.Int("axis", 0), len(x.Shape))
		if err != nil {
			return err
		}
		outer, L, inner = miscSplitAxis(x.Shape, axis)
	}
	// cmpSlice compares slice a and b along the axis lexicographically.
	cmpSlice := func(a, b int) int {
		for o := 0; o < outer; o++ {
			for in := 0; in < inner; in++ {
				if c := miscCmpAt(x, (o*L+a)*inner+in, (o*L+b)*inner+in); c != 0 {
					return c
				}
			}
		}
		return 0
	}
	st := miscScr[int](n)
	order := st.getInts(0, L)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, cmpSlice)
	// Group equal slices; group g has first occurrence first[g].
	group := st.getInts(1, L) // group of each slice
	first := st.getInts(2, L)
	count := st.getInts(3, L)
	ng := 0
	for i, s := range order {
		if i == 0 || cmpSlice(order[i-1], s) != 0 {
			first[ng], count[ng] = s, 0
			ng++
		}
		group[s] = ng - 1
		count[ng-1]++
	}
	// rank maps a sorted group to its output position.
	rank := st.getInts(4, ng)
	if n.Attrs.Int("sorted", 1) != 0 {
		for g := range rank {
			rank[g] = g
		}
	} else {
		byFirst := st.getInts(5, ng)
		for g := range byFirst {
			byFirst[g] = g
		}
		slices.SortFunc(byFirst, func(a, b int) int { return cmp.Compare(first[a], first[b]) })
		for pos, g := range byFirst {
			rank[g] = pos
		}
	}
	if y := n.Out[0]; y != nil {
		var shape []int
		if hasAxis {
			shape = st.getInts(6, len(x.Shape))
			copy(shape, x.Shape)
			shape[axis] = ng
		} else {
			shape = st.getInts(6, 1)
			shape[0] = ng
		}
		idx := st.getInts(7, outer*ng*inner)
		for g := 0; g < ng; g++ {
			p := rank[g]
			for o := 0; o < outer; o++ {
				for in := 0; in < inner; in++ {
					idx[(o*ng+p)*inner+in] = (o*L+first[g])*inner + in
				}
			}
		}
		y.Resize(x.DType, shape...)
		miscTake(y, x, idx)
	}
	if len(n.Out) > 1 && n.Out[1] != nil {
		n.Out[1].Resize(I64, ng)
		d := n.Out[1].I64()
		for g := 0; g < ng; g++ {
			d[rank[g]] = int64(first[g])
		}
	}
	if len(n.Out) > 2 && n.Out[2] != nil {
		n.Out[2].Resize(I64, L)
		d := n.Out[2].I64()
		for s := 0; s < L; s++ {
			d[s] = int64(rank[group[s]])
		}
	}
	if len(n.Out) > 3 && n.Out[3] != nil {
		n.Out[3].Resize(I64, ng)
		d := n.Out[3].I64()
		for g := 0; g < ng; g++ {
			d[rank[g]] = int64(count[g])
		}
	}
	return nil
}
