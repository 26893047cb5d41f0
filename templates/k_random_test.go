package templates

import (
	"math"
	"math/rand"
	"testing"
)

// The generator against published values: std::mt19937's default seed 5489
// gives 3499211612 first (C++ [rand.predef]); numpy.random.seed(0) gives
// random_sample() 0.5488135039273248, 0.7151893663724195, ... and randn()
// 1.764052345967664, 0.4001572083672233, ... (the ONNX Dropout tests' inputs
// are these draws).
func TestRNGMatchesMT19937AndNumpy(t *testing.T) {
	if got := rngNew(5489).Uint32(); got != 3499211612 {
		t.Fatalf("MT19937(5489) first output %d, want 3499211612", got)
	}
	r := rngNew(5489)
	for i := 0; i < 9999; i++ {
		r.Uint32()
	}
	if got := r.Uint32(); got != 4123659995 { // the 10000th output ([rand.predef])
		t.Fatalf("MT19937(5489) 10000th output %d, want 4123659995", got)
	}
	u := rngNew(0)
	for i, want := range []float64{0.5488135039273248, 0.7151893663724195, 0.6027633760716439, 0.5448831829968969, 0.4236547993389047} {
		if got := u.Float64(); got != want {
			t.Fatalf("seed 0 random_sample[%d] = %v, want %v", i, got, want)
		}
	}
	g := rngNew(0)
	for i, want := range []float64{1.764052345967664, 0.4001572083672233, 0.9787379841057392, 2.240893199201458, 1.8675579901499675} {
		if got := g.Normal(); math.Abs(got-want) > 1e-14 {
			t.Fatalf("seed 0 randn[%d] = %v, want %v", i, got, want)
		}
	}
}

// Bernoulli draws: numpy's inversion is U > exp(log(1-p)) on one double for
// p <= 0.5 and its complement (with 1-p) for p > 0.5, checked against a
// second generator with the same seed; frequencies match p.
func TestRNGBernoulli(t *testing.T) {
	a, b := rngNew(7), rngNew(7)
	for i := 0; i < 20000; i++ {
		p := float64(i%101) / 100
		got := a.Bernoulli(p)
		q := math.Min(p, 1-p)
		want := 0.0
		if b.Float64() > math.Exp(math.Log(1-q)) {
			want = 1
		}
		if p > 0.5 {
			want = 1 - want
		}
		if got != want {
			t.Fatalf("draw %d, p=%v: %v, want %v", i, p, got, want)
		}
	}
	for _, p := range []float64{0.03, 0.3, 0.5, 0.77} {
		r, ones := rngNew(11), 0.0
		const draws = 40000
		for i := 0; i < draws; i++ {
			ones += r.Bernoulli(p)
		}
		if f := ones / draws; math.Abs(f-p) > 4*math.Sqrt(p*(1-p)/draws)+1e-9 {
			t.Fatalf("p=%v: frequency %v", p, f)
		}
	}
}

