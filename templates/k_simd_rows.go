package templates

import (
	"math"
	"unsafe"
)

// Vector kernels on float32 rows: the depthwise 3x3 row, the bias+clamp
// epilogue, GELU, softmax's exp-and-sum and a row maximum. Each has an
// AVX2/FMA assembly version (asmgen/amd64/vec, asm_vec_amd64.s, dispatched
// in k_simd_rows_amd64.go) and the pure-Go twin here, which is what the purego
// tag and other architectures run, the tail of every assembly call (the
// assembly takes multiples of 8), and the tests' reference.

// vecExpGo is Cephes' expf, the algorithm of the assembly's expVec: x =
// n*ln2 + r, a degree-5 polynomial for exp(r), 2^n through the exponent.
// Inputs are clamped to [-87.34, 88.38].
func vecExpGo(x float32) float32 {
	x = min(max(x, -87.3365478515625), 88.3762626647949)
	fx := float32(math.RoundToEven(float64(x * float32(math.Log2E))))
	x -= fx * 0.693359375
	x -= fx * -2.12194440e-4
	p := float32(1.9875691500e-4)
	p = p*x + 1.3981999507e-3
	p = p*x + 8.3334519073e-3
	p = p*x + 4.1665795894e-2
	p = p*x + 1.6666665459e-1
	p = p*x + 5.0000001201e-1
	p = p*x*x + x + 1
	return p * math.Float32frombits(uint32(int32(fx)+127)<<23)
}

// vecGeluGo is x/2 * (1 + erf(x/sqrt2)) with 1 + erf(z) = erfc(-z) =
// 2 - erfc(z) and erfc(z) = t*exp(-z*z + P(t)), t = 1/(1+z/2) (Numerical
// Recipes' erfcc, fractional error under 1.2e-7): relative accuracy holds
// for negative x too, where 1 + erf is tiny.
func vecGeluGo(x float32) float32 {
	z := float32(math.Abs(float64(x))) * float32(1/math.Sqrt2)
	t := 1 / (1 + 0.5*z)
	p := float32(0.17087277)
	p = p*t - 0.82215223
	p = p*t + 1.48851587
	p = p*t - 1.13520398
	p = p*t + 0.27886807
	p = p*t - 0.18628806
	p = p*t + 0.09678418
	p = p*t + 0.37409196
	p = p*t + 1.00002368
	p = p*t - 1.26551223
	e := t * vecExpGo(p-z*z)
	if x >= 0 {
		e = 2 - e
	}
	return 0.5 * x * e
}

// dwConv9Go sets y[i] = min(max(bias + sum_t w[t]*src[t][off+i], lo), hi).
func dwConv9Go(y []float32, src *[9][]float32, off int, w *[9]float32, bias, lo, hi float32) {
	s0, s1, s2 := src[0][off:off+len(y)], src[1][off:off+len(y)], src[2][off:off+len(y)]
	s3, s4, s5 := src[3][off:off+len(y)], src[4][off:off+len(y)], src[5][off:off+len(y)]
	s6, s7, s8 := src[6][off:off+len(y)], src[7][off:off+len(y)], src[8][off:off+len(y)]
	for i := range y {
		acc := bias + w[0]*s0[i] + w[1]*s1[i] + w[2]*s2[i] + w[3]*s3[i] + w[4]*s4[i] +
			w[5]*s5[i] + w[6]*s6[i] + w[7]*s7[i] + w[8]*s8[i]
		y[i] = min(max(acc, lo), hi)
	}
}

// biasClampGo sets y[i] = min(max(y[i]+bias, lo), hi).
func biasClampGo(y []float32, bias, lo, hi float32) {
	for i, v := range y {
		y[i] = min(max(v+bias, lo), hi)
	}
}

// scaleGo sets y[i] *= a.
func scaleGo(y []float32, a float32) {
	for i := range y {
		y[i] *= a
	}
}

// packBT16Go sets panel[p*16+j] = b[j*ldb+p] for j in [0, 16), p in
// [p0, kc): the twin of packBT16AVX512 and packBT16AVX2, and their tail.
func packBT16Go(kc int, b []float32, ldb int, panel []float32, p0 int) {
	if p0 >= kc {
		return
	}
	panel = panel[:16*kc]
	for j := 0; j < 16; j++ {
		row := b[j*ldb+p0 : j*ldb+kc]
		for p, v := range row {
			panel[(p0+p)*16+j] = v
		}
	}
}

