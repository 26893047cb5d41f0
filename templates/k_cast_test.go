package templates

import (
	"math"
	"math/rand"
	"strconv"
	"testing"
)

func TestCastAllPairs(t *testing.T) {
	r := rand.New(rand.NewSource(41))
	pairs := 0
	for _, from := range tewAll {
		for _, to := range tewAll {
			lo, hi := -100.0, 100.0
			if ewIsUnsigned(from) {
				lo = 0
			}
			var x *Tensor
			if from == String {
				// Strings that hold numbers (integers when the target is
				// an integer type, as numpy requires).
				x = &Tensor{}
				x.Resize(String, 3, 5)
				for i := range x.Str() {
					v := lo + r.Float64()*(hi-lo)
					if ewIsFloat(to) || to == Bool {
						x.Str()[i] = strconv.FormatFloat(v, 'g', 6, 64)
					} else {
						if ewIsUnsigned(to) {
							v = math.Abs(v)
						}
						x.Str()[i] = strconv.Itoa(int(v))
					}
				}
			} else {
				x = tewRand(r, from, lo, hi, 3, 5)
			}
			if from == Bool {
				x.Bool()[0], x.Bool()[1] = true, false
			}
			n := tewNode("Cast", 13, Attrs{"to": int64(to)}, x)
			tewRun(t, n)
			out := n.Out[0]
			if out.DType != to || !tewSameShape(out.Shape, x.Shape) {
				t.Fatalf("Cast %s->%s: out %s", from, to, out)
			}
			for i := 0; i < x.Len(); i++ {
				var v float64
				if from == String {
					v, _ = strconv.ParseFloat(x.Str()[i], 64)
				} else {
					v = tewGet(x, i)
				}
				switch {
				case to == String:
					back, err := strconv.ParseFloat(out.Str()[i], 64)
					if from == Bool {
						back = map[string]float64{"True": 1, "False": 0}[out.Str()[i]]
						err = nil
					}
					if err != nil || (from != String && back != v && float32(back) != float32(v)) {
						t.Fatalf("Cast %s->string: %v -> %q", from, v, out.Str()[i])
					}
				case to == Bool:
					if out.Bool()[i] != (v != 0) {
						t.Fatalf("Cast %s->bool: %v -> %v", from, v, out.Bool()[i])
					}
				case to == BF16: // Cast truncates toward zero to bf16 (ONNX 1.12 reference)
					if g, w := tewGet(out, i), castTruncRef(v); g != w {
						t.Fatalf("Cast %s->%s: %v -> %v want %v", from, to, v, g, w)
					}
				case ewIsFloat(to):
					if g, w := tewGet(out, i), tewRound(to, v); g != w {
						t.Fatalf("Cast %s->%s: %v -> %v want %v", from, to, v, g, w)
					}
				default:
					w := tewWrap(to, int64(math.Trunc(v)))
					if g := tewGetI(out, i); g != w {
						t.Fatalf("Cast %s->%s: %v -> %d want %d", from, to, v, g, w)
					}
				}
			}
			pairs++
		}
	}
	t.Logf("%d dtype pairs", pairs)
}

