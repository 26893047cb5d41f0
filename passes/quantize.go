package passes

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/cuvil/cuvil/ir"
)

// QuantConfig drives the quantize pass (Options.Quant): static
// post-training int8 quantization with activation ranges observed on
// sample inputs (cuvil.Options.Quantize, -quantize int8 -calibrate DIR).
type QuantConfig struct {
	// Ranges holds the observed [min, max] of every activation the pass
	// quantizes, by value name.
	Ranges map[string][2]float32
	// Skip names nodes (by name, or by the name of an imported node fused
	// into them) and op types (Conv, Gemm, MatMul, which take their fused
	// forms FusedConv... too) that stay float. An entry that names nothing in the graph is an error.
	Skip []string
	// Observe makes the pass quantize nothing: it makes the values it
	// would quantize graph outputs instead (graph inputs and outputs stay
	// as they are) and lists their names in Observed, in order, for a
	// calibration run of that model.
	Observe  bool
	Observed []string
	// NoChain leaves every integer op's output float (see Quantize).
	NoChain bool
	// ReduceRange quantizes the weights to 7 bits: symmetric in [-64, 64]
	// (scale max|w|/64, ONNX Runtime's reduce_range) instead of
	// [-127, 127]. Every k pair then has |b0|+|b1| <= 128, so the AVX2
	// tiles' VPMADDUBSW pair sums never saturate and the byte tiles always
	// run (templates/k_quant_gemm.go, qgemmPairsFit); the weights lose one
	// bit of resolution.
	ReduceRange bool
}

// QuantWeightMax is the largest |q| of the s8 weights: 127, or 64 with
// reduce range.
func QuantWeightMax(reduceRange bool) float64 {
	if reduceRange {
		return 64
	}
	return 127
}

// Quantize replaces, when Options.Quant is set, every float convolution
// and GEMM with constant weights by the integer ops (cuvil::QConv,
// cuvil::QGemm) on a QuantizeLinear of its input:
//
//   - Conv and FusedConv (2-D, group 1, no residual input; activation
//     none, Relu or Clip, which the integer epilogue applies);
//   - Gemm and FusedGemm (transA 0, constant B, a constant C of N or one
//     element), MatMul and FusedMatMul (constant 2-D B, bias of N).
//
// Weights become per-output-channel symmetric s8 (scale max|w|/127, or
// max|w|/64 with QuantConfig.ReduceRange; zero point 0), alpha folded in; the input a per-tensor asymmetric u8 (scale
// (max-min)/255 of the observed range widened to hold 0, the zero point
// -min/scale rounded); the bias int32 in units of scale_x*scale_w. The
// integer op's output is dequantised to float32 (no Y_scale), so the
// float graph around it is unchanged; one QuantizeLinear serves all the
// quantized readers of a value. Where only integer ops read an integer
// op's output, that op requantizes to their u8 input directly (Y_scale,
// Y_zero: the Relu/Clip bounds then saturate in u8).
var Quantize = &Pass{
	Name:        "quantize",
	Doc:         "static int8 post-training quantization of Conv/Gemm/MatMul with constant weights into cuvil::QConv/QGemm (-quantize int8 -calibrate DIR; off by default)",
	Run:         func(m *ir.Model) error { return nil },
	WithOptions: func(m *ir.Model, o Options) error { return QuantizeModel(m, o.Quant) },
}

