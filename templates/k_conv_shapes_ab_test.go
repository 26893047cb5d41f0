package templates

import (
	"fmt"
	"math/rand"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestConvShapesAB times, with CUVIL_AB=1 (or a list of grouped, dw,
// convt, resize), the kernels issue 21 added
// against what ran before, on layer shapes of resnext50_32x4d,
// regnet_y_400mf, unet and deeplabv3: each pair alternates in one
// process, 1 thread, CPU time of the calling thread (threadClockNanos),
// median of the runs. Under load only the ratios mean something.
func TestConvShapesAB(t *testing.T) {
	if os.Getenv("CUVIL_AB") == "" {
		t.Skip("set CUVIL_AB=1")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	r := rand.New(rand.NewSource(1))
	const runs = 15
	sel := os.Getenv("CUVIL_AB")
	on := func(part string) bool { return sel == "1" || strings.Contains(sel, part) }
	ab := func(name string, a, b func()) {
		var ta, tb []float64
		a()
		b()
		for i := 0; i < runs; i++ {
			t0 := threadClockNanos()
			a()
			t1 := threadClockNanos()
			b()
			t2 := threadClockNanos()
			ta, tb = append(ta, float64(t1-t0)), append(tb, float64(t2-t1))
		}
		slices.Sort(ta)
		slices.Sort(tb)
		fmt.Printf("%-44s old %9.1f us  new %9.1f us  new/old %.2f\n", name, ta[runs/2]/1e3, tb[runs/2]/1e3, tb[runs/2]/ta[runs/2])
	}
	// Grouped 3x3 convolutions: NCHW Conv (im2col + GEMM per group,
	// weights prepacked) against the NHWC FusedConv (per-group pw tiles,
	// prepacked), Relu in both.
	for _, c := range []struct {
		name        string
		C, H, group int
		stride      int64
	}{
		{"resnext layer1 128x56x56 g32 (4/group)", 128, 56, 32, 1},
		{"resnext layer2 256x28x28 g32 (8/group)", 256, 28, 32, 1},
		{"resnext layer3 512x14x14 g32 (16/group)", 512, 14, 32, 1},
		{"resnext layer4 1024x7x7 g32 (32/group)", 1024, 7, 32, 1},
		{"regnet 48x56x56 s2 g6 (8/group)", 48, 56, 6, 2},
		{"regnet 208x14x14 g26 (8/group)", 208, 14, 26, 1},
		{"dw5x5 effnet 144x56x56 s2", 144, 56, 144, 2},
		{"dw5x5 effnet 480x14x14", 480, 14, 480, 1},
	} {
		X := nnRand(r, 1, c.C, c.H, c.H)
		k, p := 3, int64(1)
		if c.group == c.C {
			k, p = 5, 2
		}
		W := nnRand(r, c.C, c.C/c.group, k, k)
		B := nnRand(r, c.C)
		attrs := Attrs{"group": int64(c.group), "kernel_shape": []int64{int64(k), int64(k)}, "pads": []int64{p, p, p, p},
			"strides": []int64{c.stride, c.stride}, "activation": "Relu"}
		nchw := nnNode("cuvil::FusedConv", 1, attrs, 1, X, W, B)
		if pn, ok := PrepackConvWeights(W.F32(), W.Shape, c.group); ok {
			nchw = nnNode("cuvil::FusedConv", 1, attrs, 1, X, &Tensor{DType: F32, Shape: []int{len(pn)}, Data: pn}, B)
			nchw.Attrs[ConvPackedAttr] = ints64(W.Shape)
		}
		ph, _ := PrepackConvWeightsNHWC(W.F32(), W.Shape, c.group)
		ha := Attrs{"layout": "NHWC"}
		for k, v := range attrs {
			ha[k] = v
		}
		ha[ConvPackedAttr] = ints64(W.Shape)
		nhwc := nnNode("cuvil::FusedConv", 1, ha, 1, nhwcOf(X, F32), &Tensor{DType: F32, Shape: []int{len(ph)}, Data: ph}, B)
		if on("grouped") && c.group < c.C || on("dw") && c.group == c.C {
			ab(c.name, func() { must(t, FusedConv(nchw)) }, func() { must(t, FusedConv(nhwc)) })
		}
	}
	// ConvTranspose: the nested index walk (main before issue 21) against
	// convTranspose2D.
	for _, c := range []struct {
		name    string
		C, M, H int
		k, s, p int
	}{
		{"unet up 2x2 s2 512->256 at 28x28", 512, 256, 28, 2, 2, 0},
		{"unet up 2x2 s2 128->64 at 112x112", 128, 64, 112, 2, 2, 0},
		{"3x3 s2 p1 64->32 at 56x56", 64, 32, 56, 3, 2, 1},
		{"4x4 s2 p1 64->32 at 56x56", 64, 32, 56, 4, 2, 1},
	} {
		X, W, B := nnRand(r, 1, c.C, c.H, c.H), nnRand(r, c.C, c.M, c.k, c.k), nnRand(r, c.M)
		attrs := Attrs{"strides": []int64{int64(c.s), int64(c.s)}, "pads": []int64{int64(c.p), int64(c.p), int64(c.p), int64(c.p)}}
		n := nnNode("ConvTranspose", 11, attrs, 1, X, W, B)
		must(t, ConvTranspose(n))
		out := (c.H-1)*c.s - 2*c.p + c.k
		y := make([]float32, c.M*out*out)
		k2 := []int{c.k, c.k}
		win := nnWin{k: k2, s: []int{c.s, c.s}, d: []int{1, 1}, pb: []int{c.p, c.p}, pe: []int{c.p, c.p}, out: []int{out, out}}
		old := &Node{Name: "old", Op: "ConvTranspose"}
		if !on("convt") {
			continue
		}
		ab(c.name, func() {
			convTransposeOld(old, X.F32(), W.F32(), B, y, X.Shape, c.M, 1, win, make([]int, 2))
		}, func() { must(t, ConvTranspose(n)) })
	}
	// Resize: the generic per-element loop against miscResizeBand, NCHW
	// and NHWC.
	for _, c := range []struct {
		name  string
		shape []int
		sc    []float32
		mode  string
	}{
		{"resize linear x2 NCHW 1x64x56x56", []int{1, 64, 56, 56}, []float32{1, 1, 2, 2}, "linear"},
		{"resize linear x2 NHWC 1x56x56x64", []int{1, 56, 56, 64}, []float32{1, 2, 2, 1}, "linear"},
		{"resize nearest x2 NHWC 1x56x56x64", []int{1, 56, 56, 64}, []float32{1, 2, 2, 1}, "nearest"},
		{"resize linear x8 NCHW deeplab 1x21x65x65", []int{1, 21, 65, 65}, []float32{1, 1, 8, 8}, "linear"},
		{"resize cubic x2 NHWC 1x28x28x32", []int{1, 28, 28, 32}, []float32{1, 2, 2, 1}, "cubic"},
	} {
		X := nnRand(r, c.shape...)
		sc := &Tensor{DType: F32, Shape: []int{4}, Data: c.sc}
		n := &Node{Name: "rs", Op: "Resize", Version: 13, Attrs: Attrs{"mode": c.mode}, In: []*Tensor{X, nil, sc}, Out: []*Tensor{{}}}
		if !on("resize") {
			continue
		}
		ab(c.name, func() {
			miscResizeGeneric = true
			must(t, Resize(n))
			miscResizeGeneric = false
		}, func() { must(t, Resize(n)) })
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// convTransposeOld is convTransposeFloat before issue 21 (for the A/B).
func convTransposeOld[T nnFloat](n *Node, x, w []T, B *Tensor, y []T, xs []int, M, group int, win nnWin, idx []int) {
	N, C := xs[0], xs[1]
	in := xs[2:]
	nd := len(in)
	inSize, outSize, kSize := nnProd(in), nnProd(win.out), nnProd(win.k)
	Cg, Mg := C/group, M/group
	rows := Mg * kSize
	col := nnBuf[T](n, 0, rows*inSize)
	var bias []T
	if B != nil {
		bias = B.Data.([]T)
	}
	iidx := nnBuf[int](n, 1, nd)
	for b := 0; b < N; b++ {
		for g := 0; g < group; g++ {
			xg := x[(b*C+g*Cg)*inSize : (b*C+g*Cg+Cg)*inSize]
			yg := y[(b*M+g*Mg)*outSize : (b*M+g*Mg+Mg)*outSize]
			gemmT(true, false, rows, inSize, Cg, 1, w[g*Cg*rows:], rows, xg, inSize, 0, col, inSize)
			for m := 0; m < Mg; m++ {
				ym := yg[m*outSize : (m+1)*outSize]
				bv := T(0)
				if bias != nil {
					bv = bias[g*Mg+m]
				}
				for j := range ym {
					ym[j] = bv
				}
				clear(idx)
				for kf := 0; kf < kSize; kf++ {
					row := col[(m*kSize+kf)*inSize:][:inSize]
					clear(iidx)
					for _, v := range row {
						off, ok := 0, true
						for d := 0; d < nd; d++ {
							o := iidx[d]*win.s[d] - win.pb[d] + idx[d]*win.d[d]
							if o < 0 || o >= win.out[d] {
								ok = false
								break
							}
							off = off*win.out[d] + o
						}
						if ok {
							ym[off] += v
						}
						nnNext(iidx, in)
					}
					nnNext(idx, win.k)
				}
			}
		}
	}
}
