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
