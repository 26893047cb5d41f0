package templates

import (
	"math"
	"math/rand"
	"strings"
	"testing"
)

// ewTestProg uses every op: inputs 0 and 1 have the output's shape, input
// 2 one element; results are numbered from 3. Outputs: a late result, an
// early one another instruction also reads, and one from a side branch.
var ewTestProg = Attrs{
	"ops": []string{"Mul", "Add", "Max", "Min", "LeakyRelu", "Gelu", "Div", "Sigmoid", // r3..r10
		"Abs", "Sqrt", "Log", "Exp", "Pow", "Sub", "Tanh", "Erf", "Neg", "Softplus", // r11..r20
		"HardSwish", "GeluTanh", "Reciprocal", "Relu", "Mul"}, // r21..r25
	"args": []int64{0, -1, 3, 1, 4, -2, 5, -3, 6, -4, 7, 8, 2, 9,
		1, 11, 12, 13, 14, -5, -6, 15, 16, 17, 18, 19,
		10, 20, 14, 4, 23, 24},
	"consts":  []float32{1.5, -1, 1.75, 0.1, 1.5, 2},
	"outputs": []int64{22, 5, 25, 21},
}

// ewRef evaluates ewTestProg in float64 at one element.
func ewRef(x, y, s float64) [4]float64 {
	gelu := func(v float64) float64 { return 0.5 * v * (1 + math.Erf(v/math.Sqrt2)) }
	r3 := x * 1.5
	r4 := r3 + y
	r5 := math.Max(r4, -1)
	r6 := math.Min(r5, 1.75)
	r7 := r6
	if r7 < 0 {
		r7 *= float64(float32(0.1))
	}
	r10 := 1 / (1 + math.Exp(-gelu(r7)/s))
	r14 := math.Exp(math.Log(math.Sqrt(math.Abs(y))))
	r15 := math.Pow(r14, 1.5)
	r20 := math.Log1p(math.Exp(-math.Erf(math.Tanh(2 - r15))))
	r21 := r10 * math.Max(0, math.Min(1, r10/6+0.5))
	r22 := 0.5 * r20 * (1 + math.Tanh(0.7978845608028654*(r20+0.044715*r20*r20*r20)))
	r24 := math.Max(r4, 0)
	return [4]float64{r22, r5, (1 / r14) * r24, r21}
}

func ewTensors[T float32 | float64](r *rand.Rand, dt DType, shape []int) []*Tensor {
	var in []*Tensor
	for i, sh := range [][]int{shape, shape, {1}} {
		t := &Tensor{}
		t.Resize(dt, sh...)
		d := t.Data.([]T)
		for j := range d {
			v := r.Float64()*4 - 2
			if math.Abs(v) < 1e-2 {
				v = 0.7
			}
			if i == 2 {
				v = 1.25
			}
			d[j] = T(v)
		}
		in = append(in, t)
	}
	return in
}

// TestElementwise checks the program against a float64 reference at
// awkward sizes (chunk tails, one element, parallel sizes), in f32 and
// f64, serially and with 1- and 2-thread pools, whose results must be
// bit-identical to the serial ones.
func TestElementwise(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	p1, p2 := NewWorkPool(WithThreads(1)), NewWorkPool(WithThreads(2))
	defer p1.Close()
	defer p2.Close()
	for _, dt := range []DType{F32, F64} {
		for _, shape := range [][]int{{1}, {7}, {3, 171}, {513}, {2, 3, 1543}, {1, 40009}} {
			var in []*Tensor
			tol := 1e-4
			if dt == F32 {
				in = ewTensors[float32](r, dt, shape)
			} else {
				in = ewTensors[float64](r, dt, shape)
				tol = 1e-10
			}
			var serial *Node
			for run, pool := range []*WorkPool{nil, p1, p2} {
				n := nnNode("cuvil::Elementwise", 1, ewTestProg, 4, in...)
				n.Pool = pool
				for rep := 0; rep < 2; rep++ { // a second run reuses the decoded program
					if err := CuvilElementwise(n); err != nil {
						t.Fatal(err)
					}
				}
				if run == 0 {
					serial = n
					x, y := nnF64(in[0]), nnF64(in[1])
					s := nnF64(in[2])[0]
					for o := range n.Out {
						got := nnF64(n.Out[o])
						if len(got) != len(x) {
							t.Fatalf("%s %v: output %d has %d elements", dt, shape, o, len(got))
						}
						for i := range got {
							want := ewRef(x[i], y[i], s)[o]
							if math.Abs(got[i]-want) > tol*(1+math.Abs(want)) {
								t.Fatalf("%s %v: output %d [%d] = %v, want %v (x %v y %v)", dt, shape, o, i, got[i], want, x[i], y[i])
							}
						}
					}
					continue
				}
				for o := range n.Out {
					a, b := nnF64(serial.Out[o]), nnF64(n.Out[o])
					for i := range a {
						if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
							t.Fatalf("%s %v threads %d: output %d [%d] = %v, serial %v", dt, shape, pool.Threads(), o, i, b[i], a[i])
						}
					}
				}
			}
		}
	}
}

