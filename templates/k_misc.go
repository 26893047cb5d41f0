package templates

import (
	"cmp"
	"math"
	"slices"
)

// Assorted ops real models use: TopK, Compress, Unique, ReverseSequence,
// Shrink, Det, NonMaxSuppression, MaxUnpool, MaxRoiPool, RoiAlign, Einsum
// and GridSample. Ops that only move elements compute a source index per
// output element and copy with miscTake, so they work for every dtype.

// miscTake sets dst[i] = src[idx[i]] (the zero value when idx[i] < 0);
// dst must already have src's dtype and len(idx) elements.
func miscTake(dst, src *Tensor, idx []int) {
	switch s := src.Data.(type) {
	case []float32:
		miscTakeT(dst.Data.([]float32), s, idx)
	case []float64:
		miscTakeT(dst.Data.([]float64), s, idx)
	case []uint16:
		miscTakeT(dst.Data.([]uint16), s, idx)
	case []int8:
		miscTakeT(dst.Data.([]int8), s, idx)
	case []uint8:
		miscTakeT(dst.Data.([]uint8), s, idx)
	case []int16:
		miscTakeT(dst.Data.([]int16), s, idx)
	case []int32:
		miscTakeT(dst.Data.([]int32), s, idx)
	case []int64:
		miscTakeT(dst.Data.([]int64), s, idx)
	case []uint32:
		miscTakeT(dst.Data.([]uint32), s, idx)
	case []uint64:
		miscTakeT(dst.Data.([]uint64), s, idx)
	case []bool:
		miscTakeT(dst.Data.([]bool), s, idx)
	case []string:
		miscTakeT(dst.Data.([]string), s, idx)
	}
}

func miscTakeT[E any](dst, src []E, idx []int) {
	var zero E
	for i, j := range idx {
		if j < 0 {
			dst[i] = zero
		} else {
			dst[i] = src[j]
		}
	}
}

// miscCmpAt compares elements i and j of t (NaN sorts above everything).
func miscCmpAt(t *Tensor, i, j int) int {
	switch d := t.Data.(type) {
	case []float32:
		return miscCmpF(float64(d[i]), float64(d[j]))
	case []float64:
		return miscCmpF(d[i], d[j])
	case []int64:
		return cmp.Compare(d[i], d[j])
	case []int32:
		return cmp.Compare(d[i], d[j])
	case []uint64:
		return cmp.Compare(d[i], d[j])
	case []string:
		return cmp.Compare(d[i], d[j])
	}
	return miscCmpF(ewF64At(t, i), ewF64At(t, j))
}

func miscCmpF(a, b float64) int {
	an, bn := a != a, b != b
	switch {
	case an && bn:
		return 0
	case an:
		return 1
	case bn:
		return -1
	}
	return cmp.Compare(a, b)
}

// miscSplitAxis returns (outer, length, inner) of shape around axis.
func miscSplitAxis(shape []int, axis int) (int, int, int) {
	outer, inner := 1, 1
	for _, d := range shape[:axis] {
		outer *= d
	}
	for _, d := range shape[axis+1:] {
		inner *= d
	}
	return outer, shape[axis], inner
}

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

