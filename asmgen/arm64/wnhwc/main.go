// Command wnhwc writes templates/asm_wnhwc_arm64.s and its Go stubs: the
// NEON F(2x2, 3x3) and F(4x4, 3x3) Winograd transforms of the NHWC
// convolution (templates/k_conv_winograd_nhwc.go), four channels in the
// lanes of a vector. F(2x2) computes exactly what the Go twins wnInputGo
// and wnOutputGo do, in the same order (adds and subtracts only), so its
// results are bit-identical; F(4x4) follows wgInputTile/wgOutputTile's
// order with separate multiplies and adds (no fused multiply-add), which
// the Go compiler may fuse in the twins, so the two agree within FMA
// rounding. The amd64 kernels (asmgen/amd64/wnhwc) have the same
// signatures.
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
	input4(f)
	output4(f)
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

// dupConst sets all lanes of v to the float immediate c (one FMOV can
// encode 2, 4, 5 and 8).
func dupConst(fn *Func, v V, c string) {
	fn.I("FMOVS", "$"+c, v.F())
	fn.I("VDUP", fmt.Sprintf("V%d.S[0]", v), v.S4())
}

// bt6 emits o = B^T d for one column (or row) of 6 vectors, as
// wgInputTile: t0, t1 = d4-4*d2, d3-4*d1; t2, t3 = d4-d2, 2*(d3-d1);
// o = {4*d0-5*d2+d4, t0+t1, t0-t1, t2+t3, t2-t3, 4*d1-5*d3+d5}; x, y are
// scratch, c4 and c5 hold 4 and 5. o may not overlap d.
func bt6(fn *Func, o, d []V, x, y, c4, c5 V) {
	// o[1..4] first from t0..t3 held in o[0], o[5], x, y.
	fn.Word(FMUL(x, c4, d[2]))
	fn.Word(FSUB(o[0], d[4], x)) // t0
	fn.Word(FMUL(x, c4, d[1]))
	fn.Word(FSUB(o[5], d[3], x)) // t1
	fn.Word(FADD(o[1], o[0], o[5]))
	fn.Word(FSUB(o[2], o[0], o[5]))
	fn.Word(FSUB(x, d[4], d[2])) // t2
	fn.Word(FSUB(y, d[3], d[1]))
	fn.Word(FADD(y, y, y)) // t3
	fn.Word(FADD(o[3], x, y))
	fn.Word(FSUB(o[4], x, y))
	fn.Word(FMUL(x, c4, d[0]))
	fn.Word(FMUL(y, c5, d[2]))
	fn.Word(FSUB(o[0], x, y))
	fn.Word(FADD(o[0], o[0], d[4]))
	fn.Word(FMUL(x, c4, d[1]))
	fn.Word(FMUL(y, c5, d[3]))
	fn.Word(FSUB(o[5], x, y))
	fn.Word(FADD(o[5], o[5], d[5]))
}

// input4 emits wnInput4NEON: per 4 channels, the columns of the 6x6 window
// (t = B^T d) are written to v, then each row of v is read back and
// transformed in place (v = t B), as wgInputTile.
func input4(f *File) {
	fn := f.Func("wnInput4NEON", `sets v[xi*ldv+j] = (B^T d B)[xi] for j in [0, nv), nv a multiple of 4,
where d[k] = src[k][j] for the 36 pixels k of a 6x6 input window:
Winograd F(4x4, 3x3)'s input transform with channels in the lanes.`, "ASIMD")
	av, ald, asrc, anv := fn.Arg("v", "*float32"), fn.Arg("ldv", "int"), fn.Arg("src", "*[36]*float32"), fn.Arg("nv", "int")
	fn.Comment("R0 = &src, R1 = j in bytes, R2 = &v[j], R3 = ldv in bytes, R4 = nv left, R5 = ldv*6 in bytes")
	fn.Load(asrc, "R0")
	fn.I("MOVD", "ZR", "R1")
	fn.Load(av, "R2")
	fn.Load(ald, "R3")
	fn.I("LSL", "$2", "R3", "R3")
	fn.Load(anv, "R4")
	fn.I("MOVD", "$6", "R5")
	fn.I("MUL", "R3", "R5", "R5")
	c4, c5 := fn.AllocV(), fn.AllocV()
	dupConst(fn, c4, "4.0")
	dupConst(fn, c5, "5.0")
	d, o := fn.AllocVs(6), fn.AllocVs(6)
	x, y := fn.AllocV(), fn.AllocV()
	fn.Label("loop")
	fn.I("CMP", "$4", "R4")
	fn.I("BLT", "done")
	fn.Comment("Columns: t = B^T d, point r*6+q to v + (r*6+q)*ldv")
	for q := 0; q < 6; q++ {
		for r := 0; r < 6; r++ {
			fn.I("MOVD", fmt.Sprintf("%d(R0)", 8*(r*6+q)), "R6")
			fn.I("ADD", "R1", "R6", "R6")
			fn.I("VLD1", "(R6)", List(d[r]))
		}
		bt6(fn, o, d, x, y, c4, c5)
		fn.I("MOVD", "R2", "R6")
		if q > 0 {
			fn.I("MOVD", fmt.Sprintf("$%d", q), "R7")
			fn.I("MADD", "R3", "R6", "R7", "R6")
		}
		for r := 0; r < 6; r++ {
			fn.I("VST1", List(o[r]), "(R6)")
			if r < 5 {
				fn.I("ADD", "R5", "R6", "R6")
			}
		}
	}
	fn.Comment("Rows: v = t B, row r in place")
	fn.I("MOVD", "R2", "R6")
	for r := 0; r < 6; r++ {
		fn.I("MOVD", "R6", "R7")
		for c := 0; c < 6; c++ {
			fn.I("VLD1", "(R7)", List(d[c]))
			fn.I("ADD", "R3", "R7", "R7")
		}
		bt6(fn, o, d, x, y, c4, c5)
		for c := 0; c < 6; c++ {
			fn.I("VST1", List(o[c]), "(R6)")
			fn.I("ADD", "R3", "R6", "R6")
		}
	}
	fn.I("ADD", "$16", "R1", "R1")
	fn.I("ADD", "$16", "R2", "R2")
	fn.I("SUB", "$4", "R4", "R4")
	fn.I("B", "loop")
	fn.Label("done")
	fn.I("RET")
}

