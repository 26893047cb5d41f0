package templates

import (
	"fmt"
	"math/rand"
	"testing"
)

func refGemmT(a, b, c []float64, ashape, bshape, cshape []int, ta, tb bool, alpha, beta float64) ([]int, []float64) {
	m, k := ashape[0], ashape[1]
	if ta {
		m, k = k, m
	}
	n := bshape[1]
	if tb {
		n = bshape[0]
	}
	out := make([]float64, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			s := 0.0
			for p := 0; p < k; p++ {
				var av, bv float64
				if ta {
					av = a[p*ashape[1]+i]
				} else {
					av = a[i*ashape[1]+p]
				}
				if tb {
					bv = b[j*bshape[1]+p]
				} else {
					bv = b[p*bshape[1]+j]
				}
				s += av * bv
			}
			s *= alpha
			if c != nil {
				ci, cj := 0, 0
				switch len(cshape) {
				case 1:
					if cshape[0] != 1 {
						cj = j
					}
				case 2:
					if cshape[0] != 1 {
						ci = i
					}
					if cshape[1] != 1 {
						cj = j
					}
				}
				cols := 1
				if len(cshape) > 0 {
					cols = cshape[len(cshape)-1]
				}
				s += beta * c[ci*cols+cj]
			}
			out[i*n+j] = s
		}
	}
	return []int{m, n}, out
}

func TestGemm(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	m, k, n := 7, 11, 5
	for _, dt := range []DType{F32, F64, F16, BF16, I32, I64} {
		for _, ta := range []int64{0, 1} {
			for _, tb := range []int64{0, 1} {
				for ci, cshape := range [][]int{nil, {}, {1}, {n}, {m, 1}, {1, n}, {m, n}} {
					as, bs := []int{m, k}, []int{k, n}
					if ta == 1 {
						as = []int{k, m}
					}
					if tb == 1 {
						bs = []int{n, k}
					}
					var A, B, C *Tensor
					alpha, beta := float32(0.75), float32(-1.25)
					if dt == I32 || dt == I64 {
						A, B = nnSmallInts(r, -5, 5, as...), nnSmallInts(r, -5, 5, bs...)
						alpha, beta = 1, 2
					} else {
						A, B = nnRand(r, as...), nnRand(r, bs...)
					}
					if cshape != nil {
						C = nnSmallInts(r, -4, 4, cshape...)
					}
					in := nnInputsAs([]*Tensor{A, B, C}, dt)
					var cd []float64
					if C != nil {
						cd = nnF64(in[2])
					}
					shape, want := refGemmT(nnF64(in[0]), nnF64(in[1]), cd, as, bs, cshape, ta == 1, tb == 1, float64(alpha), float64(beta))
					for _, v := range []int{1, 6, 7, 9, 11, 13} {
						if C == nil && v < 11 {
							continue
						}
						attrs := Attrs{"transA": ta, "transB": tb, "alpha": alpha, "beta": beta}
						if v < 7 {
							attrs["broadcast"] = int64(1)
						}
						ins := in
						if C == nil {
							ins = in[:2]
						}
						out := nnRun(t, "Gemm", v, attrs, 1, ins...)
						nnCheck(t, fmt.Sprintf("Gemm v%d %v ta%d tb%d C%d", v, dt, ta, tb, ci), out[0], shape, want, nnTol(dt)*10)
					}
				}
			}
		}
	}
}

// TestGemmConformance is ONNX's test_gemm_all_attributes setup checked
// against the reference, and the default-attribute form with a bias vector.
func TestGemmDefaults(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	A, B, C := nnRand(r, 3, 5), nnRand(r, 5, 4), nnRand(r, 1, 4)
	shape, want := refGemmT(nnF64(A), nnF64(B), nnF64(C), A.Shape, B.Shape, C.Shape, false, false, 1, 1)
	out := nnRun(t, "Gemm", 13, Attrs{}, 1, A, B, C)
	nnCheck(t, "gemm defaults", out[0], shape, want, 1e-5)
	// test_gemm_all_attributes: A(4,3) transA, B(5,4) transB, C(1,5), alpha .25 beta .35
	A, B, C = nnRand(r, 4, 3), nnRand(r, 5, 4), nnRand(r, 1, 5)
	shape, want = refGemmT(nnF64(A), nnF64(B), nnF64(C), A.Shape, B.Shape, C.Shape, true, true, 0.25, 0.35)
	out = nnRun(t, "Gemm", 13, Attrs{"transA": int64(1), "transB": int64(1), "alpha": float32(0.25), "beta": float32(0.35)}, 1, A, B, C)
	nnCheck(t, "gemm all attributes", out[0], shape, want, 1e-5)
	if err := Gemm(nnNode("Gemm", 13, Attrs{}, 1, nnRand(r, 3, 4), nnRand(r, 5, 4))); err == nil {
		t.Fatal("mismatched inner dimension accepted")
	}
}

