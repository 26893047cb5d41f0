// Command q8 generates the int8 kernels of package templates: the GEMM
// tiles of cuvil::QGemm and cuvil::QConv (templates/k_quant_gemm.go) with
// AVX512-VNNI and with AVX2, the AVX2 row epilogues (f32 dequantisation,
// u8 requantisation) and the AVX2 per-tensor QuantizeLinear f32 -> u8.
//
// VNNI: VPDPBUSD multiplies four u8 bytes of A by four s8 bytes of
// B per int32 lane and adds them to the lane, 64 multiply-adds an
// instruction. A tile is up to 6 rows by 4 panels of 16 columns: per k
// quad it loads the panels' 64-byte rows of B, broadcasts each A row's four
// bytes and issues rows*panels VPDPBUSD into 24 ZMM accumulators at most.
// Their pure-Go twin is qgemmTileGo, the test reference (of the AVX2
// tiles too; the epilogues' and QuantizeLinear's are their Go loops).
//
// avo v0.5.0 has no VPDPBUSD constructor; the generator emits it as a raw
// instruction (the Go assembler knows it: EVEX, AVX512_VNNI).
//
//	go generate ./asmgen/amd64/q8
package main

//go:generate go run . -pkg templates -out ../../../templates/asm_q8_amd64.s -stubs ../../../templates/asm_q8_amd64.go

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/ir"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

const (
	maxRows   = 6  // rows of the largest tile
	maxPanels = 4  // panels of 16 columns (64 columns: 24 accumulators for 6 rows)
	accRow    = 64 // int32 elements of a row of the caller's accumulator block
)

func main() {
	ConstraintExpr("amd64,!purego")
	for rows := 1; rows <= maxRows; rows++ {
		for panels := 1; panels <= maxPanels; panels++ {
			kernel(rows, panels)
		}
	}
	for rows := 1; rows <= avx2WRows; rows++ {
		kernelAVX2W(rows)
	}
	for rows := 1; rows <= avx2BRows; rows++ {
		kernelAVX2B(rows)
	}
	epiF32()
	epiU8()
	quantU8()
	Generate()
}

// vpdpbusd emits VPDPBUSD (Go operand order): acc += u8(u) . s8(s), four
// bytes a lane.
func vpdpbusd(s, u, acc Op) {
	Instruction(&ir.Instruction{
		Opcode:   "VPDPBUSD",
		Operands: []Op{s, u, acc},
		Inputs:   []Op{s, u, acc},
		Outputs:  []Op{acc},
		ISA:      []string{"AVX512_VNNI"},
	})
}

// kernel emits the tile of rows x 16*panels: for r < rows, panel p, lane j
// acc[r*64 + p*16 + j] = sum_q sum_i a[r*lda + 4q + i] * b[p*bstride + q*64 + 4j + i]
// over the k4 quads q (a u8, b s8; acc overwritten).
func kernel(rows, panels int) {
	name := fmt.Sprintf("qgemmVNNI%dx%d", rows, 16*panels)
	TEXT(name, NOSPLIT, "func(k4 int, a *uint8, lda int, b *int8, bstride int, acc *int32)")
	Doc(
		fmt.Sprintf("%s computes a %dx%d int32 tile of u8 A (row stride lda) times", name, rows, 16*panels),
		"s8 B in panels of 16 columns, k in quads (panel p at b + p*bstride, 64 bytes",
		"a quad), over k4 quads, into acc (row r at acc + r*64 int32s).",
		"",
		"Requires: AVX512F, AVX512_VNNI",
	)
	Pragma("noescape")
	k := Load(Param("k4"), GP64())
	a := Load(Param("a"), GP64())
	lda := Load(Param("lda"), GP64())
	b := Load(Param("b"), GP64())
	bs := Load(Param("bstride"), GP64())
	var a3, l3, b3 Register
	if rows > 3 {
		l3 = GP64()
		LEAQ(Mem{Base: lda, Index: lda, Scale: 2}, l3)
		a3 = GP64()
		LEAQ(Mem{Base: a, Index: l3, Scale: 1}, a3)
	}
	if panels > 3 {
		b3 = GP64()
		LEAQ(Mem{Base: bs, Index: bs, Scale: 2}, b3)
		ADDQ(b, b3)
	}
	rowAt := func(r int) Mem {
		base := a
		if r >= 3 {
			base, r = a3, r-3
		}
		if r == 0 {
			return Mem{Base: base}
		}
		return Mem{Base: base, Index: lda, Scale: uint8(r)}
	}
	panelAt := func(p int) Mem {
		switch p {
		case 0:
			return Mem{Base: b}
		case 3:
			return Mem{Base: b3}
		default:
			return Mem{Base: b, Index: bs, Scale: uint8(p)}
		}
	}
	Comment(fmt.Sprintf("Zero the %d accumulators: acc[r*%d+p] holds row r, panel p.", rows*panels, panels))
	acc := make([]VecVirtual, rows*panels)
	for i := range acc {
		acc[i] = ZMM()
		VPXORD(acc[i], acc[i], acc[i])
	}
	TESTQ(k, k)
	JZ(LabelRef(name + "_store"))
	Label(name + "_loop")
	bv := make([]VecVirtual, panels)
	for p := range bv {
		bv[p] = ZMM()
		VMOVDQU32(panelAt(p), bv[p])
	}
	for r := 0; r < rows; r++ {
		t := ZMM()
		VPBROADCASTD(rowAt(r), t)
		for p := 0; p < panels; p++ {
			vpdpbusd(bv[p], t, acc[r*panels+p])
		}
	}
	ADDQ(U8(4), a)
	if a3 != nil {
		ADDQ(U8(4), a3)
	}
	ADDQ(U8(64), b)
	if b3 != nil {
		ADDQ(U8(64), b3)
	}
	DECQ(k)
	JNZ(LabelRef(name + "_loop"))
	Label(name + "_store")
	out := Load(Param("acc"), GP64())
	for r := 0; r < rows; r++ {
		for p := 0; p < panels; p++ {
			VMOVDQU32(acc[r*panels+p], Mem{Base: out, Disp: 4 * (r*accRow + p*16)})
		}
	}
	VZEROUPPER()
	RET()
}

