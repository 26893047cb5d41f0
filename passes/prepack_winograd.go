package passes

import (
	"fmt"

	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/templates"
)

// WinogradMode chooses the 3x3 stride-1 convolutions whose weights the
// prepack pass stores Winograd-transformed, so they run Winograd
// (templates/k_conv_winograd.go, k_conv_winograd_nhwc.go) instead of
// im2col+GEMM (Options.Winograd, the commands' -winograd flag).
type WinogradMode int

const (
	WinogradAuto WinogradMode = iota // where the speed and accuracy rules below say so (default)
	WinogradOn                       // every convolution the kernel computes (NHWC tiles still by the rules)
	WinogradOff                      // none
)

// ParseWinograd reads a WinogradMode: auto (or ""), on (true) or off
// (false).
func ParseWinograd(s string) (WinogradMode, error) {
	switch s {
	case "", "auto":
		return WinogradAuto, nil
	case "on", "true":
		return WinogradOn, nil
	case "off", "false":
		return WinogradOff, nil
	}
	return 0, fmt.Errorf("winograd mode %q: want auto, on or off", s)
}

func (m WinogradMode) String() string {
	switch m {
	case WinogradOn:
		return "on"
	case WinogradOff:
		return "off"
	}
	return "auto"
}

// prepackWinograd returns the Winograd form of a Conv or FusedConv's
// float32 weights data (ONNX shape ws; F(4x4, 3x3), or F(2x2, 3x3) for
// some NHWC ones) when the node is one the Winograd kernel computes (a
// 3x3 kernel, group 1, unit strides and dilations, a float32 input of
// known shape) and mode picks it.
func prepackWinograd(n *ir.Node, data []float32, ws []int, mode WinogradMode) ([]float32, bool) {
	if len(ws) == 5 {
		return prepackWinograd3D(n, data, ws, mode)
	}
	if mode == WinogradOff || len(ws) != 4 || ws[2] != 3 || ws[3] != 3 || n.AttrInt("group", 1) != 1 {
		return nil, false
	}
	for _, a := range []string{"strides", "dilations"} {
		for _, v := range n.AttrInts(a, nil) {
			if v != 1 {
				return nil, false
			}
		}
	}
	x := n.Inputs[0]
	if x == nil || !x.Type.Known() || x.Type.DType != ir.F32 || len(x.Type.Shape) != 4 {
		return nil, false
	}
	dims, ok := x.Type.Shape.Consts()
	if !ok {
		return nil, false
	}
	if n.AttrString("layout", "NCHW") == "NHWC" {
		// The layout pass's channels-last FusedConv (templates/k_conv_winograd_nhwc.go).
		if mode == WinogradAuto && !winogradUsefulNHWC(ws[0], ws[1], int(dims[1]), int(dims[2])) {
			return nil, false
		}
		tile := winogradTileNHWC(ws[0], ws[1], int(dims[1]), int(dims[2]))
		if tile == 4 && !winogradF4AccurateNHWC(ws[1], int(dims[1]), int(dims[2])) {
			tile = 2
		}
		u, ok := templates.PrepackConvWinogradNHWC(data, ws, tile)
		return u, ok
	}
	if mode == WinogradAuto && (!winogradUseful(ws[0], ws[1], int(dims[2]), int(dims[3])) || !winogradF4Accurate(ws[1], int(dims[2]), int(dims[3]))) {
		return nil, false
	}
	u, ok := templates.PrepackConvWinograd(data, ws)
	return u, ok
}

// prepackWinograd3D is prepackWinograd for a 3-D convolution run NDHWC
// (FusedConv layout=NHWC on X [N,T,H,W,C], templates/k_conv_nhwc_3d.go):
// kernel [kT,3,3], group 1, unit strides and dilations in H and W (any in
// time). Its GEMMs' rows are the tiles of all OT output frames and their K
// is kT*C, so the speed rules (winogradUsefulNHWC, winogradTileNHWC) see
// the frames stacked, an (OT*H) x W map with kT*C input channels; the
// accuracy rule (winogradF4AccurateNHWC) sees one H x W frame and the kT*C
// products each point's GEMM sums.
func prepackWinograd3D(n *ir.Node, data []float32, ws []int, mode WinogradMode) ([]float32, bool) {
	if mode == WinogradOff || ws[3] != 3 || ws[4] != 3 || n.AttrInt("group", 1) != 1 || n.AttrString("layout", "NCHW") != "NHWC" {
		return nil, false
	}
	for _, a := range []string{"strides", "dilations"} {
		if v := n.AttrInts(a, nil); v != nil && (len(v) != 3 || v[1] != 1 || v[2] != 1) {
			return nil, false
		}
	}
	x, y := n.Inputs[0], n.Outputs[0]
	if x == nil || y == nil || !is5DF32(x) || !is5DF32(y) {
		return nil, false
	}
	xs, _ := x.Type.Shape.Consts()
	ys, _ := y.Type.Shape.Consts()
	M, K, H, W, OT := ws[0], ws[2]*ws[1], int(xs[2]), int(xs[3]), int(ys[1])
	if mode == WinogradAuto && !winogradUsefulNHWC(M, K, OT*H, W) {
		return nil, false
	}
	tile := winogradTileNHWC(M, K, OT*H, W)
	if tile == 4 && !winogradF4AccurateNHWC(K, H, W) {
		tile = 2
	}
	return templates.PrepackConvWinogradNHWC(data, ws, tile)
}