// QuantizeModel runs the quantize pass with cfg (nil: nothing to do).
func QuantizeModel(m *ir.Model, cfg *QuantConfig) error {
	if cfg == nil {
		return nil
	}
	g := m.Graph
	if err := checkSkip(g, cfg.Skip); err != nil {
		return err
	}
	var targets []*qTarget
	for _, n := range g.Nodes {
		at(m, n)
		if quantSkipped(n, cfg.Skip) {
			continue
		}
		if t := quantTargetOf(n); t != nil {
			targets = append(targets, t)
		}
	}
	if cfg.Observe {
		cfg.Observed = nil
		seen := map[*ir.Value]bool{}
		isOut := map[*ir.Value]bool{}
		for _, v := range g.Outputs {
			isOut[v] = true
		}
		for _, t := range targets {
			if seen[t.x] {
				continue
			}
			seen[t.x] = true
			cfg.Observed = append(cfg.Observed, t.x.Name)
			if t.x.Def != nil && !isOut[t.x] {
				g.Outputs = append(g.Outputs, t.x)
				isOut[t.x] = true
			}
		}
		return nil
	}
	if len(targets) == 0 {
		return nil
	}
	qver, ok := onnxVersion(m, "QuantizeLinear")
	if !ok {
		return fmt.Errorf("quantize: the model's ai.onnx opset %d has no QuantizeLinear (opset 10 or later)", m.Opset(""))
	}
	r := newRewriter(m, g)
	type quantized struct {
		v     *ir.Value
		s, z  *ir.Value
		scale float32
	}
	qs := map[*ir.Value]*quantized{}
	var order []*ir.Value // qs's keys in graph order
	made := map[*ir.Node]bool{}
	repl := map[*ir.Node][]*ir.Node{}
	for _, t := range targets {
		n := t.n
		at(m, n)
		rg, ok := cfg.Ranges[t.x.Name]
		if !ok {
			return fmt.Errorf("quantize: node %q (%s): no calibration range for its input %s", n.Name, n.Op, t.x.Name)
		}
		if !(isFinite32(rg[0]) && isFinite32(rg[1])) || rg[0] > rg[1] {
			return fmt.Errorf("quantize: node %q (%s): bad calibration range [%v, %v] for its input %s", n.Name, n.Op, rg[0], rg[1], t.x.Name)
		}
		var pre []*ir.Node
		q := qs[t.x]
		if q == nil {
			scale, zero := quantU8Params(rg[0], rg[1])
			q = &quantized{scale: scale}
			q.s = r.constant(t.x.Name+"_scale", floatTensor(ir.F32, nil, []float64{float64(scale)}))
			q.z = r.constant(t.x.Name+"_zero", &ir.Tensor{DType: ir.U8, Raw: []byte{zero}})
			q.v = &ir.Value{Name: r.fresh(t.x.Name + "_u8"), Type: ir.TensorType(ir.U8, t.x.Type.Shape)}
			qn := &ir.Node{Name: r.fresh(t.x.Name + "/QuantizeLinear"), Op: "QuantizeLinear", Version: qver,
				Inputs: []*ir.Value{t.x, q.s, q.z}, Outputs: []*ir.Value{q.v}}
			q.v.Def = qn
			qs[t.x] = q
			order = append(order, t.x)
			pre = append(pre, qn)
		}
		wq, ws := quantWeights(t.w, t.cols, t.colStride, t.kStride, t.k, QuantWeightMax(cfg.ReduceRange))
		wshape := t.wshape
		w := r.constant(n.Name+"_w_s8", &ir.Tensor{DType: ir.I8, Shape: wshape, Raw: wq})
		wsv := r.constant(n.Name+"_w_scale", floatTensor(ir.F32, []int64{int64(t.cols)}, ws))
		var bias *ir.Value
		if t.bias != nil {
			bq := make([]byte, 4*t.cols)
			for c := 0; c < t.cols; c++ {
				v := math.RoundToEven(t.bias[c] / (float64(q.scale) * float64(float32(ws[c]))))
				v = math.Max(math.MinInt32, math.Min(math.MaxInt32, v))
				binary.LittleEndian.PutUint32(bq[4*c:], uint32(int32(v)))
			}
			bias = r.constant(n.Name+"_bias_i32", &ir.Tensor{DType: ir.I32, Shape: []int64{int64(t.cols)}, Raw: bq})
		}
		op := "QGemm"
		if t.conv {
			op = "QConv"
		}
		fn := &ir.Node{Name: n.Name, Op: op, Domain: ir.CuvilDomain, Version: ir.CuvilOpset,
			Inputs: []*ir.Value{q.v, q.s, q.z, w, wsv, nil, bias}, Outputs: n.Outputs}
		for len(fn.Inputs) > 0 && fn.Inputs[len(fn.Inputs)-1] == nil {
			fn.Inputs = fn.Inputs[:len(fn.Inputs)-1]
		}
		for _, a := range t.attrs {
			fn.SetAttr(a)
		}
		fn.Fused = n.Fused
		if fn.Fused == nil {
			fn.Fused = []ir.Origin{{Op: n.Op, Name: n.Name}}
		}
		n.Outputs[0].Def = fn
		made[fn] = true
		repl[n] = append(pre, fn)
	}
	nodes := make([]*ir.Node, 0, len(g.Nodes)+len(qs))
	for _, n := range g.Nodes {
		if ns, ok := repl[n]; ok {
			nodes = append(nodes, ns...)
			continue
		}
		nodes = append(nodes, n)
	}
	g.Nodes = nodes
	// Chains: an integer op whose float output only the QuantizeLinear of
	// the next integer ops reads requantizes to that u8 itself (Y_scale,
	// Y_zero), so no float value lies between them.
	uses := g.Uses()
	isOut := map[*ir.Value]bool{}
	for _, v := range g.Outputs {
		isOut[v] = true
	}
	drop := map[*ir.Node]bool{}
	for _, x := range order {
		if cfg.NoChain {
			break
		}
		q, p := qs[x], x.Def
		if p == nil || !made[p] || isOut[x] || len(uses[x]) != 1 || uses[x][0] != q.v.Def {
			continue
		}
		for len(p.Inputs) < 7 {
			p.Inputs = append(p.Inputs, nil)
		}
		p.Inputs = append(p.Inputs[:7], q.s, q.z)
		drop[q.v.Def] = true
		p.Outputs = []*ir.Value{q.v}
		q.v.Def = p
	}
	if len(drop) > 0 {
		g.Nodes = slices.DeleteFunc(g.Nodes, func(n *ir.Node) bool { return drop[n] })
	}
	useCuvil(m)
	return nil
}

