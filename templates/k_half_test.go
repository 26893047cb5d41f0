package templates

import (
	"math"
	"math/rand"
	"testing"

	"github.com/x448/float16"
)

// TestF16WidenAll widens all 65536 halves (subnormals, Inf, NaNs
// included) with the dispatching F16ToF32s and the pure-Go twin and checks
// each against github.com/x448/float16 (which keeps a signalling NaN
// signalling: ours is quieted, as VCVTPH2PS does), and that narrowing the
// result gives the half back.
func TestF16WidenAll(t *testing.T) {
	src := make([]uint16, 1<<16)
	for i := range src {
		src[i] = uint16(i)
	}
	got := make([]float32, len(src))
	twin := make([]float32, len(src))
	F16ToF32s(got, src)
	f16ToF32sGo(twin, src)
	back := make([]uint16, len(src))
	F32ToF16s(back, got)
	for i, h := range src {
		want := math.Float32bits(float16.Frombits(h).Float32())
		if h&0x7c00 == 0x7c00 && h&0x3ff != 0 {
			want |= 1 << 22
		}
		if g := math.Float32bits(got[i]); g != want {
			t.Fatalf("F16ToF32s(%#04x) = %#08x, want %#08x", h, g, want)
		}
		if g := math.Float32bits(twin[i]); g != want {
			t.Fatalf("f16ToF32sGo(%#04x) = %#08x, want %#08x", h, g, want)
		}
		wantBack := h
		if h&0x7c00 == 0x7c00 && h&0x3ff != 0 {
			wantBack = h&0x8000 | 0x7e00
		}
		if back[i] != wantBack {
			t.Fatalf("F32ToF16s(F16ToF32s(%#04x)) = %#04x, want %#04x", h, back[i], wantBack)
		}
	}
}

// TestF16Narrow rounds float32s to halves (nearest even) with F32ToF16s and
// the twin against x448/float16's Fromfloat32 (and F32ToF16): every half's neighbourhood
// (the value, the midpoints to both neighbours and one ulp either side of
// them: ties, overflow past 65504, the subnormal range and underflow to
// zero) and random bit patterns; a NaN becomes the quiet NaN of its sign.
func TestF16Narrow(t *testing.T) {
	var src []float32
	for i := 0; i < 1<<16; i++ {
		h := uint16(i)
		if h&0x7c00 == 0x7c00 {
			continue
		}
		f := float16.Frombits(h).Float32()
		n := float16.Frombits(h + 1).Float32()
		if h&0x7fff == 0x7bff {
			n = 65520 // the midpoint to the next (infinite) half
		}
		mid := float32((float64(f) + float64(n)) / 2)
		src = append(src, f, mid, math.Nextafter32(mid, -math.MaxFloat32), math.Nextafter32(mid, math.MaxFloat32))
	}
	rng := rand.New(rand.NewSource(16))
	for i := 0; i < 1<<18; i++ {
		src = append(src, math.Float32frombits(rng.Uint32()))
	}
	src = append(src, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), math.Float32frombits(0xff800001), 1e-30, -1e-30, 1e30)
	got := make([]uint16, len(src))
	twin := make([]uint16, len(src))
	F32ToF16s(got, src)
	f32ToF16sGo(twin, src)
	for i, f := range src {
		want := float16.Fromfloat32(f).Bits()
		for _, g := range []struct {
			name string
			h    uint16
		}{{"F32ToF16s", got[i]}, {"f32ToF16sGo", twin[i]}} {
			if f != f {
				if want := uint16(math.Float32bits(f)>>16)&0x8000 | 0x7e00; g.h != want {
					t.Fatalf("%s(NaN %#08x) = %#04x, want %#04x (F32ToF16's quiet NaN of its sign)", g.name, math.Float32bits(f), g.h, want)
				}
				continue
			}
			if g.h != want || g.h != F32ToF16(f) {
				t.Fatalf("%s(%g = %#08x) = %#04x, want %#04x (F32ToF16 %#04x)", g.name, f, math.Float32bits(f), g.h, want, F32ToF16(f))
			}
		}
		if got[i] != twin[i] {
			t.Fatalf("F32ToF16s(%#08x) = %#04x, the twin %#04x", math.Float32bits(f), got[i], twin[i])
		}
	}
}

