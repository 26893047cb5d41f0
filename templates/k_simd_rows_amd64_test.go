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

// TestExpSumAVX512 wants expSumAVX2's bits for every y[i] and its sum
// within rounding, on softmax-like inputs (x - max <= 0) and on the
// clamped ends.
func TestExpSumAVX512(t *testing.T) {
	if !cpuHasAVX512 {
		t.Skip("no AVX-512")
	}
	for _, n := range []int{64, 128, 320} {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(-30 * math.Abs(math.Sin(float64(i)*1.7)))
		}
		x[0], x[n-1], x[n/2] = -100, 0, 95
		y, y2 := make([]float32, n), make([]float32, n)
		s := expSumAVX512(&y[0], &x[0], n, 0.25)
		s2 := expSumAVX2(&y2[0], &x[0], n, 0.25)
		for i := range y {
			if math.Float32bits(y[i]) != math.Float32bits(y2[i]) {
				t.Fatalf("n=%d exp(%v) = %v with AVX-512, %v with AVX2", n, x[i]-0.25, y[i], y2[i])
			}
		}
		if d := math.Abs(float64(s - s2)); d > 1e-6*math.Abs(float64(s2)) {
			t.Fatalf("n=%d sum %v with AVX-512, %v with AVX2", n, s, s2)
		}
	}
}

// TestGeluBias32 wants geluBias32 (geluBiasAVX512 on the multiple of 32,
// axpy and gelu32 on the rest) to give axpy32 then gelu32's bits (the
// epilogue's two passes it replaces), on awkward lengths.
func TestGeluBias32(t *testing.T) {
	for _, n := range []int{1, 7, 31, 32, 33, 63, 64, 95, 96, 129, 1000} {
		x, b := make([]float32, n), make([]float32, n+5)
		for i := range x {
			x[i] = float32(7 * math.Sin(float64(i)*0.37))
		}
		for i := range b {
			b[i] = float32(0.5 * math.Cos(float64(i)*1.3))
		}
		y := append([]float32(nil), x...)
		geluBias32(y, b)
		want := append([]float32(nil), x...)
		axpy32(want, b, 1)
		if cpuHasAVX2FMA {
			nv := n &^ 7
			if nv > 0 {
				geluAVX2(&want[0], nv)
			}
			geluGo(want[nv:])
		} else {
			gelu32(want)
		}
		for i := range y {
			if math.Float32bits(y[i]) != math.Float32bits(want[i]) {
				t.Fatalf("n=%d gelu(%v + %v) = %v, want %v", n, x[i], b[i], y[i], want[i])
			}
		}
	}
}

// TestPackBT16 checks packBT16 (the AVX-512 transpose on multiples of 16
// k steps or the AVX2 one on multiples of 8, the Go twin on the rest)
// against the definition, on awkward kc and row strides.
func TestPackBT16(t *testing.T) {
	for _, kc := range []int{1, 7, 8, 9, 15, 16, 17, 24, 64, 100, 256} {
		for _, ldb := range []int{kc, kc + 3, 768} {
			b := make([]float32, 15*ldb+kc)
			for i := range b {
				b[i] = float32(i)*0.5 - 3
			}
			panel := make([]float32, 16*kc+7)
			for i := range panel {
				panel[i] = -99
			}
			packBT16(kc, b, ldb, panel)
			for p := 0; p < kc; p++ {
				for j := 0; j < 16; j++ {
					if got, want := panel[p*16+j], b[j*ldb+p]; got != want {
						t.Fatalf("kc=%d ldb=%d: panel[%d*16+%d] = %v, want %v", kc, ldb, p, j, got, want)
					}
				}
			}
			for i, v := range panel[16*kc:] {
				if v != -99 {
					t.Fatalf("kc=%d ldb=%d: wrote past the panel at %d", kc, ldb, 16*kc+i)
				}
			}
		}
	}
}

