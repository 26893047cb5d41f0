package gen

import (
	"os"

	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/templates"
)

// prepackWinograd returns the Winograd F(4x4, 3x3) form of a Conv or
// FusedConv's float32 weights data (ONNX shape ws) when the node is one
// the Winograd kernel (templates/k_winograd.go) computes faster than
// im2col+GEMM, with the attribute to mark the node by. The rule, timed per
// layer on resnet50's and squeezenet's 3x3 convolutions
// (BenchmarkConvWinograd): a 3x3 kernel, group 1, unit strides and
// dilations, and the input's channels and size (known at compile time)
// past winogradUseful. CUVIL_WINOGRAD=0 in the compiler's environment
// turns it off (A/B timing).
func prepackWinograd(n *ir.Node, data []float32, ws []int) ([]float32, string, bool) {
	if os.Getenv("CUVIL_WINOGRAD") == "0" || len(ws) != 4 || ws[2] != 3 || ws[3] != 3 || n.AttrInt("group", 1) != 1 {
		return nil, "", false
	}
	for _, a := range []string{"strides", "dilations"} {
		for _, v := range n.AttrInts(a, nil) {
			if v != 1 {
				return nil, "", false
			}
		}
	}
	x := n.Inputs[0]
	if x == nil || !x.Type.Known() || x.Type.DType != ir.F32 || len(x.Type.Shape) != 4 {
		return nil, "", false
	}
	dims, ok := x.Type.Shape.Consts()
	if !ok || !winogradUseful(ws[0], ws[1], int(dims[2]), int(dims[3])) {
		return nil, "", false
	}
	u, ok := templates.PrepackConvWinograd(data, ws)
	return u, templates.ConvWinogradAttr, ok
}

// winogradUseful is the per-layer rule: Winograd where M output and C
// input channels over an H x W map make it win.
func winogradUseful(M, C, H, W int) bool {
	return M >= 64 && C >= 64 && H >= 14 && W >= 14
}
