package templates

import (
	"math"
	"math/rand"
	"testing"
)

// TestArithFloat32: float32 Add, Sub, Mul and Div through the typed loops
// and the parallel split give, on broadcasts of every kind (same shape,
// scalar either side, per channel, channel-last, middle axes, legacy
// axis broadcast, empty) at 1, 2 and 3 threads, the bits of the walk
// with op.f32 (what ran before) and float64 math rounded once.
func TestArithFloat32(t *testing.T) {
	r := rand.New(rand.NewSource(71))
	p2, p3 := NewWorkPool(WithThreads(2)), NewWorkPool(WithThreads(3))
	defer p2.Close()
	defer p3.Close()
	cases := []struct {
		a, b  []int
		attrs Attrs
	}{
		{[]int{7}, []int{7}, nil},
		{[]int{100003}, []int{100003}, nil},
		{[]int{100003}, []int{1}, nil},
		{[]int{1}, []int{100003}, nil},
		{[]int{}, []int{}, nil},
		{[]int{1, 64, 29, 31}, []int{1, 64, 1, 1}, nil},
		{[]int{1, 29, 31, 64}, []int{64}, nil},
		{[]int{3, 5, 7, 311}, []int{5, 1, 311}, nil},
		{[]int{2, 1, 4099}, []int{2, 9, 1}, nil},
		{[]int{2, 33, 29, 31}, []int{33}, Attrs{"broadcast": int64(1), "axis": int64(1)}},
		{[]int{0, 4}, []int{4}, nil},
		{[]int{40000, 3}, []int{40000, 1}, nil},
	}
	ops := []struct {
		name string
		k    Kernel
		op   *ewBin
	}{{"Add", Add, &ewOpAdd}, {"Sub", Sub, &ewOpSub}, {"Mul", Mul, &ewOpMul}, {"Div", Div, &ewOpDiv}}
	for _, c := range cases {
		A := &Tensor{DType: F32, Shape: c.a, Data: actInputs(r, shapeSize(c.a))}
		B := nnRand(r, c.b...)
		for _, o := range ops {
			version := 14
			if c.attrs != nil {
				version = 6
			}
			ref := nnNode(o.name, version, c.attrs, 1, A, B)
			if err := ewBinary(ref, o.op); err != nil {
				t.Fatal(err)
			}
			want := ref.Out[0].F32()
			w64 := nnRun(t, o.name, version, c.attrs, 1, nnAs(A, F64), nnAs(B, F64))[0].F64()
			for i := range want {
				if float32(w64[i]) != want[i] && !(want[i] != want[i] && w64[i] != w64[i]) {
					t.Fatalf("%s %v %v: walk [%d] = %v, float64 %v", o.name, c.a, c.b, i, want[i], w64[i])
				}
			}
			for _, pool := range []*WorkPool{nil, p2, p3} {
				n := nnNode(o.name, version, c.attrs, 1, A, B)
				n.Pool = pool
				if err := o.k(n); err != nil {
					t.Fatal(err)
				}
				got := n.Out[0]
				if len(got.Shape) != len(ref.Out[0].Shape) {
					t.Fatalf("%s %v %v: shape %v, want %v", o.name, c.a, c.b, got.Shape, ref.Out[0].Shape)
				}
				for i, v := range got.F32() {
					if math.Float32bits(v) != math.Float32bits(want[i]) && !(v != v && want[i] != want[i]) {
						t.Fatalf("%s %v %v threads %d: [%d] = %v, want %v", o.name, c.a, c.b, pool.Threads(), i, v, want[i])
					}
				}
			}
		}
	}
	// Steady state: no allocation per run.
	n := nnNode("Mul", 14, nil, 1, nnRand(r, 1, 64, 29, 31), nnRand(r, 1, 64, 1, 1))
	n.Pool = p2
	if a := testing.AllocsPerRun(5, func() { _ = Mul(n) }); a != 0 {
		t.Errorf("Mul: %v allocations per run", a)
	}
	// Bad input is an error naming the node.
	bad := nnNode("Add", 14, nil, 1, nnRand(r, 3, 4), nnRand(r, 5))
	if err := Add(bad); err == nil {
		t.Fatal("Add of [3 4] and [5]: no error")
	}
}
