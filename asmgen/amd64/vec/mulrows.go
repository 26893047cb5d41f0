package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
)

// mul emits mulAVX: y[i] = a[i] * b[i] (an input Scale's per-channel gate
// on one NHWC pixel row, k_conv_nhwc.go), 4 vectors at a time, then 1.
func mul() {
	TEXT("mulAVX", NOSPLIT, "func(y, a, b *float32, n int)")
	Doc(
		"mulAVX sets y[i] = a[i] * b[i] for i in [0, n), n a multiple of 8.",
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
	last := GP64()
	MOVQ(n, last)
	SUBQ(U8(32), last)
	body := func(vecs int) {
		for j := 0; j < vecs; j++ {
			v := YMM()
			VMOVUPS(Mem{Base: a, Index: i, Scale: 4, Disp: 32 * j}, v)
			VMULPS(Mem{Base: b, Index: i, Scale: 4, Disp: 32 * j}, v, v)
			VMOVUPS(v, Mem{Base: y, Index: i, Scale: 4, Disp: 32 * j})
		}
		ADDQ(U8(8*vecs), i)
	}
	Label("mul_loop4")
	CMPQ(i, last)
	JG(LabelRef("mul_loop1"))
	body(4)
	JMP(LabelRef("mul_loop4"))
	Label("mul_loop1")
	CMPQ(i, n)
	JGE(LabelRef("mul_done"))
	body(1)
	JMP(LabelRef("mul_loop1"))
	Label("mul_done")
	VZEROUPPER()
	RET()
}

// mulRows16 emits mulRows16AVX: rows of 16 floats (one packed panel row
// of sgemmPackB's W') each times its own scalar, two rows at a time.
func mulRows16() {
	TEXT("mulRows16AVX", NOSPLIT, "func(y, x, s *float32, rows int)")
	Doc(
		"mulRows16AVX sets y[16r+j] = x[16r+j] * s[r] for r in [0, rows), j in [0, 16).",
		"",
		"Requires: AVX",
	)
	Pragma("noescape")
	y := Load(Param("y"), GP64())
	x := Load(Param("x"), GP64())
	s := Load(Param("s"), GP64())
	rows := Load(Param("rows"), GP64())
	r := GP64()
	XORQ(r, r)
	last := GP64()
	MOVQ(rows, last)
	SUBQ(U8(2), last)
	body := func(nr int) {
		for q := 0; q < nr; q++ {
			g := YMM()
			VBROADCASTSS(Mem{Base: s, Index: r, Scale: 4, Disp: 4 * q}, g)
			for h := 0; h < 2; h++ {
				v := YMM()
				VMULPS(Mem{Base: x, Disp: 64*q + 32*h}, g, v)
				VMOVUPS(v, Mem{Base: y, Disp: 64*q + 32*h})
			}
		}
		ADDQ(U8(nr), r)
		ADDQ(U32(64*nr), x)
		ADDQ(U32(64*nr), y)
	}
	Label("mulrows_loop2")
	CMPQ(r, last)
	JG(LabelRef("mulrows_loop1"))
	body(2)
	JMP(LabelRef("mulrows_loop2"))
	Label("mulrows_loop1")
	CMPQ(r, rows)
	JGE(LabelRef("mulrows_done"))
	body(1)
	JMP(LabelRef("mulrows_loop1"))
	Label("mulrows_done")
	VZEROUPPER()
	RET()
}
