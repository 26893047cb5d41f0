package templates

import "math"

// Conversions for the storage-only float formats of ONNX opsets 19 to 25:
// the float8 kinds (e4m3fn, e4m3fnuz, e5m2, e5m2fnuz), float4e2m1 and
// float8e8m0. A value of one of them is its bit pattern in a uint8.
// Decoding is exact; encoding rounds to nearest even (e8m0 has its own
// round modes) and saturates or overflows as Cast's saturate attribute
// says.

// f8Format describes a sign-exponent-mantissa format.
type f8Format struct {
	exp, man, bias uint
	maxCode        uint8 // the largest finite magnitude's code (sign clear)
	nanCode        uint8 // the NaN this package writes
	signBit        uint8
	// nanAll: exponent and mantissa all ones is NaN, either sign (e4m3fn).
	// uz: 0x80 is the only NaN and there is no -0 (the fnuz kinds). inf:
	// all-ones exponent is Inf with a zero mantissa, NaN otherwise (e5m2).
	// f4e2m1 has none of them: every code is a finite number.
	nanAll, uz, inf bool
}

func f8FormatOf(dt DType) *f8Format {
	switch dt {
	case F8E4M3FN:
		return &fmtE4M3FN
	case F8E4M3FNUZ:
		return &fmtE4M3FNUZ
	case F8E5M2:
		return &fmtE5M2
	case F8E5M2FNUZ:
		return &fmtE5M2FNUZ
	case F4E2M1:
		return &fmtE2M1
	}
	return nil
}

var (
	fmtE4M3FN   = f8Format{exp: 4, man: 3, bias: 7, maxCode: 0x7e, nanCode: 0x7f, signBit: 0x80, nanAll: true}
	fmtE4M3FNUZ = f8Format{exp: 4, man: 3, bias: 8, maxCode: 0x7f, nanCode: 0x80, signBit: 0x80, uz: true}
	fmtE5M2     = f8Format{exp: 5, man: 2, bias: 15, maxCode: 0x7b, nanCode: 0x7f, signBit: 0x80, inf: true}
	fmtE5M2FNUZ = f8Format{exp: 5, man: 2, bias: 16, maxCode: 0x7f, nanCode: 0x80, signBit: 0x80, uz: true}
	// f4e2m1 has no NaN: NaN converts to 0x8 (the sign bit alone, -0), as
	// the ONNX reference (ml_dtypes) does.
	fmtE2M1 = f8Format{exp: 2, man: 1, bias: 1, maxCode: 0x7, nanCode: 0x8, signBit: 0x8}
)

// IsSmallFloat reports the dtypes F8ToF64 and F64ToF8 convert.
func IsSmallFloat(dt DType) bool { return dt == F8E8M0 || f8FormatOf(dt) != nil }

// F8ToF64 decodes a float8, float4e2m1 or e8m0 bit pattern exactly.
func F8ToF64(dt DType, code uint8) float64 {
	if dt == F8E8M0 {
		return E8M0ToF64(code)
	}
	f := f8FormatOf(dt)
	code &= f.signBit<<1 - 1
	mag := code &^ f.signBit
	e := uint(mag >> f.man)
	m := uint(mag) & (1<<f.man - 1)
	switch {
	case f.uz && code == f.signBit:
		return math.NaN()
	case f.nanAll && mag == f.signBit-1:
		return math.NaN()
	case f.inf && e == 1<<f.exp-1:
		if m != 0 {
			return math.NaN()
		}
		if code&f.signBit != 0 {
			return math.Inf(-1)
		}
		return math.Inf(1)
	}
	var v float64
	if e == 0 {
		v = math.Ldexp(float64(m), 1-int(f.bias)-int(f.man))
	} else {
		v = math.Ldexp(float64(m|1<<f.man), int(e)-int(f.bias)-int(f.man))
	}
	if code&f.signBit != 0 {
		v = -v
	}
	return v
}

// F8ToF32 is F8ToF64 as a float32 (exact: every such value is a float32).
func F8ToF32(dt DType, code uint8) float32 { return float32(F8ToF64(dt, code)) }

