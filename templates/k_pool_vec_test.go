package templates

import (
	"fmt"
	"math"
	"math/rand"
	"testing"
)

// TestMaxPoolVecKernels checks maxRows and maxCols (the assembly where the
// CPU has it, else the Go twins) against a float64 reference on awkward
// lengths, with NaN taps, with dst aliasing r0, and with x ending at the
// last tap (the stride-2 kernels read one element past it).
func TestMaxPoolVecKernels(t *testing.T) { checkMaxPoolKernels(t) }

func checkMaxPoolKernels(t *testing.T) {
	r := rand.New(rand.NewSource(21))
	fill := func(n int, nan bool) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = r.Float32()*2 - 1
			if nan && r.Intn(23) == 0 {
				x[i] = float32(math.NaN())
			}
		}
		return x
	}
	same := func(got float32, want float64) bool {
		return got == float32(want) || math.IsNaN(float64(got)) && math.IsNaN(want)
	}
	ref := func(vs ...float32) float64 {
		m := math.Inf(-1)
		for _, v := range vs {
			if math.IsNaN(float64(v)) {
				return math.NaN()
			}
			m = math.Max(m, float64(v))
		}
		return m
	}
	for _, n := range []int{1, 7, 8, 9, 15, 16, 17, 23, 31, 33, 55, 64, 111} {
		for _, nan := range []bool{false, true} {
			a, b, c := fill(n, nan), fill(n, nan), fill(n, nan)
			dst := make([]float32, n)
			maxRows(dst, a, b, c)
			for i := range dst {
				if want := ref(a[i], b[i], c[i]); !same(dst[i], want) {
					t.Fatalf("maxRows n=%d nan=%v: dst[%d] = %v, want %v", n, nan, i, dst[i], want)
				}
			}
			acc := append([]float32(nil), a...)
			maxRows(acc, acc, b, b)
			for i := range acc {
				if want := ref(a[i], b[i]); !same(acc[i], want) {
					t.Fatalf("maxRows in place n=%d nan=%v: dst[%d] = %v, want %v", n, nan, i, acc[i], want)
				}
			}
			for _, s := range []int{1, 2} {
				for _, k := range []int{1, 2, 3, 5} {
					for _, extra := range []int{0, 1, 3} {
						x := fill(s*(n-1)+k+extra, nan)
						y := make([]float32, n)
						done := maxCols(y, x, k, s)
						if done != n && done != n-1 && done != 0 {
							t.Fatalf("maxCols n=%d: did %d outputs", n, done)
						}
						for o := 0; o < done; o++ {
							if want := ref(x[s*o : s*o+k]...); !same(y[o], want) {
								t.Fatalf("maxCols n=%d k=%d s=%d extra=%d nan=%v: y[%d] = %v, want %v", n, k, s, extra, nan, o, y[o], want)
							}
						}
						maxColsGo(y, x, k, s)
						for o := range y {
							if want := ref(x[s*o : s*o+k]...); !same(y[o], want) {
								t.Fatalf("maxColsGo n=%d k=%d s=%d: y[%d] = %v, want %v", n, k, s, o, y[o], want)
							}
						}
					}
				}
			}
		}
	}
}

// TestMaxPoolWide runs float32 MaxPool on planes wide enough for the
// vector kernels (SqueezeNet's 3x3 stride 2 with ceil_mode, 2x2 stride 2,
// 3x3 stride 1 padded, dilated and stride-3 fallbacks) at 1 and 2 threads
// against the float64 reference.
func TestMaxPoolWide(t *testing.T) { checkMaxPoolWide(t) }

func checkMaxPoolWide(t *testing.T) {
	r := rand.New(rand.NewSource(22))
	pool := NewWorkPool(WithThreads(2))
	defer pool.Close()
	for ci, c := range []poolCase{
		{xs: []int{1, 5, 111, 111}, k: []int{3, 3}, s: []int{2, 2}, ceil: true},
		{xs: []int{1, 3, 55, 55}, k: []int{3, 3}, s: []int{2, 2}, ceil: true},
		{xs: []int{1, 7, 27, 27}, k: []int{3, 3}, s: []int{2, 2}, ceil: true},
		{xs: []int{1, 3, 34, 41}, k: []int{3, 3}, s: []int{2, 2}, pads: []int{1, 1, 1, 1}},
		{xs: []int{2, 3, 24, 37}, k: []int{2, 2}, s: []int{2, 2}},
		{xs: []int{1, 4, 19, 33}, k: []int{2, 2}, s: []int{2, 2}, ceil: true},
		{xs: []int{1, 3, 17, 29}, k: []int{3, 3}, s: []int{1, 1}, pads: []int{1, 1, 1, 1}},
		{xs: []int{1, 2, 21, 40}, k: []int{5, 4}, s: []int{1, 2}, pads: []int{2, 1, 2, 2}},
		{xs: []int{1, 2, 21, 40}, k: []int{3, 3}, s: []int{2, 2}, d: []int{2, 2}},
		{xs: []int{1, 2, 21, 52}, k: []int{3, 3}, s: []int{3, 3}, pads: []int{1, 1, 1, 1}},
	} {
		in := nnRand(r, c.xs...)
		shape, want, _ := refPool(nnF64(in), c, "max", 0)
		for _, threads := range []int{1, 2} {
			n := nnNode("MaxPool", 12, c.attrs(), 1, in)
			if threads == 2 {
				n.Pool = pool
			}
			if err := MaxPool(n); err != nil {
				t.Fatal(err)
			}
			nnCheck(t, fmt.Sprintf("case %d, %d threads", ci, threads), n.Out[0], shape, want, 0)
		}
	}
}
