package templates

import (
	"math/rand"
	"testing"
)

func TestFusedGemm(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	// m = 131 rows with n = 1100 columns splits into 64-row blocks.
	for _, sz := range [][3]int{{7, 5, 9}, {131, 1100, 17}} {
		m, n, k := sz[0], sz[1], sz[2]
		for _, tr := range [][2]int64{{0, 0}, {1, 0}, {0, 1}, {1, 1}} {
			as, bs := []int{m, k}, []int{k, n}
			if tr[0] == 1 {
				as = []int{k, m}
			}
			if tr[1] == 1 {
				bs = []int{n, k}
			}
			A, B := nnRand(r, as...), nnRand(r, bs...)
			Z := nnRand(r, m, n)
			for _, cs := range [][]int{nil, {n}, {1, n}, {m, 1}, {m, n}, {}} {
				gattrs := Attrs{"transA": tr[0], "transB": tr[1], "alpha": float32(0.75), "beta": float32(1.25)}
				in := []*Tensor{A, B}
				if cs != nil {
					in = append(in, nnRand(r, cs...))
				}
				ref := fusedRef64(t, "Gemm", 13, gattrs, nnInputsAs(in, F64)...)
				for _, a := range []fusedActCase{{"Relu", nil}, {"Gelu", nil}, {"", nil}} {
					attrs := fusedAttrs(a, gattrs)
					want := fusedRefAct(t, a, fusedRef64(t, "Add", 14, nil, ref, f64(Z)))
					zin := append(append([]*Tensor(nil), in...), nil, Z)[:4]
					if len(in) == 3 {
						zin = append(append([]*Tensor(nil), in...), Z)
					}
					got := nnRun(t, "cuvil::FusedGemm", 1, attrs, 1, zin...)[0]
					nnCheck(t, "gemm+Z", got, want.Shape, want.F64(), 1e-5)
					got = nnRun(t, "cuvil::FusedGemm", 1, attrs, 1, in...)[0]
					want = fusedRefAct(t, a, ref)
					nnCheck(t, "gemm", got, want.Shape, want.F64(), 1e-5)
				}
			}
		}
	}
}

func TestFusedMatMul(t *testing.T) {
	r := rand.New(rand.NewSource(4))
	for _, as := range [][]int{{2, 67, 33}, {33}, {5, 33}, {3, 1, 2, 33}} {
		A, B, bias := nnRand(r, as...), nnRand(r, 33, 1030), nnRand(r, 1030)
		mm := fusedRef64(t, "MatMul", 13, nil, f64(A), f64(B))
		Z := nnRand(r, mm.Shape...)
		withBias := fusedRef64(t, "Add", 14, nil, mm, f64(bias))
		for _, a := range fusedActCases {
			attrs := fusedAttrs(a, nil)
			want := fusedRefAct(t, a, withBias)
			got := nnRun(t, "cuvil::FusedMatMul", 1, attrs, 1, A, B, bias)[0]
			nnCheck(t, "matmul+bias/"+a.name, got, want.Shape, want.F64(), 1e-5)
			want = fusedRef64(t, "Add", 14, nil, fusedRefAct(t, a, mm), f64(Z))
			attrs["residual_after_activation"] = int64(1)
			got = nnRun(t, "cuvil::FusedMatMul", 1, attrs, 1, A, B, nil, Z)[0]
			nnCheck(t, "matmul+Z after/"+a.name, got, want.Shape, want.F64(), 1e-5)
		}
	}
}

// BenchmarkMatMulBiasGelu is BERT's feed-forward up-projection: MatMul,
// bias Add and GELU (erf form, five nodes in the graph; one here).
func BenchmarkMatMulBiasGelu(b *testing.B) {
	r := rand.New(rand.NewSource(11))
	A, B, bias := nnRand(r, 1, 128, 256), nnRand(r, 256, 1024), nnRand(r, 1024)
	b.Run("unfused", func(b *testing.B) {
		mm := nnNode("MatMul", 13, nil, 1, A, B)
		add := nnNode("Add", 14, nil, 1, mm.Out[0], bias)
		gelu := nnNode("cuvil::Gelu", 1, nil, 1, add.Out[0])
		for b.Loop() {
			MatMul(mm)
			Kernels["Add"](add)
			Gelu(gelu)
		}
	})
	b.Run("fused", func(b *testing.B) {
		n := nnNode("cuvil::FusedMatMul", 1, Attrs{"activation": "Gelu"}, 1, A, B, bias)
		for b.Loop() {
			FusedMatMul(n)
		}
	})
}

// TestFusedMatMulColBlocks: parts with fewer rows than columns and more
// than fusedMMFloats outputs run in column blocks (a language model's
// head), the last one narrow; with no epilogue in one block. Prepacked and
// plain B, 1 to 3 threads, against float64.
func TestFusedMatMulColBlocks(t *testing.T) {
	r := rand.New(rand.NewSource(21))
	m, k, n := 20, 7, 13350 // 20 x 13350 outputs: blocks of 13088 and 262 columns
	if 20*13088 > fusedMMFloats || 20*13350 <= fusedMMFloats {
		t.Fatalf("sizes no longer cut at fusedMMFloats = %d", fusedMMFloats)
	}
	A, B, bias := nnRand(r, 1, m, k), nnRand(r, k, n), nnRand(r, n)
	Z := nnRand(r, 1, m, n)
	mm := fusedRef64(t, "MatMul", 13, nil, f64(A), f64(B))
	withBias := fusedRef64(t, "Add", 14, nil, mm, f64(bias))
	BP := nnT([]int{sgemmPackedBSize(k, n)}, sgemmPackB(false, k, n, B.F32(), n)...)
	for _, a := range []fusedActCase{{"Gelu", nil}, {"", nil}} {
		want := fusedRefAct(t, a, withBias)
		wantZ := fusedRef64(t, "Add", 14, nil, want, f64(Z))
		for _, packed := range []bool{false, true} {
			for threads := 1; threads <= 3; threads++ {
				attrs := fusedAttrs(a, nil)
				b := B
				if packed {
					attrs[GemmPackedAttr] = []int64{int64(k), int64(n)}
					b = BP
				}
				nd := nnNode("cuvil::FusedMatMul", 1, attrs, 1, A, b, bias)
				nd.Pool = NewWorkPool(WithThreads(threads))
				if err := FusedMatMul(nd); err != nil {
					t.Fatal(err)
				}
				nnCheck(t, "colblocks/"+a.name, nd.Out[0], want.Shape, want.F64(), 1e-5)
				attrs["residual_after_activation"] = int64(1)
				nd = nnNode("cuvil::FusedMatMul", 1, attrs, 1, A, b, bias, Z)
				nd.Pool = NewWorkPool(WithThreads(threads))
				if err := FusedMatMul(nd); err != nil {
					t.Fatal(err)
				}
				nnCheck(t, "colblocks+Z/"+a.name, nd.Out[0], wantZ.Shape, wantZ.F64(), 1e-5)
			}
		}
	}
	// No epilogue: MatMul with a prepacked B, one block.
	nd := nnNode("MatMul", 13, Attrs{GemmPackedAttr: []int64{int64(k), int64(n)}}, 1, A, BP)
	if err := MatMul(nd); err != nil {
		t.Fatal(err)
	}
	nnCheck(t, "colblocks/MatMul", nd.Out[0], mm.Shape, mm.F64(), 1e-5)
}
