package passes

import (
	"github.com/cuvil/cuvil/ir"
)

// Layout runs chains of 2-D convolutions and the ops around them with
// channels last (NHWC) where the cost model says that pays, with one
// Transpose per value at the chain's edges, none inside.
//
// A chain is a connected region of float32 4-D nodes that can run NHWC:
// Conv and cuvil::FusedConv (group 1 or depthwise; they become FusedConv
// with layout=NHWC), MaxPool, AveragePool and GlobalAveragePool (they
// become cuvil::PoolNHWC), cuvil::ScaleShift (layout=NHWC), element-wise
// ops whose other operands are same-shape values, one-element constants
// or per-channel constants (which become [C], broadcasting along the last
// axis), and Concat along the channels (axis 3). A value a chain reads
// from outside gets one Transpose to NHWC (perm [0,2,3,1]), shared by every
// chain that reads it; a chain value read outside (or a graph output)
// keeps its name and NCHW type and is defined by a Transpose back (perm
// [0,3,1,2]) right after its producer, shared by all outside readers; the
// NHWC value inside gets the suffix "_nhwc". Model inputs and outputs keep
// NCHW semantics.
var Layout = &Pass{
	Name: "layout",
	Doc:  "run convolution chains channels-last (NHWC) where the cost model says so, with Transposes only at their edges",
	Run:  layout,
}

// The cost model: estimated nanoseconds of each op in each layout on one
// core (a chain's total decides, so only the differences matter), and of
// the conversions. Calibrated with `go test ./templates -run XXX -bench
// Layout` (BenchmarkLayout* in templates/k_nhwc_bench_test.go) on the
// 2-core AVX-512 dev machine, 1 thread, against the NCHW kernels on
// mobilenet_v2 and resnet50 layer shapes:
//
//   - GEMM convolutions: the same GEMM either way; the im2col differs.
//     NCHW copies runs of OW floats per (channel, tap, output row), NHWC
//     runs of C floats per (output pixel, tap): about 0.25 ns per float
//     plus 6 ns per run (NCHW) or 4 ns per run (NHWC), i.e. NHWC loses on
//     the 3-channel first layer and wins on deep ones; a pointwise stride-1
//     convolution has no im2col in either layout.
//   - Depthwise: the NCHW kernel copies every channel into zero-padded
//     phase planes and back (about 0.5 ns per input float, scalar Go) and
//     then runs 8-wide FMAs (0.07 ns per multiply-add; other kernels than
//     3x3 stride 1-2 take a scalar loop, 1 ns); NHWC runs the FMAs straight
//     from the input (0.05 ns per multiply-add) plus about 15 ns per output
//     row and per border pixel (tap lists).
//   - Pooling: NCHW MaxPool is separable scalar Go, about 0.6 ns per
//     output per kernel row+column; NHWC is 8-wide, about 0.1 ns per
//     output per tap. Average pooling likewise.
//   - Transposes (the conversions): about 0.7 ns per float (tiled Go).
//   - Element-wise ops, Concat, ScaleShift, GlobalAveragePool: the same in
//     both layouts (not modelled).
const (
	costGemmRunNCHW  = 6.0
	costGemmRunNHWC  = 4.0
	costCopyFloat    = 0.25
	costDWPlaneFloat = 0.5
	costDWMacNCHW    = 0.07
	costDWMacScalar  = 1.0
	costDWMacNHWC    = 0.05
	costDWRowNHWC    = 15.0
	costPoolNCHW     = 0.6
	costPoolNHWC     = 0.1
	costTransFloat   = 0.7
)

// layoutKind is how a chain member runs in NHWC.
type layoutKind int

const (
	lkNone layoutKind = iota
	lkConv
	lkPool
	lkScaleShift
	lkElementwise
	lkConcat
)

