//go:build amd64 && !purego

package templates

import (
	"fmt"
	"math"
	"math/rand"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestQGemmTiles: every assembly tile this CPU can run (VNNI; AVX2 exact
// and byte) gives qgemmTileGo's sums through qgemmTile, on extreme bytes
// (255 x -128 in every lane; for the byte tiles the extreme that fits,
// 255 x -64 and 255 x (-128, 0) pairs) and random ones, every tile shape.
func TestQGemmTiles(t *testing.T) {
	defer func(k qgemmKind) { qgemmTiles = k }(qgemmTiles)
	type run struct {
		kind qgemmKind
		fit  bool
	}
	var runs []run
	if cpuHasVNNI {
		runs = append(runs, run{qgemmKindVNNI, false})
	}
	if cpuHasAVX2FMA {
		runs = append(runs, run{qgemmKindAVX2, false}, run{qgemmKindAVX2, true})
	}
	if len(runs) == 0 {
		t.Skip("no AVX2")
	}
	rng := rand.New(rand.NewSource(5))
	for _, ru := range runs {
		qgemmTiles = ru.kind
		for _, k4 := range []int{1, 2, 7, 33} {
			for rows := 1; rows <= qgemmMR; rows++ {
				for panels := 1; panels <= qgemmTW/qgemmNR; panels++ {
					lda := k4*4 + 4*rng.Intn(3)
					bstride := k4*64 + 64*rng.Intn(2)
					a := make([]uint8, (rows-1)*lda+k4*4)
					b := make([]int8, (panels-1)*bstride+k4*64)
					ext := rng.Intn(2) == 0
					for i := range a {
						a[i] = uint8(rng.Intn(256))
						if ext {
							a[i] = 255
						}
					}
					for i := range b {
						switch {
						case ru.fit && ext && k4%2 == 0:
							b[i] = []int8{-128, 0}[i%2]
						case ru.fit && ext:
							b[i] = -64
						case ru.fit:
							b[i] = int8(rng.Intn(128) - 64)
						case ext:
							b[i] = -128
						default:
							b[i] = int8(rng.Intn(256) - 128)
						}
					}
					if ru.fit != qgemmPairsFit(b) && ru.fit {
						t.Fatal("the byte tiles' data does not fit")
					}
					var got, want [qgemmMR * qgemmTW]int32
					for i := range got {
						got[i], want[i] = -7, -7 // untouched outside the tile
					}
					qgemmTile(a, lda, rows, b, bstride, panels, k4, ru.fit, &got)
					qgemmTileGo(a, lda, rows, b, bstride, panels, k4, &want)
					if got != want {
						t.Fatalf("%s fit=%v, k4 %d, %dx%d: tile differs from the Go one", ru.kind, ru.fit, k4, rows, panels*16)
					}
				}
			}
		}
	}
}

// TestQGemmAVX2ByteSaturates: the byte tiles are wrong on pairs that do not
// fit (VPMADDUBSW saturates 255*(-128)*2 to -32768), which is why qgemmTile
// takes them only on pairsFit panels; qgemmPairsFit's bounds.
func TestQGemmAVX2ByteSaturates(t *testing.T) {
	for _, c := range []struct {
		b0, b1 int8
		fit    bool
	}{{-128, 0, true}, {-64, -64, true}, {64, 64, true}, {127, 1, true}, {-128, 1, false}, {-65, -64, false}, {127, 2, false}, {100, -40, false}} {
		p := make([]int8, 64)
		p[6], p[7] = c.b0, c.b1
		if got := qgemmPairsFit(p); got != c.fit {
			t.Errorf("qgemmPairsFit(%d, %d) = %v, want %v", c.b0, c.b1, got, c.fit)
		}
	}
	if !cpuHasAVX2FMA {
		t.Skip("no AVX2")
	}
	defer func(k qgemmKind) { qgemmTiles = k }(qgemmTiles)
	qgemmTiles = qgemmKindAVX2
	a := []uint8{255, 255, 255, 255}
	b := make([]int8, 64)
	for i := range b {
		b[i] = -128
	}
	var got, want [qgemmMR * qgemmTW]int32
	qgemmTile(a, 4, 1, b, 64, 1, 1, true, &got)
	qgemmTileGo(a, 4, 1, b, 64, 1, 1, &want)
	if want[0] != 4*255*-128 || got[0] != 2*-32768 {
		t.Fatalf("byte tile on -128 pairs: %d (Go %d), want the saturated %d", got[0], want[0], 2*-32768)
	}
	qgemmTile(a, 4, 1, b, 64, 1, 1, false, &got)
	if got != want {
		t.Fatalf("exact tile: %d, want %d", got[0], want[0])
	}
}

// TestQGemmVNNIDispatch: on a CPU whose kernel reports avx512_vnni (with
// avx512f, /proc/cpuinfo), qgemmTile takes the VNNI tiles, with avx2 (and
// fma) but no avx512_vnni the AVX2 ones, never the Go fallback: a CPUID probe that misread the bit would silently make every
// int8 build several times slower (the skip above would hide it).
func TestQGemmVNNIDispatch(t *testing.T) {
	raw, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		t.Skip("no /proc/cpuinfo")
	}
	var flags []string
	for _, line := range strings.Split(string(raw), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "flags" {
			flags = strings.Fields(v)
			break
		}
	}
	has := func(f string) bool { return slices.Contains(flags, f) }
	if has("avx2") && has("fma") && qgemmTiles == qgemmKindGo {
		t.Fatalf("/proc/cpuinfo reports avx2 and fma, but qgemmTile falls back to Go (cpuHasAVX2FMA = %v)", cpuHasAVX2FMA)
	}
	if has("avx2") && !(has("avx512f") && has("avx512_vnni")) && qgemmTiles != qgemmKindAVX2 {
		t.Fatalf("/proc/cpuinfo reports avx2 without avx512_vnni: qgemmTiles = %s, want avx2", qgemmTiles)
	}
	if !has("avx512f") || !has("avx512_vnni") {
		if cpuHasVNNI {
			t.Fatalf("cpuHasVNNI is true but /proc/cpuinfo lists no avx512f+avx512_vnni")
		}
		t.Logf("no avx512_vnni: %s tiles", qgemmTiles)
		return
	}
	if !cpuHasAVX512 || !cpuHasVNNI {
		t.Fatalf("/proc/cpuinfo reports avx512f and avx512_vnni, but cpuHasAVX512 = %v, cpuHasVNNI = %v: qgemmTile falls back to Go", cpuHasAVX512, cpuHasVNNI)
	}
	if qgemmTiles != qgemmKindVNNI {
		t.Fatalf("/proc/cpuinfo reports avx512f and avx512_vnni, but qgemmTiles = %s", qgemmTiles)
	}
}

// TestQGemmVNNIRule: the dispatch rule on the CPUID bits of known CPUs,
// then on this CPU's own bits: Zen 4 (AVX512-VNNI, no AVX-VNNI) takes the
// AVX-512 VNNI tiles; AVX-VNNI alone (Alder Lake, no AVX-512) or
// AVX-512 without VNNI (Skylake-X) falls back to Go.
func TestQGemmVNNIRule(t *testing.T) {
	for _, c := range []struct {
		name   string
		avx512 bool
		ecx7   uint32
		want   bool
	}{
		{"zen4", true, cpuidAVX512VNNI, true},
		{"cascade lake", true, cpuidAVX512VNNI | 1<<1, true},
		{"skylake-x", true, 1 << 1, false},
		{"alder lake (avx-vnni only)", false, 0, false},
		{"avx512-vnni bit, avx-512 state not saved", false, cpuidAVX512VNNI, false},
	} {
		if got := qgemmUseVNNI(c.avx512, c.ecx7); got != c.want {
			t.Errorf("%s: qgemmUseVNNI = %v, want %v", c.name, got, c.want)
		}
	}
	_, _, ecx7, _ := cpuidAsm(7, 0)
	eax71, _, _, _ := cpuidAsm(7, 1)
	t.Logf("CPUID 7.0 ECX avx512_vnni=%v, 7.1 EAX avx_vnni=%v, avx512 usable=%v: VNNI tiles %v",
		ecx7&cpuidAVX512VNNI != 0, eax71&cpuidAVXVNNI != 0, cpuHasAVX512, cpuHasVNNI)
	if cpuHasVNNI != qgemmUseVNNI(cpuHasAVX512, ecx7) {
		t.Fatalf("cpuHasVNNI = %v, the rule on this CPU's bits says %v", cpuHasVNNI, !cpuHasVNNI)
	}
	if cpuHasAVX512 && ecx7&cpuidAVX512VNNI != 0 && eax71&cpuidAVXVNNI == 0 && !cpuHasVNNI {
		t.Fatal("a Zen 4-like CPU (AVX512-VNNI without AVX-VNNI) does not take the VNNI tiles")
	}
}

// TestQGemmKindRule: qgemmKindFor on known CPUs' features, then on this
// CPU's: VNNI tiles with AVX512-VNNI, AVX2 tiles with AVX2 (Zen 2,
// Haswell, Alder Lake, Skylake-X), else Go.
func TestQGemmKindRule(t *testing.T) {
	for _, c := range []struct {
		name         string
		avx2, avx512 bool
		ecx7         uint32
		want         qgemmKind
	}{
		{"zen4", true, true, cpuidAVX512VNNI, qgemmKindVNNI},
		{"cascade lake", true, true, cpuidAVX512VNNI | 1<<1, qgemmKindVNNI},
		{"skylake-x", true, true, 1 << 1, qgemmKindAVX2},
		{"zen2", true, false, 0, qgemmKindAVX2},
		{"haswell", true, false, 0, qgemmKindAVX2},
		{"alder lake (avx-vnni only)", true, false, 0, qgemmKindAVX2},
		{"avx512-vnni bit, avx-512 state not saved", true, false, cpuidAVX512VNNI, qgemmKindAVX2},
		{"sandy bridge (avx, no avx2)", false, false, 0, qgemmKindGo},
		{"no ymm state", false, false, cpuidAVX512VNNI, qgemmKindGo},
	} {
		if got := qgemmKindFor(c.avx2, c.avx512, c.ecx7); got != c.want {
			t.Errorf("%s: qgemmKindFor = %s, want %s", c.name, got, c.want)
		}
	}
	_, _, ecx7, _ := cpuidAsm(7, 0)
	t.Logf("avx2+fma %v, avx512 %v, avx512_vnni %v: %s tiles", cpuHasAVX2FMA, cpuHasAVX512, ecx7&cpuidAVX512VNNI != 0, qgemmTiles)
	if want := qgemmKindFor(cpuHasAVX2FMA, cpuHasAVX512, ecx7); qgemmTiles != want {
		t.Fatalf("qgemmTiles = %s, the rule on this CPU's bits says %s", qgemmTiles, want)
	}
	if (qgemmTiles == qgemmKindVNNI) != cpuHasVNNI {
		t.Fatalf("qgemmTiles = %s but cpuHasVNNI = %v", qgemmTiles, cpuHasVNNI)
	}
}

// BenchmarkQGemmTiles: a QGemm (u8 x s8 -> f32, per-column scales, bias,
// one thread) at two resnet50 shapes (a 3x3 conv's im2col at 14x14, 256
// channels; a pointwise 64 -> 256 conv at 56x56) with each tile kind this
// CPU runs, B prepacked full-range s8 (the AVX2 exact tiles) or 7-bit (the AVX2 byte
// tiles), against the float32 SGEMM of the same shape; "MAC/ns" is
// multiply-adds per nanosecond.
func BenchmarkQGemmTiles(b *testing.B) {
	defer func(k qgemmKind) { qgemmTiles = k }(qgemmTiles)
	for _, sh := range []struct{ m, k, n int }{{196, 2304, 256}, {3136, 64, 256}} {
		name := fmt.Sprintf("%dx%dx%d", sh.m, sh.k, sh.n)
		b.Run(name+"/sgemm", func(b *testing.B) {
			r := rand.New(rand.NewSource(5))
			a, bm := sgemmPkRandom(r, sh.m*sh.k), sgemmPkRandom(r, sh.k*sh.n)
			c := make([]float32, sh.m*sh.n)
			sgemmPacked(false, false, sh.m, sh.n, sh.k, 1, a, sh.k, bm, sh.n, 0, c, sh.n)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				sgemmPacked(false, false, sh.m, sh.n, sh.k, 1, a, sh.k, bm, sh.n, 0, c, sh.n)
			}
			b.ReportMetric(float64(sh.m*sh.n*sh.k)*float64(b.N)/float64(b.Elapsed().Nanoseconds()), "MAC/ns")
		})
		for _, v := range []struct {
			name   string
			kind   qgemmKind
			narrow bool
		}{{"go", qgemmKindGo, false}, {"avx2-exact", qgemmKindAVX2, false}, {"avx2-byte", qgemmKindAVX2, true}, {"vnni", qgemmKindVNNI, false}} {
			if v.kind == qgemmKindVNNI && !cpuHasVNNI || v.kind == qgemmKindAVX2 && !cpuHasAVX2FMA {
				continue
			}
			b.Run(name+"/"+v.name, func(b *testing.B) {
				qgemmTiles = v.kind
				rng := rand.New(rand.NewSource(3))
				c := qgemmCase{adt: U8, bdt: I8, ydt: F32, perCol: true, bias: true}
				a, _ := miscRandQ(rng, U8, sh.m, sh.k)
				bt, _ := miscRandQ(rng, I8, sh.k, sh.n)
				if v.narrow {
					for i, x := range bt.I8() {
						bt.I8()[i] = x >> 1
					}
				}
				as, azp, bs, bzp, bias, ys, yzp := qgemmInputs(rng, c, sh.n)
				// B prepacked, as compiled models store it.
				pw, _ := PrepackQWeights(bt.I8(), bt.Shape, false)
				at := qgemmActAttrs(c)
				at[qgemmPackedAttr] = []int64{int64(sh.k), int64(sh.n)}
				bp := &Tensor{DType: I8, Shape: []int{len(pw)}, Data: pw}
				n := nnNode("cuvil::QGemm", 1, at, 1, a, as, azp, bp, bs, bzp, bias, ys, yzp)
				n.Pool = NewWorkPool(WithThreads(1))
				defer n.Pool.Close()
				if err := QGemm(n); err != nil {
					b.Fatal(err)
				}
				if qgemmStateOf(n).b.pairsFit != v.narrow {
					b.Fatalf("pairsFit = %v", !v.narrow)
				}
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if err := QGemm(n); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(sh.m*sh.n*sh.k)*float64(b.N)/float64(b.Elapsed().Nanoseconds()), "MAC/ns")
			})
		}
	}
}

