package passes

import "github.com/cuvil/cuvil/ir"

// ConvTransposeAsConv rewrites a ConvTranspose whose kernel equals its
// stride (no padding, dilation or output padding, group 1): every input
// pixel then writes its own kh x kw block of the output, so the op is a
// 1x1 Conv to kh*kw*M channels followed by a pixel shuffle:
//
//	Y[n, m, h*kh+i, w*kw+j] = b[m] + sum_c X[n, c, h, w] * W[c, m, i, j]
//	= Reshape(Transpose(Reshape(Conv1x1(X, W'), [N,kh,kw,M,H,W]), [0,3,4,1,5,2]))
//
// with W'[(i*kw+j)*M + m, c] = W[c, m, i, j]. The 1x1 Conv takes the fast
// convolution paths (and the NHWC layout: its exit Transpose composes with
// the shuffle through the Reshapes into one Transpose with runs of M), where
// the direct ConvTranspose kernel ran NCHW between two layout Transposes
// (UNet decoders, FPN-style upsampling: 2x2 stride 2). Needs constant f32
// weights (and bias) and a static 4-D input.
var ConvTransposeAsConv = &Pass{
	Name: "convtranspose-as-conv",
	Doc:  "ConvTranspose with kernel == stride (no pads) as a 1x1 Conv and a pixel shuffle",
	Run: func(m *ir.Model) error {
		return forGraphs(m, func(g *ir.Graph) error {
			r := newRewriter(m, g)
			var cts []*ir.Node // first: the rewrite inserts nodes
			for _, n := range g.Nodes {
				if isOp(n, "ConvTranspose") {
					cts = append(cts, n)
				}
			}
			for _, n := range cts {
				at(m, n)
				convTransposeAsConv(m, r, n)
			}
			r.sweep()
			return nil
		})
	},
}

func convTransposeAsConv(m *ir.Model, r *rewriter, n *ir.Node) {
	rv, ok1 := onnxVersion(m, "Reshape")
	cv, ok2 := onnxVersion(m, "Conv")
	tv, ok3 := onnxVersion(m, "Transpose")
	if !ok1 || !ok2 || !ok3 || rv < 5 || len(n.Inputs) < 2 || len(n.Outputs) != 1 {
		return
	}
	x, w, y := n.Inputs[0], n.Inputs[1], n.Outputs[0]
	var b *ir.Value
	if len(n.Inputs) > 2 {
		b = n.Inputs[2]
	}
	xs, ok := x.Type.Shape.Consts()
	ys, oky := y.Type.Shape.Consts()
	if !ok || !oky || !x.Type.Known() || x.Type.DType != ir.F32 || len(xs) != 4 || len(ys) != 4 ||
		w == nil || !w.IsConst() || w.Const.DType != ir.F32 || len(w.Const.Shape) != 4 ||
		b != nil && (!b.IsConst() || b.Const.DType != ir.F32 || b.Const.NumElements() != w.Const.Shape[1]) {
		return
	}
	C, M, kh, kw := w.Const.Shape[0], w.Const.Shape[1], w.Const.Shape[2], w.Const.Shape[3]
	N, H, W := xs[0], xs[2], xs[3]
	if xs[1] != C || n.AttrInt("group", 1) != 1 || n.AttrString("auto_pad", "NOTSET") != "NOTSET" || n.Attr("output_shape") != nil {
		return
	}
	allAre := func(name string, v int64, want int) bool {
		a := n.AttrInts(name, nil)
		if a == nil {
			return true
		}
		if len(a) != want {
			return false
		}
		for _, e := range a {
			if e != v {
				return false
			}
		}
		return true
	}
	st := n.AttrInts("strides", nil)
	if ks := n.AttrInts("kernel_shape", nil); ks != nil && (len(ks) != 2 || ks[0] != kh || ks[1] != kw) {
		return
	}
	if len(st) != 2 || st[0] != kh || st[1] != kw || !allAre("pads", 0, 4) || !allAre("dilations", 1, 2) || !allAre("output_padding", 0, 2) {
		return
	}
	if ys[0] != N || ys[1] != M || ys[2] != H*kh || ys[3] != W*kw {
		return
	}
	K := kh * kw * M
	wv := w.Const.Float64s()
	w2 := make([]float32, K*C)
	for c := int64(0); c < C; c++ {
		for mm := int64(0); mm < M; mm++ {
			for i := int64(0); i < kh; i++ {
				for j := int64(0); j < kw; j++ {
					w2[((i*kw+j)*M+mm)*C+c] = float32(wv[((c*M+mm)*kh+i)*kw+j])
				}
			}
		}
	}
	ins := []*ir.Value{x, r.constant(w.Name+"_as_conv", ir.NewTensorF32([]int64{K, C, 1, 1}, w2))}
	if b != nil {
		bv := b.Const.Float64s()
		b2 := make([]float32, K)
		for k := range b2 {
			b2[k] = float32(bv[int64(k)%M])
		}
		ins = append(ins, r.constant(b.Name+"_as_conv", ir.NewTensorF32([]int64{K}, b2)))
	}
	dt := ir.F32
	conv := &ir.Value{Name: r.fresh(y.Name + "_blocks"), Type: ir.TensorType(dt, ir.ShapeOf(N, K, H, W))}
	six := &ir.Value{Name: r.fresh(y.Name + "_blocks6"), Type: ir.TensorType(dt, ir.ShapeOf(N, kh, kw, M, H, W))}
	shuf := &ir.Value{Name: r.fresh(y.Name + "_shuffled"), Type: ir.TensorType(dt, ir.ShapeOf(N, M, H, kh, W, kw))}
	shape := func(s ...int64) *ir.Value {
		return r.constant(n.Name+"_shape", ir.NewTensorInt64([]int64{int64(len(s))}, s))
	}
	nodes := []*ir.Node{
		{Name: n.Name, Op: "Conv", Version: cv, Inputs: ins, Outputs: []*ir.Value{conv},
			Attrs: []*ir.Attr{{Name: "kernel_shape", Kind: ir.AttrInts, Ints: []int64{1, 1}}}},
		{Name: n.Name + "_blocks", Op: "Reshape", Version: rv, Inputs: []*ir.Value{conv, shape(N, kh, kw, M, H, W)}, Outputs: []*ir.Value{six}},
		{Name: n.Name + "_shuffle", Op: "Transpose", Version: tv, Inputs: []*ir.Value{six}, Outputs: []*ir.Value{shuf},
			Attrs: []*ir.Attr{{Name: "perm", Kind: ir.AttrInts, Ints: []int64{0, 3, 4, 1, 5, 2}}}},
		{Name: n.Name + "_out", Op: "Reshape", Version: rv, Inputs: []*ir.Value{shuf, shape(N, M, H*kh, W*kw)}, Outputs: []*ir.Value{y}},
	}
	for _, nn := range nodes {
		for _, o := range nn.Outputs {
			o.Def = nn
		}
	}
	r.replaceNode(n, nodes[0])
	for k := len(nodes) - 1; k >= 1; k-- {
		insertAfter(r.g, nodes[0], nodes[k])
	}
	r.refresh()
}
