package templates

import (
	"fmt"
	"math"
	"math/rand"
	"testing"
)

// xtDFT is the textbook transform of x (complex, length N) zero-padded or
// cut to L, bins 0..K-1.
func xtDFT(re, im []float64, L, K int, inverse bool) ([]float64, []float64) {
	or, oi := make([]float64, K), make([]float64, K)
	sign := -1.0
	if inverse {
		sign = 1
	}
	for k := 0; k < K; k++ {
		for j := 0; j < L && j < len(re); j++ {
			a := sign * 2 * math.Pi * float64(j*k) / float64(L)
			or[k] += re[j]*math.Cos(a) - im[j]*math.Sin(a)
			oi[k] += re[j]*math.Sin(a) + im[j]*math.Cos(a)
		}
		if inverse {
			or[k] /= float64(L)
			oi[k] /= float64(L)
		}
	}
	return or, oi
}

func TestDFT(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	for _, dt := range []DType{F32, F64} {
		for _, c := range []int{1, 2} {
			for _, axis := range []int{1, 2, -2} {
				shape := []int{2, 7, 8, c}
				ax := axis
				if ax < 0 {
					ax += len(shape)
				}
				for _, length := range []int{0, 5, 9, 16} {
					for _, inverse := range []int64{0, 1} {
						for _, onesided := range []int64{0, 1} {
							if inverse == 1 && onesided == 1 {
								continue // the inverse real transform: TestDFTInverseReal
							}
							x := miscRepr(dt, xtRandF(r, 2*7*8*c, -1, 1))
							in := []*Tensor{miscTensorF(dt, x, shape...)}
							L := shape[ax]
							if length > 0 {
								in = append(in, miscTensorI64([]int64{int64(length)}))
								L = length
							}
							K := L
							if onesided == 1 {
								K = L/2 + 1
							}
							n := &Node{Op: "DFT", Version: 17, Attrs: Attrs{"axis": int64(axis), "inverse": inverse, "onesided": onesided}, In: in, Out: []*Tensor{{}}}
							if (length+axis)%2 == 0 { // DFT-20: the axis as input 2
								for len(in) < 2 {
									in = append(in, nil)
								}
								n = &Node{Op: "DFT", Version: 20, Attrs: Attrs{"inverse": inverse, "onesided": onesided},
									In: append(in, miscTensorI64([]int64{int64(axis)})), Out: []*Tensor{{}}}
							}
							miscRun(t, DFT, n)
							oshape := append([]int(nil), shape...)
							oshape[ax], oshape[3] = K, 2
							want := make([]float64, 2*7*8*2*K/shape[ax])
							st := []int{7 * 8 * c, 8 * c, c}
							ost := []int{oshape[1] * oshape[2] * 2, oshape[2] * 2, 2}
							for a := 0; a < 2; a++ {
								for b := 0; b < 8; b++ { // the other axis
									re, im := make([]float64, shape[ax]), make([]float64, shape[ax])
									other := 3 - ax
									for j := range re {
										at := a*st[0] + j*st[ax] + b%shape[other]*st[other]
										re[j] = x[at]
										if c == 2 {
											im[j] = x[at+1]
										}
									}
									if b >= shape[other] {
										continue
									}
									or, oi := xtDFT(re, im, L, K, inverse == 1)
									for k := 0; k < K; k++ {
										at := a*ost[0] + k*ost[ax] + b*ost[other]
										want[at], want[at+1] = or[k], oi[k]
									}
								}
							}
							miscCheckClose(t, "DFT", n.Out[0], want, oshape, 10*miscTol(dt))
							miscNoAllocs(t, n, DFT)
						}
					}
				}
			}
		}
	}
}

// TestDFTInverseReal checks inverse+onesided (the inverse of a real
// transform) against the direct sum over the conjugate-symmetric
// spectrum, and that it inverts the forward onesided transform.
func TestDFTInverseReal(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	for _, L := range []int{7, 8, 10, 1, 2} {
		for _, given := range []bool{false, true} {
			if !given && L%2 == 1 {
				continue // 2*(bins-1) is even
			}
			t.Run(fmt.Sprint(L, given), func(t *testing.T) {
				B, inner := 3, 4
				x := xtRandF(r, B*L*inner, -1, 1)
				fw := &Node{Op: "DFT", Version: 20, Attrs: Attrs{"onesided": int64(1)},
					In: []*Tensor{miscTensorF(F64, x, B, L, inner, 1), miscTensorI64([]int64{int64(L)}), miscTensorI64([]int64{1})}, Out: []*Tensor{{}}}
				miscRun(t, DFT, fw)
				K := L/2 + 1
				spec := fw.Out[0]
				in := []*Tensor{spec, nil, miscTensorI64([]int64{-3})}
				if given {
					in[1] = miscTensorI64([]int64{int64(L)})
				}
				inv := &Node{Op: "DFT", Version: 20, Attrs: Attrs{"inverse": int64(1), "onesided": int64(1)}, In: in, Out: []*Tensor{{}}}
				miscRun(t, DFT, inv)
				miscCheckClose(t, "irfft(rfft(x))", inv.Out[0], x, []int{B, L, inner, 1}, 1e-12)
				// Direct: x[n] = (1/L) sum_k Re(X[k] e^(2 pi i kn/L)), X[L-k] = conj(X[k]).
				s := spec.F64()
				want := make([]float64, 0, B*L*inner)
				for b := 0; b < B; b++ {
					for n := 0; n < L; n++ {
						for q := 0; q < inner; q++ {
							v := 0.0
							for k := 0; k < L; k++ {
								kk, sg := k, 1.0
								if k >= K {
									kk, sg = L-k, -1
								}
								re, im := s[((b*K+kk)*inner+q)*2], sg*s[((b*K+kk)*inner+q)*2+1]
								a := 2 * math.Pi * float64(k*n) / float64(L)
								v += re*math.Cos(a) - im*math.Sin(a)
							}
							want = append(want, v/float64(L))
						}
					}
				}
				miscCheckClose(t, "irfft", inv.Out[0], want, []int{B, L, inner, 1}, 1e-12)
			})
		}
	}
}

