//go:build linux

package templates

import (
	"math/rand"
	"os"
	"runtime"
	"testing"
	"time"
)

// TestUnaryAB (CUVIL_EW_AB=1) times on bert/vit's FFN activation shape
// [128, 3072], A and B alternating in one process (the machine is
// loaded):
//
//	rows: LeakyRelu and per-channel PRelu ([1,64,56,56], slope [64,1,1])
//	      through the float64 function / broadcast walk (before) vs the
//	      AVX-512 rows (after); float32 Mul/Add through the walk with a
//	      call per element (before) vs the typed loops; CPU time of the
//	      calling thread;
//	threads: unfused Sigmoid and Erf at 1 thread (before: every unfused
//	      op was serial) vs a 2-thread pool, wall and process CPU time.
func TestUnaryAB(t *testing.T) {
	if os.Getenv("CUVIL_EW_AB") == "" {
		t.Skip("set CUVIL_EW_AB=1 to time")
	}
	r := rand.New(rand.NewSource(1))
	X := nnRand(r, 128, 3072)
	lr := nnNode("LeakyRelu", 16, Attrs{"alpha": float32(0.1)}, 1, X)
	P := nnRand(r, 1, 64, 56, 56)
	S := nnRand(r, 64, 1, 1)
	pr := nnNode("PRelu", 16, nil, 1, P, S)
	prOld := func() {
		out := pr.Out[0]
		out.Resize(F32, P.Shape...)
		var w ewWalk
		w.initBroadcast(P.Shape, P.Shape, []int{1, 64, 1, 1})
		ewBinData(&w, F32, out.Data, P.Data, S.Data, &ewOpPRelu)
	}
	mulN := nnNode("Mul", 14, nil, 1, P, nnRand(r, 1, 64, 1, 1))
	mulL := nnNode("Mul", 14, nil, 1, nnRand(r, 1, 56, 56, 64), nnRand(r, 64))
	addN := nnNode("Add", 14, nil, 1, nnRand(r, 128, 768), nnRand(r, 128, 768))
	func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		for _, c := range []struct {
			name string
			a, b func()
		}{
			{"LeakyRelu [128,3072]", func() { _ = ewUnary(lr, &ewOpLeakyRelu, float64(float32(0.1)), 0) }, func() { _ = LeakyRelu(lr) }},
			{"PRelu [1,64,56,56] per channel", prOld, func() { _ = PRelu(pr) }},
			{"Mul [1,64,56,56] x [1,64,1,1] (SE gate)", func() { _ = ewBinary(mulN, &ewOpMul) }, func() { _ = Mul(mulN) }},
			{"Mul [1,56,56,64] x [64] (channel-last)", func() { _ = ewBinary(mulL, &ewOpMul) }, func() { _ = Mul(mulL) }},
			{"Add [128,768] + [128,768] (residual)", func() { _ = ewBinary(addN, &ewOpAdd) }, func() { _ = Add(addN) }},
		} {
			const rounds = 40
			c.a()
			c.b()
			var ta, tb int64
			for i := 0; i < rounds; i++ {
				t0 := threadClockNanos()
				c.a()
				t1 := threadClockNanos()
				c.b()
				t2 := threadClockNanos()
				ta += t1 - t0
				tb += t2 - t1
			}
			t.Logf("%s: before %.3f ms, after %.3f ms (thread CPU time, mean of %d alternating): %.2fx", c.name,
				float64(ta)/rounds/1e6, float64(tb)/rounds/1e6, rounds, float64(ta)/float64(tb))
		}
	}()
	p1, p2 := NewWorkPool(WithThreads(1)), NewWorkPool(WithThreads(2))
	defer p1.Close()
	defer p2.Close()
	for _, op := range []struct {
		name    string
		version int
	}{{"Sigmoid", 13}, {"Erf", 13}} {
		n1, n2 := nnNode(op.name, op.version, nil, 1, X), nnNode(op.name, op.version, nil, 1, X)
		n1.Pool, n2.Pool = p1, p2
		k := Kernels[op.name]
		_, _ = k(n1), k(n2)
		const rounds = 40
		var w1, w2, c1, c2 int64
		for i := 0; i < rounds; i++ {
			t0, u0 := time.Now(), procCPUNanos()
			_ = k(n1)
			t1, u1 := time.Now(), procCPUNanos()
			_ = k(n2)
			t2, u2 := time.Now(), procCPUNanos()
			w1 += int64(t1.Sub(t0))
			w2 += int64(t2.Sub(t1))
			c1 += u1 - u0
			c2 += u2 - u1
		}
		t.Logf("%s [128,3072]: 1 thread %.3f ms wall %.3f ms CPU; 2 threads %.3f ms wall %.3f ms CPU (mean of %d alternating): wall %.2fx",
			op.name, float64(w1)/rounds/1e6, float64(c1)/rounds/1e6, float64(w2)/rounds/1e6, float64(c2)/rounds/1e6, rounds, float64(w1)/float64(w2))
	}
}
