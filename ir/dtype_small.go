package ir

import "math"

// smallFloat describes one of ONNX's storage-only float formats.
type smallFloat struct {
	exp, man, bias int
	// nanAll: the all-ones exponent and mantissa (either sign) is NaN, and
	// there are no infinities (e4m3fn). uz: 0x80 is the only NaN, no -0
	// (the fnuz kinds). ieee: all-ones exponent is Inf (mantissa 0) or NaN
	// (e5m2). None of them: every code is finite (f4e2m1).
	nanAll, uz, ieee bool
}

var smallFloats = map[DType]smallFloat{
	F8E4M3FN:   {exp: 4, man: 3, bias: 7, nanAll: true},
	F8E4M3FNUZ: {exp: 4, man: 3, bias: 8, uz: true},
	F8E5M2:     {exp: 5, man: 2, bias: 15, ieee: true},
	F8E5M2FNUZ: {exp: 5, man: 2, bias: 16, uz: true},
	F4E2M1:     {exp: 2, man: 1, bias: 1},
}

// SmallFloatValue decodes the bit pattern code of a small float dtype
// (IsSmallFloat) into its exact value.
func SmallFloatValue(dt DType, code uint8) float64 {
	if dt == F8E8M0 {
		if code == 0xff {
			return math.NaN()
		}
		return math.Ldexp(1, int(code)-127)
	}
	f := smallFloats[dt]
	bits := 1 + f.exp + f.man
	code &= uint8(1<<bits - 1)
	sign := code >> (bits - 1)
	e := int(code>>f.man) & (1<<f.exp - 1)
	m := int(code) & (1<<f.man - 1)
	switch {
	case f.uz && code == 1<<(bits-1):
		return math.NaN()
	case f.nanAll && e == 1<<f.exp-1 && m == 1<<f.man-1:
		return math.NaN()
	case f.ieee && e == 1<<f.exp-1:
		if m != 0 {
			return math.NaN()
		}
		if sign != 0 {
			return math.Inf(-1)
		}
		return math.Inf(1)
	}
	var v float64
	if e == 0 {
		v = math.Ldexp(float64(m), 1-f.bias-f.man)
	} else {
		v = math.Ldexp(float64(m+1<<f.man), e-f.bias-f.man)
	}
	if sign != 0 {
		v = -v
	}
	return v
}

// smallFloatCode is the code whose value is exactly v (NaN for a NaN), for
// the text parser; ok is false when v is not representable.
func smallFloatCode(dt DType, v float64) (uint8, bool) {
	n := 256
	if dt == F4E2M1 {
		n = 16
	}
	for c := 0; c < n; c++ {
		w := SmallFloatValue(dt, uint8(c))
		if w == v && math.Signbit(w) == math.Signbit(v) || math.IsNaN(v) && math.IsNaN(w) {
			return uint8(c), true
		}
	}
	return 0, false
}
