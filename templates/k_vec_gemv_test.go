package templates

import (
	"math"
	"math/rand/v2"
	"testing"
)

// dot4x32 and lstmGates32 (assembly where the build and CPU have it)
// against float64 references and their twins, on odd sizes with tails.

func TestDot4(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, k := range vecSizes {
		for _, pad := range []int{0, 3} {
			ldb := k + pad
			a := vecRand(r, k, 1)
			b := vecRand(r, 3*ldb+k, 1)
			var got, twin [4]float32
			dot4x32(a, b, ldb, &got)
			dot4Go(a, b, ldb, &twin)
			for q := range 4 {
				var want, mag float64
				for p := range k {
					v := float64(a[p]) * float64(b[q*ldb+p])
					want += v
					mag += math.Abs(v)
				}
				for _, g := range []float32{got[q], twin[q]} {
					if d := math.Abs(float64(g) - want); d > 1e-6*mag+1e-30 {
						t.Fatalf("k=%d ldb=%d row %d: dot = %v (twin %v), want %v", k, ldb, q, got[q], twin[q], want)
					}
				}
			}
		}
	}
}

func TestLSTMGates(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	sig := func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
	for _, hs := range vecSizes {
		g := vecRand(r, 4*hs, 8)
		g[0] = 100 // saturated gates
		g[4*hs-1] = -100
		c0 := vecRand(r, hs, 3)
		c, h := append([]float32(nil), c0...), make([]float32, hs)
		ct, ht := append([]float32(nil), c0...), make([]float32, hs)
		lstmGates32(g, c, h)
		lstmGatesGo(g, ct, ht)
		for u := range hs {
			i, o, f, z := float64(g[u]), float64(g[hs+u]), float64(g[2*hs+u]), float64(g[3*hs+u])
			cw := sig(f)*float64(c0[u]) + sig(i)*math.Tanh(z)
			hw := sig(o) * math.Tanh(cw)
			for _, p := range [][2]float32{{c[u], h[u]}, {ct[u], ht[u]}} {
				if math.Abs(float64(p[0])-cw) > 1e-6*(1+math.Abs(cw)) || math.Abs(float64(p[1])-hw) > 1e-6 {
					t.Fatalf("hs=%d u=%d: c, h = %v, %v (asm %v, %v), want %v, %v", hs, u, p[0], p[1], c[u], h[u], cw, hw)
				}
			}
		}
	}
}

func TestSgemvRowTransB(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{1, 3, 4, 5, 10, 13} {
		for _, k := range []int{1, 7, 8, 9, 33, 130} {
			ldb := k + 2
			a := vecRand(r, k, 1)
			b := vecRand(r, n*ldb, 1)
			c0 := vecRand(r, n, 1)
			for _, beta := range []float32{0, 1, 0.5} {
				c := append([]float32(nil), c0...)
				sgemvRow(true, n, k, 1.5, a, b, ldb, beta, c)
				for j := range n {
					var want float64
					for p := range k {
						want += float64(a[p]) * float64(b[j*ldb+p])
					}
					want = 1.5*want + float64(beta)*float64(c0[j])
					if math.Abs(float64(c[j])-want) > 1e-5 {
						t.Fatalf("n=%d k=%d beta=%v: c[%d] = %v, want %v", n, k, beta, j, c[j], want)
					}
				}
			}
		}
	}
}