// Compress is ONNX Compress: keep the slices along axis (or the flattened
// elements) whose condition is true.
func Compress(n *Node) error {
	x, c := n.Input(0), n.Input(1)
	if x == nil || c == nil {
		return n.Errorf("needs input and condition")
	}
	cond := c.Bool()
	st := miscScr[int](n)
	if !n.Attrs.Has("axis") {
		cnt := 0
		for i, b := range cond {
			if b && i < x.Len() {
				cnt++
			}
		}
		idx := st.getInts(0, cnt)
		j := 0
		for i, b := range cond {
			if b && i < x.Len() {
				idx[j] = i
				j++
			}
		}
		n.Out[0].Resize(x.DType, cnt)
		miscTake(n.Out[0], x, idx)
		return nil
	}
	axis, err := miscAxis(n, n.Attrs.Int("axis", 0), len(x.Shape))
	if err != nil {
		return err
	}
	outer, L, inner := miscSplitAxis(x.Shape, axis)
	if len(cond) > L {
		return n.Errorf("condition has %d entries, axis has %d", len(cond), L)
	}
	keep := 0
	for _, b := range cond {
		if b {
			keep++
		}
	}
	shape := st.getInts(1, len(x.Shape))
	copy(shape, x.Shape)
	shape[axis] = keep
	idx := st.getInts(0, outer*keep*inner)
	p := 0
	for o := 0; o < outer; o++ {
		for l, b := range cond {
			if !b {
				continue
			}
			for in := 0; in < inner; in++ {
				idx[p] = (o*L+l)*inner + in
				p++
			}
		}
	}
	n.Out[0].Resize(x.DType, shape...)
	miscTake(n.Out[0], x, idx)
	return nil
}

// ReverseSequence is ONNX ReverseSequence: reverse the first
// sequence_lens[b] steps along time_axis for each batch entry b.
func ReverseSequence(n *Node) error {
	x, sl := n.Input(0), n.Input(1)
	if x == nil || sl == nil {
		return n.Errorf("needs input and sequence_lens")
	}
	if len(x.Shape) < 2 {
		return n.Errorf("input must have rank >= 2")
	}
	bAx, tAx := int(n.Attrs.Int("batch_axis", 1)), int(n.Attrs.Int("time_axis", 0))
	if !(bAx == 0 && tAx == 1 || bAx == 1 && tAx == 0) {
		return n.Errorf("batch_axis %d and time_axis %d must be 0 and 1", bAx, tAx)
	}
	B, T := x.Shape[bAx], x.Shape[tAx]
	if sl.Len() != B {
		return n.Errorf("sequence_lens has %d entries, want %d", sl.Len(), B)
	}
	inner := x.Len() / (B * T)
	idx := miscScr[int](n).getInts(0, x.Len())
	for b := 0; b < B; b++ {
		L := int(ewI64At(sl, b))
		if L < 0 || L > T {
			return n.Errorf("sequence_lens[%d] = %d out of range [0,%d]", b, L, T)
		}
		for t := 0; t < T; t++ {
			s := t
			if t < L {
				s = L - 1 - t
			}
			var dst, src int
			if bAx == 0 {
				dst, src = (b*T+t)*inner, (b*T+s)*inner
			} else {
				dst, src = (t*B+b)*inner, (s*B+b)*inner
			}
			for i := 0; i < inner; i++ {
				idx[dst+i] = src + i
			}
		}
	}
	n.Out[0].Resize(x.DType, x.Shape...)
	miscTake(n.Out[0], x, idx)
	return nil
}

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

// miscSetAt stores v into element i of a numeric tensor (integers
// truncate toward zero, as a C cast would).
func miscSetAt(t *Tensor, i int, v float64) {
	switch d := t.Data.(type) {
	case []float32:
		d[i] = float32(v)
	case []float64:
		d[i] = v
	case []int64:
		d[i] = int64(v)
	case []int32:
		d[i] = int32(v)
	case []int8:
		d[i] = int8(v)
	case []uint8:
		d[i] = uint8(v)
	case []int16:
		d[i] = int16(v)
	case []uint16:
		switch t.DType {
		case F16:
			d[i] = F32ToF16(float32(v))
		case BF16:
			d[i] = F32ToBF16(float32(v))
		default:
			d[i] = uint16(v)
		}
	case []uint32:
		d[i] = uint32(v)
	case []uint64:
		d[i] = uint64(v)
	}
}

