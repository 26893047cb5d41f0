//go:build linux

package templates

import (
	"math/rand"
	"os"
	"runtime"
	"testing"
)

// TestActivationCPUTimeAB (CUVIL_ACT_AB=1) times, in CPU time of the
// calling thread with A and B alternating in one process (the machine is
// loaded), efficientnet_b0's SiLU as it ran before the fuse-activation
// pass and the float32 rows (an interpreted Sigmoid+Mul program, each
// chunk's Sigmoid in float64) against what runs now:
//
//	group: that program on [1,96,112,112] vs cuvil::Swish (silu32)
//	conv:  an NHWC 1x1 FusedConv [1,56,56,24] -> 144 channels, then the
//	       old group, vs the FusedConv with its SiLU epilogue
func TestActivationCPUTimeAB(t *testing.T) {
	if os.Getenv("CUVIL_ACT_AB") == "" {
		t.Skip("set CUVIL_ACT_AB=1 to time")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	r := rand.New(rand.NewSource(1))
	oldSiLU := func(y, x []float32) {
		// The interpreter before: per 512-element chunk, Sigmoid through
		// ewMapFloat's float64 function, then Mul.
		var tmp [ewChunk]float32
		for c0 := 0; c0 < len(x); c0 += ewChunk {
			c1 := min(c0+ewChunk, len(x))
			s := tmp[:c1-c0]
			copy(s, x[c0:c1])
			ewMapFloat(F32, s, s, ewOpSigmoid.f, 0, 0)
			for i := range s {
				y[c0+i] = x[c0+i] * s[i]
			}
		}
	}
	X := nnRand(r, 1, 96, 112, 112)
	Y := make([]float32, len(X.F32()))
	groupOld := func() { oldSiLU(Y, X.F32()) }
	sw := nnNode("Swish", 24, nil, 1, X)
	groupNew := func() { _ = Swish(sw) }

	cx, cw, cb := nnRand(r, 1, 56, 56, 24), nnRand(r, 144, 24, 1, 1), nnRand(r, 144)
	plain := nnNode("cuvil::FusedConv", 1, Attrs{"layout": "NHWC"}, 1, cx, cw, cb)
	fused := nnNode("cuvil::FusedConv", 1, Attrs{"layout": "NHWC", "activation": "Swish", "activation_params": []float32{1}}, 1, cx, cw, cb)
	var Z []float32
	convOld := func() {
		_ = FusedConv(plain)
		if Z == nil {
			Z = make([]float32, len(plain.Out[0].F32()))
		}
		oldSiLU(Z, plain.Out[0].F32())
	}
	convNew := func() { _ = FusedConv(fused) }
	for _, c := range []struct {
		name   string
		a, b   func()
		rounds int
	}{{"SiLU group [1,96,112,112]", groupOld, groupNew, 30}, {"conv1x1 56x56 24->144 + SiLU", convOld, convNew, 60}} {
		c.a()
		c.b()
		var ta, tb int64
		for i := 0; i < c.rounds; i++ {
			t0 := threadClockNanos()
			c.a()
			t1 := threadClockNanos()
			c.b()
			t2 := threadClockNanos()
			ta += t1 - t0
			tb += t2 - t1
		}
		t.Logf("%s: before %.3f ms, after %.3f ms (CPU time, mean of %d alternating): %.2fx", c.name,
			float64(ta)/float64(c.rounds)/1e6, float64(tb)/float64(c.rounds)/1e6, c.rounds, float64(ta)/float64(tb))
	}
}
