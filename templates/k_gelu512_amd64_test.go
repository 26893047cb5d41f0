//go:build amd64 && !purego

package templates

import (
	"math"
	"testing"
)

// TestGeluAVX512 sweeps geluAVX512 over [-12, 12) against the float64
// GELU with TestVecExpGelu's tolerance, and at the special values, and
// wants geluAVX2's bits (a row split over threads mixes the two).
func TestGeluAVX512(t *testing.T) {
	if !cpuHasAVX512 {
		t.Skip("no AVX-512")
	}
	var x []float32
	for v := -12.0; v < 12; v += 0.001 {
		x = append(x, float32(v))
	}
	x = append(x, 0, float32(math.Copysign(0, -1)), 1e-30, -1e-30, 50, -50, float32(math.Inf(1)), float32(math.Inf(-1)))
	for len(x)%32 != 0 {
		x = append(x, 0.5)
	}
	y := append([]float32(nil), x...)
	geluAVX512(&y[0], len(y))
	y2 := append([]float32(nil), x...)
	geluAVX2(&y2[0], len(y2))
	for i := range y {
		if math.Float32bits(y[i]) != math.Float32bits(y2[i]) {
			t.Fatalf("gelu(%v) = %v with AVX-512, %v with AVX2", x[i], y[i], y2[i])
		}
	}
	for i, v := range x {
		got, want := float64(y[i]), vecGeluRef(float64(v))
		switch {
		case math.IsInf(float64(v), 1):
			want = math.Inf(1)
		case math.IsInf(float64(v), -1):
			// -Inf * erfc(Inf) is NaN, as in the twin and geluAVX2.
			if !math.IsNaN(got) || !math.IsNaN(float64(vecGeluGo(v))) {
				t.Fatalf("gelu(-Inf) = %v, want NaN (the twin has %v)", got, vecGeluGo(v))
			}
			continue
		}
		if got != want && !(math.Abs(got-want) <= vecGeluTol(float64(v))*math.Abs(want)+1e-30) {
			t.Fatalf("gelu(%v) = %v, want %v", v, got, want)
		}
	}
}
