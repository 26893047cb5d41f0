package templates

// Kernels of the cuvil-domain ops the fusion passes make (ir/ops_cuvil.go)
// touch the output once: FusedConv (here), FusedGemm and FusedMatMul
// (k_gemm_fused.go) run the GEMM one block of output columns (or rows) at a
// time and apply bias, residual and activation to that block right after,
// while it is still in cache (the epilogue, k_epilogue.go), instead of
// three more passes over the whole tensor.

// FusedConv is cuvil::FusedConv: Conv with bias, residual Z and activation
// applied to each block of output columns as soon as the GEMM wrote it
// (convFloat in k_conv.go).
func FusedConv(n *Node) error {
	if ok, err := nnViaF32(n, FusedConv); ok {
		return err
	}
	if nhwcLayout(n) {
		return fusedConvNHWC(n) // k_conv_nhwc.go
	}
	if n.Attrs.Int("out_channels", 0) != 0 || n.Input(4) != nil {
		return n.Errorf("out_channels and Into need layout NHWC")
	}
	X, W, B, Z := n.Input(0), n.Input(1), n.Input(2), n.Input(3)
	if X == nil || W == nil {
		return n.Errorf("needs inputs X and W")
	}
	act, err := fusedActOf(n)
	if err != nil {
		return err
	}
	r := len(X.Shape)
	sc := n.ScratchInts(8*r + 4)
	ws, packed, err := convWeightShape(n, W, sc[7*r+2:])
	if err != nil {
		return err
	}
	if r < 3 || len(ws) != r {
		return n.Errorf("X %v and W %v must have the same rank, at least 3", X.ShapeString(), ws)
	}
	if W.DType != X.DType || B != nil && B.DType != X.DType {
		return n.Errorf("inputs must share one dtype")
	}
	nd := r - 2
	group := int(n.Attrs.Int("group", 1))
	N, C, M := X.Shape[0], X.Shape[1], ws[0]
	if group < 1 || C%group != 0 || M%group != 0 || ws[1]*group != C {
		return n.Errorf("X %v, W %v and group %d do not match", X.ShapeString(), ws, group)
	}
	if B != nil && (len(B.Shape) != 1 || B.Shape[0] != M) {
		return n.Errorf("B %v must have shape [%d]", B.ShapeString(), M)
	}
	if ks := n.Attrs.Ints("kernel_shape"); ks != nil {
		for i, k := range ks {
			if i >= nd || int(k) != ws[2+i] {
				return n.Errorf("kernel_shape %v does not match W %v", ks, ws)
			}
		}
	}
	win, err := nnWindow(n, X.Shape[2:], ws[2:], false, sc[:6*nd])
	if err != nil {
		return err
	}
	shape := sc[6*nd : 7*nd+2]
	shape[0], shape[1] = N, M
	copy(shape[2:], win.out)
	if err := fusedCheckZ(n, Z, X.DType, shape); err != nil {
		return err
	}
	if packed && convIsDepthwise2D(C, M, group, X.Shape[2:]) {
		return n.Errorf("W is prepacked but the convolution is depthwise")
	}
	after := n.Attrs.Int("residual_after_activation", 0) != 0
	Y := n.Out[0]
	nnResize(Y, X.DType, shape...)
	switch x := X.Data.(type) {
	case []float32:
		var z, bias, wp []float32
		if Z != nil {
			z = Z.F32()
		}
		if B != nil {
			bias = B.F32()
		}
		w := W.F32()
		if packed {
			w, wp = nil, w
		}
		convFloat(n, x, w, wp, bias, z, after, act, Y.F32(), X.Shape, M, group, win)
	case []float64:
		var z, bias []float64
		if Z != nil {
			z = Z.F64()
		}
		if B != nil {
			bias = B.F64()
		}
		convFloat(n, x, W.F64(), nil, bias, z, after, act, Y.F64(), X.Shape, M, group, win)
	default:
		return n.Errorf("unsupported dtype %v", X.DType)
	}
	return nil
}