func layout(m *ir.Model) error {
	g := m.Graph
	r := newRewriter(m, g)
	kinds := map[*ir.Node]layoutKind{}
	for _, n := range g.Nodes {
		at(m, n)
		if k := layoutKindOf(n); k != lkNone {
			kinds[n] = k
		}
	}
	// Chains: members joined by the values one produces and another reads.
	parent := map[*ir.Node]*ir.Node{}
	var find func(n *ir.Node) *ir.Node
	find = func(n *ir.Node) *ir.Node {
		for parent[n] != nil && parent[n] != n {
			n = parent[n]
		}
		return n
	}
	for _, n := range g.Nodes {
		if kinds[n] == lkNone {
			continue
		}
		if parent[n] == nil {
			parent[n] = n
		}
		for _, v := range n.Inputs {
			if v != nil && v.Def != nil && kinds[v.Def] != lkNone {
				a, b := find(n), find(v.Def)
				if a != b {
					parent[a] = b
				}
			}
		}
	}
	chains := map[*ir.Node][]*ir.Node{}
	var roots []*ir.Node
	for _, n := range g.Nodes {
		if kinds[n] == lkNone {
			continue
		}
		root := find(n)
		if chains[root] == nil {
			roots = append(roots, root)
		}
		chains[root] = append(chains[root], n)
	}
	nhwc := map[*ir.Node]bool{}
	for _, root := range roots {
		members := chains[root]
		in := map[*ir.Node]bool{}
		for _, n := range members {
			in[n] = true
		}
		if layoutGain(r, members, in) > 0 {
			for _, n := range members {
				nhwc[n] = true
			}
		}
	}
	if len(nhwc) == 0 {
		return nil
	}
	useCuvil(m)
	rw := layoutRewrite{r: r, m: m, kinds: kinds, nhwc: nhwc, toNHWC: map[*ir.Value]*ir.Value{}, inner: map[*ir.Value]*ir.Value{}}
	var nodes []*ir.Node
	for _, n := range g.Nodes {
		if !nhwc[n] {
			nodes = append(nodes, n)
			continue
		}
		at(m, n)
		nodes = rw.node(nodes, n)
	}
	g.Nodes = nodes
	r.refresh()
	return nil
}

// layoutKindOf says whether n can run NHWC, and how.
func layoutKindOf(n *ir.Node) layoutKind {
	if len(n.Outputs) == 0 || !is4DF32(n.Outputs[0]) {
		return lkNone
	}
	for _, v := range n.Outputs[1:] {
		if v != nil {
			return lkNone // MaxPool's Indices
		}
	}
	for _, a := range n.Attrs {
		if a.Kind == ir.AttrGraph || a.Kind == ir.AttrGraphs {
			return lkNone
		}
	}
	cuvil := n.Domain == ir.CuvilDomain
	switch {
	case isOp(n, "Conv") || cuvil && n.Op == "FusedConv":
		if n.AttrString("layout", "NCHW") != "NCHW" || len(n.Inputs) < 2 || !is4DF32(n.Inputs[0]) || !is4DF32(n.Inputs[1]) {
			return lkNone
		}
		if len(n.Inputs) > 3 && n.Inputs[3] != nil && !is4DF32(n.Inputs[3]) {
			return lkNone
		}
		ws, _ := n.Inputs[1].Type.Shape.Consts()
		C := n.Inputs[0].Type.Shape[1].Size
		group := n.AttrInt("group", 1)
		if group == 1 || group == C && ws[0] == C && ws[1] == 1 {
			return lkConv
		}
	case isOp(n, "MaxPool") || isOp(n, "AveragePool"):
		if is4DF32(n.Inputs[0]) && len(n.AttrInts("kernel_shape", nil)) == 2 && n.AttrInt("storage_order", 0) == 0 {
			return lkPool
		}
	case isOp(n, "GlobalAveragePool"):
		if is4DF32(n.Inputs[0]) {
			return lkPool
		}
	case cuvil && n.Op == "ScaleShift":
		if n.AttrString("layout", "NCHW") == "NCHW" && is4DF32(n.Inputs[0]) {
			return lkScaleShift
		}
	case isOp(n, "Concat"):
		if ax := n.AttrInt("axis", -1); ax != 1 && ax != -3 {
			return lkNone
		}
		for _, v := range n.Inputs {
			if v == nil || v.IsConst() || !is4DF32(v) {
				return lkNone
			}
		}
		return lkConcat
	default:
		s := ir.LookupOp(n.Domain, n.Op)
		if s == nil || !s.Elementwise || n.Attr("axis") != nil || n.Attr("broadcast") != nil {
			return lkNone
		}
		y := n.Outputs[0]
		for _, v := range n.Inputs {
			if v == nil {
				continue
			}
			if v.IsConst() {
				if v.Const.NumElements() == 1 || layoutChannelConst(v) {
					continue
				}
				return lkNone
			}
			if !v.Type.Known() || !v.Type.Shape.Equal(y.Type.Shape) {
				return lkNone
			}
		}
		return lkElementwise
	}
	return lkNone
}

// is4DF32 reports whether v is a float32 tensor of rank 4 with a known
// shape.
func is4DF32(v *ir.Value) bool {
	if v == nil || !v.Type.Known() || v.Type.DType != ir.F32 || v.Type.Rank() != 4 {
		return false
	}
	_, ok := v.Type.Shape.Consts()
	return ok
}

