package passes

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/templates"
)

// Prepack stores constant operands in the layout their kernels' GEMMs
// read, so a run never repacks them (the packed form is the only copy in
// weights.bin; the assembly and pure-Go GEMMs both read it). Each packed
// constant becomes a 1-D constant of the same name and its node gets an
// attribute with the constant's ONNX shape (declared in ir/ops_cuvil.go):
//
//   - Conv and cuvil::FusedConv (prepackConv): the float32 W becomes
//     templates.PrepackConvWeights's result (packed_w_shape; depthwise
//     ones stay as they are), templates.PrepackConvWeightsNHWC's for a
//     FusedConv with layout=NHWC (depthwise ones included), or, for a 3x3
//     stride-1 one that the Winograd rules pick (prepack_winograd.go,
//     Options.Winograd), its Winograd form (winograd_w_shape).
//   - Gemm, MatMul, cuvil::FusedGemm and cuvil::FusedMatMul
//     (prepackGemm): the constant float32 2-D B becomes
//     templates.PrepackGemmB's result (packed_b_shape), except where A
//     has one or two rows (the GEMV path reads B as it is).
//   - cuvil::FusedConvChain (prepackConvChain): its weights are packed
//     like an NHWC FusedConv's (packed_w_shapes), all or none.
//
// A weight is packed only when it is a well-formed float32 constant that
// the node alone reads and that is no graph output. Only the main graph
// is considered. The result depends only on the model (deterministic
// weights.bin). Adding an op kind is one more function of this shape.
var Prepack = &Pass{
	Name:        "prepack",
	Doc:         "store constant conv weights and GEMM B operands in their kernels' layouts (SGEMM panels, Winograd filter matrices; -winograd=auto|on|off)",
	Run:         func(m *ir.Model) error { return prepack(m, WinogradAuto, nil) },
	WithOptions: func(m *ir.Model, o Options) error { return prepack(m, o.Winograd, o.Precision) },
}

// packer holds what prepack's per-op functions share: the graph's uses
// and outputs, and the constants replaced so far.
type packer struct {
	m        *ir.Model
	uses     map[*ir.Value][]*ir.Node
	isOutput map[*ir.Value]bool
	swapped  map[*ir.Value]*ir.Value // original constant -> packed one
	winograd WinogradMode
	prec     *PrecisionConfig // -precision: bf16 B panels for MatMul/FusedMatMul
}

func prepack(m *ir.Model, winograd WinogradMode, prec *PrecisionConfig) error {
	g := m.Graph
	p := &packer{m: m, uses: g.Uses(), isOutput: map[*ir.Value]bool{}, swapped: map[*ir.Value]*ir.Value{}, winograd: winograd, prec: prec}
	for _, v := range g.Outputs {
		p.isOutput[v] = true
	}
	for _, n := range g.Nodes {
		at(m, n)
		switch {
		case isGemmLike(n):
			p.prepackGemm(n)
		case n.Op == "FusedConvChain" && n.Domain == ir.CuvilDomain:
			p.prepackConvChain(n)
		case n.Op == "Conv" && isONNX(n) || n.Op == "FusedConv" && n.Domain == ir.CuvilDomain:
			p.prepackConv(n)
		case (n.Op == "QGemm" || n.Op == "QConv") && n.Domain == ir.CuvilDomain:
			p.prepackQ(n)
		}
	}
	if prec != nil && prec.Mode == PrecisionFP16 {
		for _, n := range g.Nodes {
			p.storeHalf(n)
		}
	}
	for i, v := range g.Consts {
		if pv, ok := p.swapped[v]; ok {
			g.Consts[i] = pv
		}
	}
	return nil
}