func refMatMul(a, b []float64, as, bs []int) ([]int, []float64) {
	a1, b1 := len(as) == 1, len(bs) == 1
	if a1 {
		as = []int{1, as[0]}
	}
	if b1 {
		bs = []int{bs[0], 1}
	}
	ra, rb := len(as), len(bs)
	m, k, n := as[ra-2], as[ra-1], bs[rb-1]
	nb := max(ra, rb) - 2
	bd := make([]int, nb)
	for i := 0; i < nb; i++ {
		da, db := 1, 1
		if j := i - (nb - (ra - 2)); j >= 0 {
			da = as[j]
		}
		if j := i - (nb - (rb - 2)); j >= 0 {
			db = bs[j]
		}
		bd[i] = max(da, db)
	}
	total := 1
	for _, d := range bd {
		total *= d
	}
	out := make([]float64, total*m*n)
	idx := make([]int, nb)
	for bi := 0; bi < total; bi++ {
		rem := bi
		for i := nb - 1; i >= 0; i-- {
			idx[i] = rem % bd[i]
			rem /= bd[i]
		}
		off := func(shape []int) int {
			o := 0
			r := len(shape) - 2
			for j := 0; j < r; j++ {
				v := idx[j+nb-r]
				if shape[j] == 1 {
					v = 0
				}
				o = o*shape[j] + v
			}
			return o
		}
		ao, bo := off(as)*m*k, off(bs)*k*n
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				s := 0.0
				for p := 0; p < k; p++ {
					s += a[ao+i*k+p] * b[bo+p*n+j]
				}
				out[bi*m*n+i*n+j] = s
			}
		}
	}
	shape := append([]int{}, bd...)
	if !a1 {
		shape = append(shape, m)
	}
	if !b1 {
		shape = append(shape, n)
	}
	return shape, out
}

func TestMatMul(t *testing.T) {
	r := rand.New(rand.NewSource(4))
	cases := [][2][]int{
		{{3, 5}, {5, 7}}, {{5}, {5, 3}}, {{3, 5}, {5}}, {{5}, {5}},
		{{2, 3, 5}, {5, 7}}, {{2, 3, 5}, {2, 5, 7}}, {{3, 1, 4, 5}, {2, 5, 3}},
		{{5}, {3, 5, 2}}, {{2, 1, 3, 5}, {5}}, {{1, 3, 5}, {3, 5, 7}},
		{{2, 3, 4}, {2, 4, 3}}, {{2, 3, 4, 3}, {2, 3, 3, 2}}, // test_matmul_3d/4d shapes
	}
	for _, dt := range []DType{F32, F64, F16, BF16, I32, I64, U32, U64} {
		for _, c := range cases {
			var A, B *Tensor
			if dt == I32 || dt == I64 || dt == U32 || dt == U64 {
				lo := -5
				if dt == U32 || dt == U64 {
					lo = 0
				}
				A, B = nnSmallInts(r, lo, 5, c[0]...), nnSmallInts(r, lo, 5, c[1]...)
			} else {
				A, B = nnRand(r, c[0]...), nnRand(r, c[1]...)
			}
			in := nnInputsAs([]*Tensor{A, B}, dt)
			shape, want := refMatMul(nnF64(in[0]), nnF64(in[1]), c[0], c[1])
			for _, v := range []int{1, 9, 13} {
				out := nnRun(t, "MatMul", v, nil, 1, in...)
				nnCheck(t, fmt.Sprintf("MatMul v%d %v %v", v, dt, c), out[0], shape, want, nnTol(dt)*10)
			}
		}
	}
	if err := MatMul(nnNode("MatMul", 13, nil, 1, nnRand(r, 2, 3, 4), nnRand(r, 3, 4, 2))); err == nil {
		t.Fatal("non-broadcasting batch dims accepted")
	}
}

func TestGemmMatMulNoAlloc(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	if a := nnAllocs(t, nnNode("Gemm", 13, Attrs{"transB": int64(1)}, 1, nnRand(r, 9, 17), nnRand(r, 13, 17), nnRand(r, 13)), Gemm); a != 0 {
		t.Fatalf("Gemm allocates %v", a)
	}
	if a := nnAllocs(t, nnNode("MatMul", 13, nil, 1, nnRand(r, 2, 3, 9, 17), nnRand(r, 3, 17, 5)), MatMul); a != 0 {
		t.Fatalf("MatMul allocates %v", a)
	}
	if a := nnAllocs(t, nnNode("MatMul", 13, nil, 1, nnAs(nnRand(r, 2, 9, 17), F16), nnAs(nnRand(r, 17, 5), F16)), MatMul); a != 0 {
		t.Fatalf("MatMul f16 allocates %v", a)
	}
}

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