func TestSTFT(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	for _, c := range []int{1, 2} {
		for _, L := range []int{8, 9} {
			for _, windowed := range []bool{false, true} {
				for _, onesided := range []int64{0, 1} {
					B, S, step := 2, 37, 5
					x := miscRepr(F32, xtRandF(r, B*S*c, -1, 1))
					win := miscRepr(F32, xtRandF(r, L, 0, 1))
					in := []*Tensor{miscTensorF(F32, x, B, S, c), miscTensorI64([]int64{int64(step)}), nil, nil}
					if windowed {
						in[2] = miscTensorF(F32, win, L)
					} else {
						in[3] = miscTensorI64([]int64{int64(L)})
					}
					n := &Node{Op: "STFT", Version: 17, Attrs: Attrs{"onesided": onesided}, In: in, Out: []*Tensor{{}}}
					miscRun(t, STFT, n)
					F := (S-L)/step + 1
					K := L
					if onesided == 1 {
						K = L/2 + 1
					}
					var want []float64
					for b := 0; b < B; b++ {
						for f := 0; f < F; f++ {
							re, im := make([]float64, L), make([]float64, L)
							for j := 0; j < L; j++ {
								w := 1.0
								if windowed {
									w = win[j]
								}
								re[j] = x[(b*S+f*step+j)*c] * w
								if c == 2 {
									im[j] = x[(b*S+f*step+j)*c+1] * w
								}
							}
							or, oi := xtDFT(re, im, L, K, false)
							for k := 0; k < K; k++ {
								want = append(want, or[k], oi[k])
							}
						}
					}
					miscCheckClose(t, "STFT", n.Out[0], want, []int{B, F, K, 2}, 1e-4)
					miscNoAllocs(t, n, STFT)
				}
			}
		}
	}
}

func TestWindows(t *testing.T) {
	for _, size := range []int{1, 2, 11} {
		for _, periodic := range []int64{0, 1} {
			for op, f := range map[string]func(x float64) float64{
				"HannWindow":     func(x float64) float64 { return math.Pow(math.Sin(math.Pi*x), 2) },
				"HammingWindow":  func(x float64) float64 { return 25.0/46 - 21.0/46*math.Cos(2*math.Pi*x) },
				"BlackmanWindow": func(x float64) float64 { return 0.42 - 0.5*math.Cos(2*math.Pi*x) + 0.08*math.Cos(4*math.Pi*x) },
			} {
				n := &Node{Op: op, Version: 17, Attrs: Attrs{"periodic": periodic, "output_datatype": int64(F64)}, In: []*Tensor{miscTensorI32([]int32{int32(size)})}, Out: []*Tensor{{}}}
				miscRun(t, Kernels[op], n)
				N := size
				if periodic == 0 {
					N--
				}
				want := make([]float64, size)
				for i := range want {
					want[i] = 1
					if N > 0 {
						want[i] = f(float64(i) / float64(N))
					}
				}
				miscCheckClose(t, op, n.Out[0], want, []int{size}, 1e-12)
			}
		}
	}
}

func TestMelWeightMatrix(t *testing.T) {
	bins, dftLen, rate, lo, hi := 7, 33, 16000, 50.0, 7000.0
	in := []*Tensor{miscTensorI64([]int64{int64(bins)}), miscTensorI64([]int64{int64(dftLen)}), miscTensorI64([]int64{int64(rate)}),
		miscTensorF(F32, []float64{lo}), miscTensorF(F32, []float64{hi})}
	n := &Node{Op: "MelWeightMatrix", Version: 17, In: in, Out: []*Tensor{{}}}
	miscRun(t, MelWeightMatrix, n)
	// Reference: band edges evenly spaced in mel, in spectrogram bins.
	mel := func(hz float64) float64 { return 2595 * math.Log10(1+hz/700) }
	hz := func(m float64) float64 { return 700 * (math.Pow(10, m/2595) - 1) }
	spec := dftLen/2 + 1
	edge := make([]int, bins+2)
	for i := range edge {
		m := mel(lo) + float64(i)*(mel(hi)-mel(lo))/float64(bins+2)
		edge[i] = int(math.Floor(float64(dftLen+1) * hz(m) / float64(rate)))
	}
	want := make([]float64, spec*bins)
	for b := 0; b < bins; b++ {
		l, c, h := edge[b], edge[b+1], edge[b+2]
		for j := 0; j < spec; j++ {
			v := 0.0
			switch {
			case j == c:
				v = 1
			case j > l && j < c:
				v = float64(j-l) / float64(c-l)
			case j > c && j < h:
				v = float64(h-j) / float64(h-c)
			}
			want[j*bins+b] = v
		}
	}
	miscCheckClose(t, "MelWeightMatrix", n.Out[0], want, []int{spec, bins}, 1e-6)
}
