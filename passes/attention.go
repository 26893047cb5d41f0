package passes

import (
	"github.com/cuvil/cuvil/ir"
)

// FuseAttention replaces scaled dot-product attention, as exporters write
// it, by one cuvil::Attention:
//
//	MatMul(Q', Kt') [Div or Mul by a scalar] [Add mask] -> Softmax(last axis) -> MatMul(·, V)
//
// where Q' may itself be Q divided or multiplied by a scalar constant (the
// way PyTorch's MultiheadAttention scales the query) and likewise Kt'. The
// scales multiply into the node's scale attribute. Q, Kt and V must be
// f32 of one rank with the same leading dims (no MatMul broadcasting), and
// every intermediate must have no other reader.
var FuseAttention = &Pass{
	Name: "fuse-attention",
	Doc:  "replace MatMul/scale/mask-Add/Softmax/MatMul attention by cuvil::Attention",
	Run: func(m *ir.Model) error {
		return forGraphs(m, func(g *ir.Graph) error {
			r := newRewriter(m, g)
			for _, n := range g.Nodes {
				at(m, n)
				if !r.dead[n] && isOp(n, "Softmax") {
					fuseAttentionAt(r, n)
				}
			}
			r.sweep()
			return nil
		})
	},
}

// scaleOf returns x and the factor when n is x/c or x*c (c*x) for a
// scalar constant c.
func scaleOf(n *ir.Node) (*ir.Value, float64, bool) {
	switch {
	case isOp(n, "Div") && len(n.Inputs) == 2 && !n.Inputs[0].IsConst():
		if c, ok := scalarConst(n.Inputs[1]); ok && c != 0 {
			return n.Inputs[0], 1 / c, true
		}
	case isOp(n, "Mul"):
		if x, c, ok := constOperand(n); ok {
			return x, c, true
		}
	}
	return nil, 0, false
}

func fuseAttentionAt(r *rewriter, sm *ir.Node) {
	mergeReshapedMask(r, sm)
	x, p := sm.Inputs[0], sm.Outputs[0]
	t := x.Type
	if !t.Known() || t.DType != ir.F32 || len(t.Shape) < 2 || len(sm.Outputs) != 1 {
		return
	}
	rank := len(t.Shape)
	def := int64(-1)
	if sm.Version < 13 {
		def = 1 // coerced to 2-D at axis: only the last axis is one row
	}
	axis := def
	for _, a := range sm.Attrs {
		if a.Name == "axis" {
			axis = a.I
		}
	}
	if axis < 0 {
		axis += int64(rank)
	}
	if axis != int64(rank-1) {
		return
	}
	mm2 := r.only(p)
	if !isOp(mm2, "MatMul") || mm2.Inputs[0] != p {
		return
	}
	v := mm2.Inputs[1]
	eaten := []*ir.Node{sm}
	scale := 1.0
	var mask *ir.Value
	cur := x
	// Mask Add, then the scale, each optional.
	if n := cur.Def; isOp(n, "Add") && r.only(cur) != nil {
		for i := 0; i < 2; i++ {
			s, mk := n.Inputs[i], n.Inputs[1-i]
			if s.Def != nil && !s.IsConst() && r.only(s) == n && maskBroadcasts(mk, x) && (isOp(s.Def, "MatMul") || isOp(s.Def, "Div") || isOp(s.Def, "Mul")) {
				mask, cur = mk, s
				eaten = append(eaten, n)
				break
			}
		}
		if mask == nil {
			return
		}
	}
	if n := cur.Def; n != nil && !isOp(n, "MatMul") {
		s, c, ok := scaleOf(n)
		if !ok || r.only(cur) == nil {
			return
		}
		scale *= c
		cur = s
		eaten = append(eaten, n)
	}
	mm1 := cur.Def
	if !isOp(mm1, "MatMul") || r.only(cur) == nil {
		return
	}
	eaten = append(eaten, mm1)
	q, kt := mm1.Inputs[0], mm1.Inputs[1]
	qr, kr := mm1, mm1 // the nodes reading q and kt
	// A scalar scale on the query or key side folds in too.
	if n := q.Def; n != nil && r.only(q) == mm1 {
		if s, c, ok := scaleOf(n); ok {
			scale *= c
			q, qr = s, n
			eaten = append(eaten, n)
		}
	}
	if n := kt.Def; n != nil && r.only(kt) == mm1 {
		if s, c, ok := scaleOf(n); ok {
			scale *= c
			kt, kr = s, n
			eaten = append(eaten, n)
		}
	}
	for _, w := range []*ir.Value{q, kt, v} {
		if !w.Type.Known() || w.Type.DType != ir.F32 || len(w.Type.Shape) != rank {
			return
		}
	}
	for i := 0; i < rank-2; i++ {
		if q.Type.Shape[i] != kt.Type.Shape[i] || q.Type.Shape[i] != v.Type.Shape[i] {
			return
		}
	}
	y := mm2.Outputs[0]
	ins := []*ir.Value{q, kt, v}
	attrs := []*ir.Attr{{Name: "scale", Kind: ir.AttrFloat, F: float32(scale)}}
	if h, ok := attentionHeads(r, q, kt, v, y, qr, kr, mm2, mask); ok {
		ins, y, attrs = h.ins, h.y, h.attrs(float32(scale))
		eaten = append(eaten, h.eaten...)
	}
	if mask != nil {
		ins = append(ins, mask)
	}
	att := &ir.Node{Name: sm.Name, Op: "Attention", Domain: ir.CuvilDomain, Version: ir.CuvilOpset, Inputs: ins, Outputs: []*ir.Value{y}, Attrs: attrs}
	y.Def = att
	useCuvil(r.m)
	r.fuse(att, mm2, append(eaten, mm2)...)
}

