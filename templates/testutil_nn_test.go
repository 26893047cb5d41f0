package templates

import (
	"math"
	"math/rand"
	"testing"
)

// Test helpers for the nn kernels: random tensors, dtype conversion, a
// node runner and a tolerance check against float64 references.

func nnRand(r *rand.Rand, shape ...int) *Tensor {
	t := &Tensor{}
	t.Resize(F32, shape...)
	d := t.F32()
	for i := range d {
		v := r.Float64()*4 - 2
		if math.Abs(v) < 1e-3 {
			v = 0.7
		}
		d[i] = float32(v)
	}
	return t
}

func nnT(shape []int, vals ...float32) *Tensor {
	t := &Tensor{}
	t.Resize(F32, shape...)
	copy(t.F32(), vals)
	return t
}

func nnI64(vals ...int64) *Tensor {
	t := &Tensor{}
	t.Resize(I64, len(vals))
	copy(t.I64(), vals)
	return t
}

// nnF64 reads any numeric tensor as float64.
func nnF64(t *Tensor) []float64 {
	out := make([]float64, t.Len())
	switch d := t.Data.(type) {
	case []float32:
		for i, v := range d {
			out[i] = float64(v)
		}
	case []float64:
		copy(out, d)
	case []uint16:
		for i, v := range d {
			switch t.DType {
			case F16:
				out[i] = float64(F16ToF32(v))
			case BF16:
				out[i] = float64(BF16ToF32(v))
			default:
				out[i] = float64(v)
			}
		}
	case []int8:
		for i, v := range d {
			out[i] = float64(v)
		}
	case []uint8:
		for i, v := range d {
			out[i] = float64(v)
		}
	case []int32:
		for i, v := range d {
			out[i] = float64(v)
		}
	case []int64:
		for i, v := range d {
			out[i] = float64(v)
		}
	case []uint32:
		for i, v := range d {
			out[i] = float64(v)
		}
	case []uint64:
		for i, v := range d {
			out[i] = float64(v)
		}
	default:
		panic("nnF64: dtype " + t.DType.String())
	}
	return out
}

// nnAs converts a float32 tensor to dtype dt (integers are rounded).
func nnAs(t *Tensor, dt DType) *Tensor {
	o := &Tensor{}
	o.Resize(dt, t.Shape...)
	src := t.F32()
	switch d := o.Data.(type) {
	case []float32:
		copy(d, src)
	case []float64:
		for i, v := range src {
			d[i] = float64(v)
		}
	case []uint16:
		for i, v := range src {
			switch dt {
			case F16:
				d[i] = F32ToF16(v)
			case BF16:
				d[i] = F32ToBF16(v)
			default:
				d[i] = uint16(math.Round(float64(v)))
			}
		}
	case []int8:
		for i, v := range src {
			d[i] = int8(math.Round(float64(v)))
		}
	case []uint8:
		for i, v := range src {
			d[i] = uint8(math.Round(float64(v)))
		}
	case []int32:
		for i, v := range src {
			d[i] = int32(math.Round(float64(v)))
		}
	case []int64:
		for i, v := range src {
			d[i] = int64(math.Round(float64(v)))
		}
	case []uint32:
		for i, v := range src {
			d[i] = uint32(math.Round(float64(v)))
		}
	case []uint64:
		for i, v := range src {
			d[i] = uint64(math.Round(float64(v)))
		}
	}
	return o
}

// nnScaleInt returns a float32 tensor of small integers (for integer dtype
// tests), keeping t's shape.
func nnSmallInts(r *rand.Rand, lo, hi int, shape ...int) *Tensor {
	t := &Tensor{}
	t.Resize(F32, shape...)
	d := t.F32()
	for i := range d {
		d[i] = float32(lo + r.Intn(hi-lo+1))
	}
	return t
}

func nnNode(op string, version int, attrs Attrs, nout int, in ...*Tensor) *Node {
	n := &Node{Name: "test_" + op, Op: op, Version: version, Attrs: attrs, In: in}
	for i := 0; i < nout; i++ {
		n.Out = append(n.Out, &Tensor{})
	}
	return n
}

func nnRun(t *testing.T, op string, version int, attrs Attrs, nout int, in ...*Tensor) []*Tensor {
	t.Helper()
	n := nnNode(op, version, attrs, nout, in...)
	k := Kernels[op]
	if k == nil {
		t.Fatalf("%s not registered", op)
	}
	if err := k(n); err != nil {
		t.Fatalf("%s v%d: %v", op, version, err)
	}
	return n.Out
}

func nnTol(dt DType) float64 {
	switch dt {
	case F16:
		return 4e-3
	case BF16:
		return 3e-2
	case F32:
		return 2e-5
	}
	return 1e-9
}

func nnCheck(t *testing.T, what string, got *Tensor, wantShape []int, want []float64, tol float64) {
	t.Helper()
	if len(got.Shape) != len(wantShape) {
		t.Fatalf("%s: shape %v, want %v", what, got.Shape, wantShape)
	}
	for i := range wantShape {
		if got.Shape[i] != wantShape[i] {
			t.Fatalf("%s: shape %v, want %v", what, got.Shape, wantShape)
		}
	}
	g := nnF64(got)
	if len(g) != len(want) {
		t.Fatalf("%s: %d elements, want %d", what, len(g), len(want))
	}
	for i := range want {
		w := want[i]
		if math.IsNaN(w) != math.IsNaN(g[i]) || math.IsInf(w, 0) && w != g[i] {
			t.Fatalf("%s: [%d] = %v, want %v", what, i, g[i], w)
		}
		if math.IsInf(w, 0) || math.IsNaN(w) {
			continue
		}
		if math.Abs(g[i]-w) > tol*(1+math.Abs(w)) {
			t.Fatalf("%s: [%d] = %v, want %v (tol %v)", what, i, g[i], w, tol)
		}
	}
}

// nnRoundTo rounds float64 reference values through dtype dt's precision,
// used to build references from inputs already quantized to dt.
func nnInputsAs(ts []*Tensor, dt DType) []*Tensor {
	out := make([]*Tensor, len(ts))
	for i, t := range ts {
		if t != nil && t.DType == F32 {
			out[i] = nnAs(t, dt)
		} else {
			out[i] = t
		}
	}
	return out
}

// nnFloatTypes are the dtypes every float kernel is tested in.
var nnFloatTypes = []DType{F32, F64, F16, BF16}

// nnAllocs runs k once and returns the allocations of a second run.
func nnAllocs(t *testing.T, n *Node, k Kernel) float64 {
	t.Helper()
	if err := k(n); err != nil {
		t.Fatal(err)
	}
	return testing.AllocsPerRun(3, func() {
		if err := k(n); err != nil {
			t.Fatal(err)
		}
	})
}
