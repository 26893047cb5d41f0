package templates

import "math"

// float32 vector math for activations: sigmoid, SiLU and HardSwish rows.
// On amd64 with AVX-512 they run sigmoidAVX512, siluAVX512 and
// hardSwishAVX512 (asmgen/amd64/vec, act512.go) on the whole row, the tail
// under a lane mask, so an element's bits do not depend on where a row, an
// element-wise chunk or a thread's part ends; on amd64 with AVX2 and FMA
// but no AVX-512, their 8-lane twins (act256.go, the tail under a
// VMASKMOVPS mask); on arm64 the NEON rows; elsewhere (and with the purego
// tag) the pure-Go twins below, the same steps with each FMA rounded once
// (fma32), so every implementation gives the same bits.
// Used by the fused epilogues (fusedActRow32), cuvil::Elementwise and the
// unfused float32 Sigmoid, Swish and HardSwish kernels alike, so fused and unfused
// graphs agree.
//
// Accuracy (k_elem_act_test.go, against float64 math): sigmoid within 3
// ulp everywhere (its denormal results too); SiLU within 4 ulp for
// x >= -87.3 (below, exp(x) is a denormal of fewer bits and the absolute
// error stays under 1e-37). NaN gives NaN; sigmoid(+Inf) = 1,
// sigmoid(-Inf) = 0, SiLU(+Inf) = +Inf and SiLU(-Inf) = NaN, as
// x*sigmoid(x) in float64 gives. HardSwish, x*min(max((x+3)*(1/6), 0), 1)
// in float32, within 3 ulp (x+3 is exact near -3, so the small gates keep
// their relative accuracy); its twin has the assembly's bits.

// fma32 is a*b+c rounded once to float32, as a float32 FMA instruction
// gives it (the assembly rows' bits). The product of float32 operands is
// exact in float64, so s = p + c (p = a*b) is a*b+c rounded once to
// float64 (what math.FMA would give: a fused multiply-add the compiler may
// emit for it gives the same); rounding s to float32 is then correct
// unless s lies exactly halfway between two float32 values (its low 28
// mantissa bits zero: rare) and is inexact. There fma32Odd rounds s to odd
// first, which float32's rounding then resolves as a single rounding would.
func fma32(a, b, c float32) float32 {
	s := float64(a)*float64(b) + float64(c)
	if math.Float64bits(s)&(1<<28-1) != 0 {
		return float32(s)
	}
	return fma32Odd(a, b, c)
}

// fma32Odd is fma32 where s = a*b + c in float64 may lie halfway between
// two float32 values: s rounded to odd (its last bit set towards the
// exact sum where s is inexact, from TwoSum's error e = (p + z) - s),
// then to float32; Inf and NaN as they are. Not inlined, so that fma32 is.
//
//go:noinline
func fma32Odd(a, b, c float32) float32 {
	p, z := float64(a)*float64(b), float64(c)
	s := p + z
	if s-s != 0 {
		return float32(s)
	}
	bz := s - p
	bp := s - bz
	e := (p - bp) + (z - bz)
	if bits := math.Float64bits(s); e != 0 && bits&1 == 0 {
		if (e > 0) == (s > 0) {
			bits++
		} else {
			bits--
		}
		s = math.Float64frombits(bits)
	}
	return float32(s)
}

// vecSigmoidGo is sigmoid(x) by act512's steps: e = exp(-|x|) (Cephes
// expf, the argument at least -104, 2^n exact into the denormals), then
// (x < 0 ? e : 1) / (1 + e).
func vecSigmoidGo(x float32) float32 {
	if x != x {
		return x
	}
	z := -float32(math.Abs(float64(x)))
	z = max(z, -104)
	fx := float32(math.RoundToEven(float64(z * float32(math.Log2E))))
	r := fma32(-fx, 0.693359375, z)
	r = fma32(-fx, -2.12194440e-4, r)
	p := float32(1.9875691500e-4)
	p = fma32(p, r, 1.3981999507e-3)
	p = fma32(p, r, 8.3334519073e-3)
	p = fma32(p, r, 4.1665795894e-2)
	p = fma32(p, r, 1.6666665459e-1)
	p = fma32(p, r, 5.0000001201e-1)
	p = fma32(p, r*r, r)
	p += 1
	e := float32(math.Ldexp(float64(p), int(fx)))
	num := float32(1)
	if x < 0 {
		num = e
	}
	return num / (1 + e)
}

// sigmoidGo applies vecSigmoidGo to y in place.
func sigmoidGo(y []float32) {
	for i, v := range y {
		y[i] = vecSigmoidGo(v)
	}
}

// siluGo sets y[i] = y[i] * vecSigmoidGo(y[i]).
func siluGo(y []float32) {
	for i, v := range y {
		y[i] = v * vecSigmoidGo(v)
	}
}

// vecHardSwishGo is HardSwish by hardSwishAVX512's four roundings.
func vecHardSwishGo(x float32) float32 {
	t := float32(x+3) * float32(1.0/6)
	t = min(max(t, 0), 1)
	return x * t
}

// hardSwishGo applies vecHardSwishGo to y in place.
func hardSwishGo(y []float32) {
	for i, v := range y {
		y[i] = vecHardSwishGo(v)
	}
}

