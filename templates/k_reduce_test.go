package templates

import (
	"fmt"
	"math"
	"math/rand"
	"testing"
)

// refReduce reduces x (shape xs) over axes with op, in float64.
func refReduce(x []float64, xs []int, axes []int, keep bool, op string) ([]int, []float64) {
	r := len(xs)
	red := make([]bool, r)
	for _, a := range axes {
		if a < 0 {
			a += r
		}
		red[a] = true
	}
	if len(axes) == 0 {
		for i := range red {
			red[i] = true
		}
	}
	var shape, oshape []int
	for i, d := range xs {
		if !red[i] {
			shape = append(shape, d)
			oshape = append(oshape, d)
		} else {
			oshape = append(oshape, 1)
			if keep {
				shape = append(shape, 1)
			}
		}
	}
	size := 1
	for _, d := range shape {
		size *= d
	}
	groups := make([][]float64, size)
	idx := make([]int, r)
	for i, v := range x {
		rem := i
		for d := r - 1; d >= 0; d-- {
			idx[d] = rem % xs[d]
			rem /= xs[d]
		}
		o := 0
		for d := 0; d < r; d++ {
			v := idx[d]
			if red[d] {
				v = 0
			}
			o = o*oshape[d] + v
		}
		groups[o] = append(groups[o], v)
	}
	out := make([]float64, size)
	for i, g := range groups {
		var a float64
		switch op {
		case "sum":
			for _, v := range g {
				a += v
			}
		case "mean":
			for _, v := range g {
				a += v
			}
			a /= float64(len(g))
		case "max":
			a = math.Inf(-1)
			for _, v := range g {
				a = math.Max(a, v)
			}
		case "min":
			a = math.Inf(1)
			for _, v := range g {
				a = math.Min(a, v)
			}
		case "prod":
			a = 1
			for _, v := range g {
				a *= v
			}
		case "l1":
			for _, v := range g {
				a += math.Abs(v)
			}
		case "l2":
			for _, v := range g {
				a += v * v
			}
			a = math.Sqrt(a)
		case "logsum":
			for _, v := range g {
				a += v
			}
			a = math.Log(a)
		case "logsumexp":
			for _, v := range g {
				a += math.Exp(v)
			}
			a = math.Log(a)
		case "sumsquare":
			for _, v := range g {
				a += v * v
			}
		}
		out[i] = a
	}
	return shape, out
}

var reduceOps = map[string]string{
	"ReduceSum": "sum", "ReduceMean": "mean", "ReduceMax": "max", "ReduceMin": "min", "ReduceProd": "prod",
	"ReduceL1": "l1", "ReduceL2": "l2", "ReduceLogSum": "logsum", "ReduceLogSumExp": "logsumexp", "ReduceSumSquare": "sumsquare",
}

func TestReduce(t *testing.T) {
	r := rand.New(rand.NewSource(14))
	xs := []int{3, 5, 2, 7}
	X := nnRand(r, xs...)
	pos := nnRand(r, xs...) // positive data for LogSum
	for i, v := range pos.F32() {
		pos.F32()[i] = float32(math.Abs(float64(v))) + 0.1
	}
	ints := nnSmallInts(r, -3, 3, xs...)
	for op, ref := range reduceOps {
		for _, axes := range [][]int{nil, {1}, {-1}, {0, 2}, {3, 1, 0}, {0, 1, 2, 3}} {
			for _, keep := range []bool{true, false} {
				for _, dt := range []DType{F32, F64, F16, BF16, I32, I64} {
					src := X
					switch {
					case dt == I32 || dt == I64:
						if ref == "logsum" || ref == "logsumexp" || ref == "l2" {
							continue
						}
						src = ints
					case ref == "logsum":
						src = pos
					}
					if ref == "prod" && dt != I32 && dt != I64 {
						src = pos
						if len(axes) == 0 || len(axes) == 4 {
							continue // 210 factors under/overflow the tolerance test
						}
					}
					in := nnAs(src, dt)
					shape, want := refReduce(nnF64(in), xs, axes, keep, ref)
					tol := nnTol(dt) * 10
					if dt == I32 || dt == I64 {
						tol = 0
						for i := range want {
							want[i] = math.Trunc(want[i]) // integer mean divides like the dtype
						}
					}
					for _, v := range []int{1, 11, 13, 18} {
						attrs := Attrs{"keepdims": int64(0)}
						if keep {
							attrs = Attrs{}
						}
						ins := []*Tensor{in}
						if (v >= 13 && op == "ReduceSum") || v >= 18 {
							if axes != nil {
								ins = append(ins, nnI64(ints64(axes)...))
							}
						} else if axes != nil {
							attrs["axes"] = ints64(axes)
						}
						got := nnRun(t, op, v, attrs, 1, ins...)
						nnCheck(t, fmt.Sprintf("%s v%d %v axes %v keep %v", op, v, dt, axes, keep), got[0], shape, want, tol)
					}
				}
			}
		}
	}
}