// Shrink is ONNX Shrink: x-bias above lambd, x+bias below -lambd, else 0.
func Shrink(n *Node) error {
	x := n.Input(0)
	if x == nil {
		return n.Errorf("missing input")
	}
	bias := float64(n.Attrs.Float("bias", 0))
	lambd := float64(n.Attrs.Float("lambd", 0.5))
	y := n.Out[0]
	y.Resize(x.DType, x.Shape...)
	if xd, ok := x.Data.([]float32); ok {
		yd := y.F32()
		b, l := float32(bias), float32(lambd)
		for i, v := range xd {
			switch {
			case v < -l:
				yd[i] = v + b
			case v > l:
				yd[i] = v - b
			default:
				yd[i] = 0
			}
		}
		return nil
	}
	for i := range x.Len() {
		v := ewF64At(x, i)
		switch {
		case v < -lambd:
			v += bias
		case v > lambd:
			v -= bias
		default:
			v = 0
		}
		miscSetAt(y, i, v)
	}
	return nil
}

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

// NonMaxSuppression is ONNX NonMaxSuppression: per batch and class,
// greedily keep the best-scoring boxes that overlap no kept box by more
// than iou_threshold. Output rows are [batch, class, box].
func NonMaxSuppression(n *Node) error {
	boxes, scores := n.Input(0), n.Input(1)
	if boxes == nil || scores == nil || len(boxes.Shape) != 3 || boxes.Shape[2] != 4 || len(scores.Shape) != 3 {
		return n.Errorf("boxes must be [B,N,4] and scores [B,C,N]")
	}
	B, N, C := boxes.Shape[0], boxes.Shape[1], scores.Shape[1]
	if scores.Shape[0] != B || scores.Shape[2] != N {
		return n.Errorf("scores %v do not match boxes %v", scores.Shape, boxes.Shape)
	}
	var maxOut int64
	if t := n.Input(2); t != nil && t.Len() > 0 {
		maxOut = ewI64At(t, 0)
	}
	iouTh := 0.0
	if t := n.Input(3); t != nil && t.Len() > 0 {
		iouTh = float64(float32(ewF64At(t, 0)))
	}
	scoreTh, hasScoreTh := 0.0, false
	if t := n.Input(4); t != nil && t.Len() > 0 {
		scoreTh, hasScoreTh = float64(float32(ewF64At(t, 0))), true
	}
	center := n.Attrs.Int("center_point_box", 0) != 0
	st := miscScr[float64](n)
	// Corners as [y1, x1, y2, x2] with y1<=y2, x1<=x2, and areas.
	cs := st.get(0, B*N*4)
	for i := 0; i < B*N; i++ {
		a, b, c, d := ewF64At(boxes, i*4), ewF64At(boxes, i*4+1), ewF64At(boxes, i*4+2), ewF64At(boxes, i*4+3)
		if center { // [x_center, y_center, width, height]
			cs[i*4], cs[i*4+1], cs[i*4+2], cs[i*4+3] = b-d/2, a-c/2, b+d/2, a+c/2
		} else {
			cs[i*4], cs[i*4+1], cs[i*4+2], cs[i*4+3] = min(a, c), min(b, d), max(a, c), max(b, d)
		}
	}
	cand := st.getInts(0, N)
	sel := st.getInts(1, N)
	out := st.getI64(0, 0)[:0]
	for b := 0; b < B; b++ {
		for c := 0; c < C; c++ {
			sc := (b*C + c) * N
			nc := 0
			for i := 0; i < N; i++ {
				if !hasScoreTh || ewF64At(scores, sc+i) > scoreTh {
					cand[nc] = i
					nc++
				}
			}
			cd := cand[:nc]
			slices.SortStableFunc(cd, func(x, y int) int {
				return -cmp.Compare(ewF64At(scores, sc+x), ewF64At(scores, sc+y))
			})
			ns := 0
			for _, i := range cd {
				if int64(ns) >= maxOut {
					break
				}
				bi := cs[(b*N+i)*4 : (b*N+i)*4+4]
				keep := true
				for _, j := range sel[:ns] {
					bj := cs[(b*N+j)*4 : (b*N+j)*4+4]
					if miscIoU(bi, bj) > iouTh {
						keep = false
						break
					}
				}
				if keep {
					sel[ns] = i
					ns++
					out = append(out, int64(b), int64(c), int64(i))
				}
			}
		}
	}
	st.i64[0] = out
	y := n.Out[0]
	y.Resize(I64, len(out)/3, 3)
	copy(y.I64(), out)
	return nil
}

