package templates

import (
	"math"
	"math/rand"
	"slices"
	"testing"
)

// Test helpers for the misc kernel group (prefixed to stay clear of the
// other groups' test helpers).

func miscRandF64(rng *rand.Rand, shape ...int) []float64 {
	n := 1
	for _, d := range shape {
		n *= d
	}
	v := make([]float64, n)
	for i := range v {
		v[i] = rng.Float64()*2 - 1
	}
	return v
}

// miscTensorF converts float64 reference data to a tensor of dtype dt.
func miscTensorF(dt DType, v []float64, shape ...int) *Tensor {
	t := &Tensor{}
	t.Resize(dt, shape...)
	for i, x := range v {
		switch d := t.Data.(type) {
		case []float32:
			d[i] = float32(x)
		case []float64:
			d[i] = x
		case []uint16:
			if dt == F16 {
				d[i] = F32ToF16(float32(x))
			} else {
				d[i] = F32ToBF16(float32(x))
			}
		default:
			panic("miscTensorF: " + dt.String())
		}
	}
	return t
}

func miscTensorI64(v []int64, shape ...int) *Tensor {
	t := &Tensor{}
	t.Resize(I64, shape...)
	copy(t.I64(), v)
	return t
}

func miscTensorI32(v []int32, shape ...int) *Tensor {
	t := &Tensor{}
	t.Resize(I32, shape...)
	copy(t.I32(), v)
	return t
}

// miscCheckClose compares a float tensor with a float64 reference.
func miscCheckClose(t *testing.T, what string, got *Tensor, want []float64, shape []int, tol float64) {
	t.Helper()
	if !slices.Equal(got.Shape, shape) {
		t.Fatalf("%s: shape %v, want %v", what, got.Shape, shape)
	}
	if got.Len() != len(want) {
		t.Fatalf("%s: %d elements, want %d", what, got.Len(), len(want))
	}
	bad := 0
	for i, w := range want {
		g := ewF64At(got, i)
		if math.IsNaN(w) && math.IsNaN(g) {
			continue
		}
		if math.Abs(g-w) > tol*(1+math.Abs(w)) {
			if bad < 5 {
				t.Errorf("%s[%d] = %v, want %v", what, i, g, w)
			}
			bad++
		}
	}
	if bad > 0 {
		t.Fatalf("%s: %d of %d elements differ", what, bad, len(want))
	}
}

func miscTol(dt DType) float64 {
	switch dt {
	case F64:
		return 1e-12
	case F32:
		return 2e-5
	case BF16:
		return 3e-2
	}
	return 4e-3
}

// miscNoAllocs runs k again and fails if it allocates.
func miscNoAllocs(t *testing.T, n *Node, k Kernel) {
	t.Helper()
	a := testing.AllocsPerRun(3, func() {
		if err := k(n); err != nil {
			t.Fatal(err)
		}
	})
	if a != 0 {
		t.Errorf("%s allocates %v times per run in steady state", n.Op, a)
	}
}

// miscRepr returns v as dtype dt represents it, so references see the
// same rounded inputs as the kernel.
func miscRepr(dt DType, v []float64) []float64 {
	t := miscTensorF(dt, v, len(v))
	out := make([]float64, len(v))
	for i := range out {
		out[i] = ewF64At(t, i)
	}
	return out
}

func miscRun(t *testing.T, k Kernel, n *Node) {
	t.Helper()
	if err := k(n); err != nil {
		t.Fatal(err)
	}
}

func miscWantI64(t *testing.T, what string, got *Tensor, want []int64, shape []int) {
	t.Helper()
	w := make([]float64, len(want))
	for i, v := range want {
		w[i] = float64(v)
	}
	miscCheckClose(t, what, got, w, shape, 0)
}

func xtRandF(r *rand.Rand, n int, lo, hi float64) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = lo + r.Float64()*(hi-lo)
	}
	return v
}

func xtProd(s []int) int {
	p := 1
	for _, d := range s {
		p *= d
	}
	return p
}
