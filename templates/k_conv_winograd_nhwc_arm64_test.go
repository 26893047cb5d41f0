//go:build arm64 && !purego

package templates

import (
	"fmt"
	"math"
	"math/rand"
	"testing"
)

// TestWinogradNHWCNEONExact: the NEON F(2x2) transforms give the Go twins'
// bits (same adds and subtracts in the same order), NaN and infinities
// included, on channel counts with and without a scalar tail, and they
// write nothing past channel c.
func TestWinogradNHWCNEONExact(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	specials := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 0, float32(math.Copysign(0, -1))}
	for _, c := range []int{4, 5, 8, 12, 15, 36, 257} {
		var src [wgPoints][]float32
		for k := range src {
			src[k] = nnRand(r, c+3).F32()[:c]
			if c > 8 {
				src[k][r.Intn(c)] = specials[r.Intn(len(specials))]
			}
		}
		ldv := c + 3
		got, want := make([]float32, wgPoints*ldv), make([]float32, wgPoints*ldv)
		for i := range got {
			got[i], want[i] = -7, -7
		}
		wnInput(got, ldv, &src, c, 2)
		wnInputGo(want, ldv, &src, 0, c, 2)
		wnBits(t, fmt.Sprintf("input c %d", c), got, want)
		mo, bias := nnRand(r, wgPoints*ldv).F32(), nnRand(r, c).F32()
		if c > 8 {
			mo[r.Intn(len(mo))] = specials[r.Intn(len(specials))]
		}
		for zmode := 0; zmode < 3; zmode++ {
			for _, lh := range [][2]float32{{-0.5, 0.75}, {0, float32(math.Inf(1))}, {float32(math.Inf(-1)), float32(math.Inf(1))}} {
				var dg, dw, z [16][]float32
				for p := range dg {
					dg[p], dw[p], z[p] = make([]float32, c+2), make([]float32, c+2), nnRand(r, c).F32()
					dg[p][c], dg[p][c+1], dw[p][c], dw[p][c+1] = -7, -7, -7, -7
				}
				wnOutput(&dg, mo, ldv, bias, &z, c, zmode, lh[0], lh[1], 2)
				wnOutputGo(&dw, mo, ldv, bias, &z, 0, c, zmode, lh[0], lh[1], 2)
				for p := range dg {
					wnBits(t, fmt.Sprintf("output c %d zmode %d clamp %v pixel %d", c, zmode, lh, p), dg[p], dw[p])
				}
			}
		}
	}
}

func wnBits(t *testing.T, what string, got, want []float32) {
	t.Helper()
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) && !(got[i] != got[i] && want[i] != want[i]) {
			t.Fatalf("%s: [%d] = %v, want %v", what, i, got[i], want[i])
		}
	}
}
