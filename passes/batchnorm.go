package passes

import (
	"math"
	"slices"

	"github.com/cuvil/cuvil/ir"
)

// FoldBatchNorm removes inference BatchNormalization. After a Conv,
// ConvTranspose or Gemm with constant weights whose output only the BN
// reads, it folds into that op's weights and bias (new constants computed
// in float64). Any other BN becomes Mul and Add by per-channel constants,
// which fold-affine folds into a neighbour or fuse-scaleshift turns into
// one cuvil::ScaleShift.
var FoldBatchNorm = &Pass{
	Name: "fold-batchnorm",
	Doc:  "fold inference BatchNormalization into the preceding Conv/ConvTranspose/Gemm, else lower it to per-channel Mul+Add",
	Run: func(m *ir.Model) error {
		mulV, ok1 := onnxVersion(m, "Mul")
		addV, ok2 := onnxVersion(m, "Add")
		return forGraphs(m, func(g *ir.Graph) error {
			r := newRewriter(m, g)
			// A snapshot: lowering a BN inserts a node into g.Nodes.
			for _, n := range slices.Clone(g.Nodes) {
				at(m, n)
				s, t, ok := bnAffine(n)
				if !ok {
					continue
				}
				x, y := n.Inputs[0], n.Outputs[0]
				if p := x.Def; p != nil && r.only(x) == n && foldChannelAffine(r, p, s, t, 1) {
					// p now writes the BN's output.
					p.Outputs[0] = y
					y.Def = p
					r.absorb(p, n)
					continue
				}
				if !ok1 || !ok2 || x.Type.Rank() < 2 || x.Type.Unranked {
					continue
				}
				shape := channelShape(len(s), x.Type.Rank(), 1)
				dt := x.Type.DType
				sc := r.constant(n.Name+"_scale", floatTensor(dt, shape, s))
				sh := r.constant(n.Name+"_shift", floatTensor(dt, shape, t))
				mid := &ir.Value{Name: r.fresh(n.Name + "_scaled"), Type: x.Type.Clone()}
				mul := &ir.Node{Name: n.Name + "_mul", Op: "Mul", Version: mulV, Inputs: []*ir.Value{x, sc}, Outputs: []*ir.Value{mid}}
				add := &ir.Node{Name: n.Name, Op: "Add", Version: addV, Inputs: []*ir.Value{mid, sh}, Outputs: []*ir.Value{y}}
				mid.Def, y.Def = mul, add
				r.record(mul, n)
				r.record(add, n)
				r.replaceNode(n, mul)
				insertAfter(g, mul, add)
			}
			r.sweep()
			return nil
		})
	},
}

// bnAffine returns the per-channel scale and shift an inference BN node
// applies (y = x*s + t), when its parameters are constants.
func bnAffine(n *ir.Node) (s, t []float64, ok bool) {
	if !isOp(n, "BatchNormalization") || len(n.Inputs) < 5 || n.AttrInt("training_mode", 0) != 0 {
		return nil, nil, false
	}
	for _, o := range n.Outputs[1:] {
		if o != nil {
			return nil, nil, false // training statistics asked for
		}
	}
	if n.Version < 9 && n.IntAttr("spatial") == 0 {
		return nil, nil, false
	}
	x := n.Inputs[0]
	if x == nil || !x.Type.Known() || (x.Type.DType != ir.F32 && x.Type.DType != ir.F64) || n.Outputs[0] == nil {
		return nil, nil, false
	}
	var p [4][]float64
	for i := range p {
		v, ok := floatConst(n.Inputs[1+i])
		if !ok {
			return nil, nil, false
		}
		p[i] = v
	}
	c := len(p[0])
	for _, v := range p {
		if len(v) != c {
			return nil, nil, false
		}
	}
	if r := x.Type.Rank(); r < 2 || !x.Type.Shape[1].IsConst() || x.Type.Shape[1].Size != int64(c) {
		return nil, nil, false
	}
	eps := float64(n.FloatAttr("epsilon"))
	s, t = make([]float64, c), make([]float64, c)
	for i := range s {
		s[i] = p[0][i] / math.Sqrt(p[3][i]+eps)
		t[i] = p[1][i] - p[2][i]*s[i]
	}
	return s, t, true
}

// channelShape is the shape of a per-channel constant of c values along
// axis of a rank-r value: [c, 1, ..., 1] (leading dims dropped).
func channelShape(c, r, axis int) []int64 {
	shape := []int64{int64(c)}
	for i := axis + 1; i < r; i++ {
		shape = append(shape, 1)
	}
	return shape
}

// insertAfter inserts n right after node after.
func insertAfter(g *ir.Graph, after, n *ir.Node) {
	for i, x := range g.Nodes {
		if x == after {
			g.Nodes = append(g.Nodes[:i+1], append([]*ir.Node{n}, g.Nodes[i+1:]...)...)
			return
		}
	}
	panic("passes: insertAfter: node not in graph")
}