// TestQGemmEpiVec: the AVX2 epilogues give storeRow's Go loop's bits on
// random sums, exact ties of the u8 rounding (x.5 in both directions),
// saturation at 0 and 255, Relu/Clip bounds and every length to 40 (the
// tail past the last multiple of 8 is left to the Go loop).
func TestQGemmEpiVec(t *testing.T) {
	if !cpuHasAVX2FMA {
		t.Skip("no AVX2")
	}
	rng := rand.New(rand.NewSource(8))
	for n := 0; n <= 40; n++ {
		acc, ct := make([]int32, n), make([]int32, n)
		muf, mud := make([]float32, n), make([]float64, n)
		for j := range acc {
			acc[j] = int32(rng.Intn(1<<20) - 1<<19)
			ct[j] = int32(rng.Intn(1<<16) - 1<<15)
			muf[j] = float32(1e-4 + rng.Float64()*1e-3)
			mud[j] = 1e-4 + rng.Float64()*1e-3
			switch rng.Intn(4) {
			case 0: // a tie: (acc+ct)*mu = k + 0.5
				mud[j] = 0.5
				acc[j] = int32(2*rng.Intn(200) - 200 + 1)
				ct[j] = 0
			case 1:
				acc[j], ct[j] = 0, 0
			}
		}
		for _, b := range [][2]float64{{math.Inf(-1), math.Inf(1)}, {0, math.Inf(1)}, {-1.5, 2.25}, {0, 6}} {
			got, want := make([]float32, n), make([]float32, n)
			lo, hi := float32(b[0]), float32(b[1])
			k := qgemmEpiF32Vec(acc, ct, muf, lo, hi, got)
			if k != n&^7 {
				t.Fatalf("n %d: f32 stored %d", n, k)
			}
			for j := range want {
				want[j] = max(lo, min(hi, float32(acc[j]+ct[j])*muf[j]))
				if j >= k {
					got[j] = want[j]
				}
			}
			for j := range want {
				if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
					t.Fatalf("n %d, bounds %v: f32 y[%d] = %v, want %v", n, b, j, got[j], want[j])
				}
			}
		}
		for _, b := range [][3]float64{{0, 255, 0}, {0, 255, 128}, {3, 200, 7}, {0, 0, 0}, {255, 255, 3}} {
			got, want := make([]uint8, n), make([]uint8, n)
			k := qgemmEpiU8Vec(acc, ct, mud, b[2], b[0], b[1], got)
			for j := range want {
				q := math.RoundToEven(float64(acc[j]+ct[j])*mud[j]) + b[2]
				want[j] = uint8(max(b[0], min(b[1], q)))
				if j >= k {
					got[j] = want[j]
				}
			}
			if string(got) != string(want) {
				t.Fatalf("n %d, lo/hi/zy %v: u8 %v, want %v", n, b, got, want)
			}
		}
	}
	// prepare keeps the vector epilogue off where min/max would differ.
	for _, c := range []struct {
		lo, hi float64
		mu     float64
		want   bool
	}{{0, math.Inf(1), 0.5, true}, {math.Inf(-1), math.Inf(1), 0.5, true}, {math.Copysign(0, -1), 6, 0.5, false}, {-1, 0, 0.5, false}, {0, 6, -0.5, false}, {0, 6, math.NaN(), false}} {
		e := qgemmEpi{za: 0, zb: []int32{0}, mult: []float64{c.mu}, yf: make([]float32, 1), lo: c.lo, hi: c.hi}
		e.prepare(&qgemmB{k: 1, n: 1, colsum: []int32{0}}, &qgemmState{})
		if e.vecF32 != c.want {
			t.Errorf("f32 lo %v hi %v mu %v: vecF32 = %v", c.lo, c.hi, c.mu, e.vecF32)
		}
	}
	for _, c := range []struct {
		lo, hi float64
		want   bool
	}{{0, 255, true}, {10, 20, true}, {-1, 255, false}, {0, 256, false}, {30, 20, false}} {
		e := qgemmEpi{zb: []int32{0}, mult: []float64{0.1}, quant: true, yu8: make([]uint8, 1), lo: c.lo, hi: c.hi}
		e.prepare(&qgemmB{k: 1, n: 1, colsum: []int32{0}}, &qgemmState{})
		if e.vecU8 != c.want {
			t.Errorf("u8 lo %v hi %v: vecU8 = %v", c.lo, c.hi, e.vecU8)
		}
	}
}

