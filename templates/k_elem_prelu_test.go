package templates

import (
	"math"
	"math/rand"
	"testing"
)

// TestPReluRows: float32 PRelu with one slope, a slope per channel
// (NCHW [C,1,1], legacy 1-D before opset 7), a channel-last slope and
// trailing-block slopes runs the vector rows and gives, at awkward sizes,
// the bits of the float64 broadcast walk (the product is exact in
// float64), at 2 and 3 threads too; slopes the rows do not take (1s between varying axes, a
// a trailing block with 1s) still match it. LeakyRelu, unfused, in a
// cuvil::Elementwise program (1, 2, 3 threads) and in the epilogue, gives
// the same bits as float64 math too.
func TestPReluRows(t *testing.T) {
	r := rand.New(rand.NewSource(31))
	cases := []struct {
		version int
		x, s    []int
	}{
		{16, []int{2, 5, 7, 9}, []int{1}},
		{16, []int{2, 5, 7, 9}, []int{5, 1, 1}},
		{16, []int{3, 17, 4, 5}, []int{17, 1, 1}},
		{6, []int{2, 19, 3, 3}, []int{19}},
		{16, []int{2, 3, 3, 19}, []int{19}},
		{16, []int{1, 33, 67}, []int{33, 67}},
		{16, []int{4, 1027}, []int{1027}},
		{16, []int{2, 5, 7, 9}, []int{5, 1, 9}}, // not taken
		{16, []int{2, 5, 1, 9}, []int{5, 1, 1}},
		{16, []int{1, 1}, []int{1, 1}},
		{16, []int{0, 4}, []int{4}},
		{16, []int{1, 64, 23, 29}, []int{64, 1, 1}},
		{16, []int{1, 23, 29, 64}, []int{64}},
		{16, []int{100003}, []int{1}},
		{16, []int{2, 16, 2053}, []int{2053}},
		{16, []int{2, 2053, 16}, []int{16}},
	}
	p2, p3 := NewWorkPool(WithThreads(2)), NewWorkPool(WithThreads(3))
	defer p2.Close()
	defer p3.Close()
	for _, c := range cases {
		x := &Tensor{DType: F32, Shape: c.x, Data: actInputs(r, shapeSize(c.x))}
		s := nnRand(r, c.s...)
		got := nnRun(t, "PRelu", c.version, nil, 1, x, s)[0]
		want := nnRun(t, "PRelu", c.version, nil, 1, nnAs(x, F64), nnAs(s, F64))[0]
		if len(got.Shape) != len(want.Shape) {
			t.Fatalf("%v %v: shape %v, want %v", c.x, c.s, got.Shape, want.Shape)
		}
		g, w := got.F32(), want.F64()
		if len(g) != len(w) {
			t.Fatalf("%v %v: %d elements, want %d", c.x, c.s, len(g), len(w))
		}
		for i := range g {
			if g[i] != float32(w[i]) && !(g[i] != g[i] && w[i] != w[i]) {
				t.Fatalf("%v %v: [%d] = %v, want %v", c.x, c.s, i, g[i], float32(w[i]))
			}
		}
		for _, pool := range []*WorkPool{p2, p3} {
			n := nnNode("PRelu", c.version, nil, 1, x, s)
			n.Pool = pool
			if err := PRelu(n); err != nil {
				t.Fatal(err)
			}
			for i, v := range n.Out[0].F32() {
				if math.Float32bits(v) != math.Float32bits(g[i]) && !(v != v && g[i] != g[i]) {
					t.Fatalf("%v %v threads %d: [%d] = %v, 1 thread %v", c.x, c.s, pool.Threads(), i, v, g[i])
				}
			}
		}
	}
	{
		// Steady state: no allocation per run.
		n := nnNode("PRelu", 16, nil, 1, nnRand(r, 1, 64, 23, 29), nnRand(r, 64, 1, 1))
		n.Pool = p2
		if a := testing.AllocsPerRun(5, func() { _ = PRelu(n) }); a != 0 {
			t.Errorf("PRelu: %v allocations per run", a)
		}
	}
	for _, size := range []int{1, 15, 16, 17, 513, 2*ewChunk + 3, 20011} {
		x := &Tensor{DType: F32, Shape: []int{size}, Data: actInputs(r, size)}
		got := nnRun(t, "LeakyRelu", 16, Attrs{"alpha": float32(0.3)}, 1, x)[0].F32()
		a := float64(float32(0.3))
		for i, v := range x.F32() {
			want := float64(v)
			if v < 0 {
				want *= a
			}
			if got[i] != float32(want) && !(got[i] != got[i] && v != v) {
				t.Fatalf("LeakyRelu %d: (%v) = %v, want %v", size, v, got[i], want)
			}
		}
		same := func(what string, y []float32) {
			t.Helper()
			for i := range got {
				if math.Float32bits(y[i]) != math.Float32bits(got[i]) && !(y[i] != y[i] && got[i] != got[i]) {
					t.Fatalf("LeakyRelu %s %d: [%d] = %v, unfused %v", what, size, i, y[i], got[i])
				}
			}
		}
		y := append([]float32(nil), x.F32()...)
		fusedActRow(fusedAct{kind: fusedActLeakyRelu, p0: a}, y)
		same("fusedActRow", y)
		ys := append([]float32(nil), x.F32()...)
		leakyReluGo(ys, 0.3)
		same("leakyReluGo", ys)
		sl := make([]float32, size)
		for i := range sl {
			sl[i] = 0.3
		}
		ys = append(ys[:0], x.F32()...)
		prelu32(ys, sl)
		same("prelu32", ys)
		prog := Attrs{"ops": []string{"LeakyRelu"}, "args": []int64{0, -1}, "consts": []float32{0.3}, "outputs": []int64{1}}
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

func shapeSize(s []int) int {
	n := 1
	for _, d := range s {
		n *= d
	}
	return n
}