// layoutChannelConst reports whether constant c broadcasts per channel
// against a 4-D NCHW value (shape [C,1,1] or [1,C,1,1]).
func layoutChannelConst(c *ir.Value) bool {
	if len(c.Const.Shape) < 3 || len(c.Const.Shape) > 4 {
		return false
	}
	axis, _, ok := axisVector(c, 4)
	return ok && axis == 1
}

// layoutGain is the estimated saving (ns) of running the chain members
// NHWC: their cost in NCHW minus in NHWC, minus the conversions.
func layoutGain(r *rewriter, members []*ir.Node, in map[*ir.Node]bool) float64 {
	gain := 0.0
	entries := map[*ir.Value]bool{}
	for _, n := range members {
		gain += layoutOpCost(n, false) - layoutOpCost(n, true)
		for _, v := range n.Inputs {
			if v != nil && !v.IsConst() && (v.Def == nil || !in[v.Def]) && is4DF32(v) && layoutDataInput(n, v) {
				entries[v] = true
			}
		}
		y := n.Outputs[0]
		exit := r.outs[y]
		for _, u := range r.uses[y] {
			exit = exit || !in[u]
		}
		if exit {
			gain -= costTransFloat * elems(y)
		}
	}
	for v := range entries {
		gain -= costTransFloat * elems(v)
	}
	return gain
}

// layoutDataInput reports whether v is a layout-carrying input of n (not a
// convolution's weights or bias).
func layoutDataInput(n *ir.Node, v *ir.Value) bool {
	if isOp(n, "Conv") || n.Op == "FusedConv" {
		return v == n.Inputs[0] || len(n.Inputs) > 3 && v == n.Inputs[3]
	}
	if n.Op == "ScaleShift" {
		return v == n.Inputs[0]
	}
	return true
}

// elems is v's element count (v has a constant shape).
func elems(v *ir.Value) float64 {
	c, _ := v.Type.Shape.NumElements()
	return float64(c)
}

// layoutOpCost estimates n's run time (ns) in one layout; ops that cost
// the same in both count 0.
func layoutOpCost(n *ir.Node, nhwc bool) float64 {
	x, y := n.Inputs[0], n.Outputs[0]
	ys, _ := y.Type.Shape.Consts()
	xs, _ := x.Type.Shape.Consts()
	switch {
	case isOp(n, "Conv") || n.Op == "FusedConv":
		ws, _ := n.Inputs[1].Type.Shape.Consts()
		N, C, H, W := float64(xs[0]), float64(xs[1]), float64(xs[2]), float64(xs[3])
		OH, OW := float64(ys[2]), float64(ys[3])
		kk := float64(ws[2] * ws[3])
		strides := n.AttrInts("strides", []int64{1, 1})
		dil := n.AttrInts("dilations", []int64{1, 1})
		pads := n.AttrInts("pads", []int64{0, 0, 0, 0})
		cost := 0.0
		if !n.Inputs[1].IsConst() && nhwc {
			cost += costCopyFloat * 2 * elems(n.Inputs[1]) // repacked every run
		}
		if n.AttrInt("group", 1) > 1 {
			macs := N * OH * OW * C * kk
			if nhwc {
				return cost + costDWMacNHWC*macs + costDWRowNHWC*N*(OH+2*OW)
			}
			fast := ws[2] == 3 && ws[3] == 3 && strides[0] == strides[1] && strides[0] <= 2 && dil[0] == 1 && dil[1] == 1
			if !fast {
				return costDWMacScalar * macs
			}
			return costDWMacNCHW*macs + costDWPlaneFloat*N*C*(H*W+OH*OW)
		}
		pointwise := kk == 1 && strides[0] == 1 && strides[1] == 1
		for _, p := range pads {
			pointwise = pointwise && p == 0
		}
		if pointwise {
			return cost
		}
		col := N * OH * OW * C * kk
		if nhwc {
			return cost + costCopyFloat*col + costGemmRunNHWC*N*OH*OW*kk
		}
		return costCopyFloat*col + costGemmRunNCHW*N*C*kk*OH
	case isOp(n, "MaxPool") || isOp(n, "AveragePool"):
		k := n.AttrInts("kernel_shape", nil)
		out := elems(y)
		if nhwc {
			return costPoolNHWC * out * float64(k[0]*k[1])
		}
		return costPoolNCHW * out * float64(k[0]+k[1])
	}
	return 0
}

