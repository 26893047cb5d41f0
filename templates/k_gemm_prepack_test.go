package templates

import (
	"math/rand"
	"testing"
)

// Gemm, MatMul, FusedGemm and FusedMatMul with B prepacked at compile time
// (GemmPackedAttr) match the same nodes with B as it is, on sizes that
// leave partial panels, partial row tiles and several k blocks, on one
// thread and split over three (column and row splits).
func TestGemmPrepackedB(t *testing.T) {
	r := rand.New(rand.NewSource(33))
	cases := []struct {
		name           string
		m, k, n        int
		transA, transB bool
	}{
		{"small", 3, 5, 7, false, false},
		{"odd", 13, 37, 45, false, true},
		{"deep_k", 7, 300, 33, true, false},
		{"wide", 5, 17, 531, true, true},
		{"tall", 301, 19, 23, false, false},
		{"exact", 12, 256, 64, false, true},
	}
	for _, c := range cases {
		ash := []int{c.m, c.k}
		if c.transA {
			ash = []int{c.k, c.m}
		}
		bsh := []int{c.k, c.n}
		if c.transB {
			bsh = []int{c.n, c.k}
		}
		A, B, C, Z := nnRand(r, ash...), nnRand(r, bsh...), nnRand(r, c.n), nnRand(r, c.m, c.n)
		packed, ok := PrepackGemmB(B.F32(), B.Shape, c.transB)
		if !ok {
			t.Fatalf("%s: not prepackable", c.name)
		}
		BP := &Tensor{DType: F32, Shape: []int{len(packed)}, Data: packed}
		gattrs := Attrs{"transA": int64(b2i(c.transA)), "transB": int64(b2i(c.transB)), "alpha": float32(0.75), "beta": float32(1.5)}
		run := []struct {
			op    string
			attrs Attrs
			in    []*Tensor // B at index 1
		}{
			{"Gemm", gattrs, []*Tensor{A, B, C}},
			{"cuvil::FusedGemm", mergeAttrs(gattrs, Attrs{"activation": "Relu"}), []*Tensor{A, B, C, Z}},
		}
		if !c.transA && !c.transB {
			// A [2, m, k] for MatMul: the batches stack.
			A3 := nnRand(r, 2, c.m, c.k)
			run = append(run,
				struct {
					op    string
					attrs Attrs
					in    []*Tensor
				}{"MatMul", Attrs{}, []*Tensor{A3, B}},
				struct {
					op    string
					attrs Attrs
					in    []*Tensor
				}{"cuvil::FusedMatMul", Attrs{"activation": "Tanh"}, []*Tensor{A3, B, C}})
		}
		for _, rc := range run {
			ref := nnRun(t, rc.op, 13, rc.attrs, 1, rc.in...)[0]
			for _, threads := range []int{1, 3} {
				in := append([]*Tensor(nil), rc.in...)
				in[1] = BP
				n := nnNode(rc.op, 13, mergeAttrs(rc.attrs, Attrs{GemmPackedAttr: ints64(B.Shape)}), 1, in...)
				n.Pool = NewWorkPool(WithThreads(threads))
				if err := Kernels[rc.op](n); err != nil {
					t.Fatalf("%s %s: %v", c.name, rc.op, err)
				}
				if threads == 3 && !raceEnabled {
					if allocs := testing.AllocsPerRun(5, func() { Kernels[rc.op](n) }); allocs != 0 {
						t.Errorf("%s %s: %v allocations per run", c.name, rc.op, allocs)
					}
				}
				n.Pool.Close()
				// Under purego the plain path runs another GEMM (4x4 tiles, A
				// pre-scaled), so sums differ in order.
				nnCheck(t, c.name+"/"+rc.op, n.Out[0], ref.Shape, nnF64(ref), 1e-4)
			}
		}
	}
	// A prepacked B of the wrong length is an error, not a panic.
	n := nnNode("MatMul", 13, Attrs{GemmPackedAttr: []int64{4, 20}}, 1, nnRand(r, 3, 4), nnRand(r, 80))
	if err := MatMul(n); err == nil {
		t.Fatal("MatMul accepted a prepacked B of the wrong length")
	}
	n = nnNode("Gemm", 13, Attrs{GemmPackedAttr: []int64{4, 16}, "transB": int64(1)}, 1, nnRand(r, 3, 4), nnRand(r, 4*32))
	if err := Gemm(n); err == nil {
		t.Fatal("Gemm accepted a prepacked B whose shape ignores transB")
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func mergeAttrs(a, b Attrs) Attrs {
	out := Attrs{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}
