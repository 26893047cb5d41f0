// Command bf16 generates the bf16 GEMM tiles of package templates
// (templates/k_gemm_bf16.go) with AVX512_BF16: VDPBF16PS multiplies two
// bf16 pairs per fp32 lane and adds both products to the lane, 32
// multiply-adds an instruction at fp32 accumulation. A tile is up to 6
// rows by 4 panels of 16 columns: per k pair it loads the panels' 64-byte
// rows of B, broadcasts each A row's pair and issues rows*panels
// VDPBF16PS into 24 ZMM accumulators at most. Their pure-Go twin is
// bf16TileGo, the test reference.
//
// Go's assembler has no VDPBF16PS (nor does avo v0.5.0), so the tiles
// use fixed registers (accumulators Z0-Z23, B rows Z24-Z27, A pairs
// Z28-Z31) and the generator writes each VDPBF16PS as its EVEX bytes
// (evexDPBF16PS; the encoding is checked against GNU as in main_test.go
// where as is installed).
//
//	go generate ./asmgen/amd64/bf16
package main

//go:generate go run . -pkg templates -out ../../../templates/asm_bf16_amd64.s -stubs ../../../templates/asm_bf16_amd64.go

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/ir"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

const (
	maxRows   = 6  // rows of the largest tile
	maxPanels = 4  // panels of 16 columns (64 columns: 24 accumulators for 6 rows)
	accRow    = 64 // float32 elements of a row of the caller's accumulator block
)

func main() {
	ConstraintExpr("amd64,!purego")
	for rows := 1; rows <= maxRows; rows++ {
		for panels := 1; panels <= maxPanels; panels++ {
			kernel(rows, panels)
		}
	}
	for rows := 1; rows <= maxRows; rows++ {
		for panels := 1; panels <= maxPanels; panels++ {
			pwKernel(rows, panels)
		}
	}
	cvtKernel()
	rateKernels()
	Generate()
}

// evexDPBF16PS returns the six bytes of VDPBF16PS zmm(dst), zmm(src1),
// zmm(src2) (Intel operand order: dst += src1 . src2 in bf16 pairs):
// EVEX.512.F3.0F38.W0 52 /r, register form, no mask.
func evexDPBF16PS(dst, src1, src2 int) [6]byte {
	bit := func(v, i int) int { return (v >> i) & 1 }
	p0 := (1-bit(dst, 3))<<7 | (1-bit(src2, 4))<<6 | (1-bit(src2, 3))<<5 | (1-bit(dst, 4))<<4 | 0b10
	p1 := (^src1&0xf)<<3 | 1<<2 | 0b10
	p2 := 0b10<<5 | (1-bit(src1, 4))<<3
	modrm := 0xc0 | (dst&7)<<3 | src2&7
	return [6]byte{0x62, byte(p0), byte(p1), byte(p2), 0x52, byte(modrm)}
}

// evexCVTNEPS2BF16 returns the six bytes of VCVTNEPS2BF16 ymm(dst),
// zmm(src) (16 float32 to 16 bf16, nearest even; input denormals read as
// zero, as VDPBF16PS reads them): EVEX.512.F3.0F38.W0 72 /r, register
// form, no mask.
func evexCVTNEPS2BF16(dst, src int) [6]byte {
	bit := func(v, i int) int { return (v >> i) & 1 }
	p0 := (1-bit(dst, 3))<<7 | (1-bit(src, 4))<<6 | (1-bit(src, 3))<<5 | (1-bit(dst, 4))<<4 | 0b10
	p1 := 0b1111<<3 | 1<<2 | 0b10
	p2 := 0b10<<5 | 1<<3
	modrm := 0xc0 | (dst&7)<<3 | src&7
	return [6]byte{0x62, byte(p0), byte(p1), byte(p2), 0x72, byte(modrm)}
}