// layoutRewrite rewrites the chosen chains' nodes, in graph order.
type layoutRewrite struct {
	r      *rewriter
	m      *ir.Model
	kinds  map[*ir.Node]layoutKind
	nhwc   map[*ir.Node]bool
	toNHWC map[*ir.Value]*ir.Value // outside value -> its NHWC Transpose
	inner  map[*ir.Value]*ir.Value // chain value (NCHW, original) -> NHWC value
}

var (
	permToNHWC = []int64{0, 2, 3, 1}
	permToNCHW = []int64{0, 3, 1, 2}
)

// permuted is type t [N,C,H,W] as [N,H,W,C] (toNHWC) or back.
func permuted(t ir.Type, perm []int64) ir.Type {
	out := t.Clone()
	for i, p := range perm {
		out.Shape[i] = t.Shape[p]
	}
	return out
}

// transpose makes a Transpose node from v to a value out.
func (w *layoutRewrite) transpose(v, out *ir.Value, perm []int64) *ir.Node {
	ver, _ := onnxVersion(w.m, "Transpose")
	t := &ir.Node{Name: out.Name, Op: "Transpose", Version: ver, Inputs: []*ir.Value{v}, Outputs: []*ir.Value{out}}
	t.SetAttr(&ir.Attr{Name: "perm", Kind: ir.AttrInts, Ints: append([]int64(nil), perm...)})
	out.Def = t
	return t
}

// node appends chain member n, rewritten to NHWC, to nodes, preceded by
// the entry Transposes it needs first and followed by the exit Transpose of
// its output if one is needed.
func (w *layoutRewrite) node(nodes []*ir.Node, n *ir.Node) []*ir.Node {
	kind := w.kinds[n]
	ins := append([]*ir.Value(nil), n.Inputs...)
	for i, v := range ins {
		if v == nil || !layoutDataInput(n, v) {
			continue
		}
		nv, inChain := w.inner[v]
		switch {
		case inChain:
			ins[i] = nv
		case v.IsConst():
			if kind == lkElementwise && v.Const.NumElements() > 1 {
				// Per channel: the same values as [C], along the last axis.
				c := v.Const.NumElements()
				ins[i] = w.r.constant(v.Name+"_nhwc", &ir.Tensor{DType: v.Const.DType, Shape: []int64{c}, Raw: v.Const.Raw})
			}
		default:
			t, ok := w.toNHWC[v]
			if !ok {
				t = &ir.Value{Name: w.r.fresh(v.Name + "_nhwc"), Type: permuted(v.Type, permToNHWC)}
				nodes = append(nodes, w.transpose(v, t, permToNHWC))
				w.toNHWC[v] = t
			}
			ins[i] = t
		}
	}
	y := n.Outputs[0]
	yn := &ir.Value{Name: w.r.fresh(y.Name + "_nhwc"), Type: permuted(y.Type, permToNHWC)}
	w.inner[y] = yn
	out := n
	switch kind {
	case lkConv:
		out = &ir.Node{Name: n.Name, Op: "FusedConv", Domain: ir.CuvilDomain, Version: ir.CuvilOpset}
		for _, a := range n.Attrs {
			out.SetAttr(a)
		}
		out.SetAttr(&ir.Attr{Name: "layout", Kind: ir.AttrString, S: "NHWC"})
	case lkPool:
		out = &ir.Node{Name: n.Name, Op: "PoolNHWC", Domain: ir.CuvilDomain, Version: ir.CuvilOpset}
		mode := map[string]string{"MaxPool": "max", "AveragePool": "avg", "GlobalAveragePool": "global_avg"}[n.Op]
		for _, a := range n.Attrs {
			if a.Name != "storage_order" {
				out.SetAttr(a)
			}
		}
		out.SetAttr(&ir.Attr{Name: "mode", Kind: ir.AttrString, S: mode})
	case lkScaleShift:
		n.SetAttr(&ir.Attr{Name: "layout", Kind: ir.AttrString, S: "NHWC"})
	case lkConcat:
		n.SetAttr(&ir.Attr{Name: "axis", Kind: ir.AttrInt, I: 3})
	}
	out.Inputs = ins
	out.Outputs = append([]*ir.Value{yn}, n.Outputs[1:]...)
	yn.Def = out
	nodes = append(nodes, out)
	exit := w.r.outs[y]
	for _, u := range w.r.uses[y] {
		exit = exit || !w.nhwc[u]
	}
	if exit {
		// y keeps its name and NCHW type for the outside readers.
		nodes = append(nodes, w.transpose(yn, y, permToNCHW))
	}
	return nodes
}
