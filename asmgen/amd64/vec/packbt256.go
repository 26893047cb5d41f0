package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// packBT16AVX2 emits packBT16AVX512's transposing B-panel pack on 8 lanes
// (AVX2 CPUs took the scalar Go twin: attention's K in Q.K^T, 64 k steps
// a head in BERT): each half of the sixteen rows of B, eight k steps at
// a time, as an 8x8 transpose in registers (unpack pairs of floats, then
// pairs of pairs, then swap 128-bit lanes: 24 shuffles) into the
// half's eight values of eight k steps of the panel. A copy, so exact.
func packBT16AVX2() {
	TEXT("packBT16AVX2", NOSPLIT, "func(kc int, b *float32, ldb int, dst *float32)")
	Doc(
		"packBT16AVX2 sets dst[p*16+j] = b[j*ldb+p] for j in [0, 16), p in",
		"[0, kc), kc a multiple of 8.",
		"",
		"Requires: AVX",
	)
	Pragma("noescape")
	kc := Load(Param("kc"), GP64())
	b := Load(Param("b"), GP64())
	ldb := Load(Param("ldb"), GP64())
	dst := Load(Param("dst"), GP64())
	SHLQ(U8(2), ldb)
	half := GP64() // b + 8*ldb: rows 8..15
	MOVQ(ldb, half)
	SHLQ(U8(3), half)
	ADDQ(b, half)
	p := GP64()
	XORQ(p, p)
	Label("pbt8_loop")
	CMPQ(p, kc)
	JGE(LabelRef("pbt8_done"))
	for h, base := range []Register{b, half} {
		Comment("Rows 8h..8h+7 of B, k steps p..p+7.")
		r := make([]VecVirtual, 8)
		row := GP64()
		MOVQ(base, row)
		for j := range r {
			r[j] = YMM()
			VMOVUPS(Mem{Base: row}, r[j])
			if j < 7 {
				ADDQ(ldb, row)
			}
		}
		t := make([]VecVirtual, 8)
		for j := 0; j < 8; j += 2 {
			t[j], t[j+1] = YMM(), YMM()
			VUNPCKLPS(r[j+1], r[j], t[j])   // r0[0] r1[0] r0[1] r1[1] | [4] [5]
			VUNPCKHPS(r[j+1], r[j], t[j+1]) // r0[2] r1[2] r0[3] r1[3] | [6] [7]
		}
		s := make([]VecVirtual, 8)
		for g := 0; g < 8; g += 4 {
			for q := 0; q < 2; q++ {
				s[g+2*q], s[g+2*q+1] = YMM(), YMM()
				VSHUFPS(U8(0x44), t[g+q+2], t[g+q], s[g+2*q])   // k step 2q (| 2q+4)
				VSHUFPS(U8(0xee), t[g+q+2], t[g+q], s[g+2*q+1]) // k step 2q+1 (| 2q+5)
			}
		}
		for q := 0; q < 4; q++ {
			lo, hi := YMM(), YMM()
			VPERM2F128(U8(0x20), s[q+4], s[q], lo) // k step q
			VPERM2F128(U8(0x31), s[q+4], s[q], hi) // k step q+4
			VMOVUPS(lo, Mem{Base: dst, Disp: 64*q + 32*h})
			VMOVUPS(hi, Mem{Base: dst, Disp: 64*(q+4) + 32*h})
		}
	}
	ADDQ(U8(8), p)
	ADDQ(U8(32), b)
	ADDQ(U8(32), half)
	ADDQ(U32(512), dst)
	JMP(LabelRef("pbt8_loop"))
	Label("pbt8_done")
	VZEROUPPER()
	RET()
}
