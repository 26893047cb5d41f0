package templates

import (
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"
)

// TestBF16Gemm checks bf16GemmPacked (the AVX512_BF16 tiles where the CPU
// has them, the Go tile under purego or without) against float64 on
// random data of awkward sizes (tails of every tile width and height, odd
// k), B as stored and transposed, at 1, 2 and 3 threads. Two bounds,
// derived from the formats: against the float64 product of the
// bf16-rounded inputs, float32 summation error (2k+2 roundings of 2^-24
// relative to the sum of |products|); against the float64 product of the
// float32 inputs, in addition the rounding of A and B to bf16 (2^-8 each: 8 significant bits,
// relative to the same sum). Different thread counts give the same bits.
func TestBF16Gemm(t *testing.T) {
	rng := rand.New(rand.NewSource(16))
	for _, sz := range [][3]int{{1, 1, 1}, {1, 17, 2}, {7, 17, 3}, {6, 64, 64}, {13, 70, 33}, {5, 129, 258}, {25, 200, 97}, {50, 33, 1001}} {
		m, n, k := sz[0], sz[1], sz[2]
		for _, transB := range []bool{false, true} {
			a := make([]float32, m*k)
			b := make([]float32, k*n)
			for i := range a {
				a[i] = float32(rng.Float64()*2 - 1)
			}
			for i := range b {
				b[i] = float32(rng.Float64()*2 - 1)
			}
			ldb := n
			if transB {
				ldb = k
			}
			bAt := func(r, c int) float32 {
				if transB {
					return b[c*ldb+r]
				}
				return b[r*ldb+c]
			}
			bp := bf16PackB(make([]uint16, bf16PackedBSize(k, n)), transB, k, n, b, ldb)
			var first []float32
			for threads := 1; threads <= 3; threads++ {
				p := NewWorkPool(WithThreads(threads))
				c := make([]float32, m*n)
				for i := range c {
					c[i] = float32(math.NaN()) // overwritten, never read
				}
				var s bf16Gemm
				bf16GemmPacked(p, &s, m, n, k, a, k, bp, c, n)
				p.Close()
				name := fmt.Sprintf("%dx%dx%d transB=%v threads=%d", m, n, k, transB, threads)
				for i := 0; i < m; i++ {
					for j := 0; j < n; j++ {
						var refH, ref, mag float64
						for l := 0; l < k; l++ {
							ah, bh := float64(BF16ToF32(F32ToBF16(a[i*k+l]))), float64(BF16ToF32(F32ToBF16(bAt(l, j))))
							refH += ah * bh
							ref += float64(a[i*k+l]) * float64(bAt(l, j))
							mag += math.Abs(ah * bh)
						}
						got := float64(c[i*n+j])
						tolH := float64(2*k+2) * 0x1p-24 * mag
						tol := tolH + (2*0x1p-8+0x1p-16)*mag
						if math.Abs(got-refH) > tolH || math.Abs(got-ref) > tol {
							t.Fatalf("%s: C[%d,%d] = %v, bf16 inputs in float64 %v (tol %.3g), float32 inputs %v (tol %.3g)", name, i, j, got, refH, tolH, ref, tol)
						}
					}
				}
				if first == nil {
					first = c
				} else {
					for i := range c {
						if math.Float32bits(c[i]) != math.Float32bits(first[i]) {
							t.Fatalf("%s: C[%d] = %v, at 1 thread %v", name, i, c[i], first[i])
						}
					}
				}
			}
		}
	}
}

// TestBF16TileTwin: every tile shape gives the bits of bf16TileGo (the
// hardware adds a pair's odd product, then its even one, as the twin
// does), with values whose products are neither tiny nor exact sums.
func TestBF16TileTwin(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	t.Logf("AVX512_BF16 tiles: %v", bf16HasAsm())
	for _, k2 := range []int{0, 1, 5, 37} {
		a := make([]uint16, bf16MR*2*k2+1)
		b := make([]uint16, 4*2*bf16NR*k2+1)
		for i := range a {
			a[i] = F32ToBF16(float32(rng.NormFloat64()))
		}
		for i := range b {
			b[i] = F32ToBF16(float32(rng.NormFloat64()))
		}
		for rows := 1; rows <= bf16MR; rows++ {
			for panels := 1; panels <= 4; panels++ {
				var got, want [bf16MR * bf16TW]float32
				bf16Tile(a, 2*k2, rows, b, 2*bf16NR*k2, panels, k2, &got)
				bf16TileGo(a, 2*k2, rows, b, 2*bf16NR*k2, panels, k2, &want)
				for r := 0; r < rows; r++ {
					for j := 0; j < 16*panels; j++ {
						if g, w := got[r*bf16TW+j], want[r*bf16TW+j]; math.Float32bits(g) != math.Float32bits(w) {
							t.Fatalf("k2=%d tile %dx%d: acc[%d,%d] = %v, twin %v", k2, rows, 16*panels, r, j, g, w)
						}
					}
				}
			}
		}
	}
}

