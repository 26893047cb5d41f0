package templates

import (
	"fmt"
	"math"
	"math/rand"
	"slices"
	"strings"
	"testing"
)

// Tests for k_loss.go, k_signal.go, k_text.go and k_train.go: each kernel
// against a float64 reference written here, on random odd-sized data.

func xtRandF(r *rand.Rand, n int, lo, hi float64) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = lo + r.Float64()*(hi-lo)
	}
	return v
}

func TestLosses(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for _, dt := range []DType{F32, F64} {
		for _, shape := range [][]int{{5, 3}, {3, 7, 5}, {2, 3, 3, 5}} {
			N, C, D := shape[0], shape[1], 1
			for _, d := range shape[2:] {
				D *= d
			}
			x := miscRepr(dt, xtRandF(r, N*C*D, -3, 3))
			w := miscRepr(dt, xtRandF(r, C, 0.2, 2))
			tgt := make([]int64, N*D)
			for i := range tgt {
				tgt[i] = int64(r.Intn(C))
			}
			tgt[0] = 1 // the ignored class appears at least once
			for _, red := range []string{"none", "sum", "mean"} {
				for _, weighted := range []bool{false, true} {
					for _, ignore := range []bool{false, true} {
						for _, op := range []string{"NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss"} {
							attrs := Attrs{"reduction": red}
							if ignore {
								attrs["ignore_index"] = int64(1)
							}
							in := []*Tensor{miscTensorF(dt, x, shape...), miscTensorI64(tgt, append([]int{N}, shape[2:]...)...)}
							if weighted {
								in = append(in, miscTensorF(dt, w, C))
							}
							n := &Node{Op: op, Version: 13, Attrs: attrs, In: in, Out: []*Tensor{{}, {}}}
							miscRun(t, Kernels[op], n)
							// Reference.
							lp := make([]float64, len(x))
							copy(lp, x)
							if op == "SoftmaxCrossEntropyLoss" {
								for b := 0; b < N; b++ {
									for d := 0; d < D; d++ {
										s := 0.0
										for c := 0; c < C; c++ {
											s += math.Exp(x[(b*C+c)*D+d])
										}
										for c := 0; c < C; c++ {
											lp[(b*C+c)*D+d] = math.Log(math.Exp(x[(b*C+c)*D+d]) / s)
										}
									}
								}
								miscCheckClose(t, op+" log_prob", n.Out[1], lp, shape, miscTol(dt))
							}
							loss := make([]float64, N*D)
							var sum, wsum float64
							for b := 0; b < N; b++ {
								for d := 0; d < D; d++ {
									c := int(tgt[b*D+d])
									if ignore && c == 1 {
										continue
									}
									wt := 1.0
									if weighted {
										wt = w[c]
									}
									loss[b*D+d] = -lp[(b*C+c)*D+d] * wt
									sum += loss[b*D+d]
									wsum += wt
								}
							}
							what := op + " " + red
							switch red {
							case "none":
								miscCheckClose(t, what, n.Out[0], loss, append([]int{N}, shape[2:]...), miscTol(dt))
							case "sum":
								miscCheckClose(t, what, n.Out[0], []float64{sum}, nil, miscTol(dt))
							case "mean":
								miscCheckClose(t, what, n.Out[0], []float64{sum / wsum}, nil, miscTol(dt))
							}
							miscNoAllocs(t, n, Kernels[op])
						}
					}
				}
			}
		}
	}
	n := &Node{Op: "NegativeLogLikelihoodLoss", Version: 13, In: []*Tensor{miscTensorF(F32, []float64{1, 2}, 1, 2), miscTensorI64([]int64{2}, 1)}, Out: []*Tensor{{}}}
	if err := NegativeLogLikelihoodLoss(n); err == nil {
		t.Error("target outside [0, C) accepted")
	}
}

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

