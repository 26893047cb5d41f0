// Command wino generates the AVX2/FMA Winograd F(4x4, 3x3) transforms of
// package templates (k_conv_winograd.go) and their Go declarations, with avo's
// build API. Both kernels work on 8 tiles at once, one tile per vector
// lane, so the transforms run on whole vectors; 8x8 transposes move the
// tiles' rows in and out of the lanes. Their pure-Go twins (wgInput8Go,
// wgOutput8Go in templates/k_conv_winograd.go) are the test references.
//
//	go generate ./asmgen/amd64/wino
package main

//go:generate go run . -pkg templates -out ../../../templates/asm_wino_amd64.s -stubs ../../../templates/asm_wino_amd64.go

import (
	"math"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

func main() {
	ConstraintExpr("amd64,!purego")
	constants()
	input()
	output()
	Generate()
}

// consts holds the transforms' multipliers as 8 equal float32 lanes each,
// so they can be memory operands of the FMAs.
var consts Mem

var constList = []float32{2, 4, 5, 8}

func constants() {
	consts = GLOBL("wgConsts", RODATA|NOPTR)
	for i, v := range constList {
		for l := 0; l < 8; l++ {
			DATA(32*i+4*l, U32(math.Float32bits(v)))
		}
	}
}

// k is the memory operand of the constant v.
func k(v float32) Mem {
	for i, c := range constList {
		if c == v {
			return consts.Offset(32 * i)
		}
	}
	panic("no constant")
}

// transpose8 transposes the 8x8 matrix whose rows are in (even rows must
// be registers, odd rows may be memory): out[q] lane j = in[j] lane q.
// Only the outputs with want[q] are computed.
func transpose8(in [8]Op, want [8]bool) [8]VecVirtual {
	var t [8]VecVirtual
	for i := 0; i < 8; i += 2 {
		t[i], t[i+1] = YMM(), YMM()
		VUNPCKLPS(in[i+1], in[i], t[i])   // r0[0] r1[0] r0[1] r1[1] | [4] [5]
		VUNPCKHPS(in[i+1], in[i], t[i+1]) // r0[2] r1[2] r0[3] r1[3] | [6] [7]
	}
	var u [8]VecVirtual
	for i := 0; i < 8; i += 4 {
		for h := 0; h < 2; h++ {
			u[i+2*h], u[i+2*h+1] = YMM(), YMM()
			VSHUFPS(U8(0x44), t[i+2+h], t[i+h], u[i+2*h])   // column 2h | 2h+4 of 4 rows
			VSHUFPS(U8(0xee), t[i+2+h], t[i+h], u[i+2*h+1]) // column 2h+1 | 2h+5
		}
	}
	var out [8]VecVirtual
	for q := 0; q < 4; q++ {
		if want[q] {
			out[q] = YMM()
			VPERM2F128(U8(0x20), u[4+q], u[q], out[q])
		}
		if want[q+4] {
			out[q+4] = YMM()
			VPERM2F128(U8(0x31), u[4+q], u[q], out[q+4])
		}
	}
	return out
}

// inTransform returns B^T d for the six vectors d of one line of a 6x6
// input window (F(4, 3), points 0, 1, -1, 2, -2, infinity).
func inTransform(d [6]Op) [6]VecVirtual {
	var o [6]VecVirtual
	for i := range o {
		o[i] = YMM()
	}
	// o0 = 4 d0 - 5 d2 + d4, o5 = 4 d1 - 5 d3 + d5
	VMOVUPS(d[4], o[0])
	VFMADD231PS(k(4), d[0], o[0])
	VFNMADD231PS(k(5), d[2], o[0])
	VMOVUPS(d[5], o[5])
	VFMADD231PS(k(4), d[1], o[5])
	VFNMADD231PS(k(5), d[3], o[5])
	// o1, o2 = (d4 - 4 d2) +- (d3 - 4 d1)
	t0, t1 := YMM(), YMM()
	VMOVUPS(d[4], t0)
	VFNMADD231PS(k(4), d[2], t0)
	VMOVUPS(d[3], t1)
	VFNMADD231PS(k(4), d[1], t1)
	VADDPS(t1, t0, o[1])
	VSUBPS(t1, t0, o[2])
	// o3, o4 = (d4 - d2) +- 2 (d3 - d1)
	t2, t3 := YMM(), YMM()
	VSUBPS(d[2], d[4], t2)
	VSUBPS(d[1], d[3], t3)
	VMOVAPS(t2, o[3])
	VFMADD231PS(k(2), t3, o[3])
	VMOVAPS(t2, o[4])
	VFNMADD231PS(k(2), t3, o[4])
	return o
}

// outTransform returns A^T m for the six vectors m of one line of a 6x6
// block of GEMM results.
func outTransform(m [6]Op) [4]VecVirtual {
	a, b, c, d := YMM(), YMM(), YMM(), YMM()
	VADDPS(m[2], m[1], a)
	VSUBPS(m[2], m[1], b)
	VADDPS(m[4], m[3], c)
	VSUBPS(m[4], m[3], d)
	var o [4]VecVirtual
	for i := range o {
		o[i] = YMM()
	}
	VADDPS(a, m[0], o[0])
	VADDPS(c, o[0], o[0]) // m0 + a + c
	VMOVAPS(b, o[1])
	VFMADD231PS(k(2), d, o[1]) // b + 2d
	VMOVAPS(a, o[2])
	VFMADD231PS(k(4), c, o[2]) // a + 4c
	VADDPS(m[5], b, o[3])
	VFMADD231PS(k(8), d, o[3]) // b + 8d + m5
	return o
}

// input emits wgInputAVX2: the input transform of 8 tiles over nc
// channels.
func input() {
	TEXT("wgInputAVX2", 0, "func(dst *float32, ldd int, ldc int, src *[8]*float32, lds int, nc int, cs int)")
	Doc(
		"wgInputAVX2 writes V = B^T d B for 8 tiles (one per lane) and nc",
		"channels: tile j's 6x6 window d of channel c starts at src[j] + c*cs",
		"(rows lds apart; 8 values of each row are read), and V's point xi of",
		"channel c goes to dst[xi*ldd + c*ldc + j].",
		"",
		"Requires: AVX, FMA",
	)
	Pragma("noescape")
	e := AllocLocal(36 * 32) // d B of the 6 rows, 6 vectors each
	lddB := AllocLocal(8)    // ldd in bytes
	ldd6 := AllocLocal(8)    // 6*ldd in bytes
	rs3 := AllocLocal(8)     // 3*lds in bytes
	step := AllocLocal(8)    // cs - 3*lds in bytes
	ldcB := AllocLocal(8)    // ldc in bytes
	dst := Load(Param("dst"), GP64())
	srcp := Load(Param("src"), GP64())
	rs := Load(Param("lds"), GP64())
	nc := Load(Param("nc"), GP64())
	SHLQ(U8(2), rs)

	Comment("Strides in bytes, kept on the stack.")
	t := GP64()
	Load(Param("ldd"), t)
	SHLQ(U8(2), t)
	MOVQ(t, lddB)
	LEAQ(Mem{Base: t, Index: t, Scale: 2}, t)
	SHLQ(U8(1), t)
	MOVQ(t, ldd6)
	LEAQ(Mem{Base: rs, Index: rs, Scale: 2}, t)
	MOVQ(t, rs3)
	t2 := GP64()
	Load(Param("cs"), t2)
	SHLQ(U8(2), t2)
	SUBQ(t, t2)
	MOVQ(t2, step)
	Load(Param("ldc"), t2)
	SHLQ(U8(2), t2)
	MOVQ(t2, ldcB)
	var p [8]GPVirtual
	for j := range p {
		p[j] = GP64()
		MOVQ(Mem{Base: srcp, Disp: 8 * j}, p[j])
	}

	Label("channel")
	Comment("Rows: e[r] = d[r] B, the 8 tiles' row r transposed into lanes.")
	for r := 0; r < 6; r++ {
		if r == 3 {
			for j := range p {
				ADDQ(rs3, p[j])
			}
		}
		var rows [8]Op
		for j := range p {
			m := Mem{Base: p[j]}
			if r%3 > 0 {
				m = Mem{Base: p[j], Index: rs, Scale: uint8(r % 3)}
			}
			if j%2 == 0 {
				y := YMM()
				VMOVUPS(m, y)
				rows[j] = y
			} else {
				rows[j] = m
			}
		}
		d := transpose8(rows, [8]bool{true, true, true, true, true, true})
		o := inTransform([6]Op{d[0], d[1], d[2], d[3], d[4], d[5]})
		for q := range o {
			VMOVUPS(o[q], e.Offset(32*(r*6+q)))
		}
	}
	for j := range p {
		ADDQ(step, p[j])
	}

	Comment("Columns: V[.][q] = B^T e[.][q]; point i*6+q at dst + (i*6+q)*ldd.")
	col, out := GP64(), GP64()
	MOVQ(dst, col)
	for q := 0; q < 6; q++ {
		var d [6]Op
		for r := range d {
			d[r] = e.Offset(32 * (r*6 + q))
		}
		v0 := YMM()
		VMOVUPS(d[0], v0) // the transform's first operands must be registers
		d[0] = v0
		v1 := YMM()
		VMOVUPS(d[1], v1)
		d[1] = v1
		v2 := YMM()
		VMOVUPS(d[2], v2)
		d[2] = v2
		v3 := YMM()
		VMOVUPS(d[3], v3)
		d[3] = v3
		v4 := YMM()
		VMOVUPS(d[4], v4)
		d[4] = v4
		o := inTransform(d)
		MOVQ(col, out)
		for i := range o {
			if i > 0 {
				ADDQ(ldd6, out)
			}
			VMOVUPS(o[i], Mem{Base: out})
		}
		if q < 5 {
			ADDQ(lddB, col)
		}
	}
	ADDQ(ldcB, dst)
	DECQ(nc)
	JNZ(LabelRef("channel"))
	VZEROUPPER()
	RET()
}

// output emits wgOutputAVX2: the output transform of 8 tiles.
func output() {
	TEXT("wgOutputAVX2", 0, "func(dst *[8]*float32, ldy int, src *float32, lds int)")
	Doc(
		"wgOutputAVX2 writes Y = A^T m A for 8 tiles (one per lane): point xi of",
		"tile j is src[xi*lds + j], and Y's row r goes to dst[j][r*ldy : r*ldy+4].",
		"",
		"Requires: AVX, FMA",
	)
	Pragma("noescape")
	u := AllocLocal(24 * 32) // m A of the 6 rows, 4 vectors each
	o := AllocLocal(16 * 32) // A^T m A, point r*4+q
	sp := Load(Param("src"), GP64())
	ls := Load(Param("lds"), GP64())
	SHLQ(U8(2), ls)

	Comment("Rows: u[r] = m[r] A.")
	for r := 0; r < 6; r++ {
		var m [6]Op
		for q := range m {
			y := YMM()
			VMOVUPS(Mem{Base: sp}, y)
			m[q] = y
			if r < 5 || q < 5 {
				ADDQ(ls, sp)
			}
		}
		v := outTransform(m)
		for q := range v {
			VMOVUPS(v[q], u.Offset(32*(r*4+q)))
		}
	}
	Comment("Columns: o[.][q] = A^T u[.][q].")
	for q := 0; q < 4; q++ {
		var m [6]Op
		for r := range m {
			y := YMM()
			VMOVUPS(u.Offset(32*(r*4+q)), y)
			m[r] = y
		}
		v := outTransform(m)
		for r := range v {
			VMOVUPS(v[r], o.Offset(32*(r*4+q)))
		}
	}

	Comment("Tiles out of the lanes: two rows of each tile per transpose.")
	dp := Load(Param("dst"), GP64())
	ly := Load(Param("ldy"), GP64())
	SHLQ(U8(2), ly)
	ly3 := GP64()
	LEAQ(Mem{Base: ly, Index: ly, Scale: 2}, ly3)
	all := [8]bool{true, true, true, true, true, true, true, true}
	for h := 0; h < 2; h++ {
		var rows [8]Op
		for i := range rows {
			m := o.Offset(32 * (h*8 + i))
			if i%2 == 0 {
				y := YMM()
				VMOVUPS(m, y)
				rows[i] = y
			} else {
				rows[i] = m
			}
		}
		tr := transpose8(rows, all)
		for j := range tr {
			y := GP64()
			MOVQ(Mem{Base: dp, Disp: 8 * j}, y)
			if h == 0 {
				VMOVUPS(tr[j].AsX(), Mem{Base: y})
				VEXTRACTF128(U8(1), tr[j], Mem{Base: y, Index: ly, Scale: 1})
			} else {
				VMOVUPS(tr[j].AsX(), Mem{Base: y, Index: ly, Scale: 2})
				VEXTRACTF128(U8(1), tr[j], Mem{Base: y, Index: ly3, Scale: 1})
			}
		}
	}
	VZEROUPPER()
	RET()
}
