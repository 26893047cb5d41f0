// Command wnhwc writes templates/asm_wnhwc_arm64.s and its Go stubs: the
// NEON F(2x2, 3x3) Winograd transforms of the NHWC convolution
// (templates/k_conv_winograd_nhwc.go), four channels in the lanes of a
// vector. They compute exactly what their Go twins wnInputGo and
// wnOutputGo (f = 2) do, in the same order (adds and subtracts only, no
// fused multiply-add), so results are bit-identical; the amd64 kernels
// (asmgen/amd64/wnhwc) have the same signatures.
//
//	go generate ./asmgen/arm64/wnhwc
package main

//go:generate go run . -pkg templates -out ../../../templates/asm_wnhwc_arm64.s -stubs ../../../templates/asm_wnhwc_arm64.go

import (
	"fmt"

	. "github.com/cuvil/cuvil/asmgen/arm64/build"
)

func main() {
	f := NewFile("arm64 && !purego")
	input2(f)
	output2(f)
	f.Generate()
}

// input2 emits wnInput2NEON: per 4 channels, the 16 pixels d (4x4,
// row-major) of one input window, t = B^T d (columns), then v = t B (rows),
// as wgInputTile2.
func input2(f *File) {
	fn := f.Func("wnInput2NEON", `sets v[xi*ldv+j] = (B^T d B)[xi] for j in [0, nv), nv a multiple of 4,
where d[k] = src[k][j] for the 16 pixels k of a 4x4 input window:
Winograd F(2x2, 3x3)'s input transform with channels in the lanes.`, "ASIMD")
	av, ald, asrc, anv := fn.Arg("v", "*float32"), fn.Arg("ldv", "int"), fn.Arg("src", "*[36]*float32"), fn.Arg("nv", "int")
	fn.Comment("R0-R15 = src[0..15] (post-incremented), R16 = &v[j], R17 = ldv in bytes, R19 = nv left")
	fn.Load(asrc, "R20")
	for k := 0; k < 16; k += 2 {
		fn.I("LDP", fmt.Sprintf("%d(R20)", 8*k), fmt.Sprintf("(R%d, R%d)", k, k+1))
	}
	fn.Load(av, "R16")
	fn.Load(ald, "R17")
	fn.I("LSL", "$2", "R17", "R17")
	fn.Load(anv, "R19")
	t := fn.AllocVs(16) // t[r*4+q]
	d := fn.AllocVs(4)
	o := fn.AllocVs(4)
	fn.Label("loop")
	fn.I("CMP", "$4", "R19")
	fn.I("BLT", "done")
	fn.Comment("Columns: t = B^T d")
	for q := 0; q < 4; q++ {
		for r := 0; r < 4; r++ {
			fn.I("VLD1.P", fmt.Sprintf("16(R%d)", r*4+q), List(d[r]))
		}
		fn.Word(FSUB(t[q], d[0], d[2]))
		fn.Word(FADD(t[4+q], d[1], d[2]))
		fn.Word(FSUB(t[8+q], d[2], d[1]))
		fn.Word(FSUB(t[12+q], d[1], d[3]))
	}
	fn.Comment("Rows: v = t B, point r*4+c at v + (r*4+c)*ldv")
	fn.I("MOVD", "R16", "R20")
	for r := 0; r < 4; r++ {
		s := t[r*4 : r*4+4]
		fn.Word(FSUB(o[0], s[0], s[2]))
		fn.Word(FADD(o[1], s[1], s[2]))
		fn.Word(FSUB(o[2], s[2], s[1]))
		fn.Word(FSUB(o[3], s[1], s[3]))
		for c := 0; c < 4; c++ {
			fn.I("VST1", List(o[c]), "(R20)")
			fn.I("ADD", "R17", "R20", "R20")
		}
	}
	fn.I("ADD", "$16", "R16", "R16")
	fn.I("SUB", "$4", "R19", "R19")
	fn.I("B", "loop")
	fn.Label("done")
	fn.I("RET")
}

