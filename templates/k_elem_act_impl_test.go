package templates

import (
	"math"
	"math/big"
	"math/rand"
	"testing"
)

// actRows is one implementation of the eleven float32 activation rows:
// the Go twins, the dispatched rows (sigmoid32 ...) or, where the CPU
// has them, each assembly family called directly (actAsmImpls, per
// GOARCH), whatever the dispatch would pick.
type actRows struct {
	name                                                string
	sigmoid, silu, hardSwish, exp, tanh, geluTanh, mish func([]float32)
	elu, leakyRelu                                      func([]float32, float32)
	hardSigmoid                                         func([]float32, float32, float32)
	prelu                                               func(y, s []float32)
}

var actTwinRows = actRows{"Go", sigmoidGo, siluGo, hardSwishGo, expGo, tanhGo, geluTanhGo, mishGo,
	eluGo, leakyReluGo, hardSigmoidGo, preluGo}

var actDispatchRows = actRows{"32", sigmoid32, silu32, hardSwish32, exp32, tanh32, geluTanh32, mish32,
	elu32, leakyRelu32, hardSigmoid32, prelu32}

// actSlope is PRelu's slope row in these tests (element i of a row of
// any length takes actSlope[i%len]).
func actSlope(n int) []float32 {
	pat := []float32{0.25, -0.5, 1e-30, 3, 0, -1e20, 0.1, 7e-39, 1, -2.5, 0.125}
	s := make([]float32, n)
	for i := range s {
		s[i] = pat[i%len(pat)]
	}
	return s
}

// actUnary is one row as func([]float32), its parameters fixed.
type actUnary struct {
	name string
	f    func([]float32)
}

// unaries lists r's rows, each with the parameters the tests use.
func (r actRows) unaries() []actUnary {
	return []actUnary{
		{"sigmoid", r.sigmoid}, {"silu", r.silu}, {"hardSwish", r.hardSwish}, {"exp", r.exp},
		{"tanh", r.tanh}, {"geluTanh", r.geluTanh}, {"mish", r.mish},
		{"elu 1", func(y []float32) { r.elu(y, 1) }}, {"elu 0.7", func(y []float32) { r.elu(y, 0.7) }},
		{"hardSigmoid", func(y []float32) { r.hardSigmoid(y, 0.2, 0.5) }},
		{"hardSigmoid 1/6", func(y []float32) { r.hardSigmoid(y, 1.0/6, 0.5) }},
		{"leakyRelu", func(y []float32) { r.leakyRelu(y, 0.1) }},
		{"leakyRelu -3", func(y []float32) { r.leakyRelu(y, -3) }},
		{"prelu", func(y []float32) { r.prelu(y, actSlope(len(y))) }},
	}
}

// actClassInputs returns inputs of every float32 class: signed zeros,
// denormals, the normal extremes, infinities, NaNs (quiet, with a
// payload, negative), the kernels' thresholds and their neighbours, a
// sweep of bit patterns over the whole float32 line, and random values
// where the kernels' branches and denormal results lie.
func actClassInputs(r *rand.Rand) []float32 {
	f := math.Float32frombits
	x := []float32{0, f(0x80000000), f(1), f(0x80000001), f(0x007fffff), f(0x807fffff), f(0x00400000),
		f(0x00800000), f(0x80800000), math.MaxFloat32, -math.MaxFloat32,
		float32(math.Inf(1)), float32(math.Inf(-1)), f(0x7fc00000), f(0xffc00000), f(0x7fc12345), f(0x7f800001), f(0xff812345)}
	for _, t := range []float32{0.625, 3, 6, 20, 87.3, 87.33655, 88.37626, 88.7, 89, 103.9, 104, 105, 150, 1e-8, 0.5, 1, 2} {
		for _, v := range []float32{t, -t} {
			b := math.Float32bits(v)
			for d := uint32(0); d < 4; d++ {
				x = append(x, f(b+d), f(b-d))
			}
		}
	}
	for b := uint64(0); b < 1<<32; b += 65521 {
		x = append(x, f(uint32(b)))
	}
	for i := 0; i < 60000; i++ {
		switch i % 4 {
		case 0:
			x = append(x, float32(r.Float64()*220-115))
		case 1:
			x = append(x, float32(r.NormFloat64()*4))
		case 2:
			x = append(x, float32(r.Float64()*2-1))
		default:
			x = append(x, float32(r.Float64()*30-105))
		}
	}
	return x
}

// actSameBits reports whether a and b have the same bits (any two NaNs
// count as the same).
func actSameBits(a, b float32) bool {
	return math.Float32bits(a) == math.Float32bits(b) || (a != a && b != b)
}

// actImpls is the dispatched rows and every assembly family this CPU has.
func actImpls() []actRows { return append([]actRows{actDispatchRows}, actAsmImpls()...) }

