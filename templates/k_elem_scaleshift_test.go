package templates

import (
	"math/rand"
	"testing"
)

func TestScaleShift(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	X, S, B := nnRand(r, 2, 5, 3, 7), nnRand(r, 5), nnRand(r, 5)
	S3, B3 := nnT([]int{5, 1, 1}, S.F32()...), nnT([]int{5, 1, 1}, B.F32()...)
	affine := fusedRef64(t, "Add", 14, nil, fusedRef64(t, "Mul", 14, nil, f64(X), f64(S3)), f64(B3))
	for _, a := range fusedActCases {
		want := fusedRefAct(t, a, affine)
		got := nnRun(t, "cuvil::ScaleShift", 1, fusedAttrs(a, nil), 1, X, S, B)[0]
		nnCheck(t, a.name, got, want.Shape, want.F64(), 1e-5)
	}
}

func TestScaleShiftNHWC(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	X, S, B := nnRand(r, 2, 11, 5, 7), nnRand(r, 11), nnRand(r, 11)
	ref := nnRun(t, "cuvil::ScaleShift", 1, Attrs{"activation": "Relu"}, 1, nnAs(X, F64), nnAs(S, F64), nnAs(B, F64))[0]
	got := nnRun(t, "cuvil::ScaleShift", 1, Attrs{"activation": "Relu", "layout": "NHWC"}, 1, nhwcOf(X, F32), S, B)[0]
	want := nhwcOf(ref, F64)
	nnCheck(t, "ScaleShift NHWC", got, want.Shape, nnF64(want), 1e-5)
}

// TestScaleShiftNHWCActs checks the NHWC row path on every activation
// against the float64 composition of Mul, Add and the activation's own
// node, at 1, 2 and 3 threads (bit-equal), on maps big enough to split
// (parMinFlops/4) with channel counts around the 8-lane vector body.
func TestScaleShiftNHWCActs(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	for _, C := range []int{3, 8, 13, 67} {
		X, S, B := nnRand(r, 2, C, 23, 41), nnRand(r, C), nnRand(r, C)
		S3, B3 := nnT([]int{C, 1, 1}, S.F32()...), nnT([]int{C, 1, 1}, B.F32()...)
		affine := fusedRef64(t, "Add", 14, nil, fusedRef64(t, "Mul", 14, nil, f64(X), f64(S3)), f64(B3))
		for _, a := range fusedActCases {
			want := nhwcOf(fusedRefAct(t, a, affine), F64)
			got := nhwcRunBoth(t, "ScaleShift "+a.name, "cuvil::ScaleShift", fusedAttrs(a, Attrs{"layout": "NHWC"}), nhwcOf(X, F32), S, B)
			nnCheck(t, "ScaleShift NHWC "+a.name, got, want.Shape, nnF64(want), 1e-5)
		}
	}
}