// foldChannelAffine rewrites p (Conv, ConvTranspose, Gemm, or MatMul with
// a constant 2-D B) so that it computes its old output times s plus t per
// output channel (t may be nil: scale only; s may be nil: shift only).
// axis is the axis of p's output s and t run along (1 for NCHW; Gemm and
// MatMul take only their last axis). It reports false, changing nothing,
// when p's weights are not constants or the axis does not fit.
func foldChannelAffine(r *rewriter, p *ir.Node, s, t []float64, axis int) bool {
	out := p.Outputs[0]
	if out == nil || len(p.Outputs) != 1 || !out.Type.Known() {
		return false
	}
	rank := out.Type.Rank()
	dt := out.Type.DType
	if dt != ir.F32 && dt != ir.F64 {
		return false
	}
	w := p.Input(1)
	wv, ok := floatConst(w)
	if !ok {
		return false
	}
	var c int
	switch {
	case s != nil:
		c = len(s)
	case t != nil:
		c = len(t)
	default:
		return false
	}
	scale := func(i int) float64 {
		if s == nil {
			return 1
		}
		if len(s) == 1 {
			return s[0]
		}
		return s[i]
	}
	shift := func(i int) float64 {
		if t == nil {
			return 0
		}
		if len(t) == 1 {
			return t[0]
		}
		return t[i]
	}
	switch {
	case isOp(p, "Conv") || isOp(p, "ConvTranspose"):
		if axis != 1 || rank < 3 {
			return false
		}
		ws := w.Const.Shape
		M := ws[0]
		group := p.AttrInt("group", 1)
		if isOp(p, "ConvTranspose") {
			M = ws[1] * group
		}
		if c != 1 && int64(c) != M {
			return false
		}
		var bias []float64
		if b := p.Input(2); b != nil {
			if bias, ok = floatConst(b); !ok || int64(len(bias)) != M {
				return false
			}
		} else {
			bias = make([]float64, M)
		}
		nw := make([]float64, len(wv))
		if isOp(p, "Conv") {
			per := len(wv) / int(M)
			for i, v := range wv {
				nw[i] = v * scale(i/per)
			}
		} else {
			C, Mg := ws[0], ws[1]
			per := len(wv) / int(C*Mg)
			for i, v := range wv {
				ci, j := int64(i/per)/Mg, int64(i/per)%Mg
				o := (ci/(C/group))*Mg + j
				nw[i] = v * scale(int(o))
			}
		}
		nb := make([]float64, M)
		for i := range nb {
			nb[i] = bias[i]*scale(i) + shift(i)
		}
		p.Inputs[1] = r.constant(w.Name+"_folded", storedLike(w, floatTensor(dt, ws, nw)))
		for len(p.Inputs) < 3 {
			p.Inputs = append(p.Inputs, nil)
		}
		p.Inputs[2] = r.constant(p.Name+"_bias", floatTensor(dt, []int64{M}, nb))
		return true
	case isOp(p, "Gemm"):
		if axis != rank-1 || rank != 2 {
			return false
		}
		ws := w.Const.Shape
		transB := p.AttrInt("transB", 0) != 0
		N := ws[1]
		if transB {
			N = ws[0]
		}
		if c != 1 && int64(c) != N {
			return false
		}
		beta := float64(p.AttrFloat("beta", 1))
		cv := make([]float64, N)
		if cin := p.Input(2); cin != nil {
			v, ok := floatConst(cin)
			if !ok {
				return false
			}
			switch {
			case len(v) == 1:
				for i := range cv {
					cv[i] = beta * v[0]
				}
			case int64(len(v)) == N && (len(cin.Const.Shape) == 1 || cin.Const.Shape[0] == 1):
				for i := range cv {
					cv[i] = beta * v[i]
				}
			default:
				return false // a C per row does not scale per column alone
			}
		}
		nw := make([]float64, len(wv))
		for i, v := range wv {
			col := i % int(ws[1])
			if transB {
				col = i / int(ws[1])
			}
			nw[i] = v * scale(col)
		}
		for i := range cv {
			cv[i] = cv[i]*scale(i) + shift(i)
		}
		p.Inputs[1] = r.constant(w.Name+"_folded", storedLike(w, floatTensor(dt, ws, nw)))
		for len(p.Inputs) < 3 {
			p.Inputs = append(p.Inputs, nil)
		}
		p.Inputs[2] = r.constant(p.Name+"_bias", floatTensor(dt, []int64{N}, cv))
		p.SetAttr(&ir.Attr{Name: "beta", Kind: ir.AttrFloat, F: 1})
		return true
	case isOp(p, "MatMul"):
		// MatMul has no bias: only a scale folds (the Add becomes
		// FusedMatMul's bias later).
		ws := w.Const.Shape
		if t != nil || len(ws) != 2 || axis != rank-1 || (c != 1 && int64(c) != ws[1]) {
			return false
		}
		nw := make([]float64, len(wv))
		for i, v := range wv {
			nw[i] = v * scale(i%int(ws[1]))
		}
		p.Inputs[1] = r.constant(w.Name+"_folded", storedLike(w, floatTensor(dt, ws, nw)))
		return true
	}
	return false
}

// storedLike marks t stored as w's constant is (widen-half's f16 weights
// stay f16 in weights.bin once folded).
func storedLike(w *ir.Value, t *ir.Tensor) *ir.Tensor {
	if w.IsConst() && t.DType == ir.F32 {
		t.Store = w.Const.Store
	}
	return t
}