func miscIoU(a, b []float64) float64 {
	areaA := (a[2] - a[0]) * (a[3] - a[1])
	areaB := (b[2] - b[0]) * (b[3] - b[1])
	if areaA <= 0 || areaB <= 0 {
		return 0
	}
	ih := min(a[2], b[2]) - max(a[0], b[0])
	iw := min(a[3], b[3]) - max(a[1], b[1])
	if ih <= 0 || iw <= 0 {
		return 0
	}
	inter := ih * iw
	return inter / (areaA + areaB - inter)
}

// MaxUnpool is ONNX MaxUnpool: scatter X into a zero tensor at the flat
// indices MaxPool returned.
func MaxUnpool(n *Node) error {
	if ok, err := nnViaF32(n, MaxUnpool); ok {
		return err
	}
	x, ind := n.Input(0), n.Input(1)
	if x == nil || ind == nil || len(x.Shape) < 3 || ind.Len() != x.Len() {
		return n.Errorf("needs X [N,C,...] and indices of the same shape")
	}
	sp := len(x.Shape) - 2
	st := miscScr[int](n)
	// def is the shape the pooling attributes imply; the indices, like
	// MaxPool's, are flat offsets in it. An output_shape input only pads
	// that shape at the end of each spatial axis (as the ONNX reference
	// does), so indices are moved to the same coordinates in it.
	def := st.getInts(0, len(x.Shape))
	ks, strides, pads := n.Attrs.Ints("kernel_shape"), n.Attrs.Ints("strides"), n.Attrs.Ints("pads")
	if len(ks) != sp {
		return n.Errorf("kernel_shape needs %d entries", sp)
	}
	def[0], def[1] = x.Shape[0], x.Shape[1]
	for i := 0; i < sp; i++ {
		s, pb, pe := 1, 0, 0
		if i < len(strides) {
			s = int(strides[i])
		}
		if len(pads) == 2*sp {
			pb, pe = int(pads[i]), int(pads[sp+i])
		}
		def[2+i] = (x.Shape[2+i]-1)*s + int(ks[i]) - pb - pe
	}
	shape := def
	if os := n.Input(2); os != nil {
		if os.Len() != len(x.Shape) {
			return n.Errorf("output_shape has %d entries, want %d", os.Len(), len(x.Shape))
		}
		shape = st.getInts(2, len(x.Shape))
		for i := range shape {
			shape[i] = int(ewI64At(os, i))
			if shape[i] < def[i] || i < 2 && shape[i] != def[i] {
				return n.Errorf("output_shape %v is smaller than the unpooled shape %v", shape, def)
			}
		}
	}
	y := n.Out[0]
	y.Resize(x.DType, shape...)
	total, defTotal := y.Len(), 1
	for _, d := range def {
		defTotal *= d
	}
	idx := st.getInts(1, total)
	for i := range idx {
		idx[i] = -1
	}
	for i := 0; i < x.Len(); i++ {
		j := int(ewI64At(ind, i))
		if j < 0 || j >= defTotal {
			return n.Errorf("index %d out of range [0,%d)", j, defTotal)
		}
		if &shape[0] != &def[0] { // re-linearise j in the padded shape
			o, mul, rest := 0, 1, j
			for a := len(def) - 1; a >= 0; a-- {
				o += rest % def[a] * mul
				rest /= def[a]
				mul *= shape[a]
			}
			j = o
		}
		idx[j] = i
	}
	miscTake(y, x, idx)
	return nil
}

