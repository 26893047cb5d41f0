package templates

// Compiler-side hooks for the weights the prepack pass (passes/prepack.go)
// stores prepacked; gen writes them to weights.bin as they are
// (compiler_*.go files are never copied into generated packages). The
// attribute names are declared in ir/ops_cuvil.go too.

// ConvPackedAttr names the attribute (ints: W's ONNX shape) the prepack pass sets on a
// Conv or cuvil::FusedConv whose W it replaced by PrepackConvWeights's
// result.
const ConvPackedAttr = convPackedAttr

// PrepackConvWeights returns the float32 convolution weights w (ONNX shape
// ws, group groups) in the layout Conv and FusedConv read when the node has
// ConvPackedAttr, or false when such a convolution does not take prepacked
// weights (depthwise 2-D convolutions run a direct kernel).
func PrepackConvWeights(w []float32, ws []int, group int) ([]float32, bool) {
	if len(ws) < 3 || group < 1 || ws[0]%group != 0 || len(w) != nnProd(ws) {
		return nil, false
	}
	if convIsDepthwise2D(ws[1]*group, ws[0], group, ws[2:]) {
		return nil, false
	}
	return convPackWeights(w, ws, group), true
}

// GemmPackedAttr names the attribute (ints: B's ONNX shape) the prepack pass sets on a
// Gemm, MatMul, cuvil::FusedGemm or cuvil::FusedMatMul whose constant B it
// replaced by PrepackGemmB's result.
const GemmPackedAttr = gemmPackedAttr

// PrepackGemmB returns the float32 matrix b (ONNX shape bs, 2-D; op(B) is
// its transpose when transB) in the layout Gemm, MatMul, FusedGemm and
// FusedMatMul read when the node has GemmPackedAttr.
func PrepackGemmB(b []float32, bs []int, transB bool) ([]float32, bool) {
	if len(bs) != 2 || len(b) != bs[0]*bs[1] || bs[0] <= 0 || bs[1] <= 0 {
		return nil, false
	}
	k, n := bs[0], bs[1]
	if transB {
		k, n = n, k
	}
	return sgemmPackB(transB, k, n, b, bs[1]), true
}

// PrepackConvWeightsNHWC returns the float32 convolution weights w (ONNX
// shape ws, group groups) in the layout cuvil::FusedConv with layout=NHWC
// reads when the node has ConvPackedAttr: [kH*kW, C] for a depthwise one,
// W' [kH*kW*C, M] packed for the GEMM for group 1; false for other groups.
func PrepackConvWeightsNHWC(w []float32, ws []int, group int) ([]float32, bool) {
	p, _, ok := nhwcPackWeights(nil, w, ws, group, nil)
	return p, ok
}

// ConvChainPackedAttr names the attribute (ints: the ONNX shapes of its
// weights, 4 each, in input order) the prepack pass sets on a cuvil::FusedConvChain
// whose weights it replaced by PrepackConvWeightsNHWC's results.
const ConvChainPackedAttr = convChainPackedAttr

// QGemmPackedAttr names the attribute (ints: B's or W's ONNX shape) the
// prepack pass sets on a cuvil::QGemm or cuvil::QConv whose constant s8 B
// (W) it replaced by PrepackQWeights's result.
const QGemmPackedAttr = qgemmPackedAttr

// PrepackQWeights returns the s8 weights of a QGemm (B [K, N]; conv false)
// or QConv (W [M, C, kh, kw], the GEMM's B[k, m] = W[m, k]; conv true) as
// the panels the integer GEMM tiles read (qgemmPackB), or false when the
// shape does not fit.
func PrepackQWeights(w []int8, ws []int, conv bool) ([]int8, bool) {
	if len(w) != nnProd(ws) || len(w) == 0 {
		return nil, false
	}
	t := &Tensor{DType: I8, Shape: ws, Data: w}
	var p qgemmB
	switch {
	case conv && len(ws) == 4:
		k := ws[1] * ws[2] * ws[3]
		qgemmPackB(&p, t, k, ws[0], 1, k)
	case !conv && len(ws) == 2:
		qgemmPackB(&p, t, ws[0], ws[1], ws[1], 1)
	default:
		return nil, false
	}
	return p.panels, true
}

// PrepackGemmBBF16 is PrepackGemmB for -precision bf16: b rounded to
// bfloat16 (nearest even) in the panels of the bf16 GEMM (bf16PackB),
// which MatMul, FusedMatMul, Gemm and FusedGemm (transA=0) read when B
// has dtype BF16 and the node
// has GemmPackedAttr.
func PrepackGemmBBF16(b []float32, bs []int, transB bool) ([]uint16, bool) {
	if len(bs) != 2 || len(b) != bs[0]*bs[1] || bs[0] <= 0 || bs[1] <= 0 {
		return nil, false
	}
	k, n := bs[0], bs[1]
	if transB {
		k, n = n, k
	}
	return bf16PackB(make([]uint16, bf16PackedBSize(k, n)), transB, k, n, b, bs[1]), true
}

// PrepackConvWeightsNHWCBF16 is PrepackConvWeightsNHWC for -precision
// bf16 and group 1: W' [(kh, kw, c), m] rounded to bfloat16 (nearest even,
// denormals to zero) in the bf16 GEMM's panels (bf16PackB), which
// cuvil::FusedConv with layout=NHWC reads when W has dtype BF16 and the
// node has ConvPackedAttr; false for other shapes.
func PrepackConvWeightsNHWCBF16(w []float32, ws []int) ([]uint16, bool) {
	return bf16PackConvNHWC(w, ws)
}