func TestStringNormalizer(t *testing.T) {
	in := []string{"Monday", "tuesday", "MONDAY", "Straße", "x"}
	for _, c := range []struct {
		action    string
		sensitive int64
		stop      []string
		twoD      bool
		want      []string
	}{
		{"NONE", 0, nil, false, in},
		{"LOWER", 0, []string{"monday"}, false, []string{"tuesday", "straße", "x"}},
		{"UPPER", 1, []string{"monday"}, true, []string{"MONDAY", "TUESDAY", "MONDAY", "STRAßE", "X"}}, // simple case mapping, as towupper
		{"UPPER", 1, []string{"Monday", "MONDAY"}, false, []string{"TUESDAY", "STRAßE", "X"}},
		{"NONE", 0, []string{"MONDAY", "TUESDAY", "STRASSE", "X", "straße"}, true, []string{""}},
	} {
		x := &Tensor{}
		if c.twoD {
			x.Resize(String, 1, len(in))
		} else {
			x.Resize(String, len(in))
		}
		copy(x.Str(), in)
		n := &Node{Op: "StringNormalizer", Version: 10, Attrs: Attrs{"case_change_action": c.action, "is_case_sensitive": c.sensitive, "stopwords": c.stop}, In: []*Tensor{x}, Out: []*Tensor{{}}}
		miscRun(t, StringNormalizer, n)
		got := n.Out[0]
		wantShape := []int{len(c.want)}
		if c.twoD {
			wantShape = []int{1, len(c.want)}
		}
		if !slices.Equal(got.Shape, wantShape) || strings.Join(got.Str(), "|") != strings.Join(c.want, "|") {
			t.Errorf("%+v: got %v %q", c, got.Shape, got.Str())
		}
	}
}

func TestTfIdfVectorizer(t *testing.T) {
	r := rand.New(rand.NewSource(4))
	for trial := 0; trial < 40; trial++ {
		// A pool of unigrams, bigrams and trigrams over tokens 0..5.
		var pool []int64
		var counts []int64
		var grams [][]int64
		for size := 1; size <= 3; size++ {
			counts = append(counts, int64(len(pool)))
			seen := map[[3]int64]bool{}
			for k := 0; k < 4; k++ {
				var g [3]int64
				for j := 0; j < size; j++ {
					g[j] = int64(r.Intn(6))
				}
				if seen[g] {
					continue
				}
				seen[g] = true
				pool = append(pool, g[:size]...)
				grams = append(grams, append([]int64(nil), g[:size]...))
			}
		}
		idx := r.Perm(len(grams))
		indexes := make([]int64, len(grams))
		weights := make([]float32, len(grams))
		for i := range indexes {
			indexes[i] = int64(idx[i])
			weights[i] = float32(0.5 + r.Float64())
		}
		minN, maxN, maxSkip := 1+r.Intn(2), 2+r.Intn(2), r.Intn(3)
		mode := []string{"TF", "IDF", "TFIDF"}[trial%3]
		B, L := 3, 11
		xs := make([]int32, B*L)
		for i := range xs {
			xs[i] = int32(r.Intn(6))
		}
		n := &Node{Op: "TfIdfVectorizer", Version: 9, Attrs: Attrs{"min_gram_length": int64(minN), "max_gram_length": int64(maxN),
			"max_skip_count": int64(maxSkip), "mode": mode, "ngram_counts": counts, "ngram_indexes": indexes, "pool_int64s": pool, "weights": weights},
			In: []*Tensor{miscTensorI32(xs, B, L)}, Out: []*Tensor{{}}}
		miscRun(t, TfIdfVectorizer, n)
		// Reference: every (start, skip, size) n-gram compared with every pool entry.
		width := len(grams)
		want := make([]float64, B*width)
		for b := 0; b < B; b++ {
			cnt := make([]float64, width)
			for g, gram := range grams {
				size := len(gram)
				if size < minN || size > maxN {
					continue
				}
				for skip := 0; skip <= maxSkip; skip++ {
					if size == 1 && skip > 0 {
						break
					}
					for start := 0; start+(size-1)*(skip+1) < L; start++ {
						ok := true
						for j := 0; j < size; j++ {
							if int64(xs[b*L+start+j*(skip+1)]) != gram[j] {
								ok = false
							}
						}
						if ok {
							cnt[indexes[g]]++
						}
					}
				}
			}
			for j, c := range cnt {
				w := float64(weights[j])
				switch mode {
				case "TF":
					want[b*width+j] = c
				case "IDF":
					if c > 0 {
						want[b*width+j] = w
					}
				case "TFIDF":
					want[b*width+j] = c * w
				}
			}
		}
		miscCheckClose(t, "TfIdfVectorizer "+mode, n.Out[0], want, []int{B, width}, 1e-6)
		miscNoAllocs(t, n, TfIdfVectorizer)
	}
}

