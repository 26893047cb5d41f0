package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// gemvRows256 emits gemvRowsAVX2, gemvRowsAVX512 on 8 lanes for CPUs
// without AVX-512: four rows at a time, summed in float32, each row in
// two accumulators (even and odd 8-float chunks), the four rows' sums
// reduced together by VHADDPS into one XMM. (The AVX2 fallback before it,
// dot4AVX2, widens to float64: twice the instructions per element, where
// an RNN step's R is L2-resident and the loop is bound by them.)
func gemvRows256() {
	TEXT("gemvRowsAVX2", NOSPLIT, "func(y, x, a *float32, lda, n, k int)")
	Doc(
		"gemvRowsAVX2 adds sum_p x[p]*a[j*lda+p] (p in [0, k)) to y[j] for j in",
		"[0, n), n a multiple of 4, k a multiple of 8, summed in float32.",
		"",
		"Requires: AVX, FMA",
	)
	Pragma("noescape")
	y := Load(Param("y"), GP64())
	x := Load(Param("x"), GP64())
	r0 := Load(Param("a"), GP64())
	lda := Load(Param("lda"), GP64())
	n := Load(Param("n"), GP64())
	k := Load(Param("k"), GP64())
	SHLQ(U8(2), lda)
	k16 := GP64()
	MOVQ(k, k16)
	ANDQ(I32(-16), k16)
	r1, r2, r3 := GP64(), GP64(), GP64()
	Label("gr2_rows")
	CMPQ(n, U8(4))
	JL(LabelRef("gr2_done"))
	LEAQ(Mem{Base: r0, Index: lda, Scale: 1}, r1)
	LEAQ(Mem{Base: r1, Index: lda, Scale: 1}, r2)
	LEAQ(Mem{Base: r2, Index: lda, Scale: 1}, r3)
	rows := []Register{r0, r1, r2, r3}
	acc := make([]VecVirtual, 8)
	for j := range acc {
		acc[j] = YMM()
		VXORPS(acc[j], acc[j], acc[j])
	}
	i := GP64()
	XORQ(i, i)
	Label("gr2_loop16")
	CMPQ(i, k16)
	JGE(LabelRef("gr2_tail"))
	x0, x1 := YMM(), YMM()
	VMOVUPS(Mem{Base: x, Index: i, Scale: 4}, x0)
	VMOVUPS(Mem{Base: x, Index: i, Scale: 4, Disp: 32}, x1)
	for r, row := range rows {
		VFMADD231PS(Mem{Base: row, Index: i, Scale: 4}, x0, acc[r])
		VFMADD231PS(Mem{Base: row, Index: i, Scale: 4, Disp: 32}, x1, acc[4+r])
	}
	ADDQ(U8(16), i)
	JMP(LabelRef("gr2_loop16"))
	Label("gr2_tail")
	CMPQ(i, k)
	JGE(LabelRef("gr2_sum"))
	xt := YMM()
	VMOVUPS(Mem{Base: x, Index: i, Scale: 4}, xt)
	for r, row := range rows {
		VFMADD231PS(Mem{Base: row, Index: i, Scale: 4}, xt, acc[r])
	}
	Label("gr2_sum")
	for r := range rows {
		VADDPS(acc[4+r], acc[r], acc[r])
	}
	t01, t23 := YMM(), YMM()
	VHADDPS(acc[1], acc[0], t01)
	VHADDPS(acc[3], acc[2], t23)
	VHADDPS(t23, t01, t01) // lane q of each 128-bit half: row q's partial sum
	hi := XMM()
	VEXTRACTF128(U8(1), t01, hi)
	VADDPS(hi, t01.AsX(), hi)
	VADDPS(Mem{Base: y}, hi, hi)
	VMOVUPS(hi, Mem{Base: y})
	ADDQ(U8(16), y)
	LEAQ(Mem{Base: r3, Index: lda, Scale: 1}, r0)
	SUBQ(U8(4), n)
	JMP(LabelRef("gr2_rows"))
	Label("gr2_done")
	VZEROUPPER()
	RET()
}