// output2 emits wnOutput2NEON: per 4 channels, the 16 GEMM results s
// (4x4), t = A^T s (2x4), o = t A (2x2), then FusedConv's epilogue per
// pixel, as wnOutputGo.
func output2(f *File) {
	fn := f.Func("wnOutput2NEON", `sets dst[p][j] = clamp(o[p] + bias[j] (+ z[p][j] when zmode is 1)) (+ z[p][j] when
zmode is 2) for j in [0, nv), nv a multiple of 4, p in [0, 4), where o = A^T s A and
s[xi] = mo[xi*ldm+j]: Winograd F(2x2, 3x3)'s output transform with channels
in the lanes and FusedConv's epilogue; clamp is min(max(., lo), hi).`, "ASIMD")
	ad, amo, ald, ab, az := fn.Arg("dst", "*[16]*float32"), fn.Arg("mo", "*float32"), fn.Arg("ldm", "int"), fn.Arg("bias", "*float32"), fn.Arg("z", "*[16]*float32")
	anv, azm, alo, ahi := fn.Arg("nv", "int"), fn.Arg("zmode", "int"), fn.Arg("lo", "float32"), fn.Arg("hi", "float32")
	fn.Comment("R0-R3 = dst[0..3], R4-R7 = z[0..3] (when zmode is not 0), all post-incremented;")
	fn.Comment("R8 = &mo[j], R9 = ldm in bytes, R10 = &bias[j], R11 = nv left, R12 = zmode")
	fn.Load(ad, "R20")
	fn.I("LDP", "0(R20)", "(R0, R1)")
	fn.I("LDP", "16(R20)", "(R2, R3)")
	fn.Load(azm, "R12")
	fn.Load(az, "R20")
	fn.I("CBZ", "R12", "noz")
	fn.I("LDP", "0(R20)", "(R4, R5)")
	fn.I("LDP", "16(R20)", "(R6, R7)")
	fn.Label("noz")
	fn.Load(amo, "R8")
	fn.Load(ald, "R9")
	fn.I("LSL", "$2", "R9", "R9")
	fn.Load(ab, "R10")
	fn.Load(anv, "R11")
	lo, hi := fn.AllocV(), fn.AllocV()
	fn.Load(alo, lo.F())
	fn.I("VDUP", fmt.Sprintf("V%d.S[0]", lo), lo.S4())
	fn.Load(ahi, hi.F())
	fn.I("VDUP", fmt.Sprintf("V%d.S[0]", hi), hi.S4())
	s := fn.AllocVs(16)
	t := fn.AllocVs(8) // t[r*4+q], r in [0, 2)
	o := fn.AllocVs(4)
	b, zv := fn.AllocV(), fn.AllocV()
	fn.Label("loop")
	fn.I("CMP", "$4", "R11")
	fn.I("BLT", "done")
	fn.Comment("s[xi] = mo[xi*ldm+j]")
	fn.I("MOVD", "R8", "R13")
	for xi := 0; xi < 16; xi++ {
		fn.I("VLD1", "(R13)", List(s[xi]))
		if xi < 15 {
			fn.I("ADD", "R9", "R13", "R13")
		}
	}
	fn.Comment("Columns: t = A^T s")
	for q := 0; q < 4; q++ {
		m0, m1, m2, m3 := s[q], s[4+q], s[8+q], s[12+q]
		fn.Word(FADD(t[q], m1, m0))
		fn.Word(FADD(t[q], t[q], m2))
		fn.Word(FSUB(t[4+q], m1, m2))
		fn.Word(FSUB(t[4+q], t[4+q], m3))
	}
	fn.Comment("Rows: o = t A")
	for r := 0; r < 2; r++ {
		m := t[r*4 : r*4+4]
		fn.Word(FADD(o[r*2], m[1], m[0]))
		fn.Word(FADD(o[r*2], o[r*2], m[2]))
		fn.Word(FSUB(o[r*2+1], m[1], m[2]))
		fn.Word(FSUB(o[r*2+1], o[r*2+1], m[3]))
	}
	fn.Comment("Epilogue: bias, residual (zmode 1), clamp, residual (zmode 2), store")
	fn.I("VLD1.P", "16(R10)", List(b))
	for p := 0; p < 4; p++ {
		fn.Word(FADD(o[p], o[p], b))
		fn.I("CMP", "$1", "R12")
		fn.I("BNE", fmt.Sprintf("clamp%d", p))
		fn.I("VLD1", fmt.Sprintf("(R%d)", 4+p), List(zv))
		fn.Word(FADD(o[p], o[p], zv))
		fn.Label(fmt.Sprintf("clamp%d", p))
		fn.Word(FMAX(o[p], o[p], lo)) // NaN passes through, as in Go's max
		fn.Word(FMIN(o[p], o[p], hi))
		fn.I("CMP", "$2", "R12")
		fn.I("BNE", fmt.Sprintf("store%d", p))
		fn.I("VLD1", fmt.Sprintf("(R%d)", 4+p), List(zv))
		fn.Word(FADD(o[p], o[p], zv))
		fn.Label(fmt.Sprintf("store%d", p))
		fn.I("VST1.P", List(o[p]), fmt.Sprintf("16(R%d)", p))
	}
	fn.I("CBZ", "R12", "next")
	for p := 0; p < 4; p++ {
		fn.I("ADD", "$16", fmt.Sprintf("R%d", 4+p), fmt.Sprintf("R%d", 4+p))
	}
	fn.Label("next")
	fn.I("ADD", "$16", "R8", "R8")
	fn.I("SUB", "$4", "R11", "R11")
	fn.I("B", "loop")
	fn.Label("done")
	fn.I("RET")
}
