package templates

import (
	"math"
	"math/rand"
	"testing"
)

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