// TestElementwiseOneElement: an input of one element and rank <= input
// 0's broadcasts to input 0's shape, also when that shape holds one element
// itself (a dynamic [N] that is [1] at run time, plus a scalar []).
func TestElementwiseOneElement(t *testing.T) {
	r := rand.New(rand.NewSource(14))
	for _, c := range []struct{ x0, x1 []int }{
		{[]int{1}, []int{}}, {[]int{1}, []int{1}}, {[]int{1, 1}, []int{}}, {[]int{1, 1}, []int{1}},
		{[]int{}, []int{}}, {[]int{5}, []int{}}, {[]int{2, 3}, []int{1}}, {[]int{2, 3}, []int{1, 1}}, {[]int{0}, []int{}},
	} {
		a, b := nnRand(r, c.x0...), nnRand(r, c.x1...)
		n := nnNode("cuvil::Elementwise", 1, Attrs{"ops": []string{"Sub", "Div"}, "args": []int64{0, 1, 1, 2}, "outputs": []int64{3}}, 1, a, b)
		if err := CuvilElementwise(n); err != nil {
			t.Fatalf("%v, %v: %v", c.x0, c.x1, err)
		}
		y := n.Out[0]
		if len(y.Shape) != len(c.x0) {
			t.Fatalf("%v, %v: output shape %v", c.x0, c.x1, y.Shape)
		}
		for k := range y.Shape {
			if y.Shape[k] != c.x0[k] {
				t.Fatalf("%v, %v: output shape %v", c.x0, c.x1, y.Shape)
			}
		}
		s := float64(b.F32()[0])
		for i, v := range nnF64(a) {
			want := s / (v - s)
			if got := float64(y.F32()[i]); math.Abs(got-want) > 1e-4*(1+math.Abs(want)) {
				t.Fatalf("%v, %v: [%d] = %v, want %v", c.x0, c.x1, i, got, want)
			}
		}
	}
}

// TestElementwiseFloorCeil checks the rounding ops on exact values.
func TestElementwiseFloorCeil(t *testing.T) {
	x := &Tensor{}
	x.Resize(F32, 4)
	copy(x.F32(), []float32{-1.5, -0.25, 0.5, 2})
	n := nnNode("cuvil::Elementwise", 1, Attrs{"ops": []string{"Floor", "Ceil"}, "args": []int64{0, 0}, "outputs": []int64{1, 2}}, 2, x)
	if err := CuvilElementwise(n); err != nil {
		t.Fatal(err)
	}
	if got := n.Out[0].F32(); got[0] != -2 || got[1] != -1 || got[2] != 0 || got[3] != 2 {
		t.Errorf("Floor: %v", got)
	}
	if got := n.Out[1].F32(); got[0] != -1 || got[1] != 0 || got[2] != 1 || got[3] != 2 {
		t.Errorf("Ceil: %v", got)
	}
}