// The AVX2 tiles (no AVX-512, no VNNI: Zen 2, Haswell-Skylake) read the
// same panels as the VNNI ones, one panel (16 columns) at a time, for
// 1..avx2WRows (exact) or 1..avx2BRows (byte) rows; the Go driver
// (templates/k_quant_gemm_amd64.go) covers a larger tile with several
// calls. AVX2 has no u8 x s8 dot product into int32, and its two integer
// multiply-adds run on the same port on Zen 2 (one a cycle each, measured):
//
//   - exact ("W"): B's bytes widened to s16 (VPMOVSXBW, another port), A's
//     four bytes zero-extended to words and broadcast, VPMADDWD: 16 exact
//     multiply-adds per multiply, every B.
//   - byte ("B"): VPMADDUBSW (u8 x s8 pairs summed into s16, saturating)
//     then VPMADDWD by ones: 32 multiply-adds per two multiplies, exact only
//     when no pair sum a0*b0+a1*b1 leaves s16, which for every u8 A means
//     |b0|+|b1| <= 128 for each k pair (0,1), (2,3) of a column; the driver
//     checks the panels once (qgemmPairsFit) and runs it only then.
//
// Shapes (measured on Zen 2): the exact tile keeps B's four widened
// quarters in registers for its rows, so it stops at 2 rows (8
// accumulators; a 3-row tile, 12 accumulators, must widen B again for each
// row and ran 3-8% slower); the byte tile holds B's two halves for 4 rows.
const (
	avx2WRows = 2
	avx2BRows = 4
)

// avx2Doc is the doc of an AVX2 tile.
func avx2Doc(name string, rows int, how string) {
	Doc(
		fmt.Sprintf("%s computes a %dx16 int32 tile of u8 A (row stride lda) times", name, rows),
		"one panel of s8 B (16 columns, k in quads, 64 bytes a quad), over k4 quads,",
		"into acc (row r at acc + r*64 int32s), "+how+".",
		"",
		"Requires: AVX2",
	)
}