// TestQuantizeU8Vec: the AVX2 per-tensor QuantizeLinear gives the Go
// loop's bytes on random values, ties (k+0.5 quotients), ±0, ±Inf, NaN,
// huge values and subnormals, every length to 40, several scales and zero
// points.
func TestQuantizeU8Vec(t *testing.T) {
	if !cpuHasAVX2FMA {
		t.Skip("no AVX2")
	}
	rng := rand.New(rand.NewSource(4))
	special := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()),
		3e38, -3e38, 1e-45, -1e-45, 16777217, -16777217, 0.5, 1.5, 2.5, -0.5, -1.5, 127.5, 128.5, 254.5, 255.5, -255.5}
	for _, sz := range [][2]float64{{1, 0}, {0.0125, 100}, {0.5, 255}, {3.7, 7}, {1e-30, 128}} {
		s, z := float32(sz[0]), sz[1]
		for n := 0; n <= 40; n++ {
			x := make([]float32, n)
			for i := range x {
				switch rng.Intn(3) {
				case 0:
					x[i] = special[rng.Intn(len(special))] * s
				case 1:
					x[i] = float32(rng.Intn(1000)-500) * 0.5 * s
				default:
					x[i] = float32(rng.NormFloat64()*100) * s
				}
			}
			got, want := make([]uint8, n), make([]uint8, n)
			k := quantizeU8Vec(x, s, z, got)
			for i, f := range x {
				want[i] = uint8(max(0, min(255, math.RoundToEven(float64(f/s))+z)))
				if i >= k {
					got[i] = want[i]
				}
			}
			if string(got) != string(want) {
				t.Fatalf("s %v z %v n %d: x %v\ngot  %v\nwant %v", s, z, n, x, got, want)
			}
		}
	}
}
