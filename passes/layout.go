package passes

import (
	"encoding/binary"
	"slices"

	"github.com/cuvil/cuvil/ir"
)

// Layout runs chains of 2-D convolutions and the ops around them with
// channels last (NHWC) where the cost model says that pays, with one
// Transpose per value at the chain's edges, none inside.
//
// A chain is a connected region of float32 4-D nodes that can run NHWC:
// Conv and cuvil::FusedConv (any group; they become FusedConv
// with layout=NHWC), MaxPool, AveragePool, GlobalAveragePool and
// ReduceMean over H and W keeping the dimensions (they become
// cuvil::PoolNHWC), cuvil::ScaleShift (layout=NHWC), element-wise ops
// whose operands are 4-D values broadcasting to the output axis by axis
// (same-shape values, a squeeze-excitation gate [N,C,1,1]: permuted alike
// they broadcast alike), one-element constants or per-channel constants
// (which become [C], broadcasting along the last axis), Concat along
// the channels (axis 3), Pad with constant pads and Resize/Upsample with
// constant roi, scales and sizes (permuted like the axes), Slice of the
// channels only (constant starts, ends and axes, steps 1), Split along the
// channels (every output in the chain) and cuvil::ChannelShuffle (axis 1
// becomes 3 on each; ShuffleNet runs as one chain). A value a chain reads from outside gets one Transpose to NHWC (perm [0,2,3,1]), shared by every
// chain that reads it; a chain value read outside (or a graph output)
// keeps its name and NCHW type and is defined by a Transpose back (perm
// [0,3,1,2]) right after its producer, shared by all outside readers; the
// NHWC value inside gets the suffix "_nhwc". Model inputs and outputs keep
// NCHW semantics. Only the main graph is considered (If/Loop bodies keep
// NCHW; a value they capture is an outside read).
var Layout = &Pass{
	Name: "layout",
	Doc:  "run convolution chains channels-last (NHWC) where the cost model says so, with Transposes only at their edges",
	Run:  layout,
}

