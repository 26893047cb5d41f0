package gen

import (
	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/templates"
)

// prepackWinograd returns the Winograd F(4x4, 3x3) form of a Conv or
// FusedConv's float32 weights data (ONNX shape ws), with the attribute to
// mark the node by, when the node is one the Winograd kernel
// (templates/k_winograd.go) computes: a 3x3 kernel, group 1, unit strides
// and dilations, a float32 input of known shape, and winogradUseful.
//
// Off by default: timed per layer (BenchmarkConvWinograd, resnet50's and
// squeezenet's 3x3 shapes, 1 and 2 threads) the kernel's scalar Go input
// and output transforms cost more than the 4x fewer multiplies save
// against the AVX-512 im2col+GEMM path on every layer. gen.Options.Winograd
// (`cuvil compile -winograd`) turns it on for layers past winogradUseful
// (A/B timing, accuracy checks) until the transforms are vectorised.
func prepackWinograd(n *ir.Node, data []float32, ws []int) ([]float32, string, bool) {
	if len(ws) != 4 || ws[2] != 3 || ws[3] != 3 || n.AttrInt("group", 1) != 1 {
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