func TestRandomKernels(t *testing.T) {
	// RandomUniform: seeded draws are numpy's low + (high-low)*random_sample.
	n := tewNode("RandomUniform", 22, Attrs{"seed": float32(0), "low": float32(-2), "high": float32(3), "shape": []int64{3, 7}, "dtype": int64(F64)})
	tewRun(t, n)
	want := rngNew(0)
	if n.Out[0].DType != F64 || len(n.Out[0].Shape) != 2 || n.Out[0].Shape[1] != 7 {
		t.Fatalf("RandomUniform out %s%v", n.Out[0].DType, n.Out[0].Shape)
	}
	for i, v := range n.Out[0].F64() {
		if w := -2 + 5*want.Float64(); v != w {
			t.Fatalf("RandomUniform[%d] = %v, want %v", i, v, w)
		}
	}
	// A second run continues the stream.
	tewRun(t, n)
	if v, w := n.Out[0].F64()[0], -2+5*want.Float64(); v != w {
		t.Fatalf("second run starts at %v, want %v", v, w)
	}
	// RandomNormalLike: the input's shape, float16 by the dtype attribute.
	x := tewRand(rand.New(rand.NewSource(1)), I32, -3, 3, 5, 3, 2)
	n = tewNode("RandomNormalLike", 22, Attrs{"seed": float32(4), "mean": float32(10), "scale": float32(0.5), "dtype": int64(F16)}, x)
	tewRun(t, n)
	g := rngNew(4)
	for i := 0; i < n.Out[0].Len(); i++ {
		w := float64(F16ToF32(ewF64ToF16(10 + 0.5*g.Normal())))
		if v := tewGet(n.Out[0], i); v != w {
			t.Fatalf("RandomNormalLike[%d] = %v, want %v", i, v, w)
		}
	}
	// Bernoulli into bool; probabilities out of [0, 1] are an error.
	p := tewF32T([]int{2, 3}, 0, 1, 0.5, 0.25, 0.9, 1)
	n = tewNode("Bernoulli", 22, Attrs{"seed": float32(9), "dtype": int64(Bool)}, p)
	tewRun(t, n)
	b := rngNew(9)
	for i, v := range n.Out[0].Bool() {
		if w := b.Bernoulli(float64(p.F32()[i])) == 1; v != w {
			t.Fatalf("Bernoulli[%d] = %v, want %v", i, v, w)
		}
	}
	bad := tewNode("Bernoulli", 22, nil, tewF32T([]int{1}, 1.5))
	if err := Bernoulli(bad); err == nil {
		t.Fatal("Bernoulli accepted probability 1.5")
	}
	// An unseeded op draws different streams in different nodes.
	u1 := tewNode("RandomUniform", 22, Attrs{"shape": []int64{8}})
	u2 := tewNode("RandomUniform", 22, Attrs{"shape": []int64{8}})
	tewRun(t, u1)
	tewRun(t, u2)
	same := true
	for i := range u1.Out[0].F32() {
		same = same && u1.Out[0].F32()[i] == u2.Out[0].F32()[i]
	}
	if same {
		t.Fatal("two unseeded RandomUniform nodes drew the same values")
	}
}

// Multinomial: sample frequencies follow the softmax of each row; an
// all-but-one -inf row always draws that class.
func TestMultinomial(t *testing.T) {
	logits := tewF32T([]int{2, 4}, 0, float32(math.Log(2)), float32(math.Log(3)), float32(math.Log(4)),
		float32(math.Inf(-1)), float32(math.Inf(-1)), 5, float32(math.Inf(-1)))
	const samples = 20000
	n := tewNode("Multinomial", 22, Attrs{"seed": float32(1), "sample_size": int64(samples), "dtype": int64(I64)}, logits)
	tewRun(t, n)
	out := n.Out[0].I64()
	if len(out) != 2*samples {
		t.Fatalf("%d samples", len(out))
	}
	var count [4]float64
	for _, k := range out[:samples] {
		count[k]++
	}
	for c, w := range []float64{0.1, 0.2, 0.3, 0.4} {
		if f := count[c] / samples; math.Abs(f-w) > 4*math.Sqrt(w*(1-w)/samples) {
			t.Fatalf("class %d frequency %v, want %v", c, f, w)
		}
	}
	for i, k := range out[samples:] {
		if k != 2 {
			t.Fatalf("row 1 sample %d drew class %d, want 2", i, k)
		}
	}
}

// Seeded training Dropout keeps element i when the i-th draw is >= ratio,
// as numpy.random.seed(seed); uniform(0, 1, shape) >= ratio.
func TestDropoutNumpyMask(t *testing.T) {
	x := tewRand(rand.New(rand.NewSource(2)), F32, -4, 4, 3, 4, 5)
	tr := &Tensor{}
	tr.Resize(Bool)
	tr.Bool()[0] = true
	n := tewNode("Dropout", 22, Attrs{"seed": int64(0)}, x, tewF32T(nil, 0.75), tr)
	n.Out = []*Tensor{{}, {}}
	tewRun(t, n)
	r := rngNew(0)
	for i := 0; i < x.Len(); i++ {
		keep := r.Float64() >= 0.75
		want := 0.0
		if keep {
			want = float64(x.F32()[i] * 4)
		}
		if n.Out[1].Bool()[i] != keep || tewGet(n.Out[0], i) != want {
			t.Fatalf("[%d]: y %v mask %v, want %v %v", i, tewGet(n.Out[0], i), n.Out[1].Bool()[i], want, keep)
		}
	}
}
