package templates

import (
	"fmt"
	"math"
	"math/rand"
	"testing"
)

func positive(t *Tensor) *Tensor {
	for i, v := range t.F32() {
		t.F32()[i] = float32(math.Abs(float64(v))) + 0.2
	}
	return t
}

func TestBatchNormalization(t *testing.T) {
	r := rand.New(rand.NewSource(19))
	for _, xs := range [][]int{{2, 3, 5, 7}, {3, 4}, {2, 3, 4, 3, 2}} {
		C, inner := xs[1], 1
		for _, d := range xs[2:] {
			inner *= d
		}
		X := nnRand(r, xs...)
		for _, spatial := range []bool{true, false} {
			pc := C
			if !spatial {
				pc = C * inner
			}
			S, B, M, V := nnRand(r, pc), nnRand(r, pc), nnRand(r, pc), positive(nnRand(r, pc))
			for _, dt := range nnFloatTypes {
				in := nnInputsAs([]*Tensor{X, S, B, M, V}, dt)
				x, s, b, m, v := nnF64(in[0]), nnF64(in[1]), nnF64(in[2]), nnF64(in[3]), nnF64(in[4])
				eps := float64(float32(1e-3))
				want := make([]float64, len(x))
				for i := range x {
					c := (i / inner) % C
					j := c
					if !spatial {
						j = c*inner + i%inner
					}
					want[i] = (x[i]-m[j])/math.Sqrt(v[j]+eps)*s[j] + b[j]
				}
				for _, ver := range []int{1, 6, 7, 9, 14, 15} {
					if !spatial && ver >= 9 {
						continue
					}
					attrs := Attrs{"epsilon": float32(1e-3)}
					if ver < 9 {
						attrs["spatial"] = map[bool]int64{true: 1, false: 0}[spatial]
					}
					if ver < 7 {
						attrs["is_test"] = int64(1)
					}
					got := nnRun(t, "BatchNormalization", ver, attrs, 1, in...)
					nnCheck(t, fmt.Sprintf("BN v%d %v %v spatial %v", ver, dt, xs, spatial), got[0], xs, want, nnTol(dt)*10)
				}
			}
		}
	}
}

// TestBatchNormTraining mirrors ONNX's _batchnorm_training_mode reference.
func TestBatchNormTraining(t *testing.T) {
	r := rand.New(rand.NewSource(20))
	xs := []int{3, 4, 5, 2}
	C, inner := 4, 10
	X, S, B, M, V := nnRand(r, xs...), nnRand(r, C), nnRand(r, C), nnRand(r, C), positive(nnRand(r, C))
	x, s, b, m, v := nnF64(X), nnF64(S), nnF64(B), nnF64(M), nnF64(V)
	bm, bv := make([]float64, C), make([]float64, C)
	cnt := float64(len(x) / C)
	for i, val := range x {
		bm[(i/inner)%C] += val / cnt
	}
	for i, val := range x {
		c := (i / inner) % C
		bv[c] += (val - bm[c]) * (val - bm[c]) / cnt
	}
	mom, eps := float64(float32(0.8)), float64(float32(1e-5))
	want := make([]float64, len(x))
	for i := range x {
		c := (i / inner) % C
		want[i] = (x[i]-bm[c])/math.Sqrt(bv[c]+eps)*s[c] + b[c]
	}
	rm, rv := make([]float64, C), make([]float64, C)
	for c := range rm {
		rm[c] = m[c]*mom + bm[c]*(1-mom)
		rv[c] = v[c]*mom + bv[c]*(1-mom)
	}
	got := nnRun(t, "BatchNormalization", 15, Attrs{"training_mode": int64(1), "momentum": float32(0.8)}, 3, X, S, B, M, V)
	nnCheck(t, "BN training Y", got[0], xs, want, 1e-5)
	nnCheck(t, "BN training running_mean", got[1], []int{C}, rm, 1e-5)
	nnCheck(t, "BN training running_var", got[2], []int{C}, rv, 1e-5)
	got = nnRun(t, "BatchNormalization", 9, Attrs{"momentum": float32(0.8)}, 5, X, S, B, M, V)
	nnCheck(t, "BN v9 training saved_mean", got[3], []int{C}, bm, 1e-5)
	nnCheck(t, "BN v9 training saved_var", got[4], []int{C}, bv, 1e-5)
	// test_batchnorm_example (inference): x = [[[[-1,0,1]],[[2,3,4]]]], s=[1,1.5], b=[0,1], mean=[0,3], var=[1,1.5]
	x2 := nnT([]int{1, 2, 1, 3}, -1, 0, 1, 2, 3, 4)
	y := nnRun(t, "BatchNormalization", 15, nil, 1, x2, nnT([]int{2}, 1, 1.5), nnT([]int{2}, 0, 1), nnT([]int{2}, 0, 3), nnT([]int{2}, 1, 1.5))
	e := 1 / math.Sqrt(1+1e-5)
	e2 := 1.5 / math.Sqrt(1.5+1e-5)
	nnCheck(t, "batchnorm_example", y[0], []int{1, 2, 1, 3}, []float64{-e, 0, e, 1 - e2, 1, 1 + e2}, 1e-6)
}