// at6 emits the rows r0, r0+1 of o = A^T m for one column of 6 vectors, as
// wgOutputTile: a, b = m1+m2, m1-m2; c, d = m3+m4, m3-m4; rows
// {m0+a+c, b+2*d, a+4*c, b+8*d+m5}. x, y, u, w are scratch; k holds
// 2, 4, 8.
func at6(fn *Func, o []V, r0 int, m []V, x, y, u, w V, k [3]V) {
	fn.Word(FADD(x, m[1], m[2])) // a
	fn.Word(FSUB(y, m[1], m[2])) // b
	fn.Word(FADD(u, m[3], m[4])) // c
	fn.Word(FSUB(w, m[3], m[4])) // d
	for i, r := range []int{r0, r0 + 1} {
		switch r {
		case 0:
			fn.Word(FADD(o[i], m[0], x))
			fn.Word(FADD(o[i], o[i], u))
		case 1:
			fn.Word(FMUL(o[i], k[0], w))
			fn.Word(FADD(o[i], y, o[i]))
		case 2:
			fn.Word(FMUL(o[i], k[1], u))
			fn.Word(FADD(o[i], x, o[i]))
		case 3:
			fn.Word(FMUL(o[i], k[2], w))
			fn.Word(FADD(o[i], y, o[i]))
			fn.Word(FADD(o[i], o[i], m[5]))
		}
	}
}