// TestGeluAVX2Steps wants geluAVX2's staged eight-vector and three-vector
// steps to give its one-vector loop's bits (a row's elements take either
// by position), and geluBiasAVX2 those of axpyAVX2 then geluAVX2, on
// lengths that leave every remainder of 64 elements, over [-12, 12) and
// the special values.
func TestGeluAVX2Steps(t *testing.T) {
	if !cpuHasAVX2FMA {
		t.Skip("no AVX2/FMA")
	}
	var x []float32
	for v := -12.0; v < 12; v += 0.0037 {
		x = append(x, float32(v))
	}
	x = append(x, 0, float32(math.Copysign(0, -1)), 1e-30, -1e-30, 50, -50, float32(math.Inf(1)), float32(math.NaN()))
	b := make([]float32, len(x)+48)
	for i := range b {
		b[i] = float32(0.5 * math.Cos(float64(i)*1.3))
	}
	same := func(a, b float32) bool {
		return math.Float32bits(a) == math.Float32bits(b) || a != a && b != b
	}
	for extra := 0; extra < 64; extra += 8 {
		n := (len(x)/64-1)*64 + extra
		y := append([]float32(nil), x[:n]...)
		geluAVX2(&y[0], n)
		yb := append([]float32(nil), x[:n]...)
		geluBiasAVX2(&yb[0], &b[0], n)
		for i := 0; i < n; i += 8 {
			w := append([]float32(nil), x[i:i+8]...)
			geluAVX2(&w[0], 8)
			wb := append([]float32(nil), x[i:i+8]...)
			axpyAVX2(&wb[0], &b[i], 8, 1)
			geluAVX2(&wb[0], 8)
			for j := range w {
				if !same(y[i+j], w[j]) {
					t.Fatalf("n=%d gelu(%v) = %v in a 3-vector step, %v alone", n, x[i+j], y[i+j], w[j])
				}
				if !same(yb[i+j], wb[j]) {
					t.Fatalf("n=%d gelu(%v + %v) = %v fused, %v by axpy then gelu", n, x[i+j], b[i+j], yb[i+j], wb[j])
				}
			}
		}
		for i, v := range x[:n] {
			if math.IsInf(float64(v), 0) || v != v {
				continue
			}
			got, want := float64(y[i]), vecGeluRef(float64(v))
			if got != want && !(math.Abs(got-want) <= vecGeluTol(float64(v))*math.Abs(want)+1e-30) {
				t.Fatalf("gelu(%v) = %v, want %v", v, got, want)
			}
		}
	}
}

// TestExpSumAVX2Steps wants expSumAVX2's three-vector steps to give the
// one-vector loop's bits for every y[i], and the sum of the y[i] within
// rounding of a float64 sum, on lengths that leave 0, 1 and 2 single
// vectors, with softmax-like inputs and the clamped ends.
func TestExpSumAVX2Steps(t *testing.T) {
	if !cpuHasAVX2FMA {
		t.Skip("no AVX2/FMA")
	}
	for _, n := range []int{8, 16, 24, 32, 40, 48, 128, 392} {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(-30 * math.Abs(math.Sin(float64(i)*1.7)))
		}
		x[0], x[n-1], x[n/2] = -100, 0, 95
		y, w := make([]float32, n), make([]float32, n)
		s := expSumAVX2(&y[0], &x[0], n, 0.25)
		var s64 float64
		for i := 0; i < n; i += 8 {
			expSumAVX2(&w[i], &x[i], 8, 0.25)
		}
		for i := range y {
			if math.Float32bits(y[i]) != math.Float32bits(w[i]) {
				t.Fatalf("n=%d exp(%v) = %v in a 3-vector step, %v alone", n, x[i]-0.25, y[i], w[i])
			}
			if want := math.Exp(float64(x[i] - 0.25)); x[i] > -80 && x[i] < 88 && math.Abs(float64(y[i])-want) > 3e-7*want {
				t.Fatalf("n=%d exp(%v) = %v, want %v", n, x[i]-0.25, y[i], want)
			}
			s64 += float64(y[i])
		}
		if d := math.Abs(float64(s) - s64); d > 1e-6*s64 {
			t.Fatalf("n=%d sum %v, want %v", n, s, s64)
		}
	}
}