// The cost model: estimated nanoseconds of each op in each layout on one
// core (a chain's total decides, so only the differences matter), and of
// the conversions. Calibrated with `go test ./templates -run XXX -bench
// Layout` (BenchmarkLayout in templates/k_conv_nhwc_bench_test.go: layer shapes
// of mobilenet_v2, squeezenet and resnet50, 1 thread, weights prepacked
// both ways) on the 2-core AVX-512 dev machine while other jobs loaded it
// (load 7-12: absolute times varied 2x between runs, the NCHW/NHWC ratios
// much less):
//
//   - Depthwise 3x3: the NCHW kernel copies every channel into zero-padded
//     phase planes and back (scalar Go) and then runs 8-wide FMAs; NHWC
//     runs the FMAs straight from the input. Measured NCHW/NHWC: 1.3-1.9x
//     at stride 1 (c144 56x56, c960 7x7), 2.5-5x at stride 2 (c96 112x112).
//     Model: NCHW 0.1 ns per multiply-add + 0.6 ns per input and output
//     float (planes; other kernel sizes take a scalar loop, 1 ns per
//     multiply-add); NHWC 0.16 ns per multiply-add + 15 ns per output row
//     and border pixel (tap lists).
//   - GEMM convolutions: the same GEMM, but NHWC gives it M output columns
//     instead of H*W: with M < 32 the AVX-512 6x32 tile never runs and the
//     input rows are packed as A (Go) instead of B (AVX), measured 1.6-2x
//     slower on pointwise layers with M = 16 or 24 (about 1.2 ns per float
//     of A), equal at M >= 96. The im2col differs: NCHW copies runs of OW
//     floats per (channel, tap, output row), NHWC one run of kw*C floats
//     per (output pixel, kernel row): 0.25 ns per float plus 6 ns (NCHW) or
//     4 ns (NHWC) per run. Measured: 3x3 with C = 3 (the first layer) 1.1x
//     slower in NHWC, C = 64 and 256 1.1-1.2x faster.
//     Strided convolutions: NCHW gathers every window column alone
//     (im2col2D's strided loop, about 1 ns per float), NHWC still copies
//     runs (Zen 2, yolov5n's stride-2 convs: NHWC 1.55x faster).
//   - Pooling: NCHW MaxPool is separable scalar Go, measured about 1.8 ns
//     per output per kernel row+column; NHWC is 8-wide, 0.14 ns per output
//     per tap (c64 112x112 3x3 stride 2: 9x faster). AveragePool likewise.
//   - Grouped convolutions (1 < group, not depthwise): both layouts
//     gather windows as for group 1 and run one GEMM per group; the
//     multiply-adds cost about 0.011 ns each on full tiles (AVX-512 peak
//     at ~90 GMAC/s), scaled by the lanes a group's Mg output channels
//     leave empty: 16-lane NHWC tiles, 6-row NCHW tiles.
//   - Transposes (the conversions): 1.6 ns per float (tiled Go, c64
//     112x112).
//   - Element-wise ops, Concat, ScaleShift, GlobalAveragePool: the same in
//     both layouts (not modelled).
//
// Whole models, 1 thread, NHWC/NCHW time with this model's choices:
// mobilenet_v2 0.79-0.82, squeezenet 0.82, resnet50 0.89-0.93,
// light_inception_v2 0.37, light_densenet121 0.74.
const (
	costGemmRunNCHW  = 6.0
	costGemmRunNHWC  = 4.0
	costCopyFloat    = 0.25
	costGatherFloat  = 1.0
	costNarrowNHWC   = 1.2
	costDWPlaneFloat = 0.6
	costDWMacNCHW    = 0.1
	costDWMacScalar  = 1.0
	costDWMacNHWC    = 0.16
	costDWRowNHWC    = 15.0
	costPoolNCHW     = 1.8
	costPoolNHWC     = 0.14
	costTransFloat   = 1.6
	costGroupMac     = 0.011
	costQStoreNCHW   = 0.5
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
	lkPad
	lkResize
	lkReduceFlat
	lkQConv
	lkChannelAxis // Slice, Split and cuvil::ChannelShuffle of the channels: axis 1 becomes 3
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
	find := func(n *ir.Node) *ir.Node {
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
		in := map[*ir.Node]bool{}
		for _, n := range chains[root] {
			in[n] = true
		}
		layoutPeelResizes(r, kinds, in)
		var members []*ir.Node
		for _, n := range chains[root] {
			if in[n] {
				members = append(members, n)
			}
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
	layoutFoldInputs(r, rw.toNHWC)
	// An exit Transpose back to NCHW that the model permutes to NHWC again
	// (ConvNeXt: dwconv, then x.permute(0, 2, 3, 1) for its LayerNorm and
	// Linears) cancels, and so does the reverse pair at an entry.
	composeTransposes(m, r)
	r.sweep()
	return nil
}

// layoutPeelResizes takes out of chain in (before its gain is weighed) the
// Resizes and Upsamples that enlarge and whose output only leaves the
// chain (a segmentation head's last upsample to the image size): they run
// NCHW, the same speed either way (templates/k_resize.go), and the
// Transpose back to NCHW moves to their input, scales^2 times smaller.
// Repeated, so a run of them at a chain's end all leave it.
func layoutPeelResizes(r *rewriter, kinds map[*ir.Node]layoutKind, nhwc map[*ir.Node]bool) {
	for changed := true; changed; {
		changed = false
		for n := range nhwc {
			if kinds[n] != lkResize || elems(n.Outputs[0]) <= elems(n.Inputs[0]) {
				continue
			}
			inside := false
			for _, u := range r.uses[n.Outputs[0]] {
				inside = inside || nhwc[u]
			}
			if !inside {
				delete(nhwc, n)
				changed = true
			}
		}
	}
}

// layoutFoldMaxC is the most input channels of a convolution that reads
// its entry Transpose's NCHW input itself: each k step of its GEMM then
// gathers one tap of one plane (templates/k_conv_nhwc_pw.go), cheap for an
// image's few channels.
const layoutFoldMaxC = 4

// layoutFoldsInput reports whether convolution u, v's only reader, can
// read v NCHW: group 1, v its X (and not its residual too), at most
// layoutFoldMaxC channels.
func layoutFoldsInput(u *ir.Node, v *ir.Value) bool {
	if !isOp(u, "Conv") && (u.Op != "FusedConv" || u.Domain != ir.CuvilDomain) || u.AttrInt("group", 1) != 1 ||
		len(u.Inputs) < 2 || u.Inputs[0] != v || !is4DF32(v) {
		return false
	}
	for _, in := range u.Inputs[1:] {
		if in == v {
			return false
		}
	}
	c := v.Type.Shape[1].Size
	if u.Op == "FusedConv" && u.AttrString("layout", "NCHW") == "NHWC" {
		c = v.Type.Shape[3].Size
	}
	return c <= layoutFoldMaxC
}

// layoutFoldInputs folds entry Transposes (to NHWC, values of toNHWC)
// whose only reader is a group-1 FusedConv with at most layoutFoldMaxC
// input channels reading it as X into that conv, which reads the NCHW
// value itself (in_layout="NCHW"): a model's first convolution then
// reads the input image as it comes, with no Transpose (mobilenet_v2:
// 0.15 ms, 150K floats scattered 3 channels apart).
func layoutFoldInputs(r *rewriter, toNHWC map[*ir.Value]*ir.Value) {
	drop := map[*ir.Node]bool{}
	for v, t := range toNHWC {
		u := r.only(t)
		if u == nil || u.Op != "FusedConv" || !layoutFoldsInput(u, t) {
			continue
		}
		u.Inputs = append([]*ir.Value(nil), u.Inputs...)
		u.Inputs[0] = v
		u.SetAttr(&ir.Attr{Name: "in_layout", Kind: ir.AttrString, S: "NCHW"})
		drop[t.Def] = true
	}
	if len(drop) == 0 {
		return
	}
	nodes := r.g.Nodes[:0]
	for _, n := range r.g.Nodes {
		if !drop[n] {
			nodes = append(nodes, n)
		}
	}
	r.g.Nodes = nodes
	r.refresh()
}

// layoutKindOf says whether n can run NHWC, and how.
func layoutKindOf(n *ir.Node) layoutKind {
	if isOp(n, "ReduceMean") && len(n.Outputs) == 1 && layoutReducesHW(n, 0) {
		return lkReduceFlat
	}
	if k := layoutQuantKind(n); k != lkNone {
		return k
	}
	if len(n.Outputs) == 1 && is5DF32(n.Outputs[0]) {
		return layoutKind5D(n)
	}
	if len(n.Outputs) == 0 || !is4DF32(n.Outputs[0]) {
		return lkNone
	}
	for _, v := range n.Outputs[1:] {
		if v != nil && !isOp(n, "Split") {
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
		if group > 1 && C%group == 0 && ws[0]%group == 0 && ws[1]*group == C {
			return lkConv // grouped: per-group GEMMs (templates/k_conv_nhwc.go runGroups)
		}
	case isOp(n, "MaxPool") || isOp(n, "AveragePool"):
		if is4DF32(n.Inputs[0]) && len(n.AttrInts("kernel_shape", nil)) == 2 && n.AttrInt("storage_order", 0) == 0 {
			return lkPool
		}
	case isOp(n, "GlobalAveragePool"):
		if is4DF32(n.Inputs[0]) {
			return lkPool
		}
	case isOp(n, "Pad"):
		if layoutPads(n) != nil {
			return lkPad
		}
	case isOp(n, "ReduceMean"):
		if layoutReducesHW(n, 1) {
			return lkPool
		}
	case cuvil && n.Op == "ScaleShift":
		if n.AttrString("layout", "NCHW") == "NCHW" && is4DF32(n.Inputs[0]) {
			return lkScaleShift
		}
	case isOp(n, "Resize") || isOp(n, "Upsample"):
		// Resizing is per axis: on NHWC data it is the same op with
		// scales, sizes and roi permuted like the axes (layoutResizeConsts);
		// float32 resizes of H and W with the channels last run a pixel's
		// channels as one vector (templates/k_resize.go miscResizeBand).
		x, y := n.Inputs[0], n.Outputs[0]
		if !is4DF32(x) || n.Attr("axes") != nil || x.Type.Shape[0] != y.Type.Shape[0] || x.Type.Shape[1] != y.Type.Shape[1] {
			return lkNone
		}
		if a := n.Attr("scales"); a != nil && len(a.Floats) != 4 {
			return lkNone
		}
		for _, v := range n.Inputs[1:] {
			if v != nil && (!v.IsConst() || v.Const.NumElements() != 0 && v.Const.NumElements() != 4 && v.Const.NumElements() != 8) {
				return lkNone
			}
		}
		return lkResize
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
	case isOp(n, "Slice"):
		if is4DF32(n.Inputs[0]) && layoutSliceAxes(n) != nil {
			return lkChannelAxis
		}
	case isOp(n, "Split"):
		if layoutSplits(n) {
			return lkChannelAxis
		}
	case cuvil && n.Op == "ChannelShuffle":
		if ax := n.AttrInt("axis", 1); ax != 1 && ax != -3 {
			return lkNone
		}
		for _, v := range n.Inputs {
			if v == nil || v.IsConst() || !is4DF32(v) {
				return lkNone
			}
		}
		return lkChannelAxis
	case n.Op == "RoundHalf" && n.Domain == ir.CuvilDomain:
		// An fp16 model's input rounding (widen-half): it stays NCHW,
		// so that the first conv reads its output in place (in_layout
		// NCHW) instead of behind a Transpose of the image.
		return lkNone
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
			if !layoutBroadcasts(v, y) {
				return lkNone
			}
		}
		return lkElementwise
	}
	return lkNone
}

// layoutQuantKind says whether an integer op of the quantize pass runs
// NHWC: cuvil::QConv (group 1; it becomes layout=NHWC with W permuted to
// [M,kh,kw,C]), QuantizeLinear and DequantizeLinear with per-tensor
// scale and zero point (element-wise then), and Concat along the channels
// of u8 or s8 maps (the quantize pass makes those to keep int8 through a
// concatenation).
func layoutQuantKind(n *ir.Node) layoutKind {
	if len(n.Outputs) != 1 || !is4DQ(n.Outputs[0]) || len(n.Inputs) == 0 || !is4DQ(n.Inputs[0]) {
		return lkNone
	}
	switch {
	case n.Op == "QConv" && n.Domain == ir.CuvilDomain:
		w := n.Input(3)
		if n.AttrString("layout", "NCHW") != "NCHW" || n.AttrInt("group", 1) != 1 || w == nil || !w.IsConst() || len(w.Const.Shape) != 4 {
			return lkNone
		}
		return lkQConv
	case isOp(n, "QuantizeLinear") || isOp(n, "DequantizeLinear"):
		if n.AttrInt("block_size", 0) != 0 {
			return lkNone
		}
		for _, v := range n.Inputs[1:] {
			if v != nil && (!v.IsConst() || v.Const.NumElements() != 1) {
				return lkNone
			}
		}
		return lkElementwise
	case isOp(n, "Concat"):
		if ax := n.AttrInt("axis", -1); ax != 1 && ax != -3 || n.Outputs[0].Type.DType == ir.F32 {
			return lkNone
		}
		for _, v := range n.Inputs {
			if v == nil || v.IsConst() || !is4DQ(v) || v.Type.DType != n.Outputs[0].Type.DType {
				return lkNone
			}
		}
		return lkConcat
	}
	return lkNone
}

// is4DQ reports whether v is a float32, u8 or s8 tensor of rank 4 with a
// known shape.
func is4DQ(v *ir.Value) bool {
	if v == nil || !v.Type.Known() || v.Type.Rank() != 4 {
		return false
	}
	switch v.Type.DType {
	case ir.F32, ir.U8, ir.I8:
	default:
		return false
	}
	_, ok := v.Type.Shape.Consts()
	return ok
}

// layoutBroadcasts reports whether v, a non-constant operand of an
// element-wise op with output y, is a 4-D float32 value that broadcasts
// to y's shape axis by axis (each dimension y's or 1): a squeeze-excitation
// gate [N,C,1,1] times the map [N,C,H,W]. Permuting both the same way
// keeps the broadcast, so the op runs NHWC as it is.
func layoutBroadcasts(v, y *ir.Value) bool {
	if !(is4DF32(v) && is4DF32(y) || is5DF32(v) && is5DF32(y)) {
		return false
	}
	vs, _ := v.Type.Shape.Consts()
	ys, _ := y.Type.Shape.Consts()
	for i := range vs {
		if vs[i] != ys[i] && vs[i] != 1 {
			return false
		}
	}
	return true
}

// layoutReducesHW reports whether n is a ReduceMean of a 4-D float32 value
// over H and W only, with the given keepdims: GlobalAveragePool by another
// name (squeeze-excitation blocks export it so), which runs NHWC as
// cuvil::PoolNHWC mode global_avg; without the dimensions (a classifier's
// pooling, mnasnet's and shufflenet's, [N,C]) it is that pool and a
// Flatten of its [N,1,1,C] result, the same values in the same order, so
// the chain's last map needs no Transpose back.
func layoutReducesHW(n *ir.Node, keepdims int64) bool {
	if !is4DF32(n.Inputs[0]) || n.AttrInt("keepdims", 1) != keepdims || n.AttrInt("noop_with_empty_axes", 0) != 0 {
		return false
	}
	if y := n.Outputs[0]; keepdims == 0 && (y == nil || !y.Type.Known() || y.Type.DType != ir.F32 || y.Type.Rank() != 2) {
		return false
	}
	axes := n.AttrInts("axes", nil)
	if n.Version >= 18 {
		a := n.Input(1)
		if a == nil || !a.IsConst() || a.Const.DType != ir.I64 {
			return false
		}
		axes = a.Const.Int64s()
	}
	if len(axes) != 2 {
		return false
	}
	seen := map[int64]bool{}
	for _, a := range axes {
		if a < 0 {
			a += 4
		}
		seen[a] = true
	}
	return seen[2] && seen[3]
}

// layoutPads returns the pads (begin values of the 4 axes, then end
// values) of a Pad of a 4-D float32 value whose pads are an attribute
// (Pad-2) or a constant input (Pad-11 on) and that has no axes input; nil
// for any other Pad. Pads are per axis, so in NHWC they are permuted like
// the axes (inception_v3 pads before each branch's AveragePool).
func layoutPads(n *ir.Node) []int64 {
	if !is4DF32(n.Inputs[0]) || n.Input(3) != nil {
		return nil
	}
	var pads []int64
	switch {
	case n.Version >= 11:
		p := n.Input(1)
		if p == nil || !p.IsConst() || p.Const.DType != ir.I64 {
			return nil
		}
		pads = p.Const.Int64s()
	case n.Version >= 2:
		pads = n.AttrInts("pads", nil)
	}
	if len(pads) != 8 {
		return nil
	}
	return pads
}

// layoutSliceAxes returns the axes of a Slice of a 4-D value that cuts
// only the channels (axis 1 or -3), with constant starts and ends, axes
// given (attribute before opset 10, a constant input from 10) and steps
// absent or 1; nil for any other Slice. In NHWC the axis is 3 and the
// rest is the same (ShuffleNet's two channel halves).
func layoutSliceAxes(n *ir.Node) []int64 {
	var axes []int64
	if n.Version >= 10 {
		for i := 1; i <= 2; i++ {
			if v := n.Input(i); v == nil || !v.IsConst() {
				return nil
			}
		}
		a := n.Input(3)
		if a == nil || !a.IsConst() || a.Const.DType != ir.I64 && a.Const.DType != ir.I32 {
			return nil
		}
		axes = a.Const.Int64s()
		if st := n.Input(4); st != nil {
			if !st.IsConst() {
				return nil
			}
			for _, k := range st.Const.Int64s() {
				if k != 1 {
					return nil
				}
			}
		}
	} else {
		axes = n.AttrInts("axes", nil)
	}
	if len(axes) == 0 {
		return nil
	}
	for _, a := range axes {
		if a != 1 && a != -3 {
			return nil
		}
	}
	return axes
}

// layoutSplits reports whether n is a Split of a 4-D float32 value along
// the channels (axis 1 or -3) into 4-D float32 outputs, with its split
// sizes (if any) constant: in NHWC it is the same Split along axis 3.
func layoutSplits(n *ir.Node) bool {
	if ax := n.AttrInt("axis", 0); ax != 1 && ax != -3 || !is4DF32(n.Inputs[0]) {
		return false
	}
	if v := n.Input(1); v != nil && !v.IsConst() {
		return false
	}
	for _, y := range n.Outputs {
		if !is4DF32(y) {
			return false
		}
	}
	return len(n.Outputs) > 0
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

// is5DF32 reports whether v is a float32 tensor of rank 5 with a known
// shape.
func is5DF32(v *ir.Value) bool {
	if v == nil || !v.Type.Known() || v.Type.DType != ir.F32 || v.Type.Rank() != 5 {
		return false
	}
	_, ok := v.Type.Shape.Consts()
	return ok
}

// layoutKind5D says whether n, with one 5-D float32 output, runs channels
// last (NDHWC; templates/k_conv_nhwc_3d.go): Conv and FusedConv with a 5-D
// X (and residual), any group but depthwise (C/group = 1, which keeps
// NCDHW), and element-wise ops whose operands are
// 5-D values broadcasting axis by axis, one-element constants or
// per-channel constants. Pooling and the other 4-D members stay NCDHW.
func layoutKind5D(n *ir.Node) layoutKind {
	for _, a := range n.Attrs {
		if a.Kind == ir.AttrGraph || a.Kind == ir.AttrGraphs {
			return lkNone
		}
	}
	if isOp(n, "Conv") || n.Domain == ir.CuvilDomain && n.Op == "FusedConv" {
		if n.AttrString("layout", "NCHW") != "NCHW" || len(n.Inputs) < 2 || !is5DF32(n.Inputs[0]) || !is5DF32(n.Inputs[1]) ||
			len(n.Inputs) > 3 && n.Inputs[3] != nil && !is5DF32(n.Inputs[3]) || len(n.Inputs) > 4 {
			return lkNone
		}
		ws, _ := n.Inputs[1].Type.Shape.Consts()
		C, group := n.Inputs[0].Type.Shape[1].Size, n.AttrInt("group", 1)
		if group == 1 || group > 1 && ws[1] > 1 && C%group == 0 && ws[0]%group == 0 && ws[1]*group == C {
			return lkConv // grouped: per-group GEMMs (templates/k_conv_nhwc.go runGroups); not depthwise
		}
		return lkNone
	}
	s := ir.LookupOp(n.Domain, n.Op)
	if s == nil || !s.Elementwise || n.Attr("axis") != nil || n.Attr("broadcast") != nil || n.Domain == ir.CuvilDomain && n.Op == "RoundHalf" {
		return lkNone
	}
	y := n.Outputs[0]
	for _, v := range n.Inputs {
		switch {
		case v == nil:
		case v.IsConst():
			if v.Const.NumElements() != 1 && !layoutChannelConstOf(v, 5) {
				return lkNone
			}
		case !layoutBroadcasts(v, y):
			return lkNone
		}
	}
	return lkElementwise
}

// layoutChannelConst reports whether constant c broadcasts per channel
// against a 4-D NCHW value (shape [C,1,1] or [1,C,1,1]).
func layoutChannelConst(c *ir.Value) bool { return layoutChannelConstOf(c, 4) }

// layoutChannelConstOf is layoutChannelConst against a value of rank r
// (5: [C,1,1,1] or [1,C,1,1,1]).
func layoutChannelConstOf(c *ir.Value, r int) bool {
	if len(c.Const.Shape) < r-1 || len(c.Const.Shape) > r {
		return false
	}
	axis, _, ok := axisVector(c, r)
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
			if v != nil && !v.IsConst() && (v.Def == nil || !in[v.Def]) && (is4DQ(v) || is5DF32(v)) && layoutDataInput(n, v) {
				entries[v] = true
			}
		}
		for _, y := range n.Outputs {
			if y == nil || y != n.Outputs[0] && !isOp(n, "Split") {
				continue
			}
			exit := r.outs[y]
			for _, u := range r.uses[y] {
				exit = exit || !in[u]
			}
			if exit && !layoutPermutedBack(r, y, in) {
				gain -= costTransFloat * elems(y)
			}
		}
	}
	for v := range entries {
		if u := r.only(v); u != nil && in[u] && layoutFoldsInput(u, v) {
			continue // read NCHW by its one reader: no Transpose
		}
		if p := v.Def; isOp(p, "Transpose") && slices.Equal(p.AttrInts("perm", nil), permToNCHWOf(v.Type.Rank())) {
			continue // the model's own NHWC -> NCHW permute: the entry Transpose cancels it
		}
		gain -= costTransFloat * elems(v)
	}
	return gain
}

// layoutPermutedBack reports whether every reader of chain value y outside
// the chain is a Transpose to NHWC (TensorFlow exports, ConvNeXt's
// permutes) and y is no graph output: the exit Transpose then cancels
// against them (composeTransposes) and costs nothing.
func layoutPermutedBack(r *rewriter, y *ir.Value, in map[*ir.Node]bool) bool {
	if r.outs[y] {
		return false
	}
	for _, u := range r.uses[y] {
		if !in[u] && !(isOp(u, "Transpose") && slices.Equal(u.AttrInts("perm", nil), permToNHWCOf(y.Type.Rank()))) {
			return false
		}
	}
	return true
}

// layoutDataInput reports whether v is a layout-carrying input of n (not a
// convolution's weights or bias).
func layoutDataInput(n *ir.Node, v *ir.Value) bool {
	if isOp(n, "Conv") || n.Op == "FusedConv" {
		return v == n.Inputs[0] || len(n.Inputs) > 3 && v == n.Inputs[3]
	}
	if n.Op == "ScaleShift" || n.Op == "QConv" || isOp(n, "Pad") || isOp(n, "Resize") || isOp(n, "Upsample") || isOp(n, "Slice") || isOp(n, "Split") ||
		isOp(n, "QuantizeLinear") || isOp(n, "DequantizeLinear") {
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
	case n.Op == "QConv" && n.Domain == ir.CuvilDomain:
		// NCHW: an im2col of the whole input (a transpose for a
		// pointwise convolution) and one strided byte store per output;
		// NHWC: no copy for a pointwise convolution, else the NHWC
		// im2col, and contiguous stores. Estimated, not calibrated: bytes
		// cost about costCopyFloat per element either way.
		ws, _ := n.Inputs[3].Type.Shape.Consts()
		col := float64(xs[0]*ys[2]*ys[3]*xs[1]) * float64(ws[2]*ws[3])
		pointwise := ws[2]*ws[3] == 1 && xs[2] == ys[2] && xs[3] == ys[3]
		if !nhwc {
			return costCopyFloat*col + costQStoreNCHW*elems(y)
		}
		if pointwise {
			return 0
		}
		return costCopyFloat * col
	case (isOp(n, "Conv") || n.Op == "FusedConv") && len(xs) == 5:
		return layoutConvCost3D(n, xs, ys, nhwc)
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
		if group := n.AttrInt("group", 1); group > 1 && !(ws[1] == 1 && ws[0] == xs[1]) {
			// Grouped: the same im2col runs as for group 1 and one GEMM
			// per group, whose Mg = M/group output channels fill the
			// NHWC tiles' 16 lanes (or the NCHW tiles' 6 rows) partly.
			Mg := float64(ws[0] / group)
			macs := N * OH * OW * kk * float64(ws[1]*ws[0])
			col := N * OH * OW * C * kk
			pointwise := kk == 1 && strides[0] == 1 && strides[1] == 1 && pads[0] == 0 && pads[1] == 0 && pads[2] == 0 && pads[3] == 0
			if nhwc {
				cost += costGroupMac * macs * float64((ws[0]/group+15)/16*16) / Mg
				if !pointwise {
					cost += costCopyFloat*col + costGemmRunNHWC*N*OH*OW*float64(ws[2])
				}
				return cost
			}
			cost += costGroupMac * macs * float64((ws[0]/group+5)/6*6) / Mg
			if !pointwise {
				cost += costCopyFloat*col + costGemmRunNCHW*N*C*kk*OH
			}
			return cost
		}
		if n.AttrInt("group", 1) > 1 {
			macs := N * OH * OW * C * kk
			if nhwc {
				return cost + costDWMacNHWC*macs + costDWRowNHWC*N*OH*(1+2*float64(pads[1]+pads[3]))
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
		col := N * OH * OW * C * kk
		switch {
		case nhwc && ws[0] < 16:
			cost += costNarrowNHWC * col
		case nhwc && ws[0] < 32:
			// Narrow only for AVX-512's 6x32 tile: AVX2 and NEON run 6x16
			// tiles, full at 16 columns. The compiler does not know the
			// CPU, so a quarter of the penalty (Zen 2: yolov5n's 16- and
			// 32-channel convs NHWC 18.7 ms against NCHW 29-34 ms).
			cost += costNarrowNHWC / 4 * col
		}
		if pointwise {
			return cost
		}
		if nhwc {
			runs := N * OH * OW * float64(ws[2]) // one per kernel row
			if dil[1] != 1 {
				runs *= float64(ws[3])
			}
			return cost + costCopyFloat*col + costGemmRunNHWC*runs
		}
		if strides[1] != 1 {
			// Strided: NCHW gathers each window column alone (im2col2D),
			// NHWC still copies runs of kw*C floats.
			return costGatherFloat*col + costGemmRunNCHW*N*C*kk*OH
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

// layoutConvCost3D is layoutOpCost for a 3-D convolution (X xs
// [N,C,T,H,W], Y ys): NCDHW gathers its im2col one value at a time
// (templates/k_conv.go im2colND, as strided 2-D windows do: costGatherFloat
// per value), NDHWC copies runs of kw*C values per output pixel, kernel
// row and time tap, and a pointwise one (1x1x1, unit strides, no pads)
// copies nothing in either. The GEMM (per group) is the same. (NDHWC also runs the 3x3
// spatial kernels Winograd, not counted: the gain is positive without it.)
// mc3_18 1 thread, NCDHW 674 ms against NDHWC (docs/performance.md).
func layoutConvCost3D(n *ir.Node, xs, ys []int64, nhwc bool) float64 {
	ws, _ := n.Inputs[1].Type.Shape.Consts()
	kk := float64(ws[2] * ws[3] * ws[4])
	pointwise := kk == 1
	for _, s := range n.AttrInts("strides", nil) {
		pointwise = pointwise && s == 1
	}
	for _, p := range n.AttrInts("pads", nil) {
		pointwise = pointwise && p == 0
	}
	if pointwise {
		return 0
	}
	out := float64(ys[0] * ys[2] * ys[3] * ys[4])
	col := out * float64(xs[1]) * kk
	if nhwc {
		return costCopyFloat*col + costGemmRunNHWC*out*float64(ws[2]*ws[3])
	}
	return costGatherFloat * col
}

// layoutRewrite rewrites the chosen chains' nodes, in graph order.
type layoutRewrite struct {
	r      *rewriter
	m      *ir.Model
	kinds  map[*ir.Node]layoutKind
	nhwc   map[*ir.Node]bool
	toNHWC map[*ir.Value]*ir.Value // outside value -> its NHWC Transpose
	inner  map[*ir.Value]*ir.Value // chain value (NCHW, original) -> NHWC value
	axes   map[*ir.Value]*ir.Value // a Slice's axes constant -> its NHWC one, shared
}

var (
	permToNHWC = []int64{0, 2, 3, 1}
	permToNCHW = []int64{0, 3, 1, 2}
)

// permToNHWCOf is permToNHWC for a value of rank r (4, or 5: NCDHW to
// NDHWC, [0,2,3,4,1]).
func permToNHWCOf(r int) []int64 {
	if r == 5 {
		return []int64{0, 2, 3, 4, 1}
	}
	return permToNHWC
}

// permToNCHWOf is permToNCHW for a value of rank r (5: [0,4,1,2,3]).
func permToNCHWOf(r int) []int64 {
	if r == 5 {
		return []int64{0, 4, 1, 2, 3}
	}
	return permToNCHW
}

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
				perm := permToNHWCOf(v.Type.Rank())
				t = &ir.Value{Name: w.r.fresh(v.Name + "_nhwc"), Type: permuted(v.Type, perm)}
				nodes = append(nodes, w.transpose(v, t, perm))
				w.toNHWC[v] = t
			}
			ins[i] = t
		}
	}
	y := n.Outputs[0]
	if kind == lkReduceFlat {
		// PoolNHWC to [N,1,1,C], then Flatten to y [N,C].
		ys := y.Type.Shape
		pt := y.Type.Clone()
		pt.Shape = ir.Shape{ys[0], ir.D(1), ir.D(1), ys[1]}
		yn := &ir.Value{Name: w.r.fresh(y.Name + "_nhwc"), Type: pt}
		pool := &ir.Node{Name: n.Name, Op: "PoolNHWC", Domain: ir.CuvilDomain, Version: ir.CuvilOpset, Inputs: ins[:1], Outputs: []*ir.Value{yn}, Fused: n.Fused}
		pool.SetAttr(&ir.Attr{Name: "mode", Kind: ir.AttrString, S: "global_avg"})
		yn.Def = pool
		ver, _ := onnxVersion(w.m, "Flatten")
		flat := &ir.Node{Name: y.Name, Op: "Flatten", Version: ver, Inputs: []*ir.Value{yn}, Outputs: []*ir.Value{y}}
		flat.SetAttr(&ir.Attr{Name: "axis", Kind: ir.AttrInt, I: 1})
		y.Def = flat
		return append(nodes, pool, flat)
	}
	// The NHWC outputs: Outputs[0], and every output of a Split.
	outs := append([]*ir.Value(nil), n.Outputs...)
	for i, v := range outs {
		if v == nil || i > 0 && !isOp(n, "Split") {
			continue
		}
		outs[i] = &ir.Value{Name: w.r.fresh(v.Name + "_nhwc"), Type: permuted(v.Type, permToNHWCOf(v.Type.Rank()))}
		w.inner[v] = outs[i]
	}
	out := n
	switch kind {
	case lkConv:
		out = &ir.Node{Name: n.Name, Op: "FusedConv", Domain: ir.CuvilDomain, Version: ir.CuvilOpset}
		for _, a := range n.Attrs {
			out.SetAttr(a)
		}
		out.SetAttr(&ir.Attr{Name: "layout", Kind: ir.AttrString, S: "NHWC"})
	case lkQConv:
		// W [M,C,kh,kw] as [M,kh,kw,C]: the GEMM's k then runs over a
		// window's NHWC bytes in order (templates/k_quant_gemm.go).
		n.SetAttr(&ir.Attr{Name: "layout", Kind: ir.AttrString, S: "NHWC"})
		wv := n.Inputs[3]
		ws := wv.Const.Shape
		M, C, kh, kw := int(ws[0]), int(ws[1]), int(ws[2]), int(ws[3])
		raw := make([]byte, len(wv.Const.Raw))
		for o := 0; o < M; o++ {
			for c := 0; c < C; c++ {
				for p := 0; p < kh*kw; p++ {
					raw[(o*kh*kw+p)*C+c] = wv.Const.Raw[(o*C+c)*kh*kw+p]
				}
			}
		}
		ins[3] = w.r.constant(wv.Name+"_ohwi", &ir.Tensor{DType: wv.Const.DType, Shape: []int64{ws[0], ws[2], ws[3], ws[1]}, Raw: raw})
	case lkPool:
		out = &ir.Node{Name: n.Name, Op: "PoolNHWC", Domain: ir.CuvilDomain, Version: ir.CuvilOpset}
		mode := map[string]string{"MaxPool": "max", "AveragePool": "avg", "GlobalAveragePool": "global_avg", "ReduceMean": "global_avg"}[n.Op]
		if n.Op == "ReduceMean" {
			ins = ins[:1] // the axes are H and W
		}
		for _, a := range n.Attrs {
			if a.Name != "storage_order" && n.Op != "ReduceMean" {
				out.SetAttr(a)
			}
		}
		out.SetAttr(&ir.Attr{Name: "mode", Kind: ir.AttrString, S: mode})
	case lkScaleShift:
		n.SetAttr(&ir.Attr{Name: "layout", Kind: ir.AttrString, S: "NHWC"})
	case lkConcat:
		n.SetAttr(&ir.Attr{Name: "axis", Kind: ir.AttrInt, I: 3})
	case lkResize:
		w.resizeConsts(n, ins)
	case lkChannelAxis:
		axes := layoutSliceAxes(n)
		switch {
		case isOp(n, "Slice") && n.Version >= 10:
			if c, ok := w.axes[n.Inputs[3]]; ok {
				ins[3] = c
				break
			}
			a := n.Inputs[3].Const
			raw := make([]byte, len(a.Raw))
			for i := range axes {
				if a.DType == ir.I32 {
					binary.LittleEndian.PutUint32(raw[4*i:], 3)
				} else {
					binary.LittleEndian.PutUint64(raw[8*i:], 3)
				}
			}
			ins[3] = w.r.constant(n.Inputs[3].Name+"_nhwc", &ir.Tensor{DType: a.DType, Shape: append([]int64(nil), a.Shape...), Raw: raw})
			if w.axes == nil {
				w.axes = map[*ir.Value]*ir.Value{}
			}
			w.axes[n.Inputs[3]] = ins[3]
		case isOp(n, "Slice"):
			n.SetAttr(&ir.Attr{Name: "axes", Kind: ir.AttrInts, Ints: slices.Repeat([]int64{3}, len(axes))})
		default: // Split, cuvil::ChannelShuffle
			n.SetAttr(&ir.Attr{Name: "axis", Kind: ir.AttrInt, I: 3})
		}
	case lkPad:
		old := layoutPads(n)
		pads := make([]int64, 8)
		for i, a := range permToNHWC {
			pads[i], pads[4+i] = old[a], old[4+a]
		}
		if n.Version >= 11 {
			raw := make([]byte, 8*len(pads))
			for i, p := range pads {
				binary.LittleEndian.PutUint64(raw[8*i:], uint64(p))
			}
			ins[1] = w.r.constant(n.Inputs[1].Name+"_nhwc", &ir.Tensor{DType: ir.I64, Shape: []int64{8}, Raw: raw})
		} else {
			n.SetAttr(&ir.Attr{Name: "pads", Kind: ir.AttrInts, Ints: pads})
		}
	}
	// The NHWC node does the fused node's work: keep its record of the
	// imported nodes (inspect -graph boxes them).
	out.Fused = n.Fused
	out.Inputs = ins
	orig := n.Outputs
	out.Outputs = outs
	nodes = append(nodes, out)
	for i, yn := range outs {
		if yn == nil {
			continue
		}
		yn.Def = out
		y := orig[i]
		if w.inner[y] != yn {
			continue // MaxPool's Indices: none in a chain
		}
		exit := w.r.outs[y]
		for _, u := range w.r.uses[y] {
			exit = exit || !w.nhwc[u]
		}
		if exit {
			// y keeps its name and NCHW type for the outside readers.
			nodes = append(nodes, w.transpose(yn, y, permToNCHWOf(y.Type.Rank())))
		}
	}
	return nodes
}

// resizeConsts permutes a Resize's or Upsample's per-axis constants (roi:
// starts then ends; scales; sizes; Upsample-7's scales attribute) from
// NCHW axes to NHWC ones, in ins (n's inputs) and n's attributes.
func (w *layoutRewrite) resizeConsts(n *ir.Node, ins []*ir.Value) {
	for i := 1; i < len(ins); i++ {
		v := ins[i]
		if v == nil || !v.IsConst() || v.Const.NumElements() == 0 {
			continue
		}
		c := v.Const
		k := int(c.NumElements())
		size := len(c.Raw) / k
		raw := make([]byte, len(c.Raw))
		for h := 0; h < k/4; h++ { // roi has two halves
			for j, p := range permToNHWC {
				copy(raw[(h*4+j)*size:(h*4+j+1)*size], c.Raw[(h*4+int(p))*size:(h*4+int(p)+1)*size])
			}
		}
		ins[i] = w.r.constant(v.Name+"_nhwc", &ir.Tensor{DType: c.DType, Shape: append([]int64(nil), c.Shape...), Raw: raw})
	}
	if a := n.Attr("scales"); a != nil && len(a.Floats) == 4 {
		s := make([]float32, 4)
		for j, p := range permToNHWC {
			s[j] = a.Floats[p]
		}
		n.SetAttr(&ir.Attr{Name: "scales", Kind: ir.AttrFloats, Floats: s})
	}
}
