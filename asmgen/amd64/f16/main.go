// Command f16 generates the F16C conversions of package templates:
// f16to32, IEEE half to float32 (VCVTPH2PS, exact), and f32to16, float32
// to half rounded to nearest even (VCVTPS2PH with immediate 0). They widen
// the f16-stored weights at New (templates/k_half.go's WidenF16) and run
// Cast between float32 and float16.
//
//	go generate ./asmgen/amd64/f16
package main

//go:generate go run . -pkg templates -out ../../../templates/asm_f16_amd64.s -stubs ../../../templates/asm_f16_amd64.go

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

func main() {
	ConstraintExpr("amd64,!purego")
	widen()
	narrow()
	Generate()
}

// unroll is the number of 8-lane blocks one loop iteration converts: four
// independent conversions cover VCVTPH2PS's latency.
const unroll = 4

// widen emits f16to32: n8 blocks of 8 halves from src into 8 float32 each
// at dst. The main loop takes unroll blocks per iteration, the tail one.
func widen() {
	TEXT("f16to32", NOSPLIT, "func(dst *float32, src *uint16, n8 int)")
	Doc(
		"f16to32 widens n8*8 IEEE halves from src to float32 at dst (exact:",
		"subnormals, Inf and NaN payloads kept; a signalling NaN is quieted).",
		"",
		"Requires: AVX, F16C",
	)
	Pragma("noescape")
	dst := Load(Param("dst"), GP64())
	src := Load(Param("src"), GP64())
	n := Load(Param("n8"), GP64())
	Comment("Blocks of unroll*8 halves.")
	Label("f16to32_big")
	CMPQ(n, U8(unroll))
	JB(LabelRef("f16to32_tail"))
	ys := []VecPhysical{Y0, Y1, Y2, Y3}
	for i := 0; i < unroll; i++ {
		VCVTPH2PS(Mem{Base: src, Disp: 16 * i}, ys[i])
	}
	for i := 0; i < unroll; i++ {
		VMOVUPS(ys[i], Mem{Base: dst, Disp: 32 * i})
	}
	ADDQ(U8(16*unroll), src)
	ADDQ(U8(32*unroll), dst)
	SUBQ(U8(unroll), n)
	JMP(LabelRef("f16to32_big"))
	Comment("One block of 8 at a time.")
	Label("f16to32_tail")
	TESTQ(n, n)
	JZ(LabelRef("f16to32_done"))
	VCVTPH2PS(Mem{Base: src}, Y0)
	VMOVUPS(Y0, Mem{Base: dst})
	ADDQ(U8(16), src)
	ADDQ(U8(32), dst)
	DECQ(n)
	JMP(LabelRef("f16to32_tail"))
	Label("f16to32_done")
	VZEROUPPER()
	RET()
}

// narrow emits f32to16: n8 blocks of 8 float32 from src rounded to halves
// at dst, to nearest even (immediate 0: round by the immediate, not MXCSR).
// It ORs each block's unordered-compare mask into Y8 and returns whether
// any input was a NaN, so that the caller rewrites NaNs (VCVTPS2PH keeps
// their payloads) only when there are any.
func narrow() {
	TEXT("f32to16", NOSPLIT, "func(dst *uint16, src *float32, n8 int) (nan int32)")
	Doc(
		"f32to16 rounds n8*8 float32 from src to IEEE halves at dst: nearest",
		"even, overflow to Inf, results below the half range to subnormals or",
		"zero, a NaN quieted with its payload's top bits (VCVTPS2PH, imm 0;",
		"f32ToF16s then writes NaNs as F32ToF16 does). It returns nonzero when",
		"some input was a NaN.",
		"",
		"Requires: AVX, F16C",
	)
	Pragma("noescape")
	dst := Load(Param("dst"), GP64())
	src := Load(Param("src"), GP64())
	n := Load(Param("n8"), GP64())
	VXORPS(Y8, Y8, Y8)
	Comment("Blocks of unroll*8 floats.")
	Label("f32to16_big")
	CMPQ(n, U8(unroll))
	JB(LabelRef("f32to16_tail"))
	ys := []VecPhysical{Y0, Y1, Y2, Y3}
	xs := []VecPhysical{X4, X5, X6, X7}
	for i := 0; i < unroll; i++ {
		VMOVUPS(Mem{Base: src, Disp: 32 * i}, ys[i])
	}
	for i := 0; i < unroll; i++ {
		VCVTPS2PH(U8(0), ys[i], xs[i])
	}
	Comment("NaN lanes: unordered with themselves.")
	for i := 0; i < unroll; i++ {
		VCMPPS(U8(3), ys[i], ys[i], ys[i])
		VORPS(ys[i], Y8, Y8)
	}
	for i := 0; i < unroll; i++ {
		VMOVDQU(xs[i], Mem{Base: dst, Disp: 16 * i})
	}
	ADDQ(U8(32*unroll), src)
	ADDQ(U8(16*unroll), dst)
	SUBQ(U8(unroll), n)
	JMP(LabelRef("f32to16_big"))
	Comment("One block of 8 at a time.")
	Label("f32to16_tail")
	TESTQ(n, n)
	JZ(LabelRef("f32to16_done"))
	VMOVUPS(Mem{Base: src}, Y0)
	VCVTPS2PH(U8(0), Y0, X4)
	VCMPPS(U8(3), Y0, Y0, Y0)
	VORPS(Y0, Y8, Y8)
	VMOVDQU(X4, Mem{Base: dst})
	ADDQ(U8(32), src)
	ADDQ(U8(16), dst)
	DECQ(n)
	JMP(LabelRef("f32to16_tail"))
	Label("f32to16_done")
	r := GP32()
	VMOVMSKPS(Y8, r)
	VZEROUPPER()
	Store(r, Return("nan"))
	RET()
}
