//go:build linux && amd64 && !purego

package templates

import (
	"math/rand"
	"os"
	"runtime"
	"testing"
)

// TestLayerNormAB (CUVIL_LN_AB=1) times LayerNormalization and
// cuvil::SkipLayerNorm on bert's [128, 768] (and vit's [197, 768]) with
// the AVX2 rows (cpuHasAVX512 off: 8 lanes, Go tails) against the AVX-512
// rows, in CPU time of the calling thread, A and B alternating in one
// process (the machine is loaded).
func TestLayerNormAB(t *testing.T) {
	if os.Getenv("CUVIL_LN_AB") == "" || !cpuHasAVX512 {
		t.Skip("set CUVIL_LN_AB=1 to time (AVX-512 CPUs)")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer func() { cpuHasAVX512 = true }()
	r := rand.New(rand.NewSource(1))
	for _, rows := range []int{128, 197} {
		X, Skip, S, B := nnRand(r, rows, 768), nnRand(r, rows, 768), nnRand(r, 768), nnRand(r, 768)
		at := Attrs{"epsilon": float32(1e-5)}
		ln := nnNode("LayerNormalization", 17, at, 1, X, S, B)
		sk := nnNode("cuvil::SkipLayerNorm", 1, at, 2, X, Skip, S, B)
		for _, c := range []struct {
			name string
			f    func()
		}{{"LayerNormalization", func() { _ = LayerNormalization(ln) }}, {"SkipLayerNorm", func() { _ = Kernels["cuvil::SkipLayerNorm"](sk) }}} {
			const rounds = 200
			c.f()
			var ta, tb int64
			for i := 0; i < rounds; i++ {
				cpuHasAVX512 = false
				t0 := threadClockNanos()
				c.f()
				t1 := threadClockNanos()
				cpuHasAVX512 = true
				c.f()
				t2 := threadClockNanos()
				ta += t1 - t0
				tb += t2 - t1
			}
			t.Logf("%s [%d,768]: AVX2 %.1f us, AVX-512 %.1f us (thread CPU time, mean of %d alternating): %.2fx", c.name, rows,
				float64(ta)/rounds/1e3, float64(tb)/rounds/1e3, rounds, float64(ta)/float64(tb))
		}
	}
}

// TestPrepackedMatMulAB (CUVIL_MM_AB=1) times bert/vit's FFN MatMul
// [128,768] x [768,3072] with B packed on every run (as before the
// prepack pass took MatMul) against B prepacked at compile time
// (packed_b_shape), 1 thread, CPU time of the calling thread, alternating.
func TestPrepackedMatMulAB(t *testing.T) {
	if os.Getenv("CUVIL_MM_AB") == "" {
		t.Skip("set CUVIL_MM_AB=1 to time")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	r := rand.New(rand.NewSource(1))
	for _, sh := range [][3]int{{128, 768, 3072}, {128, 3072, 768}, {197, 768, 768}} {
		A, B := nnRand(r, sh[0], sh[1]), nnRand(r, sh[1], sh[2])
		pk, ok := PrepackGemmB(B.F32(), []int{sh[1], sh[2]}, false)
		if !ok {
			t.Fatal("PrepackGemmB refused")
		}
		P := &Tensor{DType: F32, Shape: []int{len(pk)}, Data: pk}
		plain := nnNode("MatMul", 13, nil, 1, A, B)
		packed := nnNode("MatMul", 13, Attrs{gemmPackedAttr: []int64{int64(sh[1]), int64(sh[2])}}, 1, A, P)
		if err := MatMul(plain); err != nil {
			t.Fatal(err)
		}
		if err := MatMul(packed); err != nil {
			t.Fatal(err)
		}
		nnCheck(t, "packed", packed.Out[0], plain.Out[0].Shape, nnF64(plain.Out[0]), 1e-4)
		const rounds = 30
		var ta, tb int64
		for i := 0; i < rounds; i++ {
			t0 := threadClockNanos()
			_ = MatMul(plain)
			t1 := threadClockNanos()
			_ = MatMul(packed)
			t2 := threadClockNanos()
			ta += t1 - t0
			tb += t2 - t1
		}
		t.Logf("MatMul %dx%d @ %dx%d: B packed each run %.3f ms, prepacked %.3f ms (thread CPU time, mean of %d alternating): %.2fx",
			sh[0], sh[1], sh[1], sh[2], float64(ta)/rounds/1e6, float64(tb)/rounds/1e6, rounds, float64(ta)/float64(tb))
	}
}
