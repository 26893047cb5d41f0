package templates

import (
	"math"
	"math/rand"
	"testing"
)

// TestActivationKernelsWiring: the unfused float32 Exp, Tanh, Mish, Elu,
// HardSigmoid and Gelu(tanh) kernels run the vector rows (within the
// rows' ulp bounds of float64 math at awkward sizes), their float64
// kernels stay float64 math, the same ops inside a cuvil::Elementwise
// program at 1, 2 and 3 threads give the unfused kernels' bits, and the
// fused epilogue (fusedActRow) gives them too, so fused and unfused
// graphs agree. The unfused kernels at 2 and 3 threads (split over the
// pool from ewParElems elements) give their 1-thread bits.
func TestActivationKernelsWiring(t *testing.T) {
	r := rand.New(rand.NewSource(23))
	a7 := float64(float32(0.7))
	s6 := float64(float32(1.0 / 6))
	cases := []struct {
		op      string
		version int
		attrs   Attrs
		act     fusedAct
		ewp     string // the op in a cuvil::Elementwise program ("" none)
		ref     func(float64) float64
		ulps    func(x float64) int64
		tiny    float64
	}{
		{"Exp", 13, nil, fusedAct{}, "Exp", math.Exp, func(float64) int64 { return 2 }, 0},
		{"Tanh", 13, nil, fusedAct{kind: fusedActTanh}, "Tanh", math.Tanh, func(float64) int64 { return 3 }, 0},
		{"Mish", 18, nil, fusedAct{kind: fusedActMish}, "Mish", func(x float64) float64 { return actMish64(x, 0, 0) },
			func(float64) int64 { return 6 }, 1e-37},
		{"Elu", 6, Attrs{"alpha": float32(0.7)}, fusedAct{kind: fusedActElu, p0: a7}, "",
			func(x float64) float64 { return eluRef64(x, a7) }, func(float64) int64 { return 4 }, 0},
		{"HardSigmoid", 6, Attrs{"alpha": float32(1.0 / 6), "beta": float32(0.5)},
			fusedAct{kind: fusedActHardSigmoid, p0: s6, p1: 0.5}, "",
			func(x float64) float64 { return actHardSigmoid64(x, s6, 0.5) }, func(float64) int64 { return 1 }, 0},
		{"cuvil::Gelu", 1, Attrs{"approximate": "tanh"}, fusedAct{kind: fusedActGeluTanh}, "GeluTanh",
			func(x float64) float64 { return x * actSigmoid64(geluTanhArg64(x)) }, geluTanhBound, 1e-37},
	}
	p2, p3 := NewWorkPool(WithThreads(2)), NewWorkPool(WithThreads(3))
	defer p2.Close()
	defer p3.Close()
	for _, c := range cases {
		for _, size := range []int{1, 7, 16, 17, 513, 2*ewChunk + 3, 40009} {
			x := &Tensor{DType: F32, Shape: []int{size}, Data: actInputs(r, size)}
			got := nnRun(t, c.op, c.version, c.attrs, 1, x)[0].F32()
			for i, v := range x.F32() {
				want := c.ref(float64(v))
				if u := actUlps(got[i], want); u > c.ulps(float64(v)) &&
					!(math.Abs(want) < c.tiny && math.Abs(float64(got[i])-want) <= 1e-37) {
					t.Fatalf("%s f32 %d: (%v) = %v, want %v (%d ulp)", c.op, size, v, got[i], want, u)
				}
			}
			// float64 input: float64 math (only finite inputs compared).
			x64 := nnAs(x, F64)
			g64 := nnRun(t, c.op, c.version, c.attrs, 1, x64)[0].F64()
			for i, v := range x64.F64() {
				want := c.ref(v)
				if !math.IsInf(v, 0) && v == v && math.Abs(g64[i]-want) > 1e-12*(1+math.Abs(want)) {
					t.Fatalf("%s f64 %d: (%v) = %v, want %v", c.op, size, v, g64[i], want)
				}
			}
			same := func(what string, y []float32) {
				t.Helper()
				for i := range got {
					if math.Float32bits(y[i]) != math.Float32bits(got[i]) && !(y[i] != y[i] && got[i] != got[i]) {
						t.Fatalf("%s %s %d: [%d] (%v) = %v, unfused %v", c.op, what, size, i, x.F32()[i], y[i], got[i])
					}
				}
			}
			if c.act.kind != fusedActNone {
				y := append([]float32(nil), x.F32()...)
				fusedActRow(c.act, y)
				same("fusedActRow", y)
				y = append(y[:0], x.F32()...)
				fusedEpilogue32(y, 0, nil, 0, nil, false, c.act)
				same("fusedEpilogue32", y)
			}
			for _, pool := range []*WorkPool{p2, p3} {
				n := nnNode(c.op, c.version, c.attrs, 1, x)
				n.Pool = pool
				if err := Kernels[c.op](n); err != nil {
					t.Fatal(err)
				}
				same("threads", n.Out[0].F32())
			}
			if c.ewp == "" {
				continue
			}
			prog := Attrs{"ops": []string{c.ewp}, "args": []int64{0}, "outputs": []int64{1}}
			for _, pool := range []*WorkPool{nil, p2, p3} {
				n := nnNode("cuvil::Elementwise", 1, prog, 1, x)
				n.Pool = pool
				if err := CuvilElementwise(n); err != nil {
					t.Fatal(err)
				}
				same("cuvil::Elementwise", n.Out[0].F32())
			}
		}
	}
}

