package templates

import (
	"fmt"
	"math"
	"math/rand"
	"testing"
)

// Test helpers for the elementwise and shape kernels. They use plain
// index arithmetic (unravel/ravel per element), independent of ewWalk.

var tewAllNum = []DType{F32, F64, F16, BF16, I8, I16, I32, I64, U8, U16, U32, U64}
var tewAll = append(append([]DType{}, tewAllNum...), Bool, String)

// tewRand makes a tensor of dtype dt with values drawn from [lo, hi)
// (integers: rounded; unsigned: clamped at 0). Never all zeros.
func tewRand(r *rand.Rand, dt DType, lo, hi float64, shape ...int) *Tensor {
	t := &Tensor{}
	t.Resize(dt, shape...)
	for i := 0; i < t.Len(); i++ {
		v := lo + r.Float64()*(hi-lo)
		tewSet(t, i, v)
	}
	return t
}

func tewSet(t *Tensor, i int, v float64) {
	switch d := t.Data.(type) {
	case []float32:
		d[i] = float32(v)
	case []float64:
		d[i] = v
	case []uint16:
		switch t.DType {
		case F16:
			d[i] = F32ToF16(float32(v))
		case BF16:
			d[i] = F32ToBF16(float32(v))
		default:
			d[i] = uint16(math.Max(0, math.Round(v)))
		}
	case []int8:
		d[i] = int8(math.Round(v))
	case []uint8:
		d[i] = uint8(math.Max(0, math.Round(v)))
	case []int16:
		d[i] = int16(math.Round(v))
	case []int32:
		d[i] = int32(math.Round(v))
	case []int64:
		d[i] = int64(math.Round(v))
	case []uint32:
		d[i] = uint32(math.Max(0, math.Round(v)))
	case []uint64:
		d[i] = uint64(math.Max(0, math.Round(v)))
	case []bool:
		d[i] = v > (0)
	case []string:
		d[i] = fmt.Sprintf("s%d", int(math.Round(v)))
	}
}

// tewGet reads element i as float64 (bool 0/1; strings not allowed).
func tewGet(t *Tensor, i int) float64 {
	switch d := t.Data.(type) {
	case []float32:
		return float64(d[i])
	case []float64:
		return d[i]
	case []uint16:
		switch t.DType {
		case F16:
			return float64(F16ToF32(d[i]))
		case BF16:
			return float64(BF16ToF32(d[i]))
		}
		return float64(d[i])
	case []int8:
		return float64(d[i])
	case []uint8:
		return float64(d[i])
	case []int16:
		return float64(d[i])
	case []int32:
		return float64(d[i])
	case []int64:
		return float64(d[i])
	case []uint32:
		return float64(d[i])
	case []uint64:
		return float64(d[i])
	case []bool:
		if d[i] {
			return 1
		}
		return 0
	}
	panic("tewGet: " + t.DType.String())
}

// tewGetI reads an integer element exactly.
func tewGetI(t *Tensor, i int) int64 {
	switch d := t.Data.(type) {
	case []int8:
		return int64(d[i])
	case []uint8:
		return int64(d[i])
	case []int16:
		return int64(d[i])
	case []uint16:
		return int64(d[i])
	case []int32:
		return int64(d[i])
	case []int64:
		return d[i]
	case []uint32:
		return int64(d[i])
	case []uint64:
		return int64(d[i])
	}
	panic("tewGetI: " + t.DType.String())
}