func TestCastSpecials(t *testing.T) {
	// Opset 1 names the target dtype.
	x := tewF32T([]int{4}, 1.5, -2.5, float32(math.Inf(1)), float32(math.NaN()))
	n := tewNode("Cast", 1, Attrs{"to": "DOUBLE"}, x)
	tewRun(t, n)
	if g := n.Out[0].F64(); g[0] != 1.5 || g[1] != -2.5 || !math.IsInf(g[2], 1) || !math.IsNaN(g[3]) {
		t.Fatalf("Cast-1 to DOUBLE: %v", g)
	}
	n = tewNode("Cast", 13, Attrs{"to": int64(String)}, x)
	tewRun(t, n)
	for i, w := range []string{"1.5", "-2.5", "INF", "NaN"} {
		if n.Out[0].Str()[i] != w {
			t.Fatalf("to string [%d] = %q want %q", i, n.Out[0].Str()[i], w)
		}
	}
	s := &Tensor{}
	s.Resize(String, 5)
	copy(s.Str(), []string{"0.47892547", "NaN", "INF", "+INF", "-INF"})
	n = tewNode("Cast", 13, Attrs{"to": int64(F32)}, s)
	tewRun(t, n)
	if g := n.Out[0].F32(); g[0] != 0.47892547 || !math.IsNaN(float64(g[1])) || !math.IsInf(float64(g[2]), 1) || !math.IsInf(float64(g[3]), 1) || !math.IsInf(float64(g[4]), -1) {
		t.Fatalf("string to float: %v", g)
	}
	s.Str()[0] = "abc"
	if err := Cast(tewNode("Cast", 13, Attrs{"to": int64(F32)}, s)); err == nil {
		t.Fatal("unparsable string must fail")
	}
	// f32 shortest repr matches numpy's str(np.float32).
	n = tewNode("Cast", 13, Attrs{"to": int64(String)}, tewF32T([]int{1}, 0.039187793))
	tewRun(t, n)
	if g := n.Out[0].Str()[0]; g != "0.039187793" {
		t.Fatalf("format %q", g)
	}
	// CastLike takes the dtype from its second input.
	n = tewNode("CastLike", 15, nil, x, tewI64([]int{1}, 0))
	tewRun(t, n)
	if n.Out[0].DType != I64 || n.Out[0].I64()[0] != 1 || n.Out[0].I64()[1] != -2 {
		t.Fatalf("CastLike: %v", n.Out[0].Data)
	}
	// Steady state does not allocate.
	n = tewNode("Cast", 13, Attrs{"to": int64(F16)}, x)
	tewRun(t, n)
	if a := testing.AllocsPerRun(20, func() { Cast(n) }); a != 0 {
		t.Fatalf("Cast f32->f16: %v allocs", a)
	}
}

// castTruncRef truncates v toward zero to bfloat16's 8 significant bits, in
// float64 (normal numbers).
func castTruncRef(v float64) float64 {
	if v == 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return v
	}
	frac, exp := math.Frexp(v)
	return math.Ldexp(math.Trunc(frac*256)/256, exp)
}

func TestCastBF16Truncates(t *testing.T) {
	// The ONNX 1.12 test data: the high halves of the float32 words.
	in := []float32{0.47892547, 0.48033667, 0.49968487, 0.81910545, -91.907150, 1e-30, float32(math.Inf(-1))}
	x := &Tensor{DType: F32, Shape: []int{len(in)}, Data: in}
	n := tewNode("Cast", 13, Attrs{"to": int64(BF16)}, x)
	tewRun(t, n)
	for i, v := range in {
		if g, w := n.Out[0].U16()[i], uint16(math.Float32bits(v)>>16); g != w {
			t.Errorf("Cast(%v) to bf16 = %#x, want %#x", v, g, w)
		}
	}
	nan := &Tensor{DType: F64, Shape: []int{1}, Data: []float64{math.NaN()}}
	n = tewNode("Cast", 13, Attrs{"to": int64(BF16)}, nan)
	tewRun(t, n)
	if g := BF16ToF32(n.Out[0].U16()[0]); !math.IsNaN(float64(g)) {
		t.Errorf("Cast(NaN) to bf16 = %v", g)
	}
}

// TestCastSmallDtypes casts random float32 data of an awkward length to each
// new dtype and back, against the scalar references (F64ToF8, E8M0,
// integer wrap-around computed here in int64).
func TestCastSmallDtypes(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	in := make([]float32, 37)
	for i := range in {
		in[i] = float32(rng.NormFloat64() * 40)
	}
	in[0], in[1], in[2], in[3] = float32(math.NaN()), float32(math.Inf(1)), -1e6, 0.25
	x := &Tensor{DType: F32, Shape: []int{len(in)}, Data: in}
	for _, to := range []DType{F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, F4E2M1} {
		for _, sat := range []int64{0, 1} {
			n := tewNode("Cast", 21, Attrs{"to": int64(to), "saturate": sat}, x)
			tewRun(t, n)
			got := n.Out[0].U8()
			for i, v := range in {
				if w := F64ToF8(to, float64(v), sat == 1); got[i] != w {
					t.Fatalf("Cast(%v) to %s sat %d = %#x, want %#x", v, to, sat, got[i], w)
				}
			}
			back := tewNode("Cast", 21, Attrs{"to": int64(F32)}, n.Out[0])
			tewRun(t, back)
			for i, f := range back.Out[0].F32() {
				w := F8ToF64(to, got[i])
				if !(float64(f) == w || math.IsNaN(w) && f != f) {
					t.Fatalf("Cast(%s %#x) to f32 = %v, want %v", to, got[i], f, w)
				}
			}
		}
	}
	for _, mode := range []string{"up", "down", "nearest"} {
		n := tewNode("Cast", 24, Attrs{"to": int64(F8E8M0), "round_mode": mode}, x)
		tewRun(t, n)
		m, _ := ParseE8M0Mode(mode)
		for i, v := range in {
			if w := F32ToE8M0(v, true, m); n.Out[0].U8()[i] != w {
				t.Fatalf("Cast(%v) to e8m0 %s = %d, want %d", v, mode, n.Out[0].U8()[i], w)
			}
		}
	}
	for _, to := range []DType{I4, U4, I2, U2} {
		n := tewNode("Cast", 25, Attrs{"to": int64(to)}, x)
		tewRun(t, n)
		bits := 4
		if to == I2 || to == U2 {
			bits = 2
		}
		for i, v := range in {
			var iv int64
			if !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0) {
				iv = int64(v)
			}
			m := iv & (1<<bits - 1)
			var got int64
			if to == I4 || to == I2 {
				if m >= 1<<(bits-1) {
					m -= 1 << bits
				}
				got = int64(n.Out[0].I8()[i])
			} else {
				got = int64(n.Out[0].U8()[i])
			}
			if got != m {
				t.Fatalf("Cast(%v) to %s = %d, want %d", v, to, got, m)
			}
		}
	}
}

