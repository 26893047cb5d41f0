package templates

// Compiler-side hooks for Winograd-transformed convolution weights
// (k_conv_winograd.go); compiler_*.go files are never copied into generated packages.

// ConvWinogradAttr names the attribute (ints: W's ONNX shape) the prepack pass sets on a
// Conv or cuvil::FusedConv whose W it replaced by PrepackConvWinograd's
// result.
const ConvWinogradAttr = convWinogradAttr

// PrepackConvWinograd returns the float32 weights w of a 3x3 convolution
// (ONNX shape ws = [M, C, 3, 3], group 1) as the 36 Winograd F(4x4, 3x3)
// filter matrices Conv and FusedConv read when the node has
// ConvWinogradAttr, or false when ws is not such a kernel. The caller
// checks the node's other attributes (group 1, unit strides and dilations).
func PrepackConvWinograd(w []float32, ws []int) ([]float32, bool) {
	if len(ws) != 4 || ws[2] != 3 || ws[3] != 3 || ws[0] < 1 || ws[1] < 1 || len(w) != nnProd(ws) {
		return nil, false
	}
	return convWinogradPack(w, ws[0], ws[1]), true
}

// PrepackConvWinogradNHWC returns the float32 weights w of a 3x3
// convolution (ONNX shape ws = [M, C, 3, 3], group 1) as the Winograd
// F(f x f, 3x3) filter matrices (f 4: 36 of them, f 2: 16)
// cuvil::FusedConv with layout=NHWC reads when the node has
// ConvWinogradAttr (each [C, M], packed as SGEMM B panels), or false when
// ws is not such a kernel.
//
// A 3-D convolution's ws = [M, C, kT, 3, 3] gives wnPack3D's matrices
// ([kT*C, M] each, the taps' input channels stacked).
func PrepackConvWinogradNHWC(w []float32, ws []int, f int) ([]float32, bool) {
	if len(ws) == 5 && ws[3] == 3 && ws[4] == 3 && ws[0] >= 1 && ws[1] >= 1 && ws[2] >= 1 && len(w) == nnProd(ws) && (f == 2 || f == 4) {
		return wnPack3D(w, ws[0], ws[1], ws[2], f), true
	}
	if len(ws) != 4 || ws[2] != 3 || ws[3] != 3 || ws[0] < 1 || ws[1] < 1 || len(w) != nnProd(ws) || f != 2 && f != 4 {
		return nil, false
	}
	return wnPack(w, ws[0], ws[1], f), true
}