// winogradUsefulNHWC is winogradUseful for NHWC convolutions
// (FusedConv layout=NHWC, templates/k_conv_winograd_nhwc.go: channels in the vector
// lanes, the GEMMs [tiles, C] x U[xi] read V in place), M output and C
// input channels over an H x W input map.
//
// Calibrated on the shared 2-vCPU AVX-512 Xeon with BenchmarkConvWinogradNHWC
// (bias, Relu, pads 1, batch 1; Winograd time / prepacked NHWC im2col+GEMM
// time, 1 thread / 2 threads, machine loaded by other sessions, so +-15%):
//
//	C=M=64 56x56 0.38/0.36, 128 28x28 0.42/0.36, 256 14x14 0.52/0.46,
//	512 7x7 0.84/0.81, 256 7x7 0.81/0.65, 128 14x14 0.50/0.61, 64 7x7 0.17/0.62,
//	32 28x28 0.28/0.76; C=16 M=64 55x55 0.48/0.47, C=32 M=128 27x27 0.39/0.54,
//	C=48 M=192 13x13 0.50/0.59, C=64 M=256 13x13 0.49/0.60; C=8 M=64 56x56
//	0.36/0.81, C=16 M=16 56x56 0.37/0.47, C=64 M=8 28x28 0.28/0.35,
//	C=M=8 14x14 0.35/0.29; C=3 M=32 56x56 0.88/1.32.
//
// Those are F(4x4) with hot weights. Inside a model the weights are cold
// and U (4x the 3x3 weights for F(4x4)) is streamed from memory, so small
// maps with many channels take F(2x2) (winogradTileNHWC). resnet50 1
// thread, per-node minima over 25 runs, Winograd / GEMM: 64x56 0.41,
// 128x28 0.45 (after balancing the tile blocks), 256x14 0.60 (F(2x2)),
// 512x7 0.81 (F(2x2); F(4x4) 1.05: 37.7 MB of U for 4 tiles). Unlike
// NCHW, small maps win: the GEMM rows are tiles (any count), the columns
// the output channels, so no panel is left mostly empty. Only very few
// input channels lose (the transforms outweigh a GEMM with K = C).
//
// Except small maps with large weights: since the GEMM's tiles prefetch
// the weights (templates/k_conv_nhwc_pw.go), im2col+GEMM streams the 3x3
// weights under its arithmetic, while F(2x2)'s U is 16/9 of them and its
// arithmetic too little to hide it. resnet50's 512x7 (U 16.8 MB), 1
// thread, per-node medians over 30 runs: Winograd 2.10-2.29 ms, GEMM
// 1.67-1.76 ms (256x14 still gains: Winograd 0.90 ms, GEMM 1.51-1.57).
func winogradUsefulNHWC(M, C, H, W int) bool {
	return C >= 8 && (H*W > 8*8 || C*M < 128*1024)
}

// winogradUseful is the per-layer rule of WinogradAuto: Winograd where M
// output and C input channels over an H x W input map make it win.
//
// Calibrated on the shared 2-vCPU AVX-512 Xeon: FusedConv (bias, Relu,
// pads 1, batch 1) with Winograd weights against prepacked im2col + the
// AVX-512 GEMM, each timed 60 times alternately, the minimum taken (the
// machine was loaded; docs/performance.md has the table). Winograd/GEMM,
// 1 thread / 2 threads:
//
//	C=M=64 56x56 0.43/0.45, 128 28x28 0.46/0.45, 256 14x14 0.57/0.58,
//	128 14x14 0.62/0.55, 64 14x14 0.63/0.57, 32 14x14 0.66/0.55,
//	C=M=16 56x56 0.47/0.34; C=16 M=64 55x55 0.88/0.86, C=32 M=128 27x27
//	0.81/0.77, C=48 M=192 13x13 1.02/0.88, C=64 M=256 13x13 0.94/0.85;
//	C=M=512 7x7 2.38/1.93, 256 7x7 1.66/1.09, 64 7x7 1.28/0.70;
//	C=8 M=64 56x56 1.39/1.05.
//
// Small maps lose: their few tiles fill a fraction of a 16-column GEMM
// panel and the transformed weights (4x the 3x3 ones) are streamed for
// few tiles. Few input channels lose: the transforms outweigh GEMMs with
// K = C. Hence at least 14x14 and 16 channels in and out.
func winogradUseful(M, C, H, W int) bool {
	return M >= 16 && C >= 16 && H >= 14 && W >= 14
}