// raw emits an instruction's six bytes: a LONG (the EVEX prefix, little
// endian) and a WORD (opcode and ModRM).
func raw(e [6]byte) {
	Instruction(&ir.Instruction{Opcode: "LONG", Operands: []Op{U32(uint32(e[0]) | uint32(e[1])<<8 | uint32(e[2])<<16 | uint32(e[3])<<24)}})
	Instruction(&ir.Instruction{Opcode: "WORD", Operands: []Op{U16(uint16(e[4]) | uint16(e[5])<<8)}})
}

// vdpbf16ps emits VDPBF16PS as raw bytes: a LONG (the EVEX prefix, little
// endian) and a WORD (opcode and ModRM).
func vdpbf16ps(dst, src1, src2 int) {
	e := evexDPBF16PS(dst, src1, src2)
	Comment(fmt.Sprintf("VDPBF16PS Z%d, Z%d, Z%d (Z%d += Z%d . Z%d in bf16 pairs)", src2, src1, dst, dst, src1, src2))
	raw(e)
}

var zmm = []reg.VecPhysical{reg.Z0, reg.Z1, reg.Z2, reg.Z3, reg.Z4, reg.Z5, reg.Z6, reg.Z7, reg.Z8, reg.Z9, reg.Z10,
	reg.Z11, reg.Z12, reg.Z13, reg.Z14, reg.Z15, reg.Z16, reg.Z17, reg.Z18, reg.Z19, reg.Z20, reg.Z21, reg.Z22, reg.Z23,
	reg.Z24, reg.Z25, reg.Z26, reg.Z27, reg.Z28, reg.Z29, reg.Z30, reg.Z31}

const (
	bReg = 24 // B rows: Z24 + panel
	aReg = 28 // A pairs: Z28 + row%4
)

// kernel emits the tile of rows x 16*panels: for r < rows, panel p, lane j
// acc[r*64 + p*16 + j] = sum_q sum_i a[r*lda + 4q + 2i] * b[p*bstride + q*64 + 4j + 2i]
// in bytes, over the k2 pairs q (a and b bf16; acc overwritten; the pair's
// odd product is added first, as VDPBF16PS does).
func kernel(rows, panels int) {
	name := fmt.Sprintf("bf16gemm%dx%d", rows, 16*panels)
	TEXT(name, NOSPLIT, "func(k2 int, a *uint16, lda int, b *uint16, bstride int, acc *float32)")
	Doc(
		fmt.Sprintf("%s computes a %dx%d float32 tile of bf16 A (row stride lda bytes) times", name, rows, 16*panels),
		"bf16 B in panels of 16 columns, k in pairs (panel p at b + p*bstride bytes, 64",
		"bytes a pair), over k2 pairs, into acc (row r at acc + r*64 float32s).",
		"",
		"Requires: AVX512F, AVX512_BF16",
	)
	Pragma("noescape")
	k := Load(Param("k2"), GP64())
	a := Load(Param("a"), GP64())
	lda := Load(Param("lda"), GP64())
	b := Load(Param("b"), GP64())
	bs := Load(Param("bstride"), GP64())
	var a3, l3, b3 reg.Register
	if rows > 3 {
		l3 = GP64()
		LEAQ(Mem{Base: lda, Index: lda, Scale: 2}, l3)
		a3 = GP64()
		LEAQ(Mem{Base: a, Index: l3, Scale: 1}, a3)
	}
	if panels > 3 {
		b3 = GP64()
		LEAQ(Mem{Base: bs, Index: bs, Scale: 2}, b3)
		ADDQ(b, b3)
	}
	rowAt := func(r int) Mem {
		base := a
		if r >= 3 {
			base, r = a3, r-3
		}
		if r == 0 {
			return Mem{Base: base}
		}
		return Mem{Base: base, Index: lda, Scale: uint8(r)}
	}
	panelAt := func(p int) Mem {
		switch p {
		case 0:
			return Mem{Base: b}
		case 3:
			return Mem{Base: b3}
		default:
			return Mem{Base: b, Index: bs, Scale: uint8(p)}
		}
	}
	Comment(fmt.Sprintf("Zero the %d accumulators: Z(r*%d+p) holds row r, panel p.", rows*panels, panels))
	for i := 0; i < rows*panels; i++ {
		VPXORD(zmm[i], zmm[i], zmm[i])
	}
	TESTQ(k, k)
	JZ(LabelRef(name + "_store"))
	Label(name + "_loop")
	for p := 0; p < panels; p++ {
		VMOVDQU32(panelAt(p), zmm[bReg+p])
	}
	for r := 0; r < rows; r++ {
		VPBROADCASTD(rowAt(r), zmm[aReg+r%4])
		for p := 0; p < panels; p++ {
			vdpbf16ps(r*panels+p, bReg+p, aReg+r%4)
		}
	}
	ADDQ(U8(4), a)
	if a3 != nil {
		ADDQ(U8(4), a3)
	}
	ADDQ(U8(64), b)
	if b3 != nil {
		ADDQ(U8(64), b3)
	}
	DECQ(k)
	JNZ(LabelRef(name + "_loop"))
	Label(name + "_store")
	out := Load(Param("acc"), GP64())
	for r := 0; r < rows; r++ {
		for p := 0; p < panels; p++ {
			VMOVUPS(zmm[r*panels+p], Mem{Base: out, Disp: 4 * (r*accRow + p*16)})
		}
	}
	VZEROUPPER()
	RET()
}