// TestF16Tails converts slices of every length 0-70 at offsets 0-3 (the
// kernels' 8- and 32-element blocks and the Go tails) and checks the
// elements past the end are untouched; WidenF16 at an odd byte offset
// takes the byte path.
func TestF16Tails(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for n := 0; n <= 70; n++ {
		for off := 0; off < 4; off++ {
			h := make([]uint16, off+n+3)
			f := make([]float32, off+n+3)
			for i := range h {
				h[i] = uint16(rng.Intn(0x7c00)) | uint16(rng.Intn(2))<<15
			}
			for i := range f {
				f[i] = -7
			}
			F16ToF32s(f[off:], h[off:off+n])
			for i := range f {
				want := float32(-7)
				if i >= off && i < off+n {
					want = float16.Frombits(h[i]).Float32()
				}
				if f[i] != want {
					t.Fatalf("n %d off %d: f[%d] = %g, want %g", n, off, i, f[i], want)
				}
			}
			o := make([]uint16, off+n+3)
			for i := range o {
				o[i] = 0xdead
			}
			F32ToF16s(o[off:], f[off:off+n])
			for i := range o {
				want := uint16(0xdead)
				if i >= off && i < off+n {
					want = h[i]
				}
				if o[i] != want {
					t.Fatalf("narrow n %d off %d: o[%d] = %#04x, want %#04x", n, off, i, o[i], want)
				}
			}
			b := make([]byte, 1+2*n)
			for i := 0; i < n; i++ {
				b[1+2*i], b[2+2*i] = byte(h[off+i]), byte(h[off+i]>>8)
			}
			w := make([]float32, n)
			WidenF16(w, string(b[1:]))
			for i := range w {
				if w[i] != f[off+i] {
					t.Fatalf("WidenF16 n %d: [%d] = %g, want %g", n, i, w[i], f[off+i])
				}
			}
		}
	}
}

func BenchmarkF16ToF32s(b *testing.B) {
	src := make([]uint16, 1<<16)
	dst := make([]float32, len(src))
	for i := range src {
		src[i] = uint16(i) & 0x7bff
	}
	b.SetBytes(int64(2 * len(src)))
	for i := 0; i < b.N; i++ {
		F16ToF32s(dst, src)
	}
}

// TestRoundHalf runs cuvil::RoundHalf on awkward lengths (across its 512
// buffer) of random values, specials included, against Cast to f16 then
// to f32 (the two kernels it stands for) and against a float64 rounding
// to the nearest half (ties to even) by search over neighbouring halves.
func TestRoundHalf(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	for _, n := range []int{0, 1, 7, 9, 511, 512, 513, 1500} {
		x := make([]float32, n)
		for i := range x {
			switch rng.Intn(8) {
			case 0:
				x[i] = math.Float32frombits(rng.Uint32())
			case 1:
				x[i] = float32(rng.NormFloat64() * 1e-6) // subnormal halves
			default:
				x[i] = float32(rng.NormFloat64() * 100)
			}
		}
		if n > 3 {
			x[0], x[1], x[2] = float32(math.NaN()), 70000, -65519
		}
		in := &Tensor{DType: F32, Shape: []int{n}, Data: x}
		r := tewNode("RoundHalf", 1, Attrs{}, in)
		if err := CuvilRoundHalf(r); err != nil {
			t.Fatal(err)
		}
		c1 := tewNode("Cast", 13, Attrs{"to": int64(F16)}, in)
		tewRun(t, c1)
		c2 := tewNode("Cast", 13, Attrs{"to": int64(F32)}, c1.Out[0])
		tewRun(t, c2)
		got, want := r.Out[0].F32(), c2.Out[0].F32()
		for i, v := range x {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("n %d: RoundHalf(%g) = %g, the Casts %g", n, v, got[i], want[i])
			}
			if v != v {
				continue
			}
			ref := nearestHalf(float64(v))
			if float64(got[i]) != ref {
				t.Fatalf("n %d: RoundHalf(%g) = %g, float64 reference %g", n, v, got[i], ref)
			}
		}
	}
}

// nearestHalf is the half nearest x (ties to the even bit pattern; beyond
// 65520 in magnitude, Inf), found by comparing x with every finite half's
// value in float64.
func nearestHalf(x float64) float64 {
	if math.Abs(x) >= 65520 {
		return math.Copysign(math.Inf(1), x)
	}
	best, bd := 0.0, math.Inf(1)
	var bh uint16
	for h := 0; h < 0x7c00; h++ {
		v := math.Copysign(float64(float16.Frombits(uint16(h)).Float32()), x)
		d := math.Abs(v - x)
		if d < bd || d == bd && h&1 == 0 && bh&1 == 1 {
			best, bd, bh = v, d, uint16(h)
		}
	}
	return best
}
