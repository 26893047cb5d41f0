//go:build amd64 && !purego

package templates

import "testing"

// actAVX2Rows calls the AVX2+FMA kernels (act256.go) directly.
var actAVX2Rows = actRows{"AVX2",
	func(y []float32) { actRun(y, sigmoidAVX2) }, func(y []float32) { actRun(y, siluAVX2) },
	func(y []float32) { actRun(y, hardSwishAVX2) }, func(y []float32) { actRun(y, expAVX2) },
	func(y []float32) { actRun(y, tanhAVX2) }, func(y []float32) { actRun(y, geluTanhAVX2) },
	func(y []float32) { actRun(y, mishAVX2) },
	func(y []float32, a float32) {
		if len(y) > 0 {
			eluAVX2(&y[0], len(y), a)
		}
	},
	func(y []float32, a float32) {
		if len(y) > 0 {
			leakyReluAVX2(&y[0], len(y), a)
		}
	},
	func(y []float32, a, b float32) {
		if len(y) > 0 {
			hardSigmoidAVX2(&y[0], len(y), a, b)
		}
	},
	func(y, s []float32) {
		if len(y) > 0 {
			s = s[:len(y)]
			preluAVX2(&y[0], &s[0], len(y))
		}
	},
}

// actAVX512Rows calls the AVX-512 kernels (act512.go, act512b.go) directly.
var actAVX512Rows = actRows{"AVX512",
	func(y []float32) { actRun(y, sigmoidAVX512) }, func(y []float32) { actRun(y, siluAVX512) },
	func(y []float32) { actRun(y, hardSwishAVX512) }, func(y []float32) { actRun(y, expAVX512) },
	func(y []float32) { actRun(y, tanhAVX512) }, func(y []float32) { actRun(y, geluTanhAVX512) },
	func(y []float32) { actRun(y, mishAVX512) },
	func(y []float32, a float32) {
		if len(y) > 0 {
			eluAVX512(&y[0], len(y), a)
		}
	},
	func(y []float32, a float32) {
		if len(y) > 0 {
			leakyReluAVX512(&y[0], len(y), a)
		}
	},
	func(y []float32, a, b float32) {
		if len(y) > 0 {
			hardSigmoidAVX512(&y[0], len(y), a, b)
		}
	},
	func(y, s []float32) {
		if len(y) > 0 {
			s = s[:len(y)]
			preluAVX512(&y[0], &s[0], len(y))
		}
	},
}

func actRun(y []float32, k func(*float32, int)) {
	if len(y) > 0 {
		k(&y[0], len(y))
	}
}

// actAsmImpls: the AVX2 kernels where the CPU has AVX2 and FMA, the
// AVX-512 ones where it has AVX-512, each whatever the dispatch picks.
func actAsmImpls() []actRows {
	var r []actRows
	if cpuHasAVX2FMA {
		r = append(r, actAVX2Rows)
	}
	if cpuHasAVX512 {
		r = append(r, actAVX512Rows)
	}
	return r
}

// TestActivationDispatchAMD64 fails if a CPU with AVX2 and FMA but no
// AVX-512 would take the Go twins, or this CPU not its best family.
func TestActivationDispatchAMD64(t *testing.T) {
	for _, c := range []struct {
		avx512, avx2 bool
		want         int
	}{{false, true, actAVX2}, {true, true, actAVX512}, {false, false, actGo}} {
		if got := actLevelFor(c.avx512, c.avx2); got != c.want {
			t.Errorf("actLevelFor(avx512 %v, avx2+fma %v) = %d, want %d", c.avx512, c.avx2, got, c.want)
		}
	}
	if actLevel != actLevelFor(cpuHasAVX512, cpuHasAVX2FMA) {
		t.Errorf("actLevel %d, CPU avx512 %v avx2+fma %v", actLevel, cpuHasAVX512, cpuHasAVX2FMA)
	}
	if cpuHasAVX2FMA && actLevel == actGo {
		t.Errorf("the activation rows take the Go twins although the CPU has AVX2 and FMA")
	}
	t.Logf("avx512 %v, avx2+fma %v: level %d", cpuHasAVX512, cpuHasAVX2FMA, actLevel)
}