// Tile epilogue flags of pwKernel (templates' nhwcPW flags; no
// accumulation: the tiles take all of k at once).
const (
	flagBias  = 2 // add bias[j]
	flagZ     = 4 // add z (residual, row stride ldc)
	flagClamp = 8 // min(max(v, lo), hi)
)

// pwKernel emits the convolution tile of rows x 16*panels: kernel's
// product, then the epilogue into C (row stride ldc float32s) as the
// float32 tiles of asmgen/amd64/pw apply it: bias, residual z, clamp;
// the last panel touches only its first n columns (1..16).
func pwKernel(rows, panels int) {
	name := fmt.Sprintf("bf16pw%dx%d", rows, 16*panels)
	TEXT(name, NOSPLIT, "func(k2 int, a *uint16, lda int, b *uint16, bstride int, c *float32, ldc int, bias, z *float32, lo, hi float32, flags, n int)")
	Doc(
		fmt.Sprintf("%s computes a %dx%d float32 tile of C (row stride ldc float32s): bf16 A", name, rows, 16*panels),
		"(row stride lda bytes) times bf16 B in panels of 16 columns, k in pairs (panel p",
		"at b + p*bstride bytes, 64 bytes a pair), over k2 pairs; then flags 2 adds",
		"bias[j], 4 z[r*ldc+j], 8 clamps to [lo, hi]; the last panel touches only its",
		"first n columns (1..16).",
		"",
		"Requires: AVX512F, AVX512_BF16, BMI2",
	)
	Pragma("noescape")
	k := Load(Param("k2"), GP64())
	a := Load(Param("a"), GP64())
	lda := Load(Param("lda"), GP64())
	b := Load(Param("b"), GP64())
	bs := Load(Param("bstride"), GP64())
	var a3, l3, b3 reg.Register
	if rows > 3 {
		l3 = GP64()
		LEAQ(Mem{Base: lda, Index: lda, Scale: 2}, l3)
		a3 = GP64()
		LEAQ(Mem{Base: a, Index: l3, Scale: 1}, a3)
	}
	if panels > 3 {
		b3 = GP64()
		LEAQ(Mem{Base: bs, Index: bs, Scale: 2}, b3)
		ADDQ(b, b3)
	}
	rowAt := func(r int) Mem {
		base := a
		if r >= 3 {
			base, r = a3, r-3
		}
		if r == 0 {
			return Mem{Base: base}
		}
		return Mem{Base: base, Index: lda, Scale: uint8(r)}
	}
	panelAt := func(p int) Mem {
		switch p {
		case 0:
			return Mem{Base: b}
		case 3:
			return Mem{Base: b3}
		default:
			return Mem{Base: b, Index: bs, Scale: uint8(p)}
		}
	}
	for i := 0; i < rows*panels; i++ {
		VPXORD(zmm[i], zmm[i], zmm[i])
	}
	TESTQ(k, k)
	JZ(LabelRef(name + "_epilogue"))
	Label(name + "_loop")
	for p := 0; p < panels; p++ {
		VMOVDQU32(panelAt(p), zmm[bReg+p])
	}
	for r := 0; r < rows; r++ {
		VPBROADCASTD(rowAt(r), zmm[aReg+r%4])
		for p := 0; p < panels; p++ {
			vdpbf16ps(r*panels+p, bReg+p, aReg+r%4)
		}
	}
	ADDQ(U8(4), a)
	if a3 != nil {
		ADDQ(U8(4), a3)
	}
	ADDQ(U8(64), b)
	if b3 != nil {
		ADDQ(U8(64), b3)
	}
	DECQ(k)
	JNZ(LabelRef(name + "_loop"))

	Label(name + "_epilogue")
	Comment("The last panel's mask K1: its first n lanes.")
	n := Load(Param("n"), GP64())
	ones, m := GP64(), GP64()
	MOVQ(U32(0xffff), ones)
	BZHIQ(n, ones, m)
	KMOVW(m.As32(), reg.K1)
	c := Load(Param("c"), GP64())
	ldc := Load(Param("ldc"), GP64())
	SHLQ(U8(2), ldc)
	flags := Load(Param("flags"), GP64())
	acc := func(r, p int) reg.VecPhysical { return zmm[r*panels+p] }
	// each walks the tile's rows of a matrix with row stride ldc from
	// base.
	each := func(base reg.Register, f func(m Mem, r, p int)) {
		q := GP64()
		MOVQ(base, q)
		for r := 0; r < rows; r++ {
			for p := 0; p < panels; p++ {
				f(Mem{Base: q, Disp: 64 * p}, r, p)
			}
			if r < rows-1 {
				ADDQ(ldc, q)
			}
		}
	}
	skip := func(flag int, label string) {
		TESTQ(U32(flag), flags)
		JZ(LabelRef(name + label))
	}
	Comment("Bias, one vector per panel (Z24-Z27).")
	skip(flagBias, "_nobias")
	{
		bias := Load(Param("bias"), GP64())
		for p := 0; p < panels; p++ {
			mm := Mem{Base: bias, Disp: 64 * p}
			if p == panels-1 {
				VMOVUPS_Z(mm, reg.K1, zmm[bReg+p])
			} else {
				VMOVUPS(mm, zmm[bReg+p])
			}
		}
		for r := 0; r < rows; r++ {
			for p := 0; p < panels; p++ {
				VADDPS(zmm[bReg+p], acc(r, p), acc(r, p))
			}
		}
	}
	Label(name + "_nobias")
	Comment("Residual z (row stride ldc).")
	skip(flagZ, "_noz")
	{
		z := Load(Param("z"), GP64())
		each(z, func(mm Mem, r, p int) {
			t := zmm[aReg+(r*panels+p)%2]
			if p == panels-1 {
				VMOVUPS_Z(mm, reg.K1, t)
			} else {
				VMOVUPS(mm, t)
			}
			VADDPS(t, acc(r, p), acc(r, p))
		})
	}
	Label(name + "_noz")
	Comment("Clamp: the value as the second source, so a NaN passes through.")
	skip(flagClamp, "_store")
	{
		lo, hi := zmm[aReg+2], zmm[aReg+3]
		VBROADCASTSS(paramAddr("lo"), lo)
		VBROADCASTSS(paramAddr("hi"), hi)
		for r := 0; r < rows; r++ {
			for p := 0; p < panels; p++ {
				VMAXPS(acc(r, p), lo, acc(r, p))
				VMINPS(acc(r, p), hi, acc(r, p))
			}
		}
	}
	Label(name + "_store")
	each(c, func(mm Mem, r, p int) {
		if p == panels-1 {
			VMOVUPS(acc(r, p), reg.K1, mm)
		} else {
			VMOVUPS(acc(r, p), mm)
		}
	})
	VZEROUPPER()
	RET()
}