// TestActivationRowsExactTwin: every implementation of every row gives
// its Go twin's bits on every float32 class (the twins round each FMA
// once, as the instructions do).
func TestActivationRowsExactTwin(t *testing.T) {
	x := actClassInputs(rand.New(rand.NewSource(11)))
	twins := actTwinRows.unaries()
	for _, im := range actImpls() {
		for j, k := range im.unaries() {
			a, b := append([]float32(nil), x...), append([]float32(nil), x...)
			k.f(a)
			twins[j].f(b)
			for i := range a {
				if !actSameBits(a[i], b[i]) {
					t.Fatalf("%s %s(%v = %#x): %v (%#x), twin %v (%#x)", im.name, k.name, x[i], math.Float32bits(x[i]),
						a[i], math.Float32bits(a[i]), b[i], math.Float32bits(b[i]))
				}
			}
		}
		t.Logf("%s: %d inputs, every row bit-exact with its twin", im.name, len(x))
	}
}

// TestActivationRowsTails: rows of every length 0..40 at unaligned
// starts (offsets 0..3 floats) give the twin's bits and leave the
// elements around them alone (the masked tails store nothing else).
func TestActivationRowsTails(t *testing.T) {
	r := rand.New(rand.NewSource(12))
	src := actInputs(r, 64)
	r.Shuffle(len(src), func(i, j int) { src[i], src[j] = src[j], src[i] })
	const guard = 12
	twins := actTwinRows.unaries()
	for _, im := range actImpls() {
		for j, k := range im.unaries() {
			for n := 0; n <= 40; n++ {
				for off := 0; off < 4; off++ {
					buf := make([]float32, off+n+guard)
					for i := range buf {
						buf[i] = src[(i+3*n)%len(src)]
					}
					orig := append([]float32(nil), buf...)
					want := append([]float32(nil), buf[off:off+n]...)
					twins[j].f(want)
					k.f(buf[off : off+n])
					for i := range buf {
						w := orig[i]
						if i >= off && i < off+n {
							w = want[i-off]
						}
						if !actSameBits(buf[i], w) {
							t.Fatalf("%s %s n %d off %d: [%d] = %v, want %v (input %v)", im.name, k.name, n, off, i, buf[i], w, orig[i])
						}
					}
				}
			}
		}
	}
}

// TestFma32SingleRounding: fma32 is a*b+c rounded once to float32 (as
// big.Float gives it), also where a*b lies exactly halfway between two
// float32 values and c is too small to move float64's sum off it (there
// a float64 FMA rounded again to float32 would round twice), into the
// denormals and past the overflow threshold.
func TestFma32SingleRounding(t *testing.T) {
	r := rand.New(rand.NewSource(13))
	ref := func(a, b, c float32) float32 {
		p := new(big.Float).SetPrec(300).Mul(big.NewFloat(float64(a)), big.NewFloat(float64(b)))
		p.Add(p, big.NewFloat(float64(c)))
		f, _ := p.Float32()
		return f
	}
	// short is a float32 of 13 significant bits at 2^e (a product of
	// two has 25 or 26).
	short := func(e int) float32 {
		m := float64(1<<12 + r.Intn(1<<12))
		if r.Intn(2) == 0 {
			m = -m
		}
		return float32(math.Ldexp(m, e-12))
	}
	halfway := 0
	for i := 0; i < 400000; i++ {
		var a, b, c float32
		switch i % 4 {
		case 0: // a*b often a midpoint, c below float64's last bit of it
			ea, eb := r.Intn(60)-30, r.Intn(60)-30
			if i%16 == 0 {
				ea, eb = -70+r.Intn(10), -70+r.Intn(10) // denormal results
			}
			a, b = short(ea), short(eb)
			c = float32(math.Ldexp(r.Float64()+0.5, ea+eb-56-r.Intn(30)))
			if r.Intn(2) == 0 {
				c = -c
			}
		case 1: // near the overflow threshold
			a, b = short(64), short(63)
			c = float32(math.Ldexp(r.Float64()-0.5, 127-20))
		default:
			a, b = float32(r.NormFloat64()), float32(r.NormFloat64())
			c = float32(r.NormFloat64() * math.Ldexp(1, r.Intn(40)-20))
		}
		s := float64(a)*float64(b) + float64(c)
		if math.Float64bits(s)&(1<<29-1) == 1<<28 {
			halfway++
		}
		if got, want := fma32(a, b, c), ref(a, b, c); !actSameBits(got, want) {
			t.Fatalf("fma32(%v, %v, %v) = %v, want %v", a, b, c, got, want)
		}
	}
	if halfway < 1000 {
		t.Fatalf("only %d halfway cases", halfway)
	}
	t.Logf("%d halfway cases", halfway)
}
