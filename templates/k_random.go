package templates

import (
	"math"
	"sync/atomic"
	"time"
)

// The random ops (RandomUniform, RandomNormal, their Like forms, Bernoulli,
// Multinomial and training-mode Dropout) draw from the generator numpy's
// legacy numpy.random.RandomState uses: MT19937 seeded as
// numpy.random.seed(seed), doubles with 53 random bits, normals by the
// polar Box-Muller method, binomial draws by inversion. The ONNX spec leaves
// the generator to the implementation; choosing numpy's makes a seeded
// model reproduce what numpy (and so the ONNX reference) computes with that
// seed. The generator lives in the node's cache: a session's successive
// runs continue one stream (as ONNX Runtime's seeded kernels do), and a
// node without a seed attribute starts from a seed drawn from the clock.

// rngMT is MT19937 with numpy's legacy RandomState extras (a cached second
// normal).
type rngMT struct {
	mt       [624]uint32
	i        int
	hasGauss bool
	gauss    float64
}

// rngNew seeds the generator as numpy.random.seed(seed) does for an
// integer seed (init_genrand).
func rngNew(seed uint32) *rngMT {
	r := &rngMT{i: 624}
	r.mt[0] = seed
	for i := 1; i < 624; i++ {
		r.mt[i] = 1812433253*(r.mt[i-1]^(r.mt[i-1]>>30)) + uint32(i)
	}
	return r
}

// rngClock counts unseeded generators, so that two made in the same clock
// tick differ.
var rngClock atomic.Uint64

// rngScratch is a random op's node cache: its generator and a buffer.
type rngScratch struct {
	rng *rngMT
	f64 []float64
}

// rngScr returns node n's cache, making its generator on first use from
// the seed attribute (a float for the Random ops and Bernoulli, an int for
// Dropout) or, without one, from the clock.
func rngScr(n *Node) *rngScratch {
	if s, ok := n.Cache.(*rngScratch); ok {
		return s
	}
	var seed uint32
	switch v := n.Attrs["seed"].(type) {
	case int64:
		seed = uint32(v)
	case float32:
		seed = rngSeedFloat(float64(v))
	default:
		z := uint64(time.Now().UnixNano()) + rngClock.Add(1)*0x9e3779b97f4a7c15
		z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
		z = (z ^ z>>27) * 0x94d049bb133111eb
		seed = uint32(z ^ z>>31)
	}
	s := &rngScratch{rng: rngNew(seed)}
	n.Cache = s
	return s
}

// rngFor returns node n's generator.
func rngFor(n *Node) *rngMT { return rngScr(n).rng }

// F64 returns a buffer of size float64s.
func (s *rngScratch) F64(size int) []float64 {
	if cap(s.f64) < size {
		s.f64 = make([]float64, size)
	}
	return s.f64[:size]
}

// rngSeedFloat maps a float seed attribute to numpy's 32-bit seed: an
// integral value in [0, 2^32) is itself; any other value (negative,
// fractional) is its float32 bit pattern, so that distinct seeds still
// give distinct streams.
func rngSeedFloat(v float64) uint32 {
	if v >= 0 && v < 1<<32 && v == math.Trunc(v) {
		return uint32(v)
	}
	return math.Float32bits(float32(v))
}

// Uint32 is the next tempered MT19937 output.
func (r *rngMT) Uint32() uint32 {
	if r.i >= 624 {
		for k := 0; k < 624; k++ {
			y := r.mt[k]&0x80000000 | r.mt[(k+1)%624]&0x7fffffff
			v := r.mt[(k+397)%624] ^ y>>1
			if y&1 != 0 {
				v ^= 0x9908b0df
			}
			r.mt[k] = v
		}
		r.i = 0
	}
	y := r.mt[r.i]
	r.i++
	y ^= y >> 11
	y ^= y << 7 & 0x9d2c5680
	y ^= y << 15 & 0xefc60000
	y ^= y >> 18
	return y
}

// Float64 is a uniform double in [0, 1) from two outputs (27 + 26 bits),
// numpy's random_sample.
func (r *rngMT) Float64() float64 {
	a, b := r.Uint32()>>5, r.Uint32()>>6
	return (float64(a)*67108864 + float64(b)) / 9007199254740992
}

// Normal is a standard normal draw, numpy's legacy gauss: the polar method,
// which makes two draws and keeps the second for the next call.
func (r *rngMT) Normal() float64 {
	if r.hasGauss {
		r.hasGauss = false
		return r.gauss
	}
	var x1, x2, r2 float64
	for {
		x1 = 2*r.Float64() - 1
		x2 = 2*r.Float64() - 1
		r2 = x1*x1 + x2*x2
		if r2 < 1 && r2 != 0 {
			break
		}
	}
	f := math.Sqrt(-2 * math.Log(r2) / r2)
	r.gauss, r.hasGauss = f*x1, true
	return f * x2
}

// Bernoulli is a binomial draw with n = 1, numpy's legacy binomial: by
// inversion on the smaller of p and 1-p. Every draw consumes the stream,
// also for p of 0 or 1, as numpy's does.
func (r *rngMT) Bernoulli(p float64) float64 {
	if p > 0.5 {
		return 1 - r.inversion(1-p)
	}
	return r.inversion(p)
}

// inversion is numpy's random_binomial_inversion for n = 1, with its
// arithmetic (q^n as exp(n log q)) so that draws agree.
func (r *rngMT) inversion(p float64) float64 {
	q := 1 - p
	qn := math.Exp(math.Log(q))
	bound := math.Min(1, p+10*math.Sqrt(p*q+1))
	x, px, u := 0.0, qn, r.Float64()
	for u > px {
		x++
		if x > bound {
			x, px, u = 0, qn, r.Float64()
		} else {
			u -= px
			px = ((1 - x + 1) * p * px) / (x * q)
		}
	}
	return x
}