func paramAddr(name string) Mem {
	b, err := Param(name).Resolve()
	if err != nil {
		panic(err)
	}
	return b.Addr
}

// cvtKernel emits bf16cvt: n16 blocks of 16 float32 from src rounded to
// bf16 (nearest even, denormals to zero: VCVTNEPS2BF16) into dst.
func cvtKernel() {
	TEXT("bf16cvt", NOSPLIT, "func(dst *uint16, src *float32, n16 int)")
	Doc(
		"bf16cvt rounds n16*16 float32 from src to bf16 into dst: nearest even,",
		"denormal inputs to zero, a NaN quieted (VCVTNEPS2BF16).",
		"",
		"Requires: AVX512F, AVX512_BF16",
	)
	Pragma("noescape")
	dst := Load(Param("dst"), GP64())
	src := Load(Param("src"), GP64())
	n := Load(Param("n16"), GP64())
	TESTQ(n, n)
	JZ(LabelRef("bf16cvt_done"))
	Label("bf16cvt_loop")
	VMOVUPS(Mem{Base: src}, reg.Z0)
	Comment("VCVTNEPS2BF16 Z0, Y1")
	raw(evexCVTNEPS2BF16(1, 0))
	VMOVDQU16(reg.Y1, Mem{Base: dst})
	ADDQ(U8(64), src)
	ADDQ(U8(32), dst)
	DECQ(n)
	JNZ(LabelRef("bf16cvt_loop"))
	Label("bf16cvt_done")
	VZEROUPPER()
	RET()
}