// storeHalf, under -precision fp16, marks the float32 weights of a conv or
// GEMM (packed or not: W of Conv/FusedConv/FusedConvChain, B of the GEMMs)
// store=f16 (not those -keep-f32 names): weights.bin holds them as halves,
// rounded to nearest even, and New widens them (the kernels run in f32 on
// the rounded weights).
func (p *packer) storeHalf(n *ir.Node) {
	if keptF32(n, p.prec.KeepF32) {
		return
	}
	var idx []int
	switch {
	case isGemmLike(n), n.Op == "Conv" && isONNX(n), n.Op == "FusedConv" && n.Domain == ir.CuvilDomain:
		idx = []int{1}
	case n.Op == "FusedConvChain" && n.Domain == ir.CuvilDomain:
		idx = []int{1, 3, 5}
	}
	for _, i := range idx {
		w := n.Input(i)
		if w == nil || !w.IsConst() || w.Const.DType != ir.F32 || w.Const.Store != 0 || len(p.uses[w]) > 1 || p.isOutput[w] {
			continue
		}
		t := *w.Const
		t.Store = ir.F16
		pv := &ir.Value{Name: w.Name, Type: w.Type, Const: &t}
		own(n)
		n.Inputs[i] = pv
		orig := w
		for o, s := range p.swapped {
			if s == w {
				orig = o
			}
		}
		p.swapped[orig] = pv
		shape := w.Type.Shape.String()
		for _, a := range []string{templates.GemmPackedAttr, templates.ConvPackedAttr, templates.ConvWinogradAttr} {
			if s := n.AttrInts(a, nil); s != nil && i == 1 {
				shape = ir.ShapeOf(s...).String() // the ONNX shape, not the panels'
			}
		}
		p.prec.Breaks = append(p.prec.Breaks, PrecisionBreak{Node: n.Name, Op: opKey(n), Weight: w.Name, In: "f32 " + shape,
			Why: "stored f16 in weights.bin (half the bytes), widened to f32 at New", Action: "computed in f32 (F16C widening)"})
	}
}

func isONNX(n *ir.Node) bool { return n.Domain == "" || n.Domain == "ai.onnx" }

// packable reports whether w is a constant prepack may replace: float32,
// well formed, read only by its node and not a graph output.
func (p *packer) packable(w *ir.Value) bool {
	return w != nil && w.IsConst() && w.Const.DType == ir.F32 && len(p.uses[w]) == 1 && !p.isOutput[w] && w.Const.Check() == nil
}

// replace makes packed input i of n, marked by attribute attr holding the
// input's ONNX shape.
func (p *packer) replace(n *ir.Node, i int, packed []float32, attr string) {
	w := n.Inputs[i]
	pv := packedValue(w, packed)
	own(n)
	n.SetAttr(&ir.Attr{Name: attr, Kind: ir.AttrInts, Ints: append([]int64(nil), w.Const.Shape...)})
	n.Inputs[i] = pv
	p.swapped[w] = pv
}

// prepackGemm packs B of a Gemm, MatMul, FusedGemm or FusedMatMul (see
// gemmPackable).
func (p *packer) prepackGemm(n *ir.Node) {
	if !gemmPackable(n) || !p.packable(n.Inputs[1]) {
		return
	}
	w := n.Inputs[1]
	bs := []int{int(w.Const.Shape[0]), int(w.Const.Shape[1])}
	if p.prec != nil && p.prec.Mode == PrecisionBF16 && !keptF32(n, p.prec.KeepF32) &&
		(n.Op == "MatMul" || n.Op == "FusedMatMul" || n.AttrInt("transA", 0) == 0) {
		// -precision bf16: B rounded to bf16 in the bf16 GEMM's panels
		// (half the bytes), read by the VDPBF16PS tiles; Gemm's transB is
		// folded into the panels (the bf16 GEMM reads A in place, so
		// transA stays f32).
		if packed, ok := templates.PrepackGemmBBF16(constF32(w.Const), bs, n.AttrInt("transB", 0) != 0); ok {
			raw := make([]byte, 2*len(packed))
			for i, h := range packed {
				binary.LittleEndian.PutUint16(raw[2*i:], h)
			}
			t := &ir.Tensor{Name: w.Const.Name, DType: ir.BF16, Shape: []int64{int64(len(packed))}, Raw: raw}
			pv := &ir.Value{Name: w.Name, Type: t.Type(), Const: t}
			own(n)
			n.SetAttr(&ir.Attr{Name: templates.GemmPackedAttr, Kind: ir.AttrInts, Ints: append([]int64(nil), w.Const.Shape...)})
			n.Inputs[1] = pv
			p.swapped[w] = pv
			p.prec.Breaks = append(p.prec.Breaks, PrecisionBreak{Node: n.Name, Op: opKey(n), Weight: w.Name, In: "f32 " + w.Type.Shape.String(),
				Why: "stored bf16 in weights.bin (half the bytes): products in bf16, sums in f32", Action: "A rounded to bf16 in the kernel (VDPBF16PS tiles)"})
			return
		}
	}
	packed, ok := templates.PrepackGemmB(constF32(w.Const), bs, n.AttrInt("transB", 0) != 0)
	if ok {
		p.replace(n, 1, packed, templates.GemmPackedAttr)
	}
}