func TestInstanceLayerNorm(t *testing.T) {
	r := rand.New(rand.NewSource(21))
	xs := []int{2, 3, 5, 7}
	X, S, B := nnRand(r, xs...), nnRand(r, 3), nnRand(r, 3)
	for _, dt := range nnFloatTypes {
		in := nnInputsAs([]*Tensor{X, S, B}, dt)
		x, s, b := nnF64(in[0]), nnF64(in[1]), nnF64(in[2])
		want := make([]float64, len(x))
		for row := 0; row < 6; row++ {
			seg := x[row*35 : (row+1)*35]
			var mu, vr float64
			for _, v := range seg {
				mu += v / 35
			}
			for _, v := range seg {
				vr += (v - mu) * (v - mu) / 35
			}
			for i, v := range seg {
				want[row*35+i] = (v-mu)/math.Sqrt(vr+float64(float32(1e-5)))*s[row%3] + b[row%3]
			}
		}
		for _, ver := range []int{1, 6} {
			got := nnRun(t, "InstanceNormalization", ver, nil, 1, in...)
			nnCheck(t, fmt.Sprintf("InstanceNormalization v%d %v", ver, dt), got[0], xs, want, nnTol(dt)*10)
		}
		for _, axis := range []int{0, 1, 2, 3, -1, -2} {
			a := (axis + 4) % 4
			rows, inner := 1, 1
			for _, d := range xs[:a] {
				rows *= d
			}
			for _, d := range xs[a:] {
				inner *= d
			}
			for _, suffix := range []bool{false, true} {
				sshape := xs[a:]
				if suffix {
					sshape = xs[3:] // broadcast along the last dim only
				}
				Sc, Bi := nnRand(r, sshape...), nnRand(r, sshape...)
				p := nnInputsAs([]*Tensor{Sc, Bi}, dt)
				sc, bi := nnF64(p[0]), nnF64(p[1])
				want := make([]float64, len(x))
				mean, inv := make([]float64, rows), make([]float64, rows)
				for row := 0; row < rows; row++ {
					seg := x[row*inner : (row+1)*inner]
					var mu, vr float64
					for _, v := range seg {
						mu += v / float64(inner)
					}
					for _, v := range seg {
						vr += (v - mu) * (v - mu) / float64(inner)
					}
					mean[row], inv[row] = mu, 1/math.Sqrt(vr+1e-3)
					for i, v := range seg {
						want[row*inner+i] = (v-mu)*inv[row]*sc[i%len(sc)] + bi[i%len(bi)]
					}
				}
				mshape := append([]int{}, xs...)
				for i := a; i < 4; i++ {
					mshape[i] = 1
				}
				got := nnRun(t, "LayerNormalization", 17, Attrs{"axis": int64(axis), "epsilon": float32(1e-3)}, 3, in[0], p[0], p[1])
				what := fmt.Sprintf("LayerNormalization %v axis %d suffix %v", dt, axis, suffix)
				nnCheck(t, what, got[0], xs, want, nnTol(dt)*20)
				if dt == F16 || dt == BF16 {
					if got[1].DType != F32 {
						t.Fatalf("%s: Mean dtype %v, want f32", what, got[1].DType)
					}
				}
				nnCheck(t, what+" Mean", got[1], mshape, mean, 1e-5)
				nnCheck(t, what+" InvStdDev", got[2], mshape, inv, 1e-4)
			}
		}
	}
}