// rateAcc is the number of independent accumulators of the rate kernels:
// enough to cover the latency of either instruction on two pipes.
const rateAcc = 12

// rateKernels emits bf16rate and fmarate, the throughput probes of
// TestBF16RateCPUTime: n iterations of 2*rateAcc independent VDPBF16PS
// (32 multiply-adds each) or VFMADD231PS (16) on registers only, so the
// thread CPU time per instruction is the instruction's reciprocal
// throughput on this CPU.
func rateKernels() {
	for _, bf16 := range []bool{true, false} {
		name := "fmarate"
		if bf16 {
			name = "bf16rate"
		}
		TEXT(name, NOSPLIT, "func(n int)")
		if bf16 {
			Doc(name+" issues n*24 independent register-only VDPBF16PS (a throughput probe).", "", "Requires: AVX512F, AVX512_BF16")
		} else {
			Doc(name+" issues n*24 independent register-only VFMADD231PS on ZMM (a throughput probe).", "", "Requires: AVX512F")
		}
		n := Load(Param("n"), GP64())
		for i := 0; i < rateAcc; i++ {
			VPXORD(zmm[i], zmm[i], zmm[i])
		}
		VPXORD(zmm[24], zmm[24], zmm[24])
		VPXORD(zmm[25], zmm[25], zmm[25])
		TESTQ(n, n)
		JZ(LabelRef(name + "_done"))
		Label(name + "_loop")
		for u := 0; u < 2; u++ {
			for i := 0; i < rateAcc; i++ {
				if bf16 {
					raw(evexDPBF16PS(i, 24, 25))
				} else {
					VFMADD231PS(zmm[25], zmm[24], zmm[i])
				}
			}
		}
		DECQ(n)
		JNZ(LabelRef(name + "_loop"))
		Label(name + "_done")
		VZEROUPPER()
		RET()
	}
}
