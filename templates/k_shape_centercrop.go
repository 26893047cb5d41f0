package templates

// CenterCropPad (opset 18): each axis in axes (all by default) is cropped
// or zero-padded to the matching value of the shape input, centred; an odd
// difference puts the extra element at the end.
func CenterCropPad(n *Node) error {
	x, err := ewIn0(n)
	if err != nil {
		return err
	}
	S := n.Input(1)
	if S == nil {
		return n.Errorf("needs input shape")
	}
	r := len(x.Shape)
	if r > ewMaxRank {
		return n.Errorf("rank %d above %d", r, ewMaxRank)
	}
	var axes [ewMaxRank]int
	na := r
	if a := n.Attrs.Ints("axes"); a != nil {
		na = len(a)
		if na > r {
			return n.Errorf("axes %v for rank %d", a, r)
		}
		for i, v := range a {
			ax, ok := ewAxis(v, r)
			if !ok {
				return n.Errorf("axis %d out of range for rank %d", v, r)
			}
			axes[i] = ax
		}
	} else {
		for i := range axes[:r] {
			axes[i] = i
		}
	}
	if S.Len() != na {
		return n.Errorf("shape %v for %d axes", S.ShapeString(), na)
	}
	// Per axis: output dim, first input index read, first output index
	// written, and the length copied.
	var od, si, di, ln [ewMaxRank]int
	for i := 0; i < r; i++ {
		od[i], ln[i] = x.Shape[i], x.Shape[i]
	}
	for i := 0; i < na; i++ {
		a, want := axes[i], int(ewI64At(S, i))
		if want < 0 {
			return n.Errorf("negative target dim %d", want)
		}
		d := x.Shape[a]
		od[a] = want
		if want < d {
			si[a], ln[a] = (d-want)/2, want
		} else {
			di[a], ln[a] = (want-d)/2, d
		}
	}
	out := n.Out[0]
	out.Resize(x.DType, od[:r]...)
	ewZero(out.Data, 0, out.Len())
	if ewSize(ln[:r]) == 0 {
		return nil
	}
	var ist, ost [ewMaxRank]int
	ewContig(&ist, x.Shape)
	ewContig(&ost, od[:r])
	var w ewWalk
	w.rank, w.nops = r, 2
	copy(w.dims[:], ln[:r])
	w.st[0], w.st[1] = ost, ist
	for i := 0; i < r; i++ {
		w.base[0] += di[i] * ost[i]
		w.base[1] += si[i] * ist[i]
	}
	w.coalesce()
	ewCopyWalkAny(&w, out.Data, x.Data)
	return nil
}