// headsForm is cuvil::Attention's heads form (see its kernel): the
// projections it reads, the value it writes, its attributes and the
// Slice/Reshape/Transpose nodes it makes dead.
type headsForm struct {
	ins          []*ir.Value
	y            *ir.Value
	heads, d, dv int64
	offsets      [3]int64
	seqFirst     bool
	eaten        []*ir.Node
}

func (h *headsForm) attrs(scale float32) []*ir.Attr {
	// Sorted by name.
	a := []*ir.Attr{
		{Name: "head_size", Kind: ir.AttrInt, I: h.d},
		{Name: "heads", Kind: ir.AttrInt, I: h.heads},
	}
	if h.offsets != [3]int64{} {
		a = append(a, &ir.Attr{Name: "offsets", Kind: ir.AttrInts, Ints: h.offsets[:]})
	}
	a = append(a, &ir.Attr{Name: "scale", Kind: ir.AttrFloat, F: scale})
	if h.seqFirst {
		a = append(a, &ir.Attr{Name: "seq_first", Kind: ir.AttrInt, I: 1})
	}
	return append(a, &ir.Attr{Name: "v_head_size", Kind: ir.AttrInt, I: h.dv})
}

// headView is one operand of attention as the exporter splits heads off a
// projection: Transpose(Reshape(X)) where X is [S, B, H*D] reshaped to
// [S, B*H, D] and transposed to [B*H, S, D] (PyTorch's MultiheadAttention,
// seq-first; K to [B*H, D, S]), or X [B, S, H*D] reshaped to [B, S, H, D]
// and transposed to [B, H, S, D] (K to [B, H, D, S]; Hugging Face). X may
// be a Slice of a wider projection along its last axis.
type headView struct {
	src      *ir.Value // the projection read
	off      int64     // column offset of head 0 in src
	b, s     ir.Dim
	heads, d int64
	seqFirst bool
	eaten    []*ir.Node
}