func TestLRNLpMVN(t *testing.T) {
	r := rand.New(rand.NewSource(22))
	xs := []int{2, 7, 3, 5}
	X := nnRand(r, xs...)
	for _, dt := range nnFloatTypes {
		in := nnAs(X, dt)
		x := nnF64(in)
		for _, size := range []int{1, 3, 4, 9} {
			alpha, beta, bias := float64(float32(2e-2)), float64(float32(0.6)), float64(float32(1.5))
			want := make([]float64, len(x))
			for i := range x {
				c := (i / 15) % 7
				b := i / (7 * 15)
				ss := 0.0
				for cc := c - (size-1)/2; cc <= c+int(math.Ceil(float64(size-1)/2)); cc++ {
					if cc >= 0 && cc < 7 {
						v := x[(b*7+cc)*15+i%15]
						ss += v * v
					}
				}
				want[i] = x[i] / math.Pow(bias+alpha/float64(size)*ss, beta)
			}
			for _, v := range []int{1, 13} {
				got := nnRun(t, "LRN", v, Attrs{"size": int64(size), "alpha": float32(2e-2), "beta": float32(0.6), "bias": float32(1.5)}, 1, in)
				nnCheck(t, fmt.Sprintf("LRN v%d %v size %d", v, dt, size), got[0], xs, want, nnTol(dt)*4)
			}
		}
		for _, axis := range []int{0, 1, 3, -1} {
			a := (axis + 4) % 4
			for _, p := range []int64{1, 2} {
				want := make([]float64, len(x))
				strides := []int{105, 15, 5, 1}
				for i := range x {
					base := i - (i/strides[a])%xs[a]*strides[a]
					s := 0.0
					for k := 0; k < xs[a]; k++ {
						v := x[base+k*strides[a]]
						if p == 1 {
							s += math.Abs(v)
						} else {
							s += v * v
						}
					}
					if p == 2 {
						s = math.Sqrt(s)
					}
					want[i] = x[i] / s
				}
				got := nnRun(t, "LpNormalization", 1, Attrs{"axis": int64(axis), "p": p}, 1, in)
				nnCheck(t, fmt.Sprintf("LpNormalization %v axis %d p %d", dt, axis, p), got[0], xs, want, nnTol(dt)*4)
			}
		}
		for _, axes := range [][]int64{nil, {1}, {0, 3}, {-1, -2}} {
			red := map[int]bool{0: true, 2: true, 3: true}
			if axes != nil {
				red = map[int]bool{}
				for _, a := range axes {
					red[(int(a)+4)%4] = true
				}
			}
			key := func(i int) int {
				k := 0
				for d, st := range []int{105, 15, 5, 1} {
					if !red[d] {
						k = k*xs[d] + (i/st)%xs[d]
					}
				}
				return k
			}
			sum, sq, cnt := map[int]float64{}, map[int]float64{}, map[int]float64{}
			for i, v := range x {
				sum[key(i)] += v
				sq[key(i)] += v * v
				cnt[key(i)]++
			}
			want := make([]float64, len(x))
			for i, v := range x {
				k := key(i)
				m := sum[k] / cnt[k]
				want[i] = (v - m) / (math.Sqrt(sq[k]/cnt[k]-m*m) + 1e-9)
			}
			attrs := Attrs{}
			if axes != nil {
				attrs["axes"] = axes
			}
			for _, v := range []int{9, 13} {
				got := nnRun(t, "MeanVarianceNormalization", v, attrs, 1, in)
				nnCheck(t, fmt.Sprintf("MVN v%d %v axes %v", v, dt, axes), got[0], xs, want, nnTol(dt)*20)
			}
		}
	}
}

func TestNormNoAlloc(t *testing.T) {
	r := rand.New(rand.NewSource(23))
	if a := nnAllocs(t, nnNode("BatchNormalization", 15, nil, 1, nnRand(r, 2, 3, 5, 5), nnRand(r, 3), nnRand(r, 3), nnRand(r, 3), positive(nnRand(r, 3))), BatchNormalization); a != 0 {
		t.Fatalf("BatchNormalization allocates %v", a)
	}
	if a := nnAllocs(t, nnNode("LayerNormalization", 17, nil, 3, nnRand(r, 2, 3, 8), nnRand(r, 8), nnRand(r, 8)), LayerNormalization); a != 0 {
		t.Fatalf("LayerNormalization allocates %v", a)
	}
	if a := nnAllocs(t, nnNode("LRN", 13, Attrs{"size": int64(3)}, 1, nnRand(r, 2, 5, 3, 3)), LRN); a != 0 {
		t.Fatalf("LRN allocates %v", a)
	}
}