func TestBitCast(t *testing.T) {
	in := []float32{1, -2.5, float32(math.Inf(1)), 3e-41, 7}
	x := &Tensor{DType: F32, Shape: []int{5}, Data: in}
	n := tewNode("BitCast", 26, Attrs{"to": int64(I32)}, x)
	tewRun(t, n)
	for i, v := range in {
		if g := n.Out[0].I32()[i]; uint32(g) != math.Float32bits(v) {
			t.Fatalf("BitCast(%v) = %#x", v, g)
		}
	}
	b := &Tensor{DType: U16, Shape: []int{3}, Data: []uint16{0, 0x8000, 0xffff}}
	n = tewNode("BitCast", 26, Attrs{"to": int64(I16)}, b)
	tewRun(t, n)
	if g := n.Out[0].Data.([]int16); g[0] != 0 || g[1] != -32768 || g[2] != -1 {
		t.Fatalf("BitCast u16->i16 = %v", g)
	}
}

// TestQuantizeBlockedSmall quantizes with blocked scales (block 3 along a
// dim of 7, so a short last block) to int4 and float8, and dequantizes,
// against a direct float64 computation.
func TestQuantizeBlockedSmall(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	shape := []int{2, 7}
	x := make([]float32, 14)
	for i := range x {
		x[i] = float32(rng.NormFloat64() * 8)
	}
	sc := make([]float32, 2*3)
	for i := range sc {
		sc[i] = float32(0.5 + rng.Float64())
	}
	xt := &Tensor{DType: F32, Shape: shape, Data: x}
	st := &Tensor{DType: F32, Shape: []int{2, 3}, Data: sc}
	for _, odt := range []DType{I4, U4, I2, F8E4M3FN, F4E2M1} {
		n := tewNode("QuantizeLinear", 21, Attrs{"axis": int64(1), "block_size": int64(3), "output_dtype": int64(odt)}, xt, st)
		tewRun(t, n)
		lo, hi, isInt := miscQRange(odt)
		for r := 0; r < 2; r++ {
			for c := 0; c < 7; c++ {
				s := sc[r*3+c/3]
				v := float64(x[r*7+c] / s)
				i := r*7 + c
				if isInt {
					w := math.Max(lo, math.Min(hi, math.RoundToEven(v)))
					if g := ewF64At(n.Out[0], i); g != w {
						t.Fatalf("%s: q[%d,%d] = %v, want %v", odt, r, c, g, w)
					}
				} else if g, w := n.Out[0].U8()[i], F64ToF8(odt, v, true); g != w {
					t.Fatalf("%s: q[%d,%d] = %#x, want %#x", odt, r, c, g, w)
				}
			}
		}
		d := tewNode("DequantizeLinear", 21, Attrs{"axis": int64(1), "block_size": int64(3)}, n.Out[0], st)
		tewRun(t, d)
		for i, g := range d.Out[0].F32() {
			w := float32(ewF64At(n.Out[0], i)) * sc[(i/7)*3+(i%7)/3]
			if g != w {
				t.Fatalf("%s: dequantized[%d] = %v, want %v", odt, i, g, w)
			}
		}
	}
}
