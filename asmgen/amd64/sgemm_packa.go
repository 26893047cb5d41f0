package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// sgemmPackA6 emits the A packing of the driver on AVX2 CPUs (where the
// 6x16 kernel reads A packed: each GEMM packs every row of op(A)): six
// rows of A, eight k steps at a time, as an 8x8 register transpose (two
// rows of zeros; unpack pairs of floats, then pairs of pairs, then swap
// 128-bit lanes) whose eight 6-value columns are stored 24 bytes apart,
// each 32-byte store's last 8 bytes overwritten by the next (the last
// one stored as 16 + 8 bytes, so nothing past the eight steps is
// written). Go's loop took 0.5 ns a value, some 5% of a transformer's
// GEMMs (swin's mlp.0 packs 3136 x 96 values a call). A copy, so exact.
func sgemmPackA6() {
	TEXT("sgemmPackA6AVX", NOSPLIT, "func(kc int, a *float32, lda int, dst *float32)")
	Doc(
		"sgemmPackA6AVX sets dst[p*6+i] = a[i*lda+p] for i in [0, 6), p in",
		"[0, kc), kc a multiple of 8: one packed A micro-panel.",
		"",
		"Requires: AVX",
	)
	Pragma("noescape")
	kc := Load(Param("kc"), GP64())
	a := Load(Param("a"), GP64())
	lda := Load(Param("lda"), GP64())
	dst := Load(Param("dst"), GP64())
	SHLQ(U8(2), lda)
	a3 := GP64() // row 3
	MOVQ(lda, a3)
	LEAQ(Mem{Base: a3, Index: a3, Scale: 2}, a3)
	ADDQ(a, a3)
	zero := YMM()
	VXORPS(zero, zero, zero)
	p := GP64()
	XORQ(p, p)
	Label("packa6_loop")
	CMPQ(p, kc)
	JGE(LabelRef("packa6_done"))
	r := make([]VecVirtual, 6)
	for i := range r {
		r[i] = YMM()
	}
	VMOVUPS(Mem{Base: a}, r[0])
	VMOVUPS(Mem{Base: a, Index: lda, Scale: 1}, r[1])
	VMOVUPS(Mem{Base: a, Index: lda, Scale: 2}, r[2])
	VMOVUPS(Mem{Base: a3}, r[3])
	VMOVUPS(Mem{Base: a, Index: lda, Scale: 4}, r[4])
	VMOVUPS(Mem{Base: a3, Index: lda, Scale: 2}, r[5])
	t := make([]VecVirtual, 6)
	for j := 0; j < 6; j += 2 {
		t[j], t[j+1] = YMM(), YMM()
		VUNPCKLPS(r[j+1], r[j], t[j])   // r0[0] r1[0] r0[1] r1[1] | [4] [5]
		VUNPCKHPS(r[j+1], r[j], t[j+1]) // r0[2] r1[2] r0[3] r1[3] | [6] [7]
	}
	// Rows 6 and 7 are zero, so are their unpacked pairs.
	tt := append(t, zero, zero)
	s := make([]VecVirtual, 8)
	for g := 0; g < 8; g += 4 {
		for q := 0; q < 2; q++ {
			s[g+2*q], s[g+2*q+1] = YMM(), YMM()
			VSHUFPS(U8(0x44), tt[g+q+2], tt[g+q], s[g+2*q])   // k step 2q (| 2q+4)
			VSHUFPS(U8(0xee), tt[g+q+2], tt[g+q], s[g+2*q+1]) // k step 2q+1 (| 2q+5)
		}
	}
	cols := make([]VecVirtual, 8)
	for q := 0; q < 4; q++ {
		cols[q], cols[q+4] = YMM(), YMM()
		VPERM2F128(U8(0x20), s[q+4], s[q], cols[q])   // k step q
		VPERM2F128(U8(0x31), s[q+4], s[q], cols[q+4]) // k step q+4
	}
	for q := 0; q < 7; q++ {
		VMOVUPS(cols[q], Mem{Base: dst, Disp: 24 * q})
	}
	VMOVUPS(cols[7].AsX(), Mem{Base: dst, Disp: 24 * 7})
	hi := XMM()
	VEXTRACTF128(U8(1), cols[7], hi)
	VMOVLPS(hi, Mem{Base: dst, Disp: 24*7 + 16})
	ADDQ(U8(8), p)
	ADDQ(U8(32), a)
	ADDQ(U8(32), a3)
	ADDQ(U8(192), dst)
	JMP(LabelRef("packa6_loop"))
	Label("packa6_done")
	VZEROUPPER()
	RET()
}
