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
	// -precision bf16's prepacked bf16 W (k_conv_nhwc_bf16.go) is read as
	// it is, not widened.
	bf16W := nhwcLayout(n) && n.Input(1) != nil && n.Input(1).DType == BF16 && n.Attrs.Ints(convPackedAttr) != nil
	if !bf16W {
		if ok, err := nnViaF32(n, FusedConv); ok {
			return err
		}
	}
	if nhwcLayout(n) {
		return fusedConvNHWC(n) // k_conv_nhwc.go
	}
	if n.Attrs.Int("out_channels", 0) != 0 || n.Input(4) != nil || n.Input(5) != nil {
		return n.Errorf("out_channels, Into and Scale need layout NHWC")
	}
	act, err := fusedActOf(n)
	if err != nil {
		return err
	}
	return convNCHW(n, act, n.Input(3), n.Attrs.Int("residual_after_activation", 0) != 0) // k_conv.go
}