func TestReduceNoopEmptyAxes(t *testing.T) {
	r := rand.New(rand.NewSource(15))
	X := nnRand(r, 3, 4, 5)
	// test_reduce_sum_empty_axes_input_noop: empty axes input with noop leaves data as is.
	got := nnRun(t, "ReduceSum", 13, Attrs{"noop_with_empty_axes": int64(1)}, 1, X, nnI64())
	nnCheck(t, "noop", got[0], []int{3, 4, 5}, nnF64(X), 0)
	got = nnRun(t, "ReduceSumSquare", 18, Attrs{"noop_with_empty_axes": int64(1)}, 1, X, nnI64())
	want := nnF64(X)
	for i := range want {
		want[i] *= want[i]
	}
	nnCheck(t, "noop sumsquare", got[0], []int{3, 4, 5}, want, 1e-6)
	// Empty axes without noop reduce everything.
	shape, want := refReduce(nnF64(X), X.Shape, nil, true, "sum")
	got = nnRun(t, "ReduceSum", 13, Attrs{}, 1, X, nnI64())
	nnCheck(t, "empty axes", got[0], shape, want, 1e-5)
	// test_reduce_sum_keepdims_example
	x := nnT([]int{3, 2, 2}, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12)
	got = nnRun(t, "ReduceSum", 13, Attrs{"keepdims": int64(1)}, 1, x, nnI64(1))
	nnCheck(t, "reduce_sum_keepdims_example", got[0], []int{3, 1, 2}, []float64{4, 6, 12, 14, 20, 22}, 0)
	got = nnRun(t, "ReduceMean", 13, Attrs{"axes": []int64{-2}, "keepdims": int64(0)}, 1, x)
	nnCheck(t, "reduce_mean_negative_axes_example", got[0], []int{3, 2}, []float64{2, 3, 6, 7, 10, 11}, 0)
}

func refSoftmax(x []float64, outer, dim, inner int, kind string) []float64 {
	y := make([]float64, len(x))
	for o := 0; o < outer; o++ {
		for in := 0; in < inner; in++ {
			at, mx, sum := 0, math.Inf(-1), 0.0
			for i := 0; i < dim; i++ {
				if v := x[(o*dim+i)*inner+in]; v > mx {
					mx, at = v, i
				}
			}
			for i := 0; i < dim; i++ {
				sum += math.Exp(x[(o*dim+i)*inner+in] - mx)
			}
			for i := 0; i < dim; i++ {
				j := (o*dim+i)*inner + in
				switch kind {
				case "softmax":
					y[j] = math.Exp(x[j]-mx) / sum
				case "log":
					y[j] = x[j] - mx - math.Log(sum)
				default:
					if i == at {
						y[j] = 1
					}
				}
			}
		}
	}
	return y
}