// MaxRoiPool is ONNX MaxRoiPool (Caffe's ROI pooling): max over each bin
// of each region; rois rows are [batch, x1, y1, x2, y2].
func MaxRoiPool(n *Node) error {
	if ok, err := nnViaF32(n, MaxRoiPool); ok {
		return err
	}
	x, rois := n.Input(0), n.Input(1)
	if x == nil || rois == nil || len(x.Shape) != 4 || len(rois.Shape) != 2 || rois.Shape[1] != 5 {
		return n.Errorf("needs X [N,C,H,W] and rois [R,5]")
	}
	ps := n.Attrs.Ints("pooled_shape")
	if len(ps) != 2 {
		return n.Errorf("pooled_shape needs 2 entries")
	}
	PH, PW := int(ps[0]), int(ps[1])
	scale := float64(n.Attrs.Float("spatial_scale", 1))
	N, C, H, W := x.Shape[0], x.Shape[1], x.Shape[2], x.Shape[3]
	R := rois.Shape[0]
	y := n.Out[0]
	y.Resize(x.DType, R, C, PH, PW)
	for r := 0; r < R; r++ {
		b := int(ewF64At(rois, r*5))
		if b < 0 || b >= N {
			return n.Errorf("roi %d has batch index %d out of range", r, b)
		}
		sw := int(math.Round(ewF64At(rois, r*5+1) * scale))
		sh := int(math.Round(ewF64At(rois, r*5+2) * scale))
		ew := int(math.Round(ewF64At(rois, r*5+3) * scale))
		eh := int(math.Round(ewF64At(rois, r*5+4) * scale))
		rh, rw := max(eh-sh+1, 1), max(ew-sw+1, 1)
		bh, bw := float64(rh)/float64(PH), float64(rw)/float64(PW)
		for c := 0; c < C; c++ {
			plane := (b*C + c) * H * W
			for ph := 0; ph < PH; ph++ {
				hs := min(max(int(math.Floor(float64(ph)*bh))+sh, 0), H)
				he := min(max(int(math.Ceil(float64(ph+1)*bh))+sh, 0), H)
				for pw := 0; pw < PW; pw++ {
					ws := min(max(int(math.Floor(float64(pw)*bw))+sw, 0), W)
					we := min(max(int(math.Ceil(float64(pw+1)*bw))+sw, 0), W)
					v := math.Inf(-1)
					if he <= hs || we <= ws {
						v = 0
					}
					for h := hs; h < he; h++ {
						for w := ws; w < we; w++ {
							v = math.Max(v, ewF64At(x, plane+h*W+w))
						}
					}
					miscSetAt(y, ((r*C+c)*PH+ph)*PW+pw, v)
				}
			}
		}
	}
	return nil
}