// prepackQ packs the constant s8 B (W) of a cuvil::QGemm or QConv, input
// 3, into the integer GEMM's panels (templates.PrepackQWeights), marked by
// templates.QGemmPackedAttr. A u8 B stays: the kernel reads it as B-128
// and adjusts its zero point by the input's dtype.
func (p *packer) prepackQ(n *ir.Node) {
	w := n.Input(3)
	if n.Attr(templates.QGemmPackedAttr) != nil || w == nil || !w.IsConst() || w.Const.DType != ir.I8 ||
		len(p.uses[w]) != 1 || p.isOutput[w] || w.Const.Check() != nil {
		return
	}
	ws := make([]int, len(w.Const.Shape))
	for i, d := range w.Const.Shape {
		ws[i] = int(d)
	}
	src := make([]int8, len(w.Const.Raw))
	for i, b := range w.Const.Raw {
		src[i] = int8(b)
	}
	packed, ok := templates.PrepackQWeights(src, ws, n.Op == "QConv")
	if !ok {
		return
	}
	raw := make([]byte, len(packed))
	for i, v := range packed {
		raw[i] = byte(v)
	}
	t := &ir.Tensor{Name: w.Const.Name, DType: ir.I8, Shape: []int64{int64(len(raw))}, Raw: raw}
	pv := &ir.Value{Name: w.Name, Type: t.Type(), Const: t}
	own(n)
	n.SetAttr(&ir.Attr{Name: templates.QGemmPackedAttr, Kind: ir.AttrInts, Ints: append([]int64(nil), w.Const.Shape...)})
	n.Inputs[3] = pv
	p.swapped[w] = pv
}

// isGemmLike reports whether n is a Gemm, MatMul, cuvil::FusedGemm or
// cuvil::FusedMatMul.
func isGemmLike(n *ir.Node) bool {
	switch {
	case isONNX(n):
		return n.Op == "Gemm" || n.Op == "MatMul"
	case n.Domain == ir.CuvilDomain:
		return n.Op == "FusedGemm" || n.Op == "FusedMatMul"
	}
	return false
}

// gemmPackable reports whether the GEMM-like n may take a prepacked B
// (input 1): B is a 2-D constant (a MatMul's B of another rank broadcasts
// or is promoted), A is float32, and A's row count is not known to be 1
// or 2: those take the GEMV path, which reads B as it is.
func gemmPackable(n *ir.Node) bool {
	transA := (n.Op == "Gemm" || n.Op == "FusedGemm") && n.AttrInt("transA", 0) != 0
	if len(n.Inputs) < 2 || n.Inputs[0] == nil || n.Inputs[1] == nil || n.Attr(templates.GemmPackedAttr) != nil {
		return false
	}
	a, b := n.Inputs[0].Type, n.Inputs[1]
	if a.Kind != ir.TensorKind || a.DType != ir.F32 || a.Unranked || len(a.Shape) == 0 || !b.IsConst() || len(b.Const.Shape) != 2 {
		return false
	}
	// Rows of op(A): all but the last dimension (MatMul), or one of two.
	rows := a.Shape[:len(a.Shape)-1]
	if len(a.Shape) == 2 && transA {
		rows = a.Shape[1:]
	}
	m := int64(1)
	for _, d := range rows {
		if d.Sym != "" || d.Size < 0 {
			return true
		}
		m *= d.Size
	}
	return m > 2
}

