package templates

import (
	"fmt"
	"math/rand"
	"testing"
)

func TestSoftmaxFamily(t *testing.T) {
	r := rand.New(rand.NewSource(16))
	xs := []int{3, 4, 5}
	X := nnRand(r, xs...)
	for i := range X.F32() {
		X.F32()[i] *= 20 // large values exercise the max subtraction
	}
	prod := func(s []int) int {
		p := 1
		for _, d := range s {
			p *= d
		}
		return p
	}
	for op, kind := range map[string]string{"Softmax": "softmax", "LogSoftmax": "log", "Hardmax": "hard"} {
		for _, dt := range nnFloatTypes {
			in := nnAs(X, dt)
			x := nnF64(in)
			for _, v := range []int{1, 11, 13} {
				for _, axis := range []int64{0, 1, 2, -1, -2, 99} {
					attrs := Attrs{}
					a := int(axis)
					if axis != 99 {
						attrs["axis"] = axis
					} else if v < 13 {
						a = 1
					} else {
						a = -1
					}
					if a < 0 {
						a += 3
					}
					outer, dim, inner := prod(xs[:a]), xs[a], prod(xs[a+1:])
					if v < 13 {
						dim, inner = prod(xs[a:]), 1
					}
					want := refSoftmax(x, outer, dim, inner, kind)
					got := nnRun(t, op, v, attrs, 1, in)
					tol := nnTol(dt) * 4
					if kind == "log" {
						tol = nnTol(dt) * 40 // values reach -80
					}
					nnCheck(t, fmt.Sprintf("%s v%d %v axis %d", op, v, dt, axis), got[0], xs, want, tol)
				}
			}
		}
	}
	// test_softmax_example / test_logsoftmax_example_1
	x := nnT([]int{1, 3}, -1, 0, 1)
	nnCheck(t, "softmax_example", nnRun(t, "Softmax", 13, nil, 1, x)[0], []int{1, 3}, []float64{0.09003058, 0.24472848, 0.66524094}, 1e-6)
	nnCheck(t, "logsoftmax_example_1", nnRun(t, "LogSoftmax", 13, nil, 1, x)[0], []int{1, 3}, []float64{-2.4076061, -1.407606, -0.4076061}, 1e-6)
	// test_hardmax_one_hot: ties pick the first.
	x = nnT([]int{1, 1, 4}, 3, 3, 3, 1)
	nnCheck(t, "hardmax_one_hot", nnRun(t, "Hardmax", 13, nil, 1, x)[0], []int{1, 1, 4}, []float64{1, 0, 0, 0}, 0)
}
