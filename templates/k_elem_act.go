package templates

import "math"

// float32 vector math for activations: sigmoid, SiLU and HardSwish rows.
// On amd64 with AVX-512 they run sigmoidAVX512, siluAVX512 and
// hardSwishAVX512 (asmgen/amd64/vec, act512.go) on the whole row, the tail under a lane mask, so an
// element's bits do not depend on where a row, an element-wise chunk or a
// thread's part ends; elsewhere (and with the purego tag) the pure-Go
// twins below, the same steps with float64 FMAs rounded to float32.
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

// fma32 is a*b+c rounded once to float64, then to float32 (the products
// of float32 operands are exact in float64, so this is the FMA's result
// but for rare double roundings).
func fma32(a, b, c float32) float32 { return float32(math.FMA(float64(a), float64(b), float64(c))) }

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