// geluGo applies vecGeluGo to y in place.
func geluGo(y []float32) {
	for i, v := range y {
		y[i] = vecGeluGo(v)
	}
}

// expSumGo sets y[i] = exp(x[i]-sub) and returns their sum.
func expSumGo(y, x []float32, sub float32) float32 {
	x = x[:len(y)]
	var s float32
	for i, v := range x {
		e := vecExpGo(v - sub)
		y[i] = e
		s += e
	}
	return s
}

// maxGo returns the maximum of x (x not empty).
func maxGo(x []float32) float32 {
	m := x[0]
	for _, v := range x[1:] {
		m = max(m, v)
	}
	return m
}

// fusedActRow32 applies activation a to a float32 row with the vector
// kernels, reporting false for the activations they do not cover.
func fusedActRow32(a fusedAct, row []float32) bool {
	switch a.kind {
	case fusedActGelu:
		gelu32(row)
		return true
	case fusedActSigmoid:
		sigmoid32(row)
		return true
	case fusedActHardSwish:
		hardSwish32(row)
		return true
	case fusedActSwish:
		if a.p0 == 1 {
			silu32(row)
			return true
		}
		return false
	case fusedActLeakyRelu:
		leakyRelu32(row, float32(a.p0))
		return true
	case fusedActTanh:
		tanh32(row)
		return true
	case fusedActGeluTanh:
		geluTanh32(row)
		return true
	case fusedActMish:
		mish32(row)
		return true
	case fusedActElu:
		elu32(row, float32(a.p0))
		return true
	case fusedActHardSigmoid:
		hardSigmoid32(row, float32(a.p0), float32(a.p1))
		return true
	}
	return fusedBiasAct32(row, 0, a)
}

// fusedBiasAct32 sets row = act(row + bias) in one pass when act is none,
// Relu or Clip, reporting false otherwise.
func fusedBiasAct32(row []float32, bias float32, a fusedAct) bool {
	lo, hi := float32(math.Inf(-1)), float32(math.Inf(1))
	switch a.kind {
	case fusedActNone:
		if bias == 0 {
			return true
		}
	case fusedActRelu:
		lo = 0
	case fusedActClip:
		lo, hi = float32(a.p0), float32(a.p1)
	default:
		return false
	}
	biasClamp(row, bias, lo, hi)
	return true
}

// axpyGo sets y[i] += a*x[i].
func axpyGo(y, x []float32, a float32) {
	x = x[:len(y)]
	for i, v := range x {
		y[i] += a * v
	}
}

// addSumGo sets y[i] = a[i] + b[i] and returns their sum.
func addSumGo(y, a, b []float32) float32 {
	a, b = a[:len(y)], b[:len(y)]
	var s float32
	for i := range y {
		v := a[i] + b[i]
		y[i] = v
		s += v
	}
	return s
}

// sumGo returns the sum of x.
func sumGo(x []float32) float32 {
	var s float32
	for _, v := range x {
		s += v
	}
	return s
}

// sumSqDevGo returns the sum of (x[i]-mean)^2.
func sumSqDevGo(x []float32, mean float32) float32 {
	var s float32
	for _, v := range x {
		d := v - mean
		s += d * d
	}
	return s
}

// normAffineGo sets y[i] = (x[i]-mean)*inv*s[i] + b[i] (b nil: no shift).
func normAffineGo(y, x, s, b []float32, mean, inv float32) {
	x, s = x[:len(y)], s[:len(y)]
	if b == nil {
		for i, v := range x {
			y[i] = (v - mean) * inv * s[i]
		}
		return
	}
	b = b[:len(y)]
	for i, v := range x {
		y[i] = (v-mean)*inv*s[i] + b[i]
	}
}

// dot4Go sets out[r] = sum_p a[p]*b[r*ldb+p] for r in [0, 4), p in
// [0, len(a)), summed in float64 and rounded once (the twin of dot4x32).
func dot4Go(a, b []float32, ldb int, out *[4]float32) {
	var s [4]float64
	dot4Go64(a, b, ldb, &s)
	out[0], out[1], out[2], out[3] = float32(s[0]), float32(s[1]), float32(s[2]), float32(s[3])
}