// TestBF16PackBF16: packing bf16 bits gives what packing their float32
// values does.
func TestBF16PackBF16(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	k, n := 9, 21
	f := make([]float32, k*n)
	h := make([]uint16, k*n)
	for i := range f {
		h[i] = F32ToBF16(float32(rng.NormFloat64()))
		f[i] = BF16ToF32(h[i])
	}
	for _, tr := range []bool{false, true} {
		ld := n
		if tr {
			ld = k
		}
		x := bf16PackB(make([]uint16, bf16PackedBSize(k, n)), tr, k, n, f, ld)
		y := bf16PackBF16(make([]uint16, bf16PackedBSize(k, n)), tr, k, n, h, ld)
		for i := range x {
			if x[i] != y[i] {
				t.Fatalf("transB=%v: packed[%d] %#x vs %#x", tr, i, x[i], y[i])
			}
		}
	}
}

// TestMatMulBF16Packed: MatMul and FusedMatMul (bias, residual, Tanh) with
// B prepacked in bf16 (PrepackGemmBBF16, -precision bf16) match the same
// ops in float32 on inputs rounded to bf16 (what the kernel computes, up
// to the order of float32 sums), at 1 and 3 threads, with no allocation
// per run; a bf16 B of the wrong length is an error.
func TestMatMulBF16Packed(t *testing.T) {
	r := rand.New(rand.NewSource(61))
	round := func(x *Tensor) *Tensor {
		y := &Tensor{DType: F32, Shape: append([]int(nil), x.Shape...), Data: append([]float32(nil), x.F32()...)}
		for i, v := range y.F32() {
			y.F32()[i] = BF16ToF32(F32ToBF16(v))
		}
		return y
	}
	for _, c := range []struct{ m, k, n int }{{3, 5, 7}, {13, 37, 45}, {7, 300, 33}, {301, 19, 23}, {12, 256, 64}, {40, 96, 130}} {
		A, B, C := nnRand(r, 2, c.m, c.k), nnRand(r, c.k, c.n), nnRand(r, c.n)
		Z := nnRand(r, 2, c.m, c.n)
		packed, ok := PrepackGemmBBF16(B.F32(), B.Shape, false)
		if !ok {
			t.Fatal("not prepackable")
		}
		BP := &Tensor{DType: BF16, Shape: []int{len(packed)}, Data: packed}
		for _, rc := range []struct {
			op    string
			attrs Attrs
			in    []*Tensor
		}{
			{"MatMul", Attrs{}, []*Tensor{A, B}},
			{"cuvil::FusedMatMul", Attrs{"activation": "Tanh"}, []*Tensor{A, B, C, Z}},
		} {
			rin := append([]*Tensor(nil), rc.in...)
			rin[0], rin[1] = round(A), round(B)
			ref := nnRun(t, rc.op, 13, rc.attrs, 1, rin...)[0]
			for _, threads := range []int{1, 3} {
				in := append([]*Tensor(nil), rc.in...)
				in[1] = BP
				n := nnNode(rc.op, 13, mergeAttrs(rc.attrs, Attrs{GemmPackedAttr: ints64(B.Shape)}), 1, in...)
				n.Pool = NewWorkPool(WithThreads(threads))
				if err := Kernels[rc.op](n); err != nil {
					t.Fatalf("%v %s: %v", c, rc.op, err)
				}
				if !raceEnabled {
					if allocs := testing.AllocsPerRun(5, func() { Kernels[rc.op](n) }); allocs != 0 {
						t.Errorf("%v %s: %v allocations per run", c, rc.op, allocs)
					}
				}
				n.Pool.Close()
				nnCheck(t, fmt.Sprintf("%v/%s/threads=%d", c, rc.op, threads), n.Out[0], ref.Shape, nnF64(ref), 1e-4)
			}
		}
	}
	n := nnNode("MatMul", 13, Attrs{GemmPackedAttr: []int64{4, 20}}, 1, nnRand(r, 3, 4),
		&Tensor{DType: BF16, Shape: []int{80}, Data: make([]uint16, 80)})
	if err := MatMul(n); err == nil {
		t.Fatal("MatMul accepted a bf16 prepacked B of the wrong length")
	}
}

