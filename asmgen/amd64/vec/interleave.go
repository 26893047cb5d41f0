package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
)

// interleave2 emits interleave2AVX: y = a[0], b[0], a[1], b[1], ... (the
// groups-2 channel shuffle of NHWC, k_channel_shuffle.go), 8 pairs a step:
// VUNPCKLPS/VUNPCKHPS pair lanes within each 128-bit half, VPERM2F128
// puts the halves in order.
func interleave2() {
	TEXT("interleave2AVX", NOSPLIT, "func(y, a, b *float32, n int)")
	Doc(
		"interleave2AVX sets y[2i] = a[i], y[2i+1] = b[i] for i in [0, n), n a multiple of 8.",
		"",
		"Requires: AVX",
	)
	Pragma("noescape")
	y := Load(Param("y"), GP64())
	a := Load(Param("a"), GP64())
	b := Load(Param("b"), GP64())
	n := Load(Param("n"), GP64())
	i := GP64()
	XORQ(i, i)
	Label("il2_loop")
	CMPQ(i, n)
	JGE(LabelRef("il2_done"))
	va, vb, lo, hi := YMM(), YMM(), YMM(), YMM()
	VMOVUPS(Mem{Base: a, Index: i, Scale: 4}, va)
	VMOVUPS(Mem{Base: b, Index: i, Scale: 4}, vb)
	VUNPCKLPS(vb, va, lo) // a0 b0 a1 b1 | a4 b4 a5 b5
	VUNPCKHPS(vb, va, hi) // a2 b2 a3 b3 | a6 b6 a7 b7
	o0, o1 := YMM(), YMM()
	VPERM2F128(U8(0x20), hi, lo, o0)
	VPERM2F128(U8(0x31), hi, lo, o1)
	VMOVUPS(o0, Mem{Base: y, Index: i, Scale: 8})
	VMOVUPS(o1, Mem{Base: y, Index: i, Scale: 8, Disp: 32})
	ADDQ(U8(8), i)
	JMP(LabelRef("il2_loop"))
	Label("il2_done")
	VZEROUPPER()
	RET()
}