// F64ToF8 encodes x in a float8 kind or float4e2m1, rounding to nearest
// even. With saturate (Cast's default) values beyond the largest finite
// one, infinities included, become that value with x's sign; without it
// they become Inf (e5m2) or NaN (the kinds without Inf). float4e2m1 always
// saturates (it has neither). NaN stays NaN (f4e2m1: see fmtE2M1).
func F64ToF8(dt DType, x float64, saturate bool) uint8 {
	f := f8FormatOf(dt)
	if math.IsNaN(x) {
		return f.nanCode
	}
	var sign uint8
	if math.Signbit(x) {
		sign = f.signBit
	}
	sat := saturate || dt == F4E2M1
	overflow := func() uint8 {
		switch {
		case sat:
			return sign | f.maxCode
		case f.inf:
			return sign | uint8(1<<f.exp-1)<<f.man
		}
		return f.nanCode
	}
	a := math.Abs(x)
	if math.IsInf(a, 0) {
		return overflow()
	}
	// Scale a so that one unit is the spacing of codes at its binade
	// (below the smallest normal, the subnormal spacing), round to an
	// integer, even on ties, and read the code off: the mantissa carry
	// into the exponent falls out of the addition.
	emin := 1 - int(f.bias)
	_, e2 := math.Frexp(a) // a = frac * 2^e2, frac in [0.5, 1)
	e := e2 - 1            // a in [2^e, 2^(e+1))
	if e < emin {
		e = emin
	}
	q := math.RoundToEven(math.Ldexp(a, int(f.man)-e)) // in [0, 2^(man+1)]
	var mag float64
	if a == 0 || q == 0 {
		mag = 0
	} else if e == emin && q < float64(uint(1)<<f.man) {
		mag = q // subnormal
	} else {
		// code = (e+bias)<<man + (q - 2^man); q == 2^(man+1) carries.
		mag = float64(e-emin)*float64(uint(1)<<f.man) + q
	}
	if mag > float64(f.maxCode) {
		return overflow()
	}
	c := uint8(mag)
	if c == 0 && f.uz {
		return 0 // no negative zero
	}
	return sign | c
}

// F32ToF8 is F64ToF8 of a float32 (exact widening, one rounding).
func F32ToF8(dt DType, x float32, saturate bool) uint8 { return F64ToF8(dt, float64(x), saturate) }

// E8M0ToF64 decodes float8e8m0: 2^(code-127); 0xff is NaN.
func E8M0ToF64(code uint8) float64 {
	if code == 0xff {
		return math.NaN()
	}
	return math.Ldexp(1, int(code)-127)
}

// E8M0 round modes (Cast's round_mode attribute, opset 24).
const (
	E8M0Up      = 0 // to the next power of two away from zero ("up", the default)
	E8M0Down    = 1 // to the power of two below ("down")
	E8M0Nearest = 2 // to the nearest power of two by the mantissa's first bits ("nearest")
)

// F32ToE8M0 encodes |x|'s power of two as float8e8m0, the way the ONNX
// reference does: from the float32 exponent field, Inf and NaN giving 0xff
// (NaN), the mantissa deciding the rounding. With saturate, rounding never
// carries 0xfe (2^127) into 0xff.
func F32ToE8M0(x float32, saturate bool, mode int) uint8 {
	b := math.Float32bits(x)
	e := b >> 23 & 0xff
	if e == 0xff {
		return 0xff
	}
	frac := b & 0x7fffff
	up := false
	switch mode {
	case E8M0Up:
		up = frac != 0
	case E8M0Nearest:
		// guard bit set, and (round bit, sticky bits or a non-zero
		// exponent): ties on a zero exponent field stay down.
		g := frac&0x400000 != 0
		up = g && (frac&0x3fffff != 0 || e > 0)
	}
	if up && !(saturate && e == 0xfe) {
		e++
	}
	return uint8(e)
}

// ParseE8M0Mode maps Cast's round_mode attribute to a mode.
func ParseE8M0Mode(s string) (int, bool) {
	switch s {
	case "", "up":
		return E8M0Up, true
	case "down":
		return E8M0Down, true
	case "nearest":
		return E8M0Nearest, true
	}
	return 0, false
}
