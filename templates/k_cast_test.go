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
