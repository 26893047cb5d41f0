package templates

import (
	"math"
	"math/rand"
	"testing"
)

var smallFloatKinds = []DType{F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, F4E2M1}

func codeCount(dt DType) int {
	if dt == F4E2M1 {
		return 16
	}
	return 256
}

// refValue decodes a code from the formats' definitions, written apart
// from F8ToF64: value = (-1)^s * 2^(e-bias) * (1 + m/2^M), subnormal at
// e == 0, with each kind's special codes.
func refValue(dt DType, c int) float64 {
	type spec struct{ e, m, bias int }
	s := map[DType]spec{F8E4M3FN: {4, 3, 7}, F8E4M3FNUZ: {4, 3, 8}, F8E5M2: {5, 2, 15}, F8E5M2FNUZ: {5, 2, 16}, F4E2M1: {2, 1, 1}}[dt]
	bits := 1 + s.e + s.m
	neg := c>>(bits-1) == 1
	e := (c >> s.m) & (1<<s.e - 1)
	m := c & (1<<s.m - 1)
	switch dt {
	case F8E4M3FN:
		if c&0x7f == 0x7f {
			return math.NaN()
		}
	case F8E4M3FNUZ, F8E5M2FNUZ:
		if c == 0x80 {
			return math.NaN()
		}
	case F8E5M2:
		if e == 31 && m == 0 {
			return math.Inf(map[bool]int{true: -1, false: 1}[neg])
		}
		if e == 31 {
			return math.NaN()
		}
	}
	v := 0.0
	if e == 0 {
		v = float64(m) / float64(int(1)<<s.m) * math.Pow(2, float64(1-s.bias))
	} else {
		v = (1 + float64(m)/float64(int(1)<<s.m)) * math.Pow(2, float64(e-s.bias))
	}
	if neg {
		v = -v
	}
	return v
}

func TestSmallFloatDecodeAndRoundTrip(t *testing.T) {
	for _, dt := range smallFloatKinds {
		for c := 0; c < codeCount(dt); c++ {
			got, want := F8ToF64(dt, uint8(c)), refValue(dt, c)
			if !(got == want && math.Signbit(got) == math.Signbit(want) || math.IsNaN(got) && math.IsNaN(want)) {
				t.Fatalf("%s code %#x decodes to %v, want %v", dt, c, got, want)
			}
			if math.IsNaN(want) {
				if back := F8ToF64(dt, F64ToF8(dt, want, false)); !math.IsNaN(back) {
					t.Fatalf("%s: NaN encodes to %v", dt, back)
				}
				continue
			}
			for _, sat := range []bool{false, true} {
				back := F64ToF8(dt, want, sat)
				if want == 0 && (dt == F8E4M3FNUZ || dt == F8E5M2FNUZ) {
					if back != 0 {
						t.Fatalf("%s: zero encodes to %#x", dt, back)
					}
					continue
				}
				if math.IsInf(want, 0) {
					if sat {
						continue // saturates, checked below
					}
				}
				if int(back) != c {
					t.Fatalf("%s code %#x (%v) round-trips to %#x (saturate %v)", dt, c, want, back, sat)
				}
			}
		}
	}
}

// refEncode finds the code nearest to x among the finite codes and one
// virtual code just past the largest (standing for overflow), ties to the
// even code, by exhaustive search.
func refEncode(dt DType, x float64, saturate bool) (code int, nan bool) {
	if math.IsNaN(x) {
		return 0, true
	}
	n := codeCount(dt)
	signBit := n / 2
	maxCode, maxV := 0, 0.0
	for c := 0; c < signBit; c++ {
		v := refValue(dt, c)
		if !math.IsNaN(v) && !math.IsInf(v, 0) && v > maxV {
			maxCode, maxV = c, v
		}
	}
	// the virtual code's value: the next step of the top binade
	step := maxV - refValue(dt, maxCode-1)
	a := math.Abs(x)
	best, bestD := -1, math.Inf(1)
	for c := 0; c <= maxCode+1; c++ {
		v := maxV + step
		if c <= maxCode {
			v = refValue(dt, c)
		}
		d := math.Abs(a - v)
		if d < bestD || d == bestD && c%2 == 0 {
			best, bestD = c, d
		}
	}
	sign := 0
	if math.Signbit(x) {
		sign = signBit
	}
	if best > maxCode || a > maxV+step {
		if saturate || dt == F4E2M1 {
			return sign | maxCode, false
		}
		if dt == F8E5M2 {
			return sign | 0x7c, false
		}
		return 0, true
	}
	if best == 0 && (dt == F8E4M3FNUZ || dt == F8E5M2FNUZ) {
		return 0, false
	}
	return sign | best, false
}

