package templates

import (
	"math"
	"math/rand"
	"testing"
)

func TestF16RoundTrip(t *testing.T) {
	for h := 0; h < 1<<16; h++ {
		f := F16ToF32(uint16(h))
		if f != f { // nan: only the class must survive
			if g := F16ToF32(F32ToF16(f)); g == g {
				t.Fatalf("nan %04x lost", h)
			}
			continue
		}
		if got := F32ToF16(f); got != uint16(h) {
			t.Fatalf("%04x -> %v -> %04x", h, f, got)
		}
	}
}

func TestF32ToF16Rounding(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 100000; i++ {
		f := float32(r.NormFloat64() * math.Pow(2, float64(r.Intn(40)-25)))
		h := F32ToF16(f)
		got := float64(F16ToF32(h))
		// No other half is strictly closer.
		for _, d := range []int{-1, 1} {
			o := float64(F16ToF32(uint16(int(h) + d)))
			if math.Abs(o-float64(f)) < math.Abs(got-float64(f)) && !math.IsInf(o, 0) {
				t.Fatalf("%v rounded to %v, %v is closer", f, got, o)
			}
		}
	}
}

func TestBF16(t *testing.T) {
	for _, f := range []float32{1, -2.5, 3.14159, 1e-30, 65504} {
		got := BF16ToF32(F32ToBF16(f))
		if math.Abs(float64(got-f)) > math.Abs(float64(f))/128 {
			t.Fatalf("%v -> %v", f, got)
		}
	}
}

func TestResizeNoAllocSameShape(t *testing.T) {
	var x Tensor
	x.Resize(F32, 3, 5)
	allocs := testing.AllocsPerRun(100, func() { x.Resize(F32, 3, 5) })
	if allocs != 0 {
		t.Fatalf("Resize at the same shape allocates %v times", allocs)
	}
	x.Resize(F32, 2, 2)
	if len(x.F32()) != 4 || cap(x.F32()) != 15 {
		t.Fatalf("shrink did not reuse: len %d cap %d", len(x.F32()), cap(x.F32()))
	}
}