// TestElementwisePowSquare: Pow by a constant 2 in float32 (the x*x
// path) gives float32(math.Pow(x, 2)) bit for bit, over random values
// of every magnitude, subnormals, zeros of both signs, infinities and
// NaN, and the other exponents still go through math.Pow.
func TestElementwisePowSquare(t *testing.T) {
	r := rand.New(rand.NewSource(13))
	vals := []float32{0, float32(math.Copysign(0, -1)), 1, -1, 1e-45, -3e-39, 1e-20, 2e19, -2e19, 3.4e38,
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())}
	for len(vals) < 1037 {
		vals = append(vals, math.Float32frombits(r.Uint32()))
	}
	for _, e := range []float32{2, 3, 0.5} {
		x := &Tensor{}
		x.Resize(F32, len(vals))
		copy(x.F32(), vals)
		n := nnNode("cuvil::Elementwise", 1, Attrs{"ops": []string{"Pow"}, "args": []int64{0, -1}, "consts": []float32{e}, "outputs": []int64{1}}, 1, x)
		if err := CuvilElementwise(n); err != nil {
			t.Fatal(err)
		}
		for i, v := range n.Out[0].F32() {
			want := float32(math.Pow(float64(vals[i]), float64(e)))
			if math.Float32bits(v) != math.Float32bits(want) && !(v != v && want != want) {
				t.Fatalf("Pow(%g, %g) = %g, want %g", vals[i], e, v, want)
			}
		}
	}
}

// TestElementwiseErrors: bad programs and inputs give errors naming the
// node, never a panic.
func TestElementwiseErrors(t *testing.T) {
	r := rand.New(rand.NewSource(12))
	x, y := nnRand(r, 2, 3), nnRand(r, 3, 2)
	for _, c := range []struct {
		attrs Attrs
		in    []*Tensor
		want  string
	}{
		{Attrs{"ops": []string{"Frobnicate"}, "args": []int64{0}, "outputs": []int64{1}}, []*Tensor{x}, "unknown op"},
		{Attrs{"ops": []string{"Add"}, "args": []int64{0}, "outputs": []int64{1}}, []*Tensor{x}, "args too short"},
		{Attrs{"ops": []string{"Neg"}, "args": []int64{0, 0}, "outputs": []int64{1}}, []*Tensor{x}, "2 args"},
		{Attrs{"ops": []string{"Neg"}, "args": []int64{1}, "outputs": []int64{1}}, []*Tensor{x}, "names no input"},
		{Attrs{"ops": []string{"Neg"}, "args": []int64{-1}, "outputs": []int64{1}}, []*Tensor{x}, "names no input"},
		{Attrs{"ops": []string{"Neg"}, "args": []int64{0}, "outputs": []int64{0}}, []*Tensor{x}, "result of its own"},
		{Attrs{"ops": []string{"Neg"}, "args": []int64{0}, "outputs": []int64{}}, []*Tensor{x}, "outputs listed"},
		{Attrs{"ops": []string{"Add"}, "args": []int64{0, 1}, "outputs": []int64{2}}, []*Tensor{x, y}, "want [2 3] or one element"},
		// One element of a higher rank than input 0 broadcasts to a
		// bigger rank: not the output's shape.
		{Attrs{"ops": []string{"Add"}, "args": []int64{0, 1}, "outputs": []int64{2}}, []*Tensor{nnRand(r, 1), nnRand(r, 1, 1)}, "want [1] or one element of rank <= 1"},
		{Attrs{"ops": []string{"Add"}, "args": []int64{0, 1}, "outputs": []int64{2}}, []*Tensor{nnRand(r, 3), nnRand(r, 1, 1)}, "want [3] or one element of rank <= 1"},
	} {
		n := nnNode("cuvil::Elementwise", 1, c.attrs, 1, c.in...)
		err := CuvilElementwise(n)
		if err == nil || !strings.Contains(err.Error(), "test_cuvil::Elementwise") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one naming the node and %q", c.attrs, err, c.want)
		}
	}
}

func TestElementwiseNoAllocs(t *testing.T) {
	r := rand.New(rand.NewSource(13))
	p := NewWorkPool(WithThreads(2))
	defer p.Close()
	n := nnNode("cuvil::Elementwise", 1, ewTestProg, 4, ewTensors[float32](r, F32, []int{3, 20000})...)
	n.Pool = p
	if a := nnAllocs(t, n, CuvilElementwise); a != 0 {
		t.Errorf("%v allocations per run", a)
	}
}