// RoiAlign is ONNX RoiAlign (v10; v16 adds coordinate_transformation_mode,
// default half_pixel). Sampling and max mode follow onnxruntime, which
// the ONNX reference mirrors.
func RoiAlign(n *Node) error {
	if ok, err := nnViaF32(n, RoiAlign); ok {
		return err
	}
	x, rois, bidx := n.Input(0), n.Input(1), n.Input(2)
	if x == nil || rois == nil || bidx == nil || len(x.Shape) != 4 || len(rois.Shape) != 2 || rois.Shape[1] != 4 {
		return n.Errorf("needs X [N,C,H,W], rois [R,4] and batch_indices [R]")
	}
	N, C, H, W := x.Shape[0], x.Shape[1], x.Shape[2], x.Shape[3]
	R := rois.Shape[0]
	if bidx.Len() != R {
		return n.Errorf("batch_indices has %d entries, want %d", bidx.Len(), R)
	}
	OH, OW := int(n.Attrs.Int("output_height", 1)), int(n.Attrs.Int("output_width", 1))
	sr := int(n.Attrs.Int("sampling_ratio", 0))
	scale := float64(n.Attrs.Float("spatial_scale", 1))
	isMax := n.Attrs.String("mode", "avg") == "max"
	halfPixel := n.Version >= 16 && n.Attrs.String("coordinate_transformation_mode", "half_pixel") == "half_pixel"
	offset := 0.0
	if halfPixel {
		offset = 0.5
	}
	y := n.Out[0]
	y.Resize(x.DType, R, C, OH, OW)
	for r := 0; r < R; r++ {
		b := int(ewI64At(bidx, r))
		if b < 0 || b >= N {
			return n.Errorf("roi %d has batch index %d out of range", r, b)
		}
		x1, y1 := ewF64At(rois, r*4)*scale-offset, ewF64At(rois, r*4+1)*scale-offset
		x2, y2 := ewF64At(rois, r*4+2)*scale-offset, ewF64At(rois, r*4+3)*scale-offset
		rw, rh := x2-x1, y2-y1
		if !halfPixel {
			rw, rh = max(rw, 1), max(rh, 1)
		}
		bh, bw := rh/float64(OH), rw/float64(OW)
		gh, gw := sr, sr
		if sr <= 0 {
			gh, gw = int(math.Ceil(rh/float64(OH))), int(math.Ceil(rw/float64(OW)))
		}
		count := float64(max(gh*gw, 1))
		for c := 0; c < C; c++ {
			plane := (b*C + c) * H * W
			for ph := 0; ph < OH; ph++ {
				for pw := 0; pw < OW; pw++ {
					acc := 0.0
					first := true
					for iy := 0; iy < gh; iy++ {
						yy := y1 + float64(ph)*bh + (float64(iy)+0.5)*bh/float64(gh)
						for ix := 0; ix < gw; ix++ {
							xx := x1 + float64(pw)*bw + (float64(ix)+0.5)*bw/float64(gw)
							var v float64
							if !(yy < -1 || yy > float64(H) || xx < -1 || xx > float64(W)) {
								yv, xv := max(yy, 0), max(xx, 0)
								yl, xl := int(yv), int(xv)
								yh, xh := yl+1, xl+1
								if yl >= H-1 {
									yl, yh, yv = H-1, H-1, float64(H-1)
								}
								if xl >= W-1 {
									xl, xh, xv = W-1, W-1, float64(W-1)
								}
								ly, lx := yv-float64(yl), xv-float64(xl)
								hy, hx := 1-ly, 1-lx
								v1, v2 := ewF64At(x, plane+yl*W+xl), ewF64At(x, plane+yl*W+xh)
								v3, v4 := ewF64At(x, plane+yh*W+xl), ewF64At(x, plane+yh*W+xh)
								if isMax {
									v = max(hy*hx*v1, hy*lx*v2, ly*hx*v3, ly*lx*v4)
								} else {
									v = hy*hx*v1 + hy*lx*v2 + ly*hx*v3 + ly*lx*v4
								}
							}
							if isMax {
								if first || v > acc {
									acc = v
								}
								first = false
							} else {
								acc += v
							}
						}
					}
					if !isMax {
						acc /= count
					}
					miscSetAt(y, ((r*C+c)*OH+ph)*OW+pw, acc)
				}
			}
		}
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

// miscReflect folds v into [lo, hi] by reflecting at the borders.
func miscReflect(v, lo, hi float64) float64 {
	rng := hi - lo
	if rng <= 0 {
		return lo
	}
	switch {
	case v < lo:
		d := lo - v
		k := int(d / rng)
		r := d - float64(k)*rng
		if k%2 == 0 {
			return lo + r
		}
		return hi - r
	case v > hi:
		d := v - hi
		k := int(d / rng)
		r := d - float64(k)*rng
		if k%2 == 0 {
			return hi - r
		}
		return lo + r
	}
	return v
}