func isFinite32(f float32) bool { return !math.IsInf(float64(f), 0) && !math.IsNaN(float64(f)) }

// quantU8Params returns the u8 scale and zero point of the range [lo, hi]
// widened to hold 0 (so that zero padding and Relu's zeros are exact).
func quantU8Params(lo, hi float32) (float32, uint8) {
	l, h := math.Min(float64(lo), 0), math.Max(float64(hi), 0)
	if h-l < 1e-30 {
		return 1, 0
	}
	scale := float32((h - l) / 255)
	z := math.RoundToEven(-l / float64(scale))
	return scale, uint8(math.Max(0, math.Min(255, z)))
}

// quantWeights quantizes w per column c < cols (element (k, c) at
// c*colStride + k*kStride, k < kn) to symmetric s8 in [-qmax, qmax]
// (QuantWeightMax): it returns the bytes in w's own order and the scales.
func quantWeights(w []float64, cols, colStride, kStride, kn int, qmax float64) ([]byte, []float64) {
	out := make([]byte, len(w))
	scales := make([]float64, cols)
	for c := 0; c < cols; c++ {
		mx := 0.0
		for k := 0; k < kn; k++ {
			mx = math.Max(mx, math.Abs(w[c*colStride+k*kStride]))
		}
		s := float64(float32(mx / qmax))
		if s == 0 || math.IsInf(s, 0) || math.IsNaN(s) {
			s = 1
		}
		scales[c] = s
		for k := 0; k < kn; k++ {
			i := c*colStride + k*kStride
			q := math.RoundToEven(w[i] / s)
			out[i] = byte(int8(math.Max(-qmax, math.Min(qmax, q))))
		}
	}
	return out, scales
}

// qTarget is a node the quantize pass rewrites.
type qTarget struct {
	n    *ir.Node
	conv bool
	x    *ir.Value
	// w holds the weights (alpha folded in): conv [M, C, kh, kw], GEMM
	// [K, N]; element (k, c) of column c at c*colStride + k*kStride.
	w                  []float64
	wshape             []int64
	cols, k            int
	colStride, kStride int
	bias               []float64 // cols values, or nil
	attrs              []*ir.Attr
}

// quantAct returns the activation attributes of a fused node when the
// integer epilogue can apply them (none, Relu, Clip).
func quantAct(n *ir.Node) ([]*ir.Attr, bool) {
	if n.Attr("residual_after_activation") != nil {
		return nil, false
	}
	var out []*ir.Attr
	switch n.AttrString("activation", "") {
	case "":
	case "Relu":
		out = append(out, n.Attr("activation"))
	case "Clip":
		p := n.Attr("activation_params")
		if p == nil || p.Kind != ir.AttrFloats || len(p.Floats) != 2 {
			return nil, false
		}
		out = append(out, n.Attr("activation"), p)
	default:
		return nil, false
	}
	return out, true
}