// tewWrap narrows v to dt's width (two's complement), as int64.
func tewWrap(dt DType, v int64) int64 {
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

// tewTol is the comparison tolerance for a float dtype.
func tewTol(dt DType) float64 {
	switch dt {
	case F16:
		return 2e-3
	case BF16:
		return 1.6e-2
	case F32:
		return 2e-6
	}
	return 1e-12
}

func tewClose(dt DType, got, want float64) bool {
	if math.IsNaN(want) {
		return math.IsNaN(got)
	}
	if math.IsInf(want, 0) {
		return got == want
	}
	tol := tewTol(dt)
	return math.Abs(got-want) <= tol*math.Max(1, math.Abs(want))
}

// tewRound rounds v to dt as the kernel's output would store it.
func tewRound(dt DType, v float64) float64 {
	t := &Tensor{}
	t.Resize(dt, 1)
	switch dt {
	case F16:
		t.U16()[0] = ewF64ToF16(v)
	case BF16:
		t.U16()[0] = ewF64ToBF16(v)
	default:
		tewSet(t, 0, v)
	}
	return tewGet(t, 0)
}

// tewUnravel and tewBcastIndex map an output index to an input index under
// numpy broadcasting.
func tewUnravel(i int, shape []int, idx []int) {
	for d := len(shape) - 1; d >= 0; d-- {
		idx[d] = i % shape[d]
		i /= shape[d]
	}
}

func tewRavel(idx, shape []int) int {
	o := 0
	for d := range shape {
		o = o*shape[d] + idx[d]
	}
	return o
}

func tewBcastIndex(outIdx []int, in []int) int {
	off := len(outIdx) - len(in)
	o := 0
	for d, n := range in {
		v := outIdx[off+d]
		if n == 1 {
			v = 0
		}
		o = o*n + v
	}
	return o
}

func tewBcastShape(shapes ...[]int) []int {
	r := 0
	for _, s := range shapes {
		r = max(r, len(s))
	}
	out := make([]int, r)
	for i := range out {
		out[i] = 1
	}
	for _, s := range shapes {
		for d, n := range s {
			j := r - len(s) + d
			if n != 1 {
				out[j] = n
			}
		}
	}
	return out
}

func tewSameShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func tewNode(op string, ver int, attrs Attrs, in ...*Tensor) *Node {
	return &Node{Name: "t_" + op, Op: op, Version: ver, Attrs: attrs, In: in, Out: []*Tensor{{}}}
}

func tewRun(t *testing.T, n *Node) {
	t.Helper()
	k := Kernels[n.Op]
	if k == nil {
		t.Fatalf("no kernel %s", n.Op)
	}
	if err := k(n); err != nil {
		t.Fatalf("%s: %v", n.Op, err)
	}
}

// tewI64 and tewF32T build small literal tensors.
func tewI64(shape []int, v ...int64) *Tensor {
	t := &Tensor{}
	t.Resize(I64, shape...)
	copy(t.I64(), v)
	return t
}

func tewF32T(shape []int, v ...float32) *Tensor {
	t := &Tensor{}
	t.Resize(F32, shape...)
	copy(t.F32(), v)
	return t
}

// tewEqual compares two tensors exactly (dtype, shape, elements).
func tewEqual(t *testing.T, what string, got, want *Tensor) {
	t.Helper()
	if got.DType != want.DType || !tewSameShape(got.Shape, want.Shape) {
		t.Fatalf("%s: got %s, want %s", what, got, want)
	}
	switch w := want.Data.(type) {
	case []string:
		g := got.Str()
		for i := range w {
			if g[i] != w[i] {
				t.Fatalf("%s: [%d] = %q, want %q", what, i, g[i], w[i])
			}
		}
	case []bool:
		g := got.Bool()
		for i := range w {
			if g[i] != w[i] {
				t.Fatalf("%s: [%d] = %v, want %v", what, i, g[i], w[i])
			}
		}
	default:
		for i := 0; i < want.Len(); i++ {
			g, e := tewGet(got, i), tewGet(want, i)
			if g != e && !(math.IsNaN(g) && math.IsNaN(e)) {
				t.Fatalf("%s: [%d] = %v, want %v", what, i, g, e)
			}
		}
	}
}

func TestBroadcastShapeWalk(t *testing.T) {
	cases := [][2][]int{
		{{3, 1, 5}, {4, 1}}, {{}, {2, 3}}, {{2, 3, 4}, {2, 3, 4}}, {{1}, {7}},
		{{5, 1, 1, 3}, {1, 4, 2, 1}}, {{0, 3}, {1, 3}}, {{2, 1, 3, 1, 2}, {3, 5, 1}},
	}
	for _, c := range cases {
		var s ewShape
		if !ewBroadcastShape(&s, c[0], c[1]) {
			t.Fatalf("%v %v: no broadcast", c[0], c[1])
		}
		want := tewBcastShape(c[0], c[1])
		if !tewSameShape(s.s(), want) {
			t.Fatalf("%v %v: shape %v want %v", c[0], c[1], s.s(), want)
		}
		// The walk must visit every output element once with the right
		// input offsets.
		var w ewWalk
		w.initBroadcast(want, c[0], c[1])
		seen := make([]int, ewSize(want))
		idx := make([]int, len(want))
		n, so, sa, sb, _ := w.inner()
		for it := w.iter(); it.next(); {
			for k := 0; k < n; k++ {
				o := it.off[0] + k*so
				seen[o]++
				tewUnravel(o, want, idx)
				if a := it.off[1] + k*sa; a != tewBcastIndex(idx, c[0]) {
					t.Fatalf("%v: a offset %d want %d", c, a, tewBcastIndex(idx, c[0]))
				}
				if b := it.off[2] + k*sb; b != tewBcastIndex(idx, c[1]) {
					t.Fatalf("%v: b offset %d", c, b)
				}
			}
		}
		for o, k := range seen {
			if k != 1 {
				t.Fatalf("%v: element %d visited %d times", c, o, k)
			}
		}
	}
	var s ewShape
	if ewBroadcastShape(&s, []int{3, 2}, []int{4, 2}) {
		t.Fatal("3x2 and 4x2 must not broadcast")
	}
}

func TestF64ToHalfSingleRounding(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 200000; i++ {
		h := uint16(r.Intn(0x7bff))
		// A value just above the midpoint between h and h+1 must round up
		// even though float32 alone would land on the midpoint.
		lo, hi := float64(F16ToF32(h)), float64(F16ToF32(h+1))
		mid := (lo + hi) / 2
		x := mid + (hi-lo)*1e-9
		if got := ewF64ToF16(x); got != h+1 {
			t.Fatalf("f16 %#x: %v rounds to %#x, want %#x", h, x, got, h+1)
		}
		if got := ewF64ToF16(mid - (hi-lo)*1e-9); got != h {
			t.Fatalf("f16 below midpoint of %#x rounds to %#x", h, got)
		}
	}
}