// headViewOf matches v, read only by reader, as a head view; kt says v is
// K transposed.
func headViewOf(r *rewriter, v *ir.Value, reader *ir.Node, kt bool) (headView, bool) {
	var hv headView
	tr := v.Def
	if !isOp(tr, "Transpose") || r.only(v) != reader || len(tr.Inputs) != 1 {
		return hv, false
	}
	var perm []int64
	for _, a := range tr.Attrs {
		if a.Name == "perm" {
			perm = a.Ints
		}
	}
	rs := tr.Inputs[0]
	rsh := rs.Def
	if !isOp(rsh, "Reshape") || r.only(rs) != tr || !rs.Type.Known() {
		return hv, false
	}
	x := rsh.Inputs[0]
	xt, rt := x.Type.Shape, rs.Type.Shape
	if !x.Type.Known() || len(xt) != 3 || !xt[2].IsConst() {
		return hv, false
	}
	w := xt[2].Size
	eq := func(p []int64, q ...int64) bool { return slicesEqual(p, q) }
	switch {
	case len(rt) == 3 && (!kt && eq(perm, 1, 0, 2) || kt && eq(perm, 1, 2, 0)):
		// [S, B, W] -> [S, B*H, D] -> [B*H, S, D]. With a symbolic
		// batch (PyTorch's dynamic-batch export) the reshaped dim is a
		// symbol of its own; a Reshape keeps the element count, so with S
		// and D the same it is B*W/D = B*H. A constant there under a
		// symbolic B holds for one batch size only: not matched.
		if rt[0] != xt[0] || !rt[2].IsConst() || rt[2].Size <= 0 || w%rt[2].Size != 0 || !xt[1].IsConst() && rt[1].IsConst() {
			return hv, false
		}
		hv.d = rt[2].Size
		hv.heads = w / hv.d
		if xt[1].IsConst() && rt[1].IsConst() && rt[1].Size != xt[1].Size*hv.heads {
			return hv, false
		}
		hv.s, hv.b, hv.seqFirst = xt[0], xt[1], true
	case len(rt) == 4 && (!kt && eq(perm, 0, 2, 1, 3) || kt && eq(perm, 0, 2, 3, 1)):
		// [B, S, W] -> [B, S, H, D] -> [B, H, S, D]
		if rt[0] != xt[0] || rt[1] != xt[1] || !rt[2].IsConst() || !rt[3].IsConst() || rt[2].Size*rt[3].Size != w {
			return hv, false
		}
		hv.b, hv.s, hv.heads, hv.d = xt[0], xt[1], rt[2].Size, rt[3].Size
	default:
		return hv, false
	}
	hv.src, hv.eaten = x, []*ir.Node{tr, rsh}
	// A Slice of a wider projection along its last axis, step 1: read the
	// projection at the slice's offset.
	// The Slice is left to the cleanup DCE: exporters read its shape to
	// build the Reshape's target, so it dies with the Reshape only.
	if sl := x.Def; isOp(sl, "Slice") && sl.Version >= 10 && readersDieWith(r, x, rsh, 6) && len(sl.Inputs) >= 4 && sl.Inputs[0].Type.Known() {
		p := sl.Inputs[0]
		pt := p.Type.Shape
		st, ok1 := intsConst(sl.Inputs[1])
		ax, ok2 := intsConst(sl.Inputs[3])
		step := []int64{1}
		ok3 := true
		if len(sl.Inputs) > 4 && sl.Inputs[4] != nil {
			step, ok3 = intsConst(sl.Inputs[4])
		}
		if ok1 && ok2 && ok3 && len(st) == 1 && len(ax) == 1 && eq(step, 1) && len(pt) == 3 && (ax[0] == 2 || ax[0] == -1) &&
			pt[0] == xt[0] && pt[1] == xt[1] && pt[2].IsConst() {
			off := st[0]
			if off < 0 {
				off += pt[2].Size
			}
			if off >= 0 && off+w <= pt[2].Size {
				hv.src, hv.off = p, off
			}
		}
	}
	return hv, true
}

// readersDieWith reports whether every reader of v is sink or feeds,
// within depth nodes, only sink: once sink goes, DCE takes them all.
func readersDieWith(r *rewriter, v *ir.Value, sink *ir.Node, depth int) bool {
	if r.outs[v] {
		return false
	}
	for _, u := range r.uses[v] {
		if u == sink {
			continue
		}
		if depth == 0 {
			return false
		}
		for _, o := range u.Outputs {
			if o != nil && !readersDieWith(r, o, sink, depth-1) {
				return false
			}
		}
	}
	return true
}

// intsConst returns the values of a constant integer tensor.
func intsConst(v *ir.Value) ([]int64, bool) {
	if v == nil || !v.IsConst() || (v.Const.DType != ir.I64 && v.Const.DType != ir.I32) {
		return nil, false
	}
	return v.Const.Int64s(), true
}