// kernelAVX2W emits the exact AVX2 tile of rows x 16: per quad, each
// 16-byte quarter of the panel's 64 bytes (4 columns x 4 k) is widened to
// 16 s16 words; VPMADDWD by row r's a0..a3 as words (repeated) gives each
// column two int32 partial sums (k 0+1 and 2+3), kept in 4 accumulators a
// row; the store adds the pairs (VPHADDD) and restores the column order
// (VPERMQ). With rows <= 2 the widened B stays in 4 registers for the
// rows; with more (12 accumulators for 3) it is widened again for each row.
func kernelAVX2W(rows int) {
	name := fmt.Sprintf("qgemmAVX2W%dx16", rows)
	TEXT(name, NOSPLIT, "func(k4 int, a *uint8, lda int, b *int8, acc *int32)")
	avx2Doc(name, rows, "exactly: VPMADDWD on B widened to s16")
	Pragma("noescape")
	k := Load(Param("k4"), GP64())
	a := Load(Param("a"), GP64())
	lda := Load(Param("lda"), GP64())
	b := Load(Param("b"), GP64())
	rowAt := func(r int) Mem {
		if r == 0 {
			return Mem{Base: a}
		}
		return Mem{Base: a, Index: lda, Scale: uint8(r)}
	}
	Comment(fmt.Sprintf("acc[r*4+g]: row r, columns 4g..4g+3, two partial sums each (%d accumulators).", 4*rows))
	acc := make([]VecVirtual, 4*rows)
	for i := range acc {
		acc[i] = YMM()
		VPXOR(acc[i], acc[i], acc[i])
	}
	TESTQ(k, k)
	JZ(LabelRef(name + "_store"))
	Label(name + "_loop")
	hold := rows <= 2
	var bw []VecVirtual
	if hold {
		bw = make([]VecVirtual, 4)
		for g := range bw {
			bw[g] = YMM()
			VPMOVSXBW(Mem{Base: b, Disp: 16 * g}, bw[g])
		}
	}
	for r := 0; r < rows; r++ {
		x := XMM()
		VPBROADCASTD(rowAt(r), x)
		aw := YMM()
		VPMOVZXBW(x, aw)
		for g := 0; g < 4; g++ {
			var bg VecVirtual
			if hold {
				bg = bw[g]
			} else {
				bg = YMM()
				VPMOVSXBW(Mem{Base: b, Disp: 16 * g}, bg)
			}
			t := YMM()
			VPMADDWD(bg, aw, t)
			VPADDD(t, acc[r*4+g], acc[r*4+g])
		}
	}
	ADDQ(U8(4), a)
	ADDQ(U8(64), b)
	DECQ(k)
	JNZ(LabelRef(name + "_loop"))
	Label(name + "_store")
	out := Load(Param("acc"), GP64())
	for r := 0; r < rows; r++ {
		for h := 0; h < 2; h++ {
			// acc[2h] is columns 8h+0,1 (low lane), 8h+2,3 (high lane),
			// acc[2h+1] 8h+4..7: VPHADDD gives [c0 c1 c4 c5 | c2 c3 c6 c7].
			s := YMM()
			VPHADDD(acc[r*4+2*h+1], acc[r*4+2*h], s)
			VPERMQ(U8(0xd8), s, s)
			VMOVDQU(s, Mem{Base: out, Disp: 4 * (r*accRow + 8*h)})
		}
	}
	VZEROUPPER()
	RET()
}

// kernelAVX2B emits the byte AVX2 tile of rows x 16 (exact only for panels
// that pass qgemmPairsFit): per quad the panel's two 32-byte halves (8
// columns x 4 k each) stay in registers; per row VPMADDUBSW of A's
// broadcast quad by each gives 16 s16 pair sums, VPMADDWD by ones adds
// the pairs into 8 int32 column sums.
func kernelAVX2B(rows int) {
	name := fmt.Sprintf("qgemmAVX2B%dx16", rows)
	TEXT(name, NOSPLIT, "func(k4 int, a *uint8, lda int, b *int8, acc *int32)")
	avx2Doc(name, rows, "VPMADDUBSW: exact iff every k pair of a column has |b0|+|b1| <= 128")
	Pragma("noescape")
	k := Load(Param("k4"), GP64())
	a := Load(Param("a"), GP64())
	lda := Load(Param("lda"), GP64())
	b := Load(Param("b"), GP64())
	var a3 Register
	if rows > 3 {
		a3 = GP64()
		LEAQ(Mem{Base: a, Index: lda, Scale: 2}, a3)
		ADDQ(lda, a3)
	}
	rowAt := func(r int) Mem {
		base := a
		if r >= 3 {
			base, r = a3, r-3
		}
		if r == 0 {
			return Mem{Base: base}
		}
		return Mem{Base: base, Index: lda, Scale: uint8(r)}
	}
	ones := YMM()
	VPCMPEQW(ones, ones, ones)
	VPSRLW(U8(15), ones, ones)
	acc := make([]VecVirtual, 2*rows)
	for i := range acc {
		acc[i] = YMM()
		VPXOR(acc[i], acc[i], acc[i])
	}
	TESTQ(k, k)
	JZ(LabelRef(name + "_store"))
	Label(name + "_loop")
	bv := []VecVirtual{YMM(), YMM()}
	VMOVDQU(Mem{Base: b}, bv[0])
	VMOVDQU(Mem{Base: b, Disp: 32}, bv[1])
	for r := 0; r < rows; r++ {
		t := YMM()
		VPBROADCASTD(rowAt(r), t)
		for h := 0; h < 2; h++ {
			s := YMM()
			VPMADDUBSW(bv[h], t, s)
			VPMADDWD(ones, s, s)
			VPADDD(s, acc[2*r+h], acc[2*r+h])
		}
	}
	ADDQ(U8(4), a)
	if a3 != nil {
		ADDQ(U8(4), a3)
	}
	ADDQ(U8(64), b)
	DECQ(k)
	JNZ(LabelRef(name + "_loop"))
	Label(name + "_store")
	out := Load(Param("acc"), GP64())
	for r := 0; r < rows; r++ {
		for h := 0; h < 2; h++ {
			VMOVDQU(acc[2*r+h], Mem{Base: out, Disp: 4 * (r*accRow + 8*h)})
		}
	}
	VZEROUPPER()
	RET()
}