// output4 emits wnOutput4NEON: per 4 channels and per half of the output
// rows (0-1, then 2-3), t's two rows = A^T s (12 vectors; s is read
// twice), then o's two rows = t A and FusedConv's epilogue per pixel, as
// wnOutputGo.
func output4(f *File) {
	fn := f.Func("wnOutput4NEON", `sets dst[p][j] = clamp(o[p] + bias[j] (+ z[p][j] when zmode is 1)) (+ z[p][j] when
zmode is 2) for j in [0, nv), nv a multiple of 4, p in [0, 16), where o = A^T s A and
s[xi] = mo[xi*ldm+j]: Winograd F(4x4, 3x3)'s output transform with channels
in the lanes and FusedConv's epilogue; clamp is min(max(., lo), hi).`, "ASIMD")
	ad, amo, ald, ab, az := fn.Arg("dst", "*[16]*float32"), fn.Arg("mo", "*float32"), fn.Arg("ldm", "int"), fn.Arg("bias", "*float32"), fn.Arg("z", "*[16]*float32")
	anv, azm, alo, ahi := fn.Arg("nv", "int"), fn.Arg("zmode", "int"), fn.Arg("lo", "float32"), fn.Arg("hi", "float32")
	fn.Comment("R0 = &dst, R1 = &z, R2 = j in bytes, R3 = &mo[j], R4 = ldm in bytes, R5 = &bias[j], R8 = nv left, R9 = zmode, R10 = ldm*6 in bytes")
	fn.Load(ad, "R0")
	fn.Load(az, "R1")
	fn.I("MOVD", "ZR", "R2")
	fn.Load(amo, "R3")
	fn.Load(ald, "R4")
	fn.I("LSL", "$2", "R4", "R4")
	fn.Load(ab, "R5")
	fn.Load(anv, "R8")
	fn.Load(azm, "R9")
	fn.I("MOVD", "$6", "R10")
	fn.I("MUL", "R4", "R10", "R10")
	lo, hi := fn.AllocV(), fn.AllocV()
	fn.Load(alo, lo.F())
	fn.I("VDUP", fmt.Sprintf("V%d.S[0]", lo), lo.S4())
	fn.Load(ahi, hi.F())
	fn.I("VDUP", fmt.Sprintf("V%d.S[0]", hi), hi.S4())
	var k [3]V
	for i, c := range []string{"2.0", "4.0", "8.0"} {
		k[i] = fn.AllocV()
		dupConst(fn, k[i], c)
	}
	t := fn.AllocVs(12) // t[i*6+q]: row r0+i of A^T s
	m := fn.AllocVs(6)
	x, y, u, w := fn.AllocV(), fn.AllocV(), fn.AllocV(), fn.AllocV()
	b, zv := fn.AllocV(), fn.AllocV()
	fn.Label("loop")
	fn.I("CMP", "$4", "R8")
	fn.I("BLT", "done")
	fn.I("VLD1.P", "16(R5)", List(b))
	for half := 0; half < 2; half++ {
		r0 := 2 * half
		fn.Comment("Rows %d-%d of t = A^T s", r0, r0+1)
		for q := 0; q < 6; q++ {
			fn.I("MOVD", "R3", "R6")
			if q > 0 {
				fn.I("MOVD", fmt.Sprintf("$%d", q), "R7")
				fn.I("MADD", "R4", "R6", "R7", "R6")
			}
			for r := 0; r < 6; r++ {
				fn.I("VLD1", "(R6)", List(m[r]))
				if r < 5 {
					fn.I("ADD", "R10", "R6", "R6")
				}
			}
			at6(fn, []V{t[q], t[6+q]}, r0, m, x, y, u, w, k)
		}
		for i := 0; i < 2; i++ {
			r := r0 + i
			fn.Comment("Row %d of o = t A and the epilogue", r)
			row := t[i*6 : i*6+6]
			fn.Word(FADD(x, row[1], row[2]))    // a
			fn.Word(FSUB(y, row[1], row[2]))    // b
			fn.Word(FADD(m[0], row[3], row[4])) // c
			fn.Word(FSUB(m[1], row[3], row[4])) // d
			for c := 0; c < 4; c++ {
				v := m[2]
				switch c {
				case 0:
					fn.Word(FADD(v, row[0], x))
					fn.Word(FADD(v, v, m[0]))
				case 1:
					fn.Word(FMUL(v, k[0], m[1]))
					fn.Word(FADD(v, y, v))
				case 2:
					fn.Word(FMUL(v, k[1], m[0]))
					fn.Word(FADD(v, x, v))
				case 3:
					fn.Word(FMUL(v, k[2], m[1]))
					fn.Word(FADD(v, y, v))
					fn.Word(FADD(v, v, row[5]))
				}
				p := r*4 + c
				l := fmt.Sprintf("%d", p)
				fn.Word(FADD(v, v, b))
				fn.I("CMP", "$1", "R9")
				fn.I("BNE", "clamp"+l)
				fn.I("MOVD", fmt.Sprintf("%d(R1)", 8*p), "R6")
				fn.I("ADD", "R2", "R6", "R6")
				fn.I("VLD1", "(R6)", List(zv))
				fn.Word(FADD(v, v, zv))
				fn.Label("clamp" + l)
				fn.Word(FMAX(v, v, lo)) // NaN passes through, as in Go's max
				fn.Word(FMIN(v, v, hi))
				fn.I("CMP", "$2", "R9")
				fn.I("BNE", "store"+l)
				fn.I("MOVD", fmt.Sprintf("%d(R1)", 8*p), "R6")
				fn.I("ADD", "R2", "R6", "R6")
				fn.I("VLD1", "(R6)", List(zv))
				fn.Word(FADD(v, v, zv))
				fn.Label("store" + l)
				fn.I("MOVD", fmt.Sprintf("%d(R0)", 8*p), "R6")
				fn.I("ADD", "R2", "R6", "R6")
				fn.I("VST1", List(v), "(R6)")
			}
		}
	}
	fn.I("ADD", "$16", "R2", "R2")
	fn.I("ADD", "$16", "R3", "R3")
	fn.I("SUB", "$4", "R8", "R8")
	fn.I("B", "loop")
	fn.Label("done")
	fn.I("RET")
}
