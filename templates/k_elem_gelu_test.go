package templates

import (
	"math/rand"
	"testing"
)

func TestGelu(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	X := nnRand(r, 3, 37)
	for _, c := range []struct{ ap, act string }{{"none", "Gelu"}, {"tanh", "GeluTanh"}} {
		want := fusedRefAct(t, fusedActCase{c.act, nil}, f64(X))
		got := nnRun(t, "cuvil::Gelu", 1, Attrs{"approximate": c.ap}, 1, X)[0]
		nnCheck(t, c.ap, got, want.Shape, want.F64(), 1e-6)
		got = nnRun(t, "cuvil::Gelu", 1, Attrs{"approximate": c.ap}, 1, f64(X))[0]
		nnCheck(t, c.ap+"/f64", got, want.Shape, want.F64(), 1e-12)
	}
	n := nnNode("cuvil::Gelu", 1, Attrs{"approximate": "erf"}, 1, X)
	if err := Gelu(n); err == nil {
		t.Error("approximate=erf accepted")
	}
}