// prepackConv packs W of a Conv or FusedConv: Winograd filter matrices
// where prepackWinograd picks the node, else the GEMM layout of its
// layout (NCHW: not depthwise ones).
func (p *packer) prepackConv(n *ir.Node) {
	if len(n.Inputs) < 2 || n.Attr(templates.ConvPackedAttr) != nil || n.Attr(templates.ConvWinogradAttr) != nil || !p.packable(n.Inputs[1]) {
		return
	}
	w := n.Inputs[1]
	ws := make([]int, len(w.Const.Shape))
	for i, d := range w.Const.Shape {
		ws[i] = int(d)
	}
	data := constF32(w.Const)
	if u, ok := prepackWinograd(n, data, ws, p.winograd); ok { // prepack_winograd.go, NCHW or NHWC
		p.replace(n, 1, u, templates.ConvWinogradAttr)
		return
	}
	group := int(n.AttrInt("group", 1))
	if p.prepackConvBF16(n, data, ws, group) {
		return
	}
	pack := templates.PrepackConvWeights
	if n.AttrString("layout", "NCHW") == "NHWC" {
		pack = templates.PrepackConvWeightsNHWC // depthwise ones too
	}
	if packed, ok := pack(data, ws, group); ok {
		p.replace(n, 1, packed, templates.ConvPackedAttr)
	}
}

// prepackConvBF16 stores W of a group-1 NHWC cuvil::FusedConv as bf16
// panels (templates.PrepackConvWeightsNHWCBF16) under -precision bf16,
// unless -keep-f32 names it or it takes input Scale (a gate folded into
// its f32 weights at run time); Winograd convolutions were packed before
// (their U stays f32: as fast as bf16 im2col on resnet50 and more
// accurate, docs/precision.md). The NCHW-entry conv (in_layout NCHW, a
// network's stem) stays f32 too: its f32 kernel reads the image in place,
// the bf16 one gathers and rounds an im2col block first, and on resnet50
// at 1 thread that made the stem 7.4 ms against 2.7 ms (its weights are
// small). It reports whether it did.
func (p *packer) prepackConvBF16(n *ir.Node, data []float32, ws []int, group int) bool {
	if p.prec == nil || p.prec.Mode != PrecisionBF16 || keptF32(n, p.prec.KeepF32) || n.Op != "FusedConv" || n.Domain != ir.CuvilDomain ||
		n.AttrString("layout", "NCHW") != "NHWC" || group != 1 || n.Input(5) != nil || n.AttrString("in_layout", "") == "NCHW" {
		return false
	}
	packed, ok := templates.PrepackConvWeightsNHWCBF16(data, ws)
	if !ok {
		return false
	}
	w := n.Inputs[1]
	raw := make([]byte, 2*len(packed))
	for i, h := range packed {
		binary.LittleEndian.PutUint16(raw[2*i:], h)
	}
	t := &ir.Tensor{Name: w.Const.Name, DType: ir.BF16, Shape: []int64{int64(len(packed))}, Raw: raw}
	pv := &ir.Value{Name: w.Name, Type: t.Type(), Const: t}
	own(n)
	n.SetAttr(&ir.Attr{Name: templates.ConvPackedAttr, Kind: ir.AttrInts, Ints: append([]int64(nil), w.Const.Shape...)})
	n.Inputs[1] = pv
	p.swapped[w] = pv
	p.prec.Breaks = append(p.prec.Breaks, PrecisionBreak{Node: n.Name, Op: opKey(n), Weight: w.Name, In: "f32 " + w.Type.Shape.String(),
		Why: "stored bf16 in weights.bin (half the bytes): products in bf16, sums in f32", Action: "X rounded to bf16 as the kernel gathers it (VDPBF16PS tiles)"})
	return true
}

// prepackConvChain packs the weights of cuvil::FusedConvChain n (We, Wd,
// Wp: inputs 1, 3 and 5, those present) as templates.PrepackConvWeightsNHWC
// does, and sets templates.ConvChainPackedAttr to their ONNX shapes in
// order; when one of them is not packable all stay as they are (the
// kernel packs them at run time).
func (p *packer) prepackConvChain(n *ir.Node) {
	if n.Attr(templates.ConvChainPackedAttr) != nil || n.Input(3) == nil {
		return
	}
	packed := map[int][]float32{}
	var shapes []int64
	for _, i := range []int{1, 3, 5} {
		w := n.Input(i)
		if w == nil {
			continue
		}
		if !p.packable(w) || len(w.Const.Shape) != 4 {
			return
		}
		ws := make([]int, 4)
		for j, d := range w.Const.Shape {
			ws[j] = int(d)
		}
		group := 1
		if i == 3 {
			group = ws[0] // depthwise
		}
		u, ok := templates.PrepackConvWeightsNHWC(constF32(w.Const), ws, group)
		if !ok {
			return
		}
		packed[i] = u
		shapes = append(shapes, w.Const.Shape...)
	}
	own(n)
	for _, i := range []int{1, 3, 5} {
		if u, ok := packed[i]; ok {
			w := n.Inputs[i]
			pv := packedValue(w, u)
			n.Inputs[i] = pv
			p.swapped[w] = pv
		}
	}
	n.SetAttr(&ir.Attr{Name: templates.ConvChainPackedAttr, Kind: ir.AttrInts, Ints: shapes})
}