func slicesEqual(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// attentionHeads matches Q, Kt and V of an attention as head views of
// projections and its output y as the heads merged back
// (Transpose(y) reshaped to [S, B, H*Dv] or [B, S, H*Dv]), so that
// cuvil::Attention can read and write the projections in place. When
// the merged output is reshaped to another shape (PyTorch's
// [S*B, H*Dv]), that Reshape stays and reads the new output.
func attentionHeads(r *rewriter, q, kt, v, y *ir.Value, qr, kr, mm2 *ir.Node, mask *ir.Value) (*headsForm, bool) {
	hq, ok1 := headViewOf(r, q, qr, false)
	hk, ok2 := headViewOf(r, kt, kr, true)
	hv, ok3 := headViewOf(r, v, mm2, false)
	if !ok1 || !ok2 || !ok3 || hq.seqFirst != hk.seqFirst || hq.seqFirst != hv.seqFirst ||
		hq.heads != hk.heads || hq.heads != hv.heads || hq.d != hk.d ||
		hq.b != hk.b || hq.b != hv.b || hk.s != hv.s {
		return nil, false
	}
	// The mask broadcast to [B*H, Sq, Sk] must mean the same against
	// [B, H, Sq, Sk]: no per-(batch, head) rows in the seq-first form.
	if mask != nil {
		if mt := mask.Type.Shape; len(mt) > 4 || hq.seqFirst && len(mt) == 3 && mt[0] != ir.D(1) {
			return nil, false
		}
	}
	// The output: Transpose back, then Reshape merging the heads.
	tr := r.only(y)
	if !isOp(tr, "Transpose") {
		return nil, false
	}
	var perm []int64
	for _, a := range tr.Attrs {
		if a.Name == "perm" {
			perm = a.Ints
		}
	}
	want := []int64{0, 2, 1, 3}
	if hq.seqFirst {
		want = []int64{1, 0, 2}
	}
	yt := tr.Outputs[0]
	rsh := r.only(yt)
	if !slicesEqual(perm, want) || !isOp(rsh, "Reshape") || !rsh.Outputs[0].Type.Known() {
		return nil, false
	}
	e := hq.heads * hv.d
	merged := ir.Shape{hq.b, hq.s, ir.D(e)}
	if hq.seqFirst {
		merged = ir.Shape{hq.s, hq.b, ir.D(e)}
	}
	h := &headsForm{ins: []*ir.Value{hq.src, hk.src, hv.src}, heads: hq.heads, d: hq.d, dv: hv.d,
		offsets: [3]int64{hq.off, hk.off, hv.off}, seqFirst: hq.seqFirst}
	h.eaten = append(append(append(h.eaten, hq.eaten...), hk.eaten...), hv.eaten...)
	h.eaten = append(h.eaten, tr)
	z := rsh.Outputs[0]
	if z.Type.Shape.Equal(merged) {
		h.y = z
		h.eaten = append(h.eaten, rsh)
		return h, true
	}
	// Keep the Reshape, reading the merged output: unless its target has a
	// 0 (copy the input's dim), which would now copy another dim.
	if len(rsh.Inputs) < 2 {
		return nil, false
	}
	if sh, ok := intsConst(rsh.Inputs[1]); ok {
		for _, d := range sh {
			if d == 0 {
				return nil, false
			}
		}
	}
	h.y = &ir.Value{Name: r.fresh(yt.Name), Type: ir.TensorType(ir.F32, merged)}
	rsh.Inputs[0] = h.y
	return h, true
}

// maskBroadcasts reports whether m, an f32 of known rank, broadcasts to
// the scores s (trailing alignment, each dim 1 or equal).
func maskBroadcasts(m, s *ir.Value) bool {
	mt, st := m.Type, s.Type
	if !mt.Known() || mt.DType != ir.F32 || len(mt.Shape) > len(st.Shape) {
		return false
	}
	off := len(st.Shape) - len(mt.Shape)
	for i, d := range mt.Shape {
		if d != st.Shape[off+i] && !(d.IsConst() && d.Size == 1) {
			return false
		}
	}
	return true
}

// mergeReshapedMask rewrites Softmax(Reshape(Add(Reshape(Add(s, B)), M)))
// as Softmax(Add(s, B')) when B and M are constants and the second
// Reshape gives back s's static shape: B' = B + M, both broadcast to
// their Add's shape and laid out as s. Swin's shifted windows add the
// relative position bias per head, then reshape the scores to [1, W, H,
// 49, 49] to add the window mask per window and reshape back; one
// constant mask lets fuse-attention take the whole attention. The mask
// is materialised at s's size (stage 1 of swin_t: 64 windows x 3 heads x
// 49 x 49 floats, 1.8 MB), so only masks up to 1<<22 elements merge.
func mergeReshapedMask(r *rewriter, sm *ir.Node) {
	r2 := sm.Inputs[0].Def
	if !isOp(r2, "Reshape") || r.only(sm.Inputs[0]) != sm || r.outs[sm.Inputs[0]] {
		return
	}
	outer := r2.Inputs[0].Def
	if !isOp(outer, "Add") || r.only(r2.Inputs[0]) != r2 || r.outs[r2.Inputs[0]] {
		return
	}
	var u, mk *ir.Value
	for i := 0; i < 2; i++ {
		if c := outer.Inputs[1-i]; c.IsConst() && c.Const.DType == ir.F32 && isOp(outer.Inputs[i].Def, "Reshape") {
			u, mk = outer.Inputs[i], c
		}
	}
	if u == nil || r.only(u) != outer || r.outs[u] {
		return
	}
	r1 := u.Def
	inner := r1.Inputs[0].Def
	if !isOp(inner, "Add") || r.only(r1.Inputs[0]) != r1 || r.outs[r1.Inputs[0]] {
		return
	}
	var sc, b *ir.Value
	for i := 0; i < 2; i++ {
		if c := inner.Inputs[1-i]; c.IsConst() && c.Const.DType == ir.F32 && !inner.Inputs[i].IsConst() {
			sc, b = inner.Inputs[i], c
		}
	}
	if sc == nil {
		return
	}
	ss, ok1 := sc.Type.Shape.Consts()
	us, ok2 := u.Type.Shape.Consts()
	xs, ok3 := sm.Inputs[0].Type.Shape.Consts()
	is, ok4 := inner.Outputs[0].Type.Shape.Consts()
	if !ok1 || !ok2 || !ok3 || !ok4 || !slicesEqual(ss, xs) || !slicesEqual(ss, is) || sc.Type.DType != ir.F32 {
		return
	}
	n := int64(1)
	for _, d := range ss {
		n *= d
	}
	if n <= 0 || n > 1<<22 {
		return
	}
	// B broadcast to s's shape, then M broadcast to u's shape added in
	// u's order, which is s's order (a Reshape keeps the element order).
	bb, ok5 := broadcastF32(b.Const, ss)
	mb, ok6 := broadcastF32(mk.Const, us)
	if !ok5 || !ok6 || len(mb) != len(bb) {
		return
	}
	for i := range bb {
		bb[i] += mb[i]
	}
	merged := r.constant(b.Name+"_masked", ir.NewTensorF32(ss, bb))
	for i, in := range inner.Inputs {
		if in == b {
			inner.Inputs[i] = merged
		}
	}
	sm.Inputs[0] = inner.Outputs[0]
	r.kill(r1, outer, r2)
	for _, d := range []*ir.Node{r1, outer, r2} {
		d.Inputs = nil // so that the readers left are the live ones
	}
	r.refresh()
}

// broadcastF32 returns the values of f32 constant t broadcast (numpy
// rules) to shape, or false when it does not broadcast.
func broadcastF32(t *ir.Tensor, shape []int64) ([]float32, bool) {
	ts := t.Shape
	if len(ts) > len(shape) {
		return nil, false
	}
	off := len(shape) - len(ts)
	st := make([]int64, len(shape))
	acc := int64(1)
	for j := len(ts) - 1; j >= 0; j-- {
		switch {
		case ts[j] == shape[off+j]:
			st[off+j] = acc
		case ts[j] == 1:
			st[off+j] = 0
		default:
			return nil, false
		}
		acc *= ts[j]
	}
	src := t.Float64s()
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	out := make([]float32, n)
	idx := make([]int64, len(shape))
	for o := range out {
		rem, at := int64(o), int64(0)
		for j := len(shape) - 1; j >= 0; j-- {
			idx[j] = rem % shape[j]
			rem /= shape[j]
			at += idx[j] * st[j]
		}
		out[o] = float32(src[at])
	}
	return out, true
}