// The rows of act512b.go: exp, tanh, GELU (tanh form), Mish, Elu and
// HardSigmoid, each the AVX-512 kernel on the whole row (tail masked) or
// the twin below (the same steps, float64 FMAs rounded to float32). NaN
// in, NaN out. Accuracy against float64 (k_elem_act_test.go): exp within
// 2 ulp for normal results (denormal ones rounded once from a 2-ulp
// value); tanh within 3 ulp; GELU-tanh within 4 + 3|2u| ulp (the float32
// argument 2u carries a few ulp that sigmoid multiplies by |2u| for x < 0)
// where the result is above 1e-37 in magnitude; Mish within 6 ulp (likewise); Elu within 4;
// HardSigmoid within 1 (one FMA in float32).

// expQGo is exp512q's steps for z in [-104, 89]: fx = round(z*log2e), q =
// exp(z - fx*ln2) - 1 by Cephes' polynomial.
func expQGo(z float32) (fx, q float32) {
	fx = float32(math.RoundToEven(float64(z * float32(math.Log2E))))
	r := fma32(-fx, 0.693359375, z)
	r = fma32(-fx, -2.12194440e-4, r)
	p := float32(1.9875691500e-4)
	p = fma32(p, r, 1.3981999507e-3)
	p = fma32(p, r, 8.3334519073e-3)
	p = fma32(p, r, 4.1665795894e-2)
	p = fma32(p, r, 1.6666665459e-1)
	p = fma32(p, r, 5.0000001201e-1)
	return fx, fma32(p, r*r, r)
}

// expClampedGo is exp(z) for z in [-104, 89] (VSCALEFPS: one rounding,
// overflow to +Inf).
func expClampedGo(z float32) float32 {
	fx, q := expQGo(z)
	return float32(math.Ldexp(float64(q+1), int(fx)))
}

// vecExp512Go is expAVX512's exp(x).
func vecExp512Go(x float32) float32 {
	if x != x {
		return x
	}
	return expClampedGo(min(max(x, -104), 89))
}

// vecTanhGo is tanhAVX512's tanh(x).
func vecTanhGo(x float32) float32 {
	if x != x {
		return x
	}
	a := float32(math.Abs(float64(x)))
	if a < 0.625 {
		s := x * x
		p := float32(-5.70498872745e-3)
		p = fma32(p, s, 2.06390887954e-2)
		p = fma32(p, s, -5.37397155531e-2)
		p = fma32(p, s, 1.33314422036e-1)
		p = fma32(p, s, -3.33332819422e-1)
		return fma32(p, x*s, x)
	}
	e := expClampedGo(max(-2*a, -104))
	return float32(math.Copysign(float64((1-e)/(1+e)), float64(x)))
}

// vecGeluTanhGo is geluTanhAVX512's x*sigmoid(2u).
func vecGeluTanhGo(x float32) float32 {
	w := fma32(x*x, float32(2*0.7978845608028654*0.044715), float32(2*0.7978845608028654))
	return x * vecSigmoidGo(x*w)
}

// vecMishGo is mishAVX512's x*m/(m+2), m = e*(e+2), e = exp(min(x, 20)).
func vecMishGo(x float32) float32 {
	if x != x {
		return x
	}
	e := expClampedGo(min(max(x, -104), 20))
	m := float32((e + 2) * e) // rounded: no FMA into m + 2 (the Go compiler fuses on arm64)
	return x * (m / (m + 2))
}

// vecEluGo is eluAVX512's x < 0 ? alpha*expm1(x) : x.
func vecEluGo(x, alpha float32) float32 {
	if !(x < 0) {
		return x
	}
	fx, q := expQGo(max(x, -104))
	s := float32(math.Ldexp(1, int(fx)))
	return fma32(q, s, s-1) * alpha
}

// vecHardSigmoidGo is hardSigmoidAVX512's min(max(alpha*x+beta, 0), 1)
// (a zero keeps its sign, as VMAXPS does).
func vecHardSigmoidGo(x, alpha, beta float32) float32 {
	t := fma32(alpha, x, beta)
	if t < 0 {
		t = 0
	} else if t > 1 {
		t = 1
	}
	return t
}

// mapGo32 applies f to y in place.
func mapGo32(y []float32, f func(float32) float32) {
	for i, v := range y {
		y[i] = f(v)
	}
}

func expGo(y []float32)      { mapGo32(y, vecExp512Go) }
func tanhGo(y []float32)     { mapGo32(y, vecTanhGo) }
func geluTanhGo(y []float32) { mapGo32(y, vecGeluTanhGo) }
func mishGo(y []float32)     { mapGo32(y, vecMishGo) }

func eluGo(y []float32, alpha float32) {
	for i, v := range y {
		y[i] = vecEluGo(v, alpha)
	}
}

func hardSigmoidGo(y []float32, alpha, beta float32) {
	for i, v := range y {
		y[i] = vecHardSigmoidGo(v, alpha, beta)
	}
}

// leakyReluGo sets y[i] = alpha*y[i] where y[i] < 0 (LeakyRelu, PRelu
// with one slope): the float32 product, which is float64's product of
// the two float32 values rounded once (it is exact in float64), so the
// float64 kernel and this agree bit for bit.
func leakyReluGo(y []float32, alpha float32) {
	for i, v := range y {
		if v < 0 {
			y[i] = v * alpha
		}
	}
}

// preluGo sets y[i] = s[i]*y[i] where y[i] < 0 (PRelu, a slope per
// element).
func preluGo(y, s []float32) {
	s = s[:len(y)]
	for i, v := range y {
		if v < 0 {
			y[i] = v * s[i]
		}
	}
}