// quantTargetOf returns what the pass needs of n, or nil when n stays.
func quantTargetOf(n *ir.Node) *qTarget {
	if len(n.Outputs) != 1 || n.Outputs[0] == nil || !n.Outputs[0].Type.Known() || n.Outputs[0].Type.DType != ir.F32 {
		return nil
	}
	cuvil := n.Domain == ir.CuvilDomain
	if !isOp(n, "Conv") && !isOp(n, "Gemm") && !isOp(n, "MatMul") && !(cuvil && (n.Op == "FusedConv" || n.Op == "FusedGemm" || n.Op == "FusedMatMul")) {
		return nil
	}
	// Residual inputs (FusedConv/FusedGemm/FusedMatMul input 3) and any
	// later ones stay float.
	for i := 3; i < len(n.Inputs); i++ {
		if n.Inputs[i] != nil {
			return nil
		}
	}
	x, b := n.Input(0), n.Input(1)
	if x == nil || b == nil || !x.Type.Known() || x.Type.DType != ir.F32 || !b.IsConst() || b.Const.DType != ir.F32 {
		return nil
	}
	act, ok := quantAct(n)
	if !ok {
		return nil
	}
	var c []float64
	if cv := n.Input(2); cv != nil {
		if c, ok = floatConst(cv); !ok || cv.Const.DType != ir.F32 {
			return nil
		}
	}
	w := b.Const.Float64s()
	t := &qTarget{n: n, x: x}
	switch n.Op {
	case "Conv", "FusedConv":
		if x.Type.Rank() != 4 || len(b.Const.Shape) != 4 || n.AttrInt("group", 1) != 1 || n.Attr("layout") != nil {
			return nil
		}
		mo := int(b.Const.Shape[0])
		t.conv, t.w, t.wshape = true, w, slices.Clone(b.Const.Shape)
		t.cols, t.k = mo, len(w)/max(mo, 1)
		t.colStride, t.kStride = t.k, 1
		if c != nil && len(c) != mo {
			return nil
		}
		t.bias = c
		for _, a := range n.Attrs {
			if a.Name != "activation" && a.Name != "activation_params" {
				t.attrs = append(t.attrs, a)
			}
		}
	case "Gemm", "FusedGemm":
		if n.AttrInt("transA", 0) != 0 || x.Type.Rank() != 2 || len(b.Const.Shape) != 2 {
			return nil
		}
		kk, nn := int(b.Const.Shape[0]), int(b.Const.Shape[1])
		if n.AttrInt("transB", 0) != 0 {
			kk, nn = nn, kk
		}
		alpha, beta := float64(n.AttrFloat("alpha", 1)), float64(n.AttrFloat("beta", 1))
		wt := make([]float64, kk*nn)
		for k := 0; k < kk; k++ {
			for j := 0; j < nn; j++ {
				v := w[k*nn+j]
				if n.AttrInt("transB", 0) != 0 {
					v = w[j*kk+k]
				}
				wt[k*nn+j] = alpha * v
			}
		}
		t.w, t.wshape, t.cols, t.k, t.colStride, t.kStride = wt, []int64{int64(kk), int64(nn)}, nn, kk, 1, nn
		if c != nil {
			switch {
			case len(c) == nn && n.Input(2).Const.Shape[len(n.Input(2).Const.Shape)-1] == int64(nn) || len(c) == 1:
				t.bias = make([]float64, nn)
				for j := range t.bias {
					t.bias[j] = beta * c[j%len(c)]
				}
			default:
				return nil
			}
		}
	case "MatMul", "FusedMatMul":
		if x.Type.Rank() < 1 || len(b.Const.Shape) != 2 {
			return nil
		}
		kk, nn := int(b.Const.Shape[0]), int(b.Const.Shape[1])
		t.w, t.wshape, t.cols, t.k, t.colStride, t.kStride = w, slices.Clone(b.Const.Shape), nn, kk, 1, nn
		if c != nil {
			if len(c) != nn {
				return nil
			}
			t.bias = c
		}
	}
	if t.k == 0 || t.cols == 0 {
		return nil
	}
	t.attrs = append(t.attrs, act...)
	return t
}

// quantSkipped reports whether skip names n, its op, or a node or op
// fused into it.
func quantSkipped(n *ir.Node, skip []string) bool {
	for _, s := range skip {
		if s == n.Name || s == n.Op || n.Domain == ir.CuvilDomain && "Fused"+s == n.Op {
			return true
		}
		for _, o := range n.Fused {
			if s == o.Name || s == o.Op {
				return true
			}
		}
	}
	return false
}

// checkSkip rejects a skip entry that names no node or op of g.
func checkSkip(g *ir.Graph, skip []string) error {
	for _, s := range skip {
		found := false
		for _, n := range g.Nodes {
			if quantSkipped(n, []string{s}) {
				found = true
				break
			}
		}
		if !found {
			return fmt.Errorf("quantize: -quantize-skip %q names no node or op of the graph", s)
		}
	}
	return nil
}
