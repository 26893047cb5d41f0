// Command wnhwc generates the Winograd F(4x4, 3x3) and F(2x2, 3x3) transforms of package
// templates for NHWC convolutions (k_conv_winograd_nhwc.go) and their Go declarations,
// with avo's build API. Channels lie in the vector lanes, so one tile's
// transform is plain vector adds and FMAs over 8 (AVX2) or 16 (AVX-512)
// channels at a time, no transposes. Their pure-Go twins (wnInputGo,
// wnOutputGo in templates/k_conv_winograd_nhwc.go) are the test references.
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
	for _, f := range []int{4, 2} {
		for _, lanes := range []int{8, 16} {
			input(f, lanes)
			output(f, lanes)
		}
	}
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

// inT4 returns B^T d for the four vectors d (registers) of one line of a
// 4x4 input window (F(2, 3), points 0, 1, -1, infinity).
func (kn *kern) inT4(d []Op) []VecVirtual {
	o := []VecVirtual{kn.vec(), kn.vec(), kn.vec(), kn.vec()}
	VSUBPS(d[2], d[0], o[0]) // d0 - d2
	VADDPS(d[2], d[1], o[1]) // d1 + d2
	VSUBPS(d[1], d[2], o[2]) // d2 - d1
	VSUBPS(d[3], d[1], o[3]) // d1 - d3
	return o
}

// outT4 returns A^T m for the four vectors m of one line of a 4x4 block
// of GEMM results; m1 must be a register, the others may be memory.
func (kn *kern) outT4(m []Op) []VecVirtual {
	o := []VecVirtual{kn.vec(), kn.vec()}
	VADDPS(m[0], m[1], o[0])
	VADDPS(m[2], o[0], o[0]) // m0 + m1 + m2
	VSUBPS(m[2], m[1], o[1])
	VSUBPS(m[3], o[1], o[1]) // m1 - m2 - m3
	return o
}

