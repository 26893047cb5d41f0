package templates

import (
	"math/rand"
	"testing"
)

func TestSkipLayerNorm(t *testing.T) {
	r := rand.New(rand.NewSource(6))
	X, S, B := nnRand(r, 2, 7, 45), nnRand(r, 45), nnRand(r, 45)
	for _, skipShape := range [][]int{{2, 7, 45}, {45}} {
		Skip := nnRand(r, skipShape...)
		sum := fusedRef64(t, "Add", 14, nil, f64(X), f64(Skip))
		want := fusedRef64(t, "LayerNormalization", 17, Attrs{"epsilon": float32(1e-3)}, sum, f64(S), f64(B))
		out := nnRun(t, "cuvil::SkipLayerNorm", 1, Attrs{"epsilon": float32(1e-3)}, 2, X, Skip, S, B)
		nnCheck(t, "Y", out[0], want.Shape, want.F64(), 1e-5)
		nnCheck(t, "Sum", out[1], sum.Shape, sum.F64(), 1e-6)
		noB := fusedRef64(t, "LayerNormalization", 17, Attrs{"epsilon": float32(1e-3)}, sum, f64(S))
		got := nnRun(t, "cuvil::SkipLayerNorm", 1, Attrs{"epsilon": float32(1e-3)}, 1, X, Skip, S)[0]
		nnCheck(t, "Y no bias", got, noB.Shape, noB.F64(), 1e-5)
	}
	// cuvil::LayerNorm is LayerNormalization with one output.
	want := fusedRef64(t, "LayerNormalization", 17, Attrs{"axis": int64(-1)}, f64(X), f64(S), f64(B))
	got := nnRun(t, "cuvil::LayerNorm", 1, Attrs{"axis": int64(-1)}, 1, X, S, B)[0]
	nnCheck(t, "LayerNorm", got, want.Shape, want.F64(), 1e-5)
}

// TestLayerNormThreads: float32 LayerNormalization and cuvil::SkipLayerNorm
// on rows of awkward widths (the AVX-512 rows' masked tails) and bert's
// 768, against float64, with the same bits at 1, 2 and 3 threads (rows
// split over the pool).
func TestLayerNormThreads(t *testing.T) {
	r := rand.New(rand.NewSource(61))
	p2, p3 := NewWorkPool(WithThreads(2)), NewWorkPool(WithThreads(3))
	defer p2.Close()
	defer p3.Close()
	for _, sh := range [][]int{{3, 1}, {5, 17}, {37, 77}, {128, 768}, {41, 1027}} {
		X, S, B := nnRand(r, sh...), nnRand(r, sh[1]), nnRand(r, sh[1])
		Skip := nnRand(r, sh...)
		at := Attrs{"epsilon": float32(1e-5)}
		want := fusedRef64(t, "LayerNormalization", 17, at, f64(X), f64(S), f64(B))
		sum := fusedRef64(t, "Add", 14, nil, f64(X), f64(Skip))
		wantSkip := fusedRef64(t, "LayerNormalization", 17, at, sum, f64(S), f64(B))
		var ln1, sk1 []float32
		for _, pool := range []*WorkPool{nil, p2, p3} {
			n := nnNode("LayerNormalization", 17, at, 1, X, S, B)
			n.Pool = pool
			if err := LayerNormalization(n); err != nil {
				t.Fatal(err)
			}
			nnCheck(t, "LayerNormalization", n.Out[0], want.Shape, want.F64(), 2e-5)
			m := nnNode("cuvil::SkipLayerNorm", 1, at, 2, X, Skip, S, B)
			m.Pool = pool
			if err := Kernels["cuvil::SkipLayerNorm"](m); err != nil {
				t.Fatal(err)
			}
			nnCheck(t, "SkipLayerNorm", m.Out[0], wantSkip.Shape, wantSkip.F64(), 2e-5)
			if ln1 == nil {
				ln1, sk1 = append([]float32(nil), n.Out[0].F32()...), append([]float32(nil), m.Out[0].F32()...)
				continue
			}
			for i := range ln1 {
				if n.Out[0].F32()[i] != ln1[i] || m.Out[0].F32()[i] != sk1[i] {
					t.Fatalf("%v threads %d: [%d] differs from 1 thread", sh, pool.Threads(), i)
				}
			}
		}
	}
}