// BenchmarkElementwiseChain compares a chain Mul(x, s) + y -> Relu ->
// Sigmoid fused against the four unfused kernels.
func BenchmarkElementwiseChain(b *testing.B) {
	r := rand.New(rand.NewSource(14))
	X, Y := nnRand(r, 1, 64, 56, 56), nnRand(r, 1, 64, 56, 56)
	S := nnRand(r, 1)
	b.Run("unfused", func(b *testing.B) {
		mul := nnNode("Mul", 14, nil, 1, X, S)
		add := nnNode("Add", 14, nil, 1, mul.Out[0], Y)
		relu := nnNode("Relu", 14, nil, 1, add.Out[0])
		sig := nnNode("Sigmoid", 13, nil, 1, relu.Out[0])
		for b.Loop() {
			Mul(mul)
			Add(add)
			Relu(relu)
			Sigmoid(sig)
		}
	})
	b.Run("fused", func(b *testing.B) {
		n := nnNode("cuvil::Elementwise", 1, Attrs{"ops": []string{"Mul", "Add", "Relu", "Sigmoid"},
			"args": []int64{0, 2, 3, 1, 4, 5}, "outputs": []int64{6}}, 1, X, Y, S)
		for b.Loop() {
			CuvilElementwise(n)
		}
	})
}

// TestElementwiseActivations: the activations fuse-activation makes
// (Swish with its alpha, Elu, Mish, HardSwish) give, inside a program at
// 1, 2 and 3 threads, the bits of their unfused kernels, in f32 and f64, at
// awkward sizes; the unfused kernels are checked against float64 math.
func TestElementwiseActivations(t *testing.T) {
	r := rand.New(rand.NewSource(21))
	p2, p3 := NewWorkPool(WithThreads(2)), NewWorkPool(WithThreads(3))
	defer p2.Close()
	defer p3.Close()
	prog := Attrs{
		"ops":     []string{"Swish", "Elu", "Mish", "HardSwish", "Swish"},
		"args":    []int64{0, -1, 0, -2, 0, 0, 0, -3},
		"consts":  []float32{1.5, 0.7, 1},
		"outputs": []int64{1, 2, 3, 4, 5},
	}
	refs := []struct {
		op      string
		version int
		attrs   Attrs
		f       func(x float64) float64
	}{
		{"Swish", 24, Attrs{"alpha": float32(1.5)}, func(x float64) float64 { return x / (1 + math.Exp(-1.5*x)) }},
		{"Elu", 6, Attrs{"alpha": float32(0.7)}, func(x float64) float64 {
			if x < 0 {
				return float64(float32(0.7)) * math.Expm1(x)
			}
			return x
		}},
		{"Mish", 18, nil, func(x float64) float64 { return x * math.Tanh(math.Log1p(math.Exp(x))) }},
		{"HardSwish", 14, nil, func(x float64) float64 { return x * math.Max(0, math.Min(1, (x+3)/6)) }},
		{"Swish", 24, nil, func(x float64) float64 { return x / (1 + math.Exp(-x)) }},
	}
	for _, dt := range []DType{F32, F64} {
		for _, size := range []int{1, 7, 513, 2*ewChunk + 3, 40009} {
			x := nnRand(r, size)
			for i := range x.F32() {
				x.F32()[i] *= 8
			}
			x = nnAs(x, dt)
			for _, pool := range []*WorkPool{nil, p2, p3} {
				n := nnNode("cuvil::Elementwise", 1, prog, 5, x)
				n.Pool = pool
				if err := CuvilElementwise(n); err != nil {
					t.Fatal(err)
				}
				for o, ref := range refs {
					want := nnRun(t, ref.op, ref.version, ref.attrs, 1, x)[0]
					a, b := nnF64(want), nnF64(n.Out[o])
					xs := nnF64(x)
					for i := range a {
						if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
							t.Fatalf("%s %d %s: [%d] = %v, unfused %v", dt, size, ref.op, i, b[i], a[i])
						}
						if w := ref.f(xs[i]); math.Abs(a[i]-w) > 1e-6*(1+math.Abs(w)) {
							t.Fatalf("%s %d %s(%v) = %v, want %v", dt, size, ref.op, xs[i], a[i], w)
						}
					}
				}
			}
		}
	}
}
