// Command wnhwc generates the Winograd F(4x4, 3x3) transforms of package
// templates for NHWC convolutions (k_wnhwc.go) and their Go declarations,
// with avo's build API. Channels lie in the vector lanes, so one tile's
// transform is plain vector adds and FMAs over 8 (AVX2) or 16 (AVX-512)
// channels at a time, no transposes. Their pure-Go twins (wnInputGo,
// wnOutputGo in templates/k_wnhwc.go) are the test references.
//
//	go generate ./asmgen/amd64/wnhwc
package main

//go:generate go run . -pkg templates -out ../../../templates/asm_wnhwc_amd64.s -stubs ../../../templates/asm_wnhwc_amd64.go

import (
	"fmt"
	"math"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

func main() {
	ConstraintExpr("amd64,!purego")
	constants()
	input("wnInputAVX2", 8)
	input("wnInputAVX512", 16)
	output("wnOutputAVX2", 8)
	output("wnOutputAVX512", 16)
	Generate()
}

// consts holds the transforms' multipliers as 8 equal float32 lanes each:
// memory operands of the AVX2 FMAs, broadcast into registers for AVX-512.
var consts Mem

var constList = []float32{2, 4, 5, 8}

func constants() {
	consts = GLOBL("wnConsts", RODATA|NOPTR)
	for i, v := range constList {
		for l := 0; l < 8; l++ {
			DATA(32*i+4*l, U32(math.Float32bits(v)))
		}
	}
}

// paramAddr is the stack address of an argument: float arguments are read
// from there with VEX broadcasts, never avo's legacy-SSE Load (see
// asmgen/amd64).
func paramAddr(name string) Mem {
	b, err := Param(name).Resolve()
	if err != nil {
		panic(err)
	}
	return b.Addr
}

// kern is one kernel's vector width: its register constructor and its
// constants (memory with AVX2, which has only 16 registers; registers
// with AVX-512's 32).
type kern struct {
	vec func() VecVirtual
	k   map[float32]Op
}

func newKern(lanes int) *kern {
	kn := &kern{vec: YMM, k: map[float32]Op{}}
	for i, c := range constList {
		kn.k[c] = consts.Offset(32 * i)
	}
	if lanes == 16 {
		kn.vec = ZMM
		for i, c := range constList {
			r := ZMM()
			VBROADCASTSS(consts.Offset(32*i), r)
			kn.k[c] = r
		}
	}
	return kn
}

// inT returns B^T d for the six vectors d (registers) of one line of a
// 6x6 input window (F(4, 3), points 0, 1, -1, 2, -2, infinity).
func (kn *kern) inT(d [6]Op) [6]VecVirtual {
	var o [6]VecVirtual
	for i := range o {
		o[i] = kn.vec()
	}
	// o0 = 4 d0 - 5 d2 + d4, o5 = 4 d1 - 5 d3 + d5
	VMOVUPS(d[4], o[0])
	VFMADD231PS(kn.k[4], d[0], o[0])
	VFNMADD231PS(kn.k[5], d[2], o[0])
	VMOVUPS(d[5], o[5])
	VFMADD231PS(kn.k[4], d[1], o[5])
	VFNMADD231PS(kn.k[5], d[3], o[5])
	// o1, o2 = (d4 - 4 d2) +- (d3 - 4 d1)
	t0, t1 := kn.vec(), kn.vec()
	VMOVUPS(d[4], t0)
	VFNMADD231PS(kn.k[4], d[2], t0)
	VMOVUPS(d[3], t1)
	VFNMADD231PS(kn.k[4], d[1], t1)
	VADDPS(t1, t0, o[1])
	VSUBPS(t1, t0, o[2])
	// o3, o4 = (d4 - d2) +- 2 (d3 - d1)
	t2, t3 := kn.vec(), kn.vec()
	VSUBPS(d[2], d[4], t2)
	VSUBPS(d[1], d[3], t3)
	VMOVAPS(t2, o[3])
	VFMADD231PS(kn.k[2], t3, o[3])
	VMOVAPS(t2, o[4])
	VFNMADD231PS(kn.k[2], t3, o[4])
	return o
}

// outT returns A^T m for the six vectors m of one line of a 6x6 block of
// GEMM results; m1 and m3 must be registers, the others may be memory.
func (kn *kern) outT(m [6]Op) [4]VecVirtual {
	a, b, c, d := kn.vec(), kn.vec(), kn.vec(), kn.vec()
	VADDPS(m[2], m[1], a)
	VSUBPS(m[2], m[1], b)
	VADDPS(m[4], m[3], c)
	VSUBPS(m[4], m[3], d)
	var o [4]VecVirtual
	for i := range o {
		o[i] = kn.vec()
	}
	VADDPS(m[0], a, o[0])
	VADDPS(c, o[0], o[0]) // m0 + a + c
	VMOVAPS(b, o[1])
	VFMADD231PS(kn.k[2], d, o[1]) // b + 2d
	VMOVAPS(a, o[2])
	VFMADD231PS(kn.k[4], c, o[2]) // a + 4c
	VADDPS(m[5], b, o[3])
	VFMADD231PS(kn.k[8], d, o[3]) // b + 8d + m5
	return o
}

// input emits the input transform of one tile: for channels j in [0, nv)
// (nv a multiple of lanes), d[k] = src[k][j] for the 36 pixels k of the
// 6x6 window (row-major; pads point at zeros), V = B^T d B, and point xi
// to v[xi*ldv + j].
func input(name string, lanes int) {
	TEXT(name, 0, // the scratch frame is too big for NOSPLIT
		"func(v *float32, ldv int, src *[36]*float32, nv int)")
	Doc(
		fmt.Sprintf("%s sets v[xi*ldv+j] = (B^T d B)[xi] for j in [0, nv), nv a multiple of %d,", name, lanes),
		"where d[k] = src[k][j] for the 36 pixels k of a 6x6 input window:",
		"Winograd F(4x4, 3x3)'s input transform with channels in the lanes.",
		"",
		map[int]string{8: "Requires: AVX, FMA", 16: "Requires: AVX512F"}[lanes],
	)
	Pragma("noescape")
	vb := 4 * lanes
	scratch := AllocLocal(36 * vb)
	kn := newKern(lanes)
	v := Load(Param("v"), GP64())
	L := Load(Param("ldv"), GP64())
	SHLQ(U8(2), L)
	src := Load(Param("src"), GP64())
	L3, L5 := GP64(), GP64()
	LEAQ(Mem{Base: L, Index: L, Scale: 2}, L3)
	LEAQ(Mem{Base: L, Index: L, Scale: 4}, L5)
	j, p := GP64(), GP64()
	XORQ(j, j)
	Label(name + "_loop")
	CMPQ(j, paramAddr("nv"))
	JGE(LabelRef(name + "_done"))
	Comment("Columns: scratch[r*6+q] = (B^T d)[r][q].")
	for q := 0; q < 6; q++ {
		var d [6]Op
		for r := range d {
			MOVQ(Mem{Base: src, Disp: 8 * (r*6 + q)}, p)
			x := kn.vec()
			VMOVUPS(Mem{Base: p, Index: j, Scale: 4}, x)
			d[r] = x
		}
		for r, o := range kn.inT(d) {
			VMOVUPS(o, scratch.Offset(vb*(r*6+q)))
		}
	}
	Comment("Rows: V[r*6+c] = (scratch B)[r][c], six points ldv apart.")
	LEAQ(Mem{Base: v, Index: j, Scale: 4}, p)
	for r := 0; r < 6; r++ {
		var d [6]Op
		for c := range d {
			x := kn.vec()
			VMOVUPS(scratch.Offset(vb*(r*6+c)), x)
			d[c] = x
		}
		o := kn.inT(d)
		VMOVUPS(o[0], Mem{Base: p})
		VMOVUPS(o[1], Mem{Base: p, Index: L, Scale: 1})
		VMOVUPS(o[2], Mem{Base: p, Index: L, Scale: 2})
		VMOVUPS(o[3], Mem{Base: p, Index: L3, Scale: 1})
		VMOVUPS(o[4], Mem{Base: p, Index: L, Scale: 4})
		VMOVUPS(o[5], Mem{Base: p, Index: L5, Scale: 1})
		if r < 5 {
			LEAQ(Mem{Base: p, Index: L3, Scale: 2}, p)
		}
	}
	ADDQ(U8(lanes), j)
	JMP(LabelRef(name + "_loop"))
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// output emits the output transform of one tile with FusedConv's epilogue:
// for channels j in [0, nv), s[xi] = mo[xi*ldm + j], o = A^T s A (4x4),
// and output pixel p (row-major) gets
//
//	zmode 0: clamp(o[p] + bias[j])
//	zmode 1: clamp(o[p] + bias[j] + z[p][j])
//	zmode 2: clamp(o[p] + bias[j]) + z[p][j]
//
// written to dst[p][j]; clamp is min(max(., lo), hi) (NaN passes).
func output(name string, lanes int) {
	TEXT(name, 0, // the scratch frame is too big for NOSPLIT
		"func(dst *[16]*float32, mo *float32, ldm int, bias *float32, z *[16]*float32, nv, zmode int, lo, hi float32)")
	Doc(
		fmt.Sprintf("%s sets dst[p][j] = clamp(o[p] + bias[j] (+ z[p][j] when zmode is 1)) (+ z[p][j] when", name),
		fmt.Sprintf("zmode is 2) for j in [0, nv), nv a multiple of %d, where o = A^T s A and", lanes),
		"s[xi] = mo[xi*ldm+j]: Winograd F(4x4, 3x3)'s output transform with channels",
		"in the lanes and FusedConv's epilogue; clamp is min(max(., lo), hi).",
		"",
		map[int]string{8: "Requires: AVX, FMA", 16: "Requires: AVX512F"}[lanes],
	)
	Pragma("noescape")
	vb := 4 * lanes
	scratch := AllocLocal(24 * vb)
	kn := newKern(lanes)
	lo, hi := kn.vec(), kn.vec()
	VBROADCASTSS(paramAddr("lo"), lo)
	VBROADCASTSS(paramAddr("hi"), hi)
	dst := Load(Param("dst"), GP64())
	mo := Load(Param("mo"), GP64())
	bias := Load(Param("bias"), GP64())
	z := Load(Param("z"), GP64())
	L6, L18, L30 := GP64(), GP64(), GP64()
	MOVQ(paramAddr("ldm"), L6)
	SHLQ(U8(2), L6)
	LEAQ(Mem{Base: L6, Index: L6, Scale: 2}, L6) // 3 rows
	SHLQ(U8(1), L6)                              // 6 rows
	LEAQ(Mem{Base: L6, Index: L6, Scale: 2}, L18)
	LEAQ(Mem{Base: L18, Index: L6, Scale: 2}, L30)
	j, p, q := GP64(), GP64(), GP64()
	XORQ(j, j)
	CMPQ(paramAddr("zmode"), Imm(1))
	JEQ(LabelRef(name + "_z1"))
	CMPQ(paramAddr("zmode"), Imm(2))
	JEQ(LabelRef(name + "_z2"))
	for zm := 0; zm < 3; zm++ {
		lp := fmt.Sprintf("%s_z%d", name, zm)
		Label(lp)
		CMPQ(j, paramAddr("nv"))
		JGE(LabelRef(name + "_done"))
		Comment("Columns: scratch[r*6+q] = (A^T s)[r][q].")
		LEAQ(Mem{Base: mo, Index: j, Scale: 4}, p)
		for c := 0; c < 6; c++ {
			m1, m3 := kn.vec(), kn.vec()
			VMOVUPS(Mem{Base: p, Index: L6, Scale: 1}, m1)
			VMOVUPS(Mem{Base: p, Index: L18, Scale: 1}, m3)
			m := [6]Op{Mem{Base: p}, m1, Mem{Base: p, Index: L6, Scale: 2}, m3, Mem{Base: p, Index: L6, Scale: 4}, Mem{Base: p, Index: L30, Scale: 1}}
			for r, o := range kn.outT(m) {
				VMOVUPS(o, scratch.Offset(vb*(r*6+c)))
			}
			if c < 5 {
				MOVQ(paramAddr("ldm"), q)
				LEAQ(Mem{Base: p, Index: q, Scale: 4}, p)
			}
		}
		Comment("Rows: pixel r*4+c = (scratch A)[r][c], then the epilogue.")
		bv := kn.vec()
		VMOVUPS(Mem{Base: bias, Index: j, Scale: 4}, bv)
		for r := 0; r < 4; r++ {
			m1, m3 := kn.vec(), kn.vec()
			VMOVUPS(scratch.Offset(vb*(r*6+1)), m1)
			VMOVUPS(scratch.Offset(vb*(r*6+3)), m3)
			var m [6]Op
			for c := range m {
				m[c] = scratch.Offset(vb * (r*6 + c))
			}
			m[1], m[3] = m1, m3
			for c, o := range kn.outT(m) {
				px := r*4 + c
				VADDPS(bv, o, o)
				if zm != 0 {
					MOVQ(Mem{Base: z, Disp: 8 * px}, q)
				}
				if zm == 1 {
					VADDPS(Mem{Base: q, Index: j, Scale: 4}, o, o)
				}
				// The value as the second source: NaN passes through.
				VMAXPS(o, lo, o)
				VMINPS(o, hi, o)
				if zm == 2 {
					VADDPS(Mem{Base: q, Index: j, Scale: 4}, o, o)
				}
				MOVQ(Mem{Base: dst, Disp: 8 * px}, q)
				VMOVUPS(o, Mem{Base: q, Index: j, Scale: 4})
			}
		}
		ADDQ(U8(lanes), j)
		JMP(LabelRef(lp))
	}
	Label(name + "_done")
	VZEROUPPER()
	RET()
}
