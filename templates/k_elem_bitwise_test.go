package templates

import (
	"math"
	"math/rand"
	"testing"
)

// TestBitwise checks BitwiseAnd/Or/Xor (broadcasting) and BitwiseNot on
// every integer dtype against int64/uint64 arithmetic truncated to the dtype.
func TestBitwise(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	for _, dt := range []DType{I8, I16, I32, I64, U8, U16, U32, U64} {
		a := tewRand(r, dt, 0, 250, 3, 1, 5)
		b := tewRand(r, dt, 0, 250, 4, 1)
		for i := 0; i < a.Len(); i++ { // negative values for the signed types
			if ewIsSigned(dt) && i%2 == 1 {
				ewSetF64(a, i, -float64(ewI64At(a, i)))
			}
		}
		for op, f := range map[string]func(x, y int64) int64{
			"BitwiseAnd": func(x, y int64) int64 { return x & y },
			"BitwiseOr":  func(x, y int64) int64 { return x | y },
			"BitwiseXor": func(x, y int64) int64 { return x ^ y },
		} {
			n := tewNode(op, 18, nil, a, b)
			tewRun(t, n)
			out := n.Out[0]
			if !tewSameShape(out.Shape, []int{3, 4, 5}) || out.DType != dt {
				t.Fatalf("%s %v: out %s", op, dt, out)
			}
			idx := make([]int, 3)
			for o := 0; o < out.Len(); o++ {
				tewUnravel(o, out.Shape, idx)
				x, y := tewGetI(a, idx[0]*5+idx[2]), tewGetI(b, idx[1])
				want := tewTrunc(dt, f(x, y))
				if got := tewGetI(out, o); got != want {
					t.Fatalf("%s %v: %d op %d = %d, want %d", op, dt, x, y, got, want)
				}
			}
		}
		n := tewNode("BitwiseNot", 18, nil, a)
		tewRun(t, n)
		for i := 0; i < a.Len(); i++ {
			if got, want := tewGetI(n.Out[0], i), tewTrunc(dt, ^tewGetI(a, i)); got != want {
				t.Fatalf("BitwiseNot %v: ^%d = %d, want %d", dt, tewGetI(a, i), got, want)
			}
		}
	}
}

// tewTrunc wraps v to dtype dt, as tewGetI reads it back.
func tewTrunc(dt DType, v int64) int64 {
	switch dt {
	case I8:
		return int64(int8(v))
	case I16:
		return int64(int16(v))
	case I32:
		return int64(int32(v))
	case U8:
		return int64(uint8(v))
	case U16:
		return int64(uint16(v))
	case U32:
		return int64(uint32(v))
	}
	return v
}

func TestSwish(t *testing.T) {
	r := rand.New(rand.NewSource(9))
	x := nnRand(r, 3, 7, 5)
	for _, dt := range nnFloatTypes {
		in := nnInputsAs([]*Tensor{x}, dt)
		xs := nnF64(in[0])
		for _, alpha := range []float32{1, 0.35, -2} {
			want := make([]float64, len(xs))
			for i, v := range xs {
				want[i] = v / (1 + math.Exp(-float64(alpha)*v))
			}
			got := nnRun(t, "Swish", 24, Attrs{"alpha": alpha}, 1, in...)
			nnCheck(t, "Swish", got[0], []int{3, 7, 5}, want, nnTol(dt)*4)
		}
	}
}