// TestUnaryParallel: unfused element-wise ops through ewUnary's float
// functions (float32 and float64) and the float32 rows give, at 2 and 3
// threads, the bits of 1 thread on sizes around the split threshold.
func TestUnaryParallel(t *testing.T) {
	r := rand.New(rand.NewSource(41))
	p2, p3 := NewWorkPool(WithThreads(2)), NewWorkPool(WithThreads(3))
	defer p2.Close()
	defer p3.Close()
	for _, op := range []struct {
		name    string
		version int
	}{{"Erf", 13}, {"Softplus", 1}, {"Sqrt", 13}, {"Neg", 13}, {"Sigmoid", 13}, {"LeakyRelu", 16}, {"Selu", 6}} {
		for _, size := range []int{ewParElems - 1, ewParElems, ewParElems + 17, 3*ewParPart + 5, 100003} {
			for _, dt := range []DType{F32, F64} {
				x := nnAs(&Tensor{DType: F32, Shape: []int{size}, Data: actInputs(r, size)}, dt)
				want := nnF64(nnRun(t, op.name, op.version, nil, 1, x)[0])
				for _, pool := range []*WorkPool{p2, p3} {
					n := nnNode(op.name, op.version, nil, 1, x)
					n.Pool = pool
					if err := Kernels[op.name](n); err != nil {
						t.Fatal(err)
					}
					got := nnF64(n.Out[0])
					for i := range want {
						if math.Float64bits(got[i]) != math.Float64bits(want[i]) && !(got[i] != got[i] && want[i] != want[i]) {
							t.Fatalf("%s %s %d threads %d: [%d] = %v, 1 thread %v", op.name, dt, size, pool.Threads(), i, got[i], want[i])
						}
					}
				}
			}
		}
	}
	// Steady state: no allocation per run (the task lives in the node).
	x := &Tensor{DType: F32, Shape: []int{100003}, Data: actInputs(r, 100003)}
	for _, op := range []string{"Sigmoid", "Erf", "Elu"} {
		n := nnNode(op, 13, nil, 1, x)
		if op == "Elu" {
			n.Version = 6
		}
		n.Pool = p2
		if a := testing.AllocsPerRun(5, func() {
			if err := Kernels[op](n); err != nil {
				t.Fatal(err)
			}
		}); a != 0 {
			t.Errorf("%s: %v allocations per run", op, a)
		}
	}
}