// RandomUniform is ONNX RandomUniform: a tensor of the shape attribute's
// dims, uniform in [low, high).
func RandomUniform(n *Node) error {
	return rngFill(n, DType(n.Attrs.Int("dtype", int64(F32))), rngShape(n), true)
}

// RandomNormal is ONNX RandomNormal: normal draws with the mean and scale
// attributes.
func RandomNormal(n *Node) error {
	return rngFill(n, DType(n.Attrs.Int("dtype", int64(F32))), rngShape(n), false)
}

// RandomUniformLike is RandomUniform shaped like the input (and of its
// dtype unless the dtype attribute says otherwise).
func RandomUniformLike(n *Node) error { return rngLike(n, true) }

// RandomNormalLike is RandomNormal shaped like the input.
func RandomNormalLike(n *Node) error { return rngLike(n, false) }

// rngShape is the shape attribute as ints (-1 for a dim out of range, which
// rngFill refuses).
func rngShape(n *Node) []int {
	a := n.Attrs.Ints("shape")
	s := make([]int, len(a))
	for i, d := range a {
		s[i] = int(d)
		if d < 0 || d > math.MaxInt32 {
			s[i] = -1
		}
	}
	return s
}

func rngLike(n *Node, uniform bool) error {
	x, err := ewIn0(n)
	if err != nil {
		return err
	}
	dt := x.DType
	if n.Attrs.Has("dtype") {
		dt = DType(n.Attrs.Int("dtype", 0))
	}
	return rngFill(n, dt, x.Shape, uniform)
}

func rngFill(n *Node, dt DType, shape []int, uniform bool) error {
	if !ewIsFloat(dt) {
		return n.Errorf("dtype %s is not a float type", dt)
	}
	for _, d := range shape {
		if d < 0 {
			return n.Errorf("negative dim in shape %v", shape)
		}
	}
	out := n.Out[0]
	out.Resize(dt, shape...)
	r := rngFor(n)
	if uniform {
		lo, hi := float64(n.Attrs.Float("low", 0)), float64(n.Attrs.Float("high", 1))
		for i := 0; i < out.Len(); i++ {
			ewSetF64(out, i, lo+(hi-lo)*r.Float64())
		}
		return nil
	}
	mean, scale := float64(n.Attrs.Float("mean", 0)), float64(n.Attrs.Float("scale", 1))
	for i := 0; i < out.Len(); i++ {
		ewSetF64(out, i, mean+scale*r.Normal())
	}
	return nil
}

// Bernoulli is ONNX Bernoulli: 1 with the input's probability, else 0, in
// the dtype attribute's type (the input's by default).
func Bernoulli(n *Node) error {
	x, err := ewIn0(n)
	if err != nil {
		return err
	}
	if !ewIsFloat(x.DType) {
		return n.Errorf("dtype %s is not a float type", x.DType)
	}
	dt := x.DType
	if n.Attrs.Has("dtype") {
		dt = DType(n.Attrs.Int("dtype", 0))
	}
	if !ewIsNumeric(dt) && dt != Bool {
		return n.Errorf("output dtype %s not supported", dt)
	}
	out := n.Out[0]
	out.Resize(dt, x.Shape...)
	r := rngFor(n)
	for i := 0; i < x.Len(); i++ {
		p := ewF64At(x, i)
		if p < 0 || p > 1 {
			return n.Errorf("probability %v at element %d is outside [0, 1]", p, i)
		}
		ewSetF64(out, i, r.Bernoulli(p))
	}
	return nil
}

// Multinomial is ONNX Multinomial: for each row of [batch, classes]
// unnormalised log-probabilities, sample_size class indices drawn with
// the softmax probabilities (inverse CDF on one uniform draw each).
func Multinomial(n *Node) error {
	x, err := ewIn0(n)
	if err != nil {
		return err
	}
	if len(x.Shape) != 2 || !ewIsFloat(x.DType) {
		return n.Errorf("want a 2-D float input, have %s%v", x.DType, x.Shape)
	}
	batch, classes := int(x.Shape[0]), int(x.Shape[1])
	samples := n.Attrs.Int("sample_size", 1)
	if samples < 0 {
		return n.Errorf("negative sample_size %d", samples)
	}
	if classes == 0 && samples > 0 && batch > 0 {
		return n.Errorf("no classes to draw from")
	}
	dt := DType(n.Attrs.Int("dtype", int64(I32)))
	if dt != I32 && dt != I64 {
		return n.Errorf("output dtype %s is not int32 or int64", dt)
	}
	out := n.Out[0]
	out.Resize(dt, batch, int(samples))
	s := rngScr(n)
	cdf, r := s.F64(classes), s.rng
	for b := 0; b < batch; b++ {
		top := math.Inf(-1)
		for c := 0; c < classes; c++ {
			top = math.Max(top, ewF64At(x, b*classes+c))
		}
		sum := 0.0
		for c := 0; c < classes; c++ {
			v := ewF64At(x, b*classes+c)
			if !math.IsInf(top, 0) {
				v -= top
			}
			sum += math.Exp(v)
			cdf[c] = sum
		}
		for s := 0; s < int(samples); s++ {
			u := r.Float64() * sum
			k := 0
			for k < classes-1 && cdf[k] <= u {
				k++
			}
			ewSetF64(out, b*int(samples)+s, float64(k))
		}
	}
	return nil
}