func TestSmallFloatEncodeBoundaries(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for _, dt := range smallFloatKinds {
		var xs []float64
		n := codeCount(dt)
		for c := 0; c < n; c++ {
			v := refValue(dt, c)
			w := refValue(dt, c+1)
			if c+1 >= n/2 && c < n/2 || math.IsNaN(v) || math.IsInf(v, 0) {
				w = v * 1.25
			}
			mid := (v + w) / 2
			// midpoints, the float32 neighbours of each, and the codes
			for _, x := range []float64{v, mid, float64(math.Nextafter32(float32(mid), float32(math.Inf(1)))), float64(math.Nextafter32(float32(mid), float32(math.Inf(-1))))} {
				xs = append(xs, x, -x)
			}
		}
		for i := 0; i < 2000; i++ {
			xs = append(xs, float64(float32(rng.NormFloat64()*math.Pow(2, float64(rng.Intn(40)-20)))))
		}
		xs = append(xs, math.Inf(1), math.Inf(-1), 1e30, -1e30, 0, math.Copysign(0, -1), 1e-30, -1e-30)
		for _, x := range xs {
			if math.IsNaN(x) {
				continue
			}
			x = float64(float32(x))
			for _, sat := range []bool{false, true} {
				got := F32ToF8(dt, float32(x), sat)
				want, wantNaN := refEncode(dt, x, sat)
				if wantNaN {
					if !math.IsNaN(F8ToF64(dt, got)) {
						t.Fatalf("%s(%v, saturate %v) = %#x, want NaN", dt, x, sat, got)
					}
					continue
				}
				if int(got) != want {
					t.Fatalf("%s(%v, saturate %v) = %#x (%v), want %#x (%v)", dt, x, sat, got, F8ToF64(dt, got), want, refValue(dt, want))
				}
			}
		}
	}
}

func TestE8M0(t *testing.T) {
	for c := 0; c < 256; c++ {
		v := E8M0ToF64(uint8(c))
		if c == 255 {
			if !math.IsNaN(v) {
				t.Fatal("0xff is not NaN")
			}
			continue
		}
		if v != math.Pow(2, float64(c-127)) {
			t.Fatalf("code %d = %v", c, v)
		}
		if c >= 1 { // 2^-127 is a float32 subnormal: not an exponent field
			for _, mode := range []int{E8M0Up, E8M0Down, E8M0Nearest} {
				if got := F32ToE8M0(float32(v), true, mode); int(got) != c {
					t.Fatalf("E8M0(%v, mode %d) = %d, want %d", v, mode, got, c)
				}
			}
		}
	}
	cases := []struct {
		x          float32
		sat        bool
		mode, want int
	}{
		{3, true, E8M0Up, 129}, {3, true, E8M0Down, 128}, {3, true, E8M0Nearest, 129},
		{2.9, true, E8M0Nearest, 128}, {3.1, true, E8M0Nearest, 129}, {2.4, true, E8M0Nearest, 128}, {2.5, true, E8M0Nearest, 128},
		{-3, true, E8M0Up, 129}, {float32(math.Inf(1)), true, E8M0Up, 255}, {float32(math.NaN()), true, E8M0Down, 255},
		{math.MaxFloat32, true, E8M0Up, 254}, {math.MaxFloat32, false, E8M0Up, 255},
		{0, true, E8M0Up, 0},
	}
	for _, c := range cases {
		if got := F32ToE8M0(c.x, c.sat, c.mode); int(got) != c.want {
			t.Errorf("E8M0(%v, sat %v, mode %d) = %d, want %d", c.x, c.sat, c.mode, got, c.want)
		}
	}
}
