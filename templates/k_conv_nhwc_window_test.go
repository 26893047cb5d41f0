package templates

import (
	"math/rand"
	"testing"
)

// TestNHWCTaps compares the window kernels (assembly where the CPU has it)
// with their Go twin on channel counts around the vector widths.
func TestNHWCTaps(t *testing.T) { nhwcTapsCompare(t) }

// nhwcTapsCompare is TestNHWCTaps's body (k_conv_nhwc_window_amd64_test.go runs it
// with AVX-512 off too).
func nhwcTapsCompare(t *testing.T) {
	r := rand.New(rand.NewSource(9))
	for _, c := range []int{1, 7, 8, 9, 31, 32, 33, 47, 48, 64, 80, 100} {
		for mode := nhwcModeDW; mode <= nhwcModeAvg; mode++ {
			// 7 pixels: groups of 4 (2 with AVX2) and single ones.
			npix, xstep := 7, c
			taps := []int{0, 0, c, c, 5 * c, 2 * c, 7 * c, 3 * c}
			x := nnRand(r, 16*c).F32()
			w, bias := nnRand(r, 4*c).F32(), nnRand(r, c).F32()
			got, want := make([]float32, npix*c), make([]float32, npix*c)
			nhwcTaps(mode, got, x, taps, w, bias, c, npix, xstep, 0.25, -0.5, 1)
			nhwcTapsGo(mode, want, x, taps, w, bias, 0, c, npix, xstep, c, 0.25, -0.5, 1)
			for i := range want {
				if d := got[i] - want[i]; d > 1e-5 || d < -1e-5 {
					t.Fatalf("mode %d c %d: [%d] = %v, want %v", mode, c, i, got[i], want[i])
				}
			}
		}
	}
}
