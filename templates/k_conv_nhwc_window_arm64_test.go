//go:build arm64 && !purego

package templates

import (
	"fmt"
	"math"
	"math/rand"
	"testing"
)

// TestNHWCTapsNEON checks the NEON window kernels (depthwise, max, avg)
// through nhwcTaps against a float64 reference on awkward channel counts
// (vector blocks of 4, 2, 1 and a Go tail) and pixel counts (groups of 4
// and single pixels), input pixels strided (xstep > c), random tap lists,
// a NaN among the max inputs (the twin's rule: a NaN input replaces the
// running maximum), and clamps (finite and infinite).
func TestNHWCTapsNEON(t *testing.T) {
	if !cpuHasASIMD {
		t.Fatal("no ASIMD")
	}
	r := rand.New(rand.NewSource(11))
	for _, c := range []int{1, 3, 4, 5, 8, 12, 17, 28, 32, 36, 61, 64, 100} {
		for _, npix := range []int{1, 3, 4, 5, 9} {
			for mode := nhwcModeDW; mode <= nhwcModeAvg; mode++ {
				xstep := c + 3
				nt := 1 + r.Intn(9)
				taps := make([]int, 2*nt)
				for i := 0; i < nt; i++ {
					taps[2*i], taps[2*i+1] = r.Intn(4*c+7), r.Intn(3*c)
				}
				x := nnRand(r, 5*c+7+npix*xstep).F32()
				if mode == nhwcModeMax && c > 2 {
					x[taps[0]+2] = float32(math.NaN())
				}
				w, bias := nnRand(r, 4*c).F32(), nnRand(r, c).F32()
				lo, hi, scale := float32(-0.4), float32(0.7), float32(1)/float32(nt)
				if npix%2 == 1 {
					lo, hi = float32(math.Inf(-1)), float32(math.Inf(1))
				}
				got := nnRand(r, npix*c).F32()
				want := append([]float32(nil), got...)
				nhwcTaps(mode, got, x, taps, w, bias, c, npix, xstep, scale, lo, hi)
				nhwcTapsGo(mode, want, x, taps, w, bias, 0, c, npix, xstep, c, scale, lo, hi)
				what := fmt.Sprintf("mode %d c %d npix %d ntaps %d", mode, c, npix, nt)
				for p := 0; p < npix; p++ {
					for j := 0; j < c; j++ {
						var ref float64
						switch mode {
						case nhwcModeDW:
							ref = float64(bias[j])
							for i := 0; i < nt; i++ {
								ref += float64(x[p*xstep+taps[2*i]+j]) * float64(w[taps[2*i+1]+j])
							}
							ref = min(max(ref, float64(lo)), float64(hi))
						case nhwcModeMax:
							ref = float64(x[p*xstep+taps[0]+j])
							for i := 1; i < nt; i++ {
								if v := float64(x[p*xstep+taps[2*i]+j]); !(ref > v) {
									ref = v
								}
							}
						case nhwcModeAvg:
							for i := 0; i < nt; i++ {
								ref += float64(x[p*xstep+taps[2*i]+j])
							}
							ref *= float64(scale)
						}
						g := float64(got[p*c+j])
						if math.IsNaN(ref) != math.IsNaN(g) || !math.IsNaN(ref) && math.Abs(g-ref) > 1e-5*(1+math.Abs(ref)) {
							t.Fatalf("%s: y[%d][%d] = %v, want %v", what, p, j, g, ref)
						}
						if wv := want[p*c+j]; math.IsNaN(float64(wv)) != math.IsNaN(g) || mode == nhwcModeMax && !math.IsNaN(g) && float32(g) != wv {
							t.Fatalf("%s: y[%d][%d] = %v, twin %v", what, p, j, g, wv)
						}
					}
				}
			}
		}
	}
}

// TestNHWCBiasClampNEON: the NEON rows against a float64 reference, with
// a NaN (it must stay NaN through the clamp) and rows of stride ldy > m.
func TestNHWCBiasClampNEON(t *testing.T) {
	r := rand.New(rand.NewSource(12))
	for _, m := range []int{1, 3, 4, 7, 8, 12, 19, 64, 67} {
		for _, rows := range []int{1, 2, 5} {
			ldy := m + 5
			y, bias := nnRand(r, rows*ldy).F32(), nnRand(r, m).F32()
			y[ldy*(rows-1)+m/2] = float32(math.NaN())
			y0 := append([]float32(nil), y...)
			nhwcBiasClamp(y, bias, rows, m, ldy, -0.25, 0.5)
			for i, v := range y {
				ref := float64(y0[i])
				if j := i % ldy; j < m && i < (rows-1)*ldy+m {
					ref = min(max(ref+float64(bias[j]), -0.25), 0.5)
				}
				if math.IsNaN(ref) != math.IsNaN(float64(v)) || !math.IsNaN(ref) && math.Abs(float64(v)-ref) > 1e-6 {
					t.Fatalf("m %d rows %d: [%d] = %v, want %v", m, rows, i, v, ref)
				}
			}
		}
	}
}