// winogradF4AccurateNHWC is the accuracy rule for the NHWC F(4x4, 3x3)
// with C input channels on an H x W input map: maps up to 32x32, or up to
// 64x64 with at most 16 input channels; elsewhere F(2x2, 3x3).
//
// F(4x4)'s transforms (B^T entries up to 5, A^T up to 8) amplify the
// rounding of each input tile by roughly their condition number, an
// absolute error proportional to the inputs' magnitude, while F(2x2)'s
// (entries 0 and +-1) barely do; the GEMM over the transformed tiles adds
// C such errors per point. It shows on large maps, whose neighbouring
// activations are nearly equal (the transformed tiles cancel, so outputs
// are small next to the error). Calibrated against float64 ground truth
// (scripts/truth64.py: the models run in double in PyTorch; the exporter's
// float32 reference is itself off by more than rtol 1e-3 on inception_v3,
// 2 of 1000 logits), at rtol 1e-3, atol 1e-4: with F(4x4) up to 64x64,
// inception_v3's 35x35 layers (64 and 96 channels in) put 1 of 1000
// logits off and yolov5n_like's 32-channel 40x40 ones 1 of 535500; with
// this rule (or no Winograd) both pass. Squeezenet's 16->64 55x55 layers
// keep F(4x4) (few channels, little accumulated error). An earlier rule
// (F(4x4) to 64x64 for any C) was calibrated against the float32
// reference, which could not tell the engine's error from its own.
func winogradF4AccurateNHWC(C, H, W int) bool {
	return H*W <= 32*32 || H*W <= 64*64 && C <= 16
}

// winogradF4Accurate is the accuracy rule for the NCHW F(4x4, 3x3) (which
// has no F(2x2): elsewhere im2col+GEMM; -winograd=on still forces it)
// with C input channels on an H x W map: maps up to 32x32, or up to 64x64
// from 64 input channels. Stricter than winogradF4AccurateNHWC because it
// measured so: on yolov5n_like, F(4x4) on its three NCHW 32->32 40x40
// layers puts 1 of 535500 outputs outside rtol 1e-3, atol 1e-4 (max rel
// 1.4e-3), with them on GEMM and its 64->64 20x20 layers at F(4x4) all
// pass (max rel 8.7e-4). (Whether the NCHW transforms round worse than the
// NHWC ones, or yolov5n's SiLU maps are simply harder, is not measured.)
func winogradF4Accurate(C, H, W int) bool {
	return H*W <= 32*32 || H*W <= 64*64 && C >= 64
}

// winogradTileNHWC is the output tile of the NHWC Winograd for M output
// and C input channels over an H x W map: 4 (F(4x4, 3x3): 36 points, U is
// 4x the 3x3 weights) or 2 (F(2x2, 3x3): 16 points, U 16/9 of them, but
// 2.25x the multiplies per output). Inside a model U is streamed cold, so
// a point costs its GEMM (2*T*C*M flops for T tiles, at ~150 GFLOP/s) plus
// its U (4*C*M bytes, at ~10 GB/s): per C*M, T/75 + 0.4 ns. F(4x4) when
// 36*(T4/75 + 0.4) <= 16*(T2/75 + 0.4), i.e. on maps of about 21x21 and
// up.
//
// Measured in resnet50 and squeezenet (1 thread, per-node minima over 25
// runs, F(2x2) time / F(4x4) time): 64x56 1.45, 128x28 1.31, 32->128 27x27
// 1.23; 256x14 0.86, 48->192 and 64->256 13x13 0.84, 512x7 ~0.8 (F(2x2)
// 0.81 of the GEMM path there, F(4x4) 1.05).
func winogradTileNHWC(M, C, H, W int) int {
	t4 := ((H + 3) / 4) * ((W + 3) / 4)
	t2 := ((H + 1) / 2) * ((W + 1) / 2)
	if 36*(t4+30) <= 16*(t2+30) {
		return 4
	}
	return 2
}
