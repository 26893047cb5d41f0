package templates

import (
	"slices"
)

// TopK is ONNX TopK (k attribute in v1, input from v10; largest and sorted
// from v11). Ties keep the lower index first.
func TopK(n *Node) error {
	if ok, err := nnViaF32(n, TopK); ok {
		return err
	}
	x := n.Input(0)
	if x == nil {
		return n.Errorf("missing input X")
	}
	var k int64
	if n.Version < 10 {
		k = n.Attrs.Int("k", -1)
	} else {
		kt := n.Input(1)
		if kt == nil || kt.Len() != 1 {
			return n.Errorf("K must be a one-element tensor")
		}
		k = ewI64At(kt, 0)
	}
	axis, err := miscAxis(n, n.Attrs.Int("axis", -1), len(x.Shape))
	if err != nil {
		return err
	}
	outer, L, inner := miscSplitAxis(x.Shape, axis)
	if k < 0 || k > int64(L) {
		return n.Errorf("k = %d out of range [0,%d]", k, L)
	}
	largest := n.Attrs.Int("largest", 1) != 0
	st := miscScr[float32](n)
	shape := st.getInts(0, len(x.Shape))
	copy(shape, x.Shape)
	shape[axis] = int(k)
	src := st.getInts(1, outer*int(k)*inner)
	order := st.getInts(2, L)
	for o := 0; o < outer; o++ {
		for in := 0; in < inner; in++ {
			base := o*L*inner + in
			for i := range order {
				order[i] = i
			}
			slices.SortStableFunc(order, func(a, b int) int {
				c := miscCmpAt(x, base+a*inner, base+b*inner)
				if largest {
					return -c
				}
				return c
			})
			for j := 0; j < int(k); j++ {
				src[(o*int(k)+j)*inner+in] = base + order[j]*inner
			}
		}
	}
	if v := n.Out[0]; v != nil {
		v.Resize(x.DType, shape...)
		miscTake(v, x, src)
	}
	if len(n.Out) > 1 && n.Out[1] != nil {
		n.Out[1].Resize(I64, shape...)
		id := n.Out[1].I64()
		for i, s := range src {
			id[i] = int64((s / inner) % L)
		}
	}
	return nil
}