// epiF32 emits the AVX2 float32 epilogue of a row (qgemmEpi.storeRow):
// for j < n (a multiple of 8) y[j] = max(lo, min(hi, float32(acc[j]+ct[j])
// * mu[j])), the Go loop's bits where the caller guarantees mu > 0, lo
// not -0 and hi not 0 (VMINPS/VMAXPS differ from Go's min/max only on
// signed zeros and NaNs, which these exclude).
func epiF32() {
	TEXT("qgemmEpiF32AVX2", NOSPLIT, "func(n int, acc *int32, ct *int32, mu *float32, lo float32, hi float32, y *float32)")
	Doc(
		"qgemmEpiF32AVX2 stores y[j] = max(lo, min(hi, float32(acc[j]+ct[j])*mu[j]))",
		"for j < n, n a multiple of 8.",
		"",
		"Requires: AVX2",
	)
	Pragma("noescape")
	n := Load(Param("n"), GP64())
	acc := Load(Param("acc"), GP64())
	ct := Load(Param("ct"), GP64())
	mu := Load(Param("mu"), GP64())
	y := Load(Param("y"), GP64())
	lo, hi := YMM(), YMM()
	VBROADCASTSS(NewParamAddr("lo", 32), lo)
	VBROADCASTSS(NewParamAddr("hi", 36), hi)
	SHRQ(U8(3), n)
	JZ(LabelRef("epif32_done"))
	Label("epif32_loop")
	v := YMM()
	VMOVDQU(Mem{Base: acc}, v)
	VPADDD(Mem{Base: ct}, v, v)
	VCVTDQ2PS(v, v)
	VMULPS(Mem{Base: mu}, v, v)
	VMINPS(hi, v, v)
	VMAXPS(lo, v, v)
	VMOVUPS(v, Mem{Base: y})
	for _, r := range []Register{acc, ct, mu, y} {
		ADDQ(U8(32), r)
	}
	DECQ(n)
	JNZ(LabelRef("epif32_loop"))
	Label("epif32_done")
	VZEROUPPER()
	RET()
}