// inT returns B^T d for the six vectors d (registers) of one line of a
// 6x6 input window (F(4, 3), points 0, 1, -1, 2, -2, infinity).
func (kn *kern) inT(d []Op) []VecVirtual {
	o := make([]VecVirtual, 6)
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
func (kn *kern) outT(m []Op) []VecVirtual {
	a, b, c, d := kn.vec(), kn.vec(), kn.vec(), kn.vec()
	VADDPS(m[2], m[1], a)
	VSUBPS(m[2], m[1], b)
	VADDPS(m[4], m[3], c)
	VSUBPS(m[4], m[3], d)
	o := []VecVirtual{kn.vec(), kn.vec(), kn.vec(), kn.vec()}
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

// tr is one Winograd variant: F(f x f, 3x3) with a w x w input window
// (w = f+2) and w*w points.
type tr struct{ f, w int }

func (t tr) pts() int { return t.w * t.w }

// names returns the kernels' names, e.g. wnInput4AVX512.
func names(f, lanes int) (in, out string) {
	isa := map[int]string{8: "AVX2", 16: "AVX512"}[lanes]
	return fmt.Sprintf("wnInput%d%s", f, isa), fmt.Sprintf("wnOutput%d%s", f, isa)
}

// in1 and out1 are the variant's 1-D transforms.
func (kn *kern) in1(t tr, d []Op) []VecVirtual {
	if t.f == 4 {
		return kn.inT(d)
	}
	return kn.inT4(d)
}

func (kn *kern) out1(t tr, m []Op) []VecVirtual {
	if t.f == 4 {
		return kn.outT(m)
	}
	return kn.outT4(m)
}

// at returns the address p + k*u for k in [0, 5], with u3 = 3u and u5 =
// 5u in registers.
func at(p, u, u3, u5 Register, k int) Mem {
	switch k {
	case 0:
		return Mem{Base: p}
	case 1, 2, 4:
		return Mem{Base: p, Index: u, Scale: uint8(k)}
	case 3:
		return Mem{Base: p, Index: u3, Scale: 1}
	case 5:
		return Mem{Base: p, Index: u5, Scale: 1}
	}
	panic("no such multiple")
}

// multiples sets u3 = 3u and u5 = 5u.
func multiples(u Register) (u3, u5 Register) {
	u3, u5 = GP64(), GP64()
	LEAQ(Mem{Base: u, Index: u, Scale: 2}, u3)
	LEAQ(Mem{Base: u, Index: u, Scale: 4}, u5)
	return u3, u5
}

var requires = map[int]string{8: "Requires: AVX, FMA", 16: "Requires: AVX512F"}

// input emits the input transform of one tile of F(f x f, 3x3): for
// channels j in [0, nv) (nv a multiple of lanes), d[k] = src[k][j] for the
// w*w pixels k of the window (row-major; pads point at zeros), V = B^T d
// B, and point xi to v[xi*ldv + j].
func input(f, lanes int) {
	t := tr{f, f + 2}
	name, _ := names(f, lanes)
	TEXT(name, 0, // the scratch frame is too big for NOSPLIT
		"func(v *float32, ldv int, src *[36]*float32, nv int)")
	Doc(
		fmt.Sprintf("%s sets v[xi*ldv+j] = (B^T d B)[xi] for j in [0, nv), nv a multiple of %d,", name, lanes),
		fmt.Sprintf("where d[k] = src[k][j] for the %d pixels k of a %dx%d input window:", t.pts(), t.w, t.w),
		fmt.Sprintf("Winograd F(%dx%d, 3x3)'s input transform with channels in the lanes.", f, f),
		"",
		requires[lanes],
	)
	Pragma("noescape")
	vb := 4 * lanes
	w := t.w
	scratch := AllocLocal(t.pts() * vb)
	kn := newKern(lanes)
	v := Load(Param("v"), GP64())
	L := Load(Param("ldv"), GP64())
	SHLQ(U8(2), L)
	src := Load(Param("src"), GP64())
	L3, L5 := multiples(L)
	j, p := GP64(), GP64()
	XORQ(j, j)
	Label(name + "_loop")
	CMPQ(j, paramAddr("nv"))
	JGE(LabelRef(name + "_done"))
	Comment(fmt.Sprintf("Columns: scratch[r*%d+q] = (B^T d)[r][q].", w))
	for q := 0; q < w; q++ {
		d := make([]Op, w)
		for r := range d {
			MOVQ(Mem{Base: src, Disp: 8 * (r*w + q)}, p)
			x := kn.vec()
			VMOVUPS(Mem{Base: p, Index: j, Scale: 4}, x)
			d[r] = x
		}
		for r, o := range kn.in1(t, d) {
			VMOVUPS(o, scratch.Offset(vb*(r*w+q)))
		}
	}
	Comment(fmt.Sprintf("Rows: V[r*%d+c] = (scratch B)[r][c], points ldv apart.", w))
	LEAQ(Mem{Base: v, Index: j, Scale: 4}, p)
	for r := 0; r < w; r++ {
		d := make([]Op, w)
		for c := range d {
			x := kn.vec()
			VMOVUPS(scratch.Offset(vb*(r*w+c)), x)
			d[c] = x
		}
		for c, o := range kn.in1(t, d) {
			VMOVUPS(o, at(p, L, L3, L5, c))
		}
		if r < w-1 {
			if w == 6 {
				LEAQ(Mem{Base: p, Index: L3, Scale: 2}, p)
			} else {
				LEAQ(Mem{Base: p, Index: L, Scale: 4}, p)
			}
		}
	}
	ADDQ(U8(lanes), j)
	JMP(LabelRef(name + "_loop"))
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// output emits the output transform of one tile of F(f x f, 3x3) with
// FusedConv's epilogue: for channels j in [0, nv), s[xi] = mo[xi*ldm + j],
// o = A^T s A (f x f), and output pixel p (row-major) gets
//
//	zmode 0: clamp(o[p] + bias[j])
//	zmode 1: clamp(o[p] + bias[j] + z[p][j])
//	zmode 2: clamp(o[p] + bias[j]) + z[p][j]
//
// written to dst[p][j]; clamp is min(max(., lo), hi) (NaN passes).
func output(f, lanes int) {
	t := tr{f, f + 2}
	_, name := names(f, lanes)
	TEXT(name, 0, // the scratch frame is too big for NOSPLIT
		"func(dst *[16]*float32, mo *float32, ldm int, bias *float32, z *[16]*float32, nv, zmode int, lo, hi float32)")
	Doc(
		fmt.Sprintf("%s sets dst[p][j] = clamp(o[p] + bias[j] (+ z[p][j] when zmode is 1)) (+ z[p][j] when", name),
		fmt.Sprintf("zmode is 2) for j in [0, nv), nv a multiple of %d, p in [0, %d), where o = A^T s A and", lanes, f*f),
		fmt.Sprintf("s[xi] = mo[xi*ldm+j]: Winograd F(%dx%d, 3x3)'s output transform with channels", f, f),
		"in the lanes and FusedConv's epilogue; clamp is min(max(., lo), hi).",
		"",
		requires[lanes],
	)
	Pragma("noescape")
	vb := 4 * lanes
	w := t.w
	scratch := AllocLocal(f * w * vb)
	kn := newKern(lanes)
	lo, hi := kn.vec(), kn.vec()
	VBROADCASTSS(paramAddr("lo"), lo)
	VBROADCASTSS(paramAddr("hi"), hi)
	dst := Load(Param("dst"), GP64())
	mo := Load(Param("mo"), GP64())
	bias := Load(Param("bias"), GP64())
	z := Load(Param("z"), GP64())
	// Lw: w rows of mo (the stride of a column's points).
	Lw := GP64()
	MOVQ(paramAddr("ldm"), Lw)
	SHLQ(U8(2), Lw)
	if w == 6 {
		LEAQ(Mem{Base: Lw, Index: Lw, Scale: 2}, Lw) // 3 rows
		SHLQ(U8(1), Lw)
	} else {
		SHLQ(U8(2), Lw)
	}
	Lw3, Lw5 := multiples(Lw)
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
		Comment(fmt.Sprintf("Columns: scratch[r*%d+q] = (A^T s)[r][q].", w))
		LEAQ(Mem{Base: mo, Index: j, Scale: 4}, p)
		for c := 0; c < w; c++ {
			m := make([]Op, w)
			for r := range m {
				m[r] = at(p, Lw, Lw3, Lw5, r)
			}
			// m1 (and m3 for F(4x4)) must be registers.
			for r := 1; r < w; r += 2 {
				x := kn.vec()
				VMOVUPS(m[r], x)
				m[r] = x
			}
			for r, o := range kn.out1(t, m) {
				VMOVUPS(o, scratch.Offset(vb*(r*w+c)))
			}
			if c < w-1 {
				MOVQ(paramAddr("ldm"), q)
				LEAQ(Mem{Base: p, Index: q, Scale: 4}, p)
			}
		}
		Comment(fmt.Sprintf("Rows: pixel r*%d+c = (scratch A)[r][c], then the epilogue.", f))
		bv := kn.vec()
		VMOVUPS(Mem{Base: bias, Index: j, Scale: 4}, bv)
		for r := 0; r < f; r++ {
			m := make([]Op, w)
			for c := range m {
				m[c] = scratch.Offset(vb * (r*w + c))
			}
			for c := 1; c < w; c += 2 {
				x := kn.vec()
				VMOVUPS(m[c], x)
				m[c] = x
			}
			for c, o := range kn.out1(t, m) {
				px := r*f + c
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