// TestGemmBF16Packed: Gemm and FusedGemm (transB both ways, alpha, beta
// with C as a row vector, a column and a full matrix, FusedGemm's residual
// and Relu) with B prepacked in bf16 (PrepackGemmBBF16 folds transB, as
// -precision bf16 does) against float64 on the bf16-rounded A and B, at
// awkward sizes and 1-3 threads (the same bits at each), no allocation per
// run. The bound is float32 summation error (2k+8 roundings of 2^-24
// relative to the sum of |terms|): products of bf16 values are exact in
// float32. transA=1 with a bf16 B is an error naming the node.
func TestGemmBF16Packed(t *testing.T) {
	r := rand.New(rand.NewSource(62))
	rb := func(v float32) float64 { return float64(BF16ToF32(F32ToBF16(v))) }
	for _, c := range []struct{ m, k, n int }{{3, 5, 7}, {13, 37, 45}, {7, 300, 33}, {301, 19, 23}, {40, 96, 130}, {5, 2048, 17}} {
		for _, transB := range []bool{false, true} {
			for ci, cs := range [][]int{{c.n}, {c.m, 1}, {c.m, c.n}} {
				A := nnRand(r, c.m, c.k)
				bs := []int{c.k, c.n}
				if transB {
					bs = []int{c.n, c.k}
				}
				B, C, Z := nnRand(r, bs...), nnRand(r, cs...), nnRand(r, c.m, c.n)
				packed, ok := PrepackGemmBBF16(B.F32(), B.Shape, transB)
				if !ok {
					t.Fatal("not prepackable")
				}
				BP := &Tensor{DType: BF16, Shape: []int{len(packed)}, Data: packed}
				const alpha, beta = 0.75, -1.5
				for _, op := range []string{"Gemm", "cuvil::FusedGemm"} {
					attrs := Attrs{GemmPackedAttr: ints64(B.Shape), "alpha": float32(alpha), "beta": float32(beta), "transB": int64(0)}
					in := []*Tensor{A, BP, C}
					fused := op == "cuvil::FusedGemm"
					if transB {
						attrs["transB"] = int64(1)
					}
					if fused {
						attrs["activation"] = "Relu"
						in = append(in, Z)
					}
					var first []float32
					for threads := 1; threads <= 3; threads++ {
						n := nnNode(op, 13, attrs, 1, in...)
						n.Pool = NewWorkPool(WithThreads(threads))
						if err := Kernels[op](n); err != nil {
							t.Fatalf("%v %s: %v", c, op, err)
						}
						if !raceEnabled {
							if allocs := testing.AllocsPerRun(3, func() { Kernels[op](n) }); allocs != 0 {
								t.Errorf("%v %s: %v allocations per run", c, op, allocs)
							}
						}
						n.Pool.Close()
						name := fmt.Sprintf("%v transB=%v C%d %s threads=%d", c, transB, ci, op, threads)
						got := n.Out[0].F32()
						if len(got) != c.m*c.n || len(n.Out[0].Shape) != 2 || n.Out[0].Shape[0] != c.m || n.Out[0].Shape[1] != c.n {
							t.Fatalf("%s: output %v", name, n.Out[0].Shape)
						}
						a, b, cv, z := A.F32(), B.F32(), C.F32(), Z.F32()
						for i := 0; i < c.m; i++ {
							for j := 0; j < c.n; j++ {
								var s, mag float64
								for l := 0; l < c.k; l++ {
									bv := b[l*c.n+j]
									if transB {
										bv = b[j*c.k+l]
									}
									p := rb(a[i*c.k+l]) * rb(bv)
									s += p
									mag += math.Abs(p)
								}
								var cij float64
								switch ci {
								case 0:
									cij = float64(cv[j])
								case 1:
									cij = float64(cv[i])
								default:
									cij = float64(cv[i*c.n+j])
								}
								want := alpha*s + beta*cij
								mag = alpha*mag + math.Abs(beta*cij)
								if fused {
									want += float64(z[i*c.n+j])
									mag += math.Abs(float64(z[i*c.n+j]))
									want = math.Max(want, 0)
								}
								if tol := float64(2*c.k+8) * 0x1p-24 * mag; math.Abs(float64(got[i*c.n+j])-want) > tol {
									t.Fatalf("%s: Y[%d,%d] = %v, float64 %v (tol %.3g)", name, i, j, got[i*c.n+j], want, tol)
								}
							}
						}
						if first == nil {
							first = append([]float32(nil), got...)
						} else {
							for i := range got {
								if math.Float32bits(got[i]) != math.Float32bits(first[i]) {
									t.Fatalf("%s: Y[%d] = %v, at 1 thread %v", name, i, got[i], first[i])
								}
							}
						}
					}
				}
			}
		}
	}
	n := nnNode("Gemm", 13, Attrs{GemmPackedAttr: []int64{4, 20}, "transA": int64(1)}, 1, nnRand(r, 4, 3),
		&Tensor{DType: BF16, Shape: []int{bf16PackedBSize(4, 20)}, Data: make([]uint16, bf16PackedBSize(4, 20))})
	if err := Gemm(n); err == nil || !strings.Contains(err.Error(), "transA") {
		t.Fatalf("Gemm with transA and a bf16 B: error %v", err)
	}
}
