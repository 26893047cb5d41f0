package templates

import (
	"math"
	"math/rand"
	"testing"
)

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