func TestArgMinMax(t *testing.T) {
	r := rand.New(rand.NewSource(17))
	xs := []int{4, 3, 5}
	for _, dt := range []DType{F32, F64, F16, I8, U8, I32, I64, U32, U64} {
		src := nnSmallInts(r, 0, 3, xs...) // small range: many ties
		in := nnAs(src, dt)
		x := nnF64(in)
		for _, isMax := range []bool{true, false} {
			op := "ArgMin"
			if isMax {
				op = "ArgMax"
			}
			for _, axis := range []int{0, 1, 2, -1} {
				a := (axis + 3) % 3
				for _, keep := range []bool{true, false} {
					for _, last := range []bool{false, true} {
						outer, dim, inner := 1, xs[a], 1
						for _, d := range xs[:a] {
							outer *= d
						}
						for _, d := range xs[a+1:] {
							inner *= d
						}
						want := make([]float64, outer*inner)
						for o := 0; o < outer; o++ {
							for in := 0; in < inner; in++ {
								at := 0
								for i := 1; i < dim; i++ {
									v, b := x[(o*dim+i)*inner+in], x[(o*dim+at)*inner+in]
									if isMax && v > b || !isMax && v < b || last && v == b {
										at = i
									}
								}
								want[o*inner+in] = float64(at)
							}
						}
						var shape []int
						for i, d := range xs {
							if i != a {
								shape = append(shape, d)
							} else if keep {
								shape = append(shape, 1)
							}
						}
						attrs := Attrs{"axis": int64(axis), "keepdims": int64(0)}
						if keep {
							attrs["keepdims"] = int64(1)
						}
						for _, v := range []int{1, 11, 12, 13} {
							if last && v < 12 {
								continue
							}
							if last {
								attrs["select_last_index"] = int64(1)
							}
							got := nnRun(t, op, v, attrs, 1, in)
							if got[0].DType != I64 {
								t.Fatalf("%s output dtype %v", op, got[0].DType)
							}
							nnCheck(t, fmt.Sprintf("%s v%d %v axis %d keep %v last %v", op, v, dt, axis, keep, last), got[0], shape, want, 0)
						}
					}
				}
			}
		}
	}
	// test_argmax_default_axis_example
	x := nnT([]int{2, 2}, 2, 1, 3, 10)
	nnCheck(t, "argmax_default_axis_example", nnRun(t, "ArgMax", 13, nil, 1, x)[0], []int{1, 2}, []float64{1, 1}, 0)
}

func TestReduceSoftmaxNoAlloc(t *testing.T) {
	r := rand.New(rand.NewSource(18))
	if a := nnAllocs(t, nnNode("ReduceMean", 13, Attrs{"axes": []int64{-1}}, 1, nnRand(r, 3, 7, 9)), ReduceMean); a != 0 {
		t.Fatalf("ReduceMean allocates %v", a)
	}
	if a := nnAllocs(t, nnNode("ReduceSum", 13, nil, 1, nnRand(r, 3, 7, 9), nnI64(0, 2)), ReduceSum); a != 0 {
		t.Fatalf("ReduceSum allocates %v", a)
	}
	if a := nnAllocs(t, nnNode("Softmax", 13, nil, 1, nnRand(r, 3, 7, 9)), Softmax); a != 0 {
		t.Fatalf("Softmax allocates %v", a)
	}
	if a := nnAllocs(t, nnNode("ArgMax", 13, nil, 1, nnAs(nnRand(r, 3, 7, 9), F16)), ArgMax); a != 0 {
		t.Fatalf("ArgMax f16 allocates %v", a)
	}
}

// TestReduceBool: ReduceMax is any, ReduceMin is all (opset 20), also over
// an empty axis (false for max, true for min).
func TestReduceBool(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	for _, shape := range [][]int{{3, 4, 5}, {2, 0, 3}} {
		x := &Tensor{}
		x.Resize(Bool, shape...)
		for i := range x.Bool() {
			x.Bool()[i] = r.Intn(4) == 0
		}
		for _, op := range []string{"ReduceMax", "ReduceMin"} {
			n := tewNode(op, 20, Attrs{"keepdims": int64(0)}, x, tewI64([]int{1}, 1))
			tewRun(t, n)
			out := n.Out[0]
			if !tewSameShape(out.Shape, []int{shape[0], shape[2]}) {
				t.Fatalf("%s: shape %v", op, out.Shape)
			}
			for i := 0; i < shape[0]; i++ {
				for k := 0; k < shape[2]; k++ {
					want := op == "ReduceMin"
					for j := 0; j < shape[1]; j++ {
						v := x.Bool()[(i*shape[1]+j)*shape[2]+k]
						if op == "ReduceMax" {
							want = want || v
						} else {
							want = want && v
						}
					}
					if got := out.Bool()[i*shape[2]+k]; got != want {
						t.Fatalf("%s %v at (%d,%d): %v, want %v", op, shape, i, k, got, want)
					}
				}
			}
		}
	}
}
