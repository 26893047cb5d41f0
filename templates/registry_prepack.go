package templates

// Compiler-side hooks for weights gen stores prepacked in weights.bin
// (registry files are never copied into generated packages).

// ConvPackedAttr names the attribute (ints: W's ONNX shape) gen sets on a
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