// own gives n its own copies of its input and attribute slices, which
// other nodes a pass built from it may share, before prepack edits them.
func own(n *ir.Node) {
	n.Attrs = append([]*ir.Attr(nil), n.Attrs...)
	n.Inputs = append([]*ir.Value(nil), n.Inputs...)
}

// unpackedInputs returns n's inputs with each constant prepack packed
// replaced by a stand-in of its ONNX type (no data), so shape inference
// after the pass sees the shapes it saw before; nil when n has none.
func unpackedInputs(n *ir.Node) []*ir.Value {
	shapes := map[int][]int64{}
	switch {
	case isGemmLike(n):
		shapes[1] = n.AttrInts(templates.GemmPackedAttr, nil)
	case n.Op == "FusedConvChain" && n.Domain == ir.CuvilDomain:
		ps := n.AttrInts(templates.ConvChainPackedAttr, nil)
		for _, i := range []int{1, 3, 5} {
			if n.Input(i) != nil && len(ps) >= 4 {
				shapes[i], ps = ps[:4], ps[4:]
			}
		}
	case (n.Op == "QGemm" || n.Op == "QConv") && n.Domain == ir.CuvilDomain:
		shapes[3] = n.AttrInts(templates.QGemmPackedAttr, nil)
	case n.Op == "Conv" && isONNX(n) || n.Op == "FusedConv" && n.Domain == ir.CuvilDomain:
		shapes[1] = n.AttrInts(templates.ConvPackedAttr, nil)
		if ws := n.AttrInts(templates.ConvWinogradAttr, nil); ws != nil {
			shapes[1] = ws
		}
	}
	var ins []*ir.Value
	for i, s := range shapes {
		v := n.Input(i)
		if s == nil || v == nil || !v.IsConst() || len(v.Const.Shape) != 1 {
			continue
		}
		if ins == nil {
			ins = append([]*ir.Value(nil), n.Inputs...)
		}
		dt := v.Type.DType
		if dt == ir.BF16 && i == 1 && (isGemmLike(n) || n.Op == "FusedConv") {
			dt = ir.F32 // -precision bf16's B (W') panels stand for the float32 B (W)
		}
		ins[i] = &ir.Value{Name: v.Name, Type: ir.TensorType(dt, ir.ShapeOf(s...))}
	}
	return ins
}

// packedAttrs are the attributes prepack sets (ir/ops_cuvil.go declares
// them).
var packedAttrs = []string{templates.ConvPackedAttr, templates.ConvWinogradAttr, templates.GemmPackedAttr, templates.ConvChainPackedAttr, templates.QGemmPackedAttr}

// checkUnpacked refuses a model that arrives with prepack's attributes:
// the verifier accepts them (the pass's output must verify), but on an
// imported model they would make the kernels read its weights as packed.
func checkUnpacked(m *ir.Model) error {
	var err error
	m.Graph.Walk(func(g *ir.Graph) {
		for _, n := range g.Nodes {
			for _, name := range packedAttrs {
				if err == nil && n.Attr(name) != nil {
					err = fmt.Errorf("%v: attribute %q is set by the prepack pass, not by models", n, name)
				}
			}
		}
	})
	return err
}

// constF32 returns t's float32 values.
func constF32(t *ir.Tensor) []float32 {
	data := make([]float32, len(t.Raw)/4)
	for i := range data {
		data[i] = math.Float32frombits(binary.LittleEndian.Uint32(t.Raw[4*i:]))
	}
	return data
}

// packedValue is the 1-D constant that replaces w: its packed values, same
// names.
func packedValue(w *ir.Value, packed []float32) *ir.Value {
	t := ir.NewTensorF32([]int64{int64(len(packed))}, packed)
	t.Name = w.Const.Name
	t.Store = w.Const.Store // widen-half's f16 weights stay f16 packed
	return &ir.Value{Name: w.Name, Type: t.Type(), Const: t}
}