// epiU8 emits the AVX2 u8 requantising epilogue of a row: for j < n (a
// multiple of 8) y[j] = uint8(max(lo, min(hi, RoundToEven(float64(acc[j] +
// ct[j]) * mu[j]) + zy))) in float64 as the Go loop computes it (VROUNDPD
// to nearest even), for 0 <= lo <= hi <= 255 and finite mu (the caller's
// guarantee: then the clamped value is an integer in [0, 255]).
func epiU8() {
	TEXT("qgemmEpiU8AVX2", NOSPLIT, "func(n int, acc *int32, ct *int32, mu *float64, zy float64, lo float64, hi float64, y *uint8)")
	Doc(
		"qgemmEpiU8AVX2 stores y[j] = uint8(max(lo, min(hi, RoundToEven(float64(acc[j]+ct[j])*mu[j])+zy)))",
		"for j < n, n a multiple of 8.",
		"",
		"Requires: AVX2",
	)
	Pragma("noescape")
	n := Load(Param("n"), GP64())
	acc := Load(Param("acc"), GP64())
	ct := Load(Param("ct"), GP64())
	mu := Load(Param("mu"), GP64())
	y := Load(Param("y"), GP64())
	zy, lo, hi := YMM(), YMM(), YMM()
	VBROADCASTSD(NewParamAddr("zy", 32), zy)
	VBROADCASTSD(NewParamAddr("lo", 40), lo)
	VBROADCASTSD(NewParamAddr("hi", 48), hi)
	SHRQ(U8(3), n)
	JZ(LabelRef("epiu8_done"))
	Label("epiu8_loop")
	var q [2]VecVirtual
	for h := 0; h < 2; h++ {
		x := XMM()
		VMOVDQU(Mem{Base: acc, Disp: 16 * h}, x)
		VPADDD(Mem{Base: ct, Disp: 16 * h}, x, x)
		d := YMM()
		VCVTDQ2PD(x, d)
		VMULPD(Mem{Base: mu, Disp: 32 * h}, d, d)
		VROUNDPD(U8(8), d, d) // to nearest even, no precision exception
		VADDPD(zy, d, d)
		VMINPD(hi, d, d)
		VMAXPD(lo, d, d)
		q[h] = XMM()
		VCVTPD2DQY(d, q[h])
	}
	VPACKUSDW(q[1], q[0], q[0])
	VPACKUSWB(q[0], q[0], q[0])
	VMOVQ(q[0], Mem{Base: y})
	ADDQ(U8(32), acc)
	ADDQ(U8(32), ct)
	ADDQ(U8(64), mu)
	ADDQ(U8(8), y)
	DECQ(n)
	JNZ(LabelRef("epiu8_loop"))
	Label("epiu8_done")
	VZEROUPPER()
	RET()
}

// quantU8 emits the AVX2 per-tensor QuantizeLinear f32 -> u8 of
// templates/k_quant.go: y[i] = uint8(max(0, min(255, RoundToEven(x[i]/s) +
// z))) with the float32 division, for n a multiple of 8. Rounding and
// adding z in float32 instead of float64 gives the same bytes (the
// rounded quotient is an integer, exact with z below 2^24, and larger ones
// clamp alike); VMINPS/VMAXPS take the quotient as the second operand, so
// a NaN stays NaN and converts to 0x80000000, which packs to 0 as Go's
// uint8(NaN) on amd64.
func quantU8() {
	TEXT("quantizeU8AVX2", NOSPLIT, "func(n int, x *float32, s float32, z float32, y *uint8)")
	Doc(
		"quantizeU8AVX2 stores y[i] = uint8(max(0, min(255, RoundToEven(x[i]/s)+z))) for i < n,",
		"n a multiple of 8.",
		"",
		"Requires: AVX2",
	)
	Pragma("noescape")
	n := Load(Param("n"), GP64())
	x := Load(Param("x"), GP64())
	y := Load(Param("y"), GP64())
	sv, zv, lo, hi := YMM(), YMM(), YMM(), YMM()
	VBROADCASTSS(NewParamAddr("s", 16), sv)
	VBROADCASTSS(NewParamAddr("z", 20), zv)
	VXORPS(lo, lo, lo)
	t := GP32()
	MOVL(U32(0x437f0000), t) // 255.0
	hx := XMM()
	VMOVD(t, hx)
	VBROADCASTSS(hx, hi)
	SHRQ(U8(3), n)
	JZ(LabelRef("quantu8_done"))
	Label("quantu8_loop")
	v := YMM()
	VMOVUPS(Mem{Base: x}, v)
	VDIVPS(sv, v, v)
	VROUNDPS(U8(8), v, v)
	VADDPS(zv, v, v)
	m := YMM()
	VMINPS(v, hi, m) // min(255, v); v when NaN
	VMAXPS(m, lo, m) // max(0, m); m when NaN
	VCVTTPS2DQ(m, m)
	h := XMM()
	VEXTRACTI128(U8(1), m, h)
	l := m.AsX()
	VPACKUSDW(h, l, l)
	VPACKUSWB(l, l, l)
	VMOVQ(l, Mem{Base: y})
	ADDQ(U8(32), x)
	ADDQ(U8(8), y)
	DECQ(n)
	JNZ(LabelRef("quantu8_loop"))
	Label("quantu8_done")
	VZEROUPPER()
	RET()
}