func TestOptimizers(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	shapes := [][]int{{3}, {5, 7}}
	for _, dt := range []DType{F32, F64} {
		for _, step := range []int64{0, 3} {
			for _, op := range []string{"Adagrad", "Adam", "Momentum", "Nesterov"} {
				groups := map[string]int{"Adagrad": 3, "Adam": 4, "Momentum": 3, "Nesterov": 3}[op]
				rate := float64(float32(0.05)) // R is a float tensor
				in := []*Tensor{miscTensorF(F32, []float64{rate}), miscTensorI64([]int64{step})}
				vals := make([][][]float64, groups) // [group][tensor]
				for g := 0; g < groups; g++ {
					for _, s := range shapes {
						lo := -1.0
						if g == groups-1 && op != "Momentum" && op != "Nesterov" {
							lo = 0 // squared-gradient accumulators are not negative
						}
						v := miscRepr(dt, xtRandF(r, xtProd(s), lo, 1))
						vals[g] = append(vals[g], v)
						in = append(in, miscTensorF(dt, v, s...))
					}
				}
				attrs := Attrs{"norm_coefficient": float32(0.01)}
				kop := op
				switch op {
				case "Adagrad":
					attrs["decay_factor"], attrs["epsilon"] = float32(0.1), float32(1e-3)
				case "Adam":
					attrs["alpha"], attrs["beta"], attrs["epsilon"], attrs["norm_coefficient_post"] = float32(0.85), float32(0.95), float32(1e-3), float32(0.02)
				case "Momentum", "Nesterov":
					attrs["alpha"], attrs["beta"], attrs["mode"] = float32(0.9), float32(0.7), map[string]string{"Momentum": "standard", "Nesterov": "nesterov"}[op]
					kop = "Momentum"
				}
				f := func(name string) float64 { return float64(attrs[name].(float32)) }
				outs := make([]*Tensor, (groups-1)*len(shapes))
				for i := range outs {
					outs[i] = &Tensor{}
				}
				n := &Node{Op: kop, Version: 1, Attrs: attrs, In: in, Out: outs}
				miscRun(t, Kernels["ai.onnx.preview.training::"+kop], n)
				for k, s := range shapes {
					var want [3][]float64
					for i, x := range vals[0][k] {
						g := f("norm_coefficient")*x + vals[1][k][i]
						var out [3]float64
						switch op {
						case "Adagrad":
							h := vals[2][k][i] + g*g
							out[0] = x - rate/(1+float64(step)*f("decay_factor"))*g/(math.Sqrt(h)+f("epsilon"))
							out[1] = h
						case "Adam":
							a, b := f("alpha"), f("beta")
							v := a*vals[2][k][i] + (1-a)*g
							h := b*vals[3][k][i] + (1-b)*g*g
							rr := rate
							if step > 0 {
								rr = rate * math.Sqrt(1-math.Pow(b, float64(step))) / (1 - math.Pow(a, float64(step)))
							}
							out[0] = (1 - f("norm_coefficient_post")) * (x - rr*v/(math.Sqrt(h)+f("epsilon")))
							out[1], out[2] = v, h
						default:
							beta := f("beta")
							if step == 0 {
								beta = 1
							}
							v := f("alpha")*vals[2][k][i] + beta*g
							out[0], out[1] = x-rate*v, v
							if op == "Nesterov" {
								out[0] = x - rate*(g+f("alpha")*v)
							}
						}
						for j := 0; j < groups-1; j++ {
							want[j] = append(want[j], out[j])
						}
					}
					for j := 0; j < groups-1; j++ {
						miscCheckClose(t, op, n.Out[j*len(shapes)+k], want[j], s, miscTol(dt))
					}
				}
			}
		}
	}
}

func xtProd(s []int) int {
	p := 1
	for _, d := range s {
		p *= d
	}
	return p
}