// gemvRowsGo adds x . a[j*lda : j*lda+len(x)] to y[j] for every j, summed
// in float32 (the twin of gemvRows32).
func gemvRowsGo(y, x, a []float32, lda int) {
	k := len(x)
	if k == 0 {
		return
	}
	for j := range y {
		y[j] += dotGo32(x, a[j*lda:j*lda+k])
	}
}

// dot4Go64 adds sum_p float64(a[p])*float64(b[r*ldb+p]) to s[r] for r in
// [0, 4), p in [0, len(a)).
func dot4Go64(a, b []float32, ldb int, s *[4]float64) {
	k := len(a)
	r0, r1, r2, r3 := b[:k], b[ldb:ldb+k], b[2*ldb:2*ldb+k], b[3*ldb:3*ldb+k]
	s0, s1, s2, s3 := s[0], s[1], s[2], s[3]
	for p, av := range a {
		x := float64(av)
		s0 += x * float64(r0[p])
		s1 += x * float64(r1[p])
		s2 += x * float64(r2[p])
		s3 += x * float64(r3[p])
	}
	s[0], s[1], s[2], s[3] = s0, s1, s2, s3
}

// lstmGatesGo is one LSTM step's gate equations with the default
// activations (sigmoid, tanh, tanh), no clip, no peepholes: g holds the
// pre-activations i, o, f, c (len(h) each); c and h are updated in place.
// sigmoid(x) = 1/(1+exp(-x)), tanh(x) = 1 - 2/(exp(2x)+1) through
// vecExpGo (relative error about 1e-7; tanh near 0 has an absolute error
// of about 1e-7).
func lstmGatesGo(g, c, h []float32) {
	hs := len(h)
	gi, gO, gf, gc := g[:hs], g[hs:2*hs], g[2*hs:3*hs], g[3*hs:4*hs]
	c = c[:hs]
	for u := range h {
		fv := 1 / (1 + vecExpGo(-gf[u]))
		iv := 1 / (1 + vecExpGo(-gi[u]))
		zv := 1 - 2/(vecExpGo(2*gc[u])+1)
		cn := fv*c[u] + iv*zv
		c[u] = cn
		ov := 1 / (1 + vecExpGo(-gO[u]))
		h[u] = ov * (1 - 2/(vecExpGo(2*cn)+1))
	}
}

// mulGo sets y[i] = a[i] * b[i]; a and b must be at least as long as y.
func mulGo(y, a, b []float32) {
	a, b = a[:len(y)], b[:len(y)]
	for i, v := range a {
		y[i] = v * b[i]
	}
}

// mulRows16's rows are sgemmPkNR panels: this fails to compile otherwise.
var _ = [1]struct{}{}[sgemmPkNR-16]

// mulRows16Go sets y[16r+j] = x[16r+j] * s[r] for the len(s) rows of 16
// (one packed panel row of sgemmPackB's W' each); the twin of
// mulRows16AVX.
func mulRows16Go(y, x, s []float32) {

	y, x = y[:16*len(s)], x[:16*len(s)]
	for r, g := range s {
		d, v := y[16*r:16*r+16], x[16*r:16*r+16]
		for j := range d {
			d[j] = v[j] * g
		}
	}
}

// interleave2Go sets y[2i] = a[i], y[2i+1] = b[i] (y twice a's length, b
// at least as long as a): the twin of interleave2AVX. On a little-endian
// machine with y 8-byte aligned one 64-bit store writes a pair (a[i] low,
// b[i] high); else pairs of float stores, written so that the loop has
// no bounds checks.
func interleave2Go(y, a, b []float32) {
	if len(a) == 0 || len(y) < 2*len(a) {
		return
	}
	b = b[:len(a)]
	if shuffleLittleEndian && uintptr(unsafe.Pointer(&y[0]))%8 == 0 {
		d := unsafe.Slice((*uint64)(unsafe.Pointer(&y[0])), len(a))
		for i, v := range a {
			d[i] = uint64(math.Float32bits(v)) | uint64(math.Float32bits(b[i]))<<32
		}
		return
	}
	for i, v := range a {
		q := y[2*i : 2*i+2]
		q[0], q[1] = v, b[i]
	}
}

// shuffleLittleEndian: a uint64 stores its low 32 bits first.
var shuffleLittleEndian = func() bool { x := uint16(1); return *(*byte)(unsafe.Pointer(&x)) == 1 }()
