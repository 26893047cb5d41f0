// Command q8 generates the int8 GEMM tiles of package templates (the
// cuvil::QGemm and cuvil::QConv kernels, templates/k_quant_gemm.go) with
// AVX512-VNNI: VPDPBUSD multiplies four u8 bytes of A by four s8 bytes of
// B per int32 lane and adds them to the lane, 64 multiply-adds an
// instruction. A tile is up to 6 rows by 4 panels of 16 columns: per k
// quad it loads the panels' 64-byte rows of B, broadcasts each A row's four
// bytes and issues rows*panels VPDPBUSD into 24 ZMM accumulators at most.
// Their pure-Go twin is qgemmTileGo, the test reference.
//
// avo v0.5.0 has no VPDPBUSD constructor; the generator emits it as a raw
// instruction (the Go assembler knows it: EVEX, AVX512_VNNI).
//
//	go generate ./asmgen/amd64/q8
package main

//go:generate go run . -pkg templates -out ../../../templates/asm_q8_amd64.s -stubs ../../../templates/asm_q8_amd64.go

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/ir"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

const (
	maxRows   = 6  // rows of the largest tile
	maxPanels = 4  // panels of 16 columns (64 columns: 24 accumulators for 6 rows)
	accRow    = 64 // int32 elements of a row of the caller's accumulator block
)

func main() {
	ConstraintExpr("amd64,!purego")
	for rows := 1; rows <= maxRows; rows++ {
		for panels := 1; panels <= maxPanels; panels++ {
			kernel(rows, panels)
		}
	}
	Generate()
}

// vpdpbusd emits VPDPBUSD (Go operand order): acc += u8(u) . s8(s), four
// bytes a lane.
func vpdpbusd(s, u, acc Op) {
	Instruction(&ir.Instruction{
		Opcode:   "VPDPBUSD",
		Operands: []Op{s, u, acc},
		Inputs:   []Op{s, u, acc},
		Outputs:  []Op{acc},
		ISA:      []string{"AVX512_VNNI"},
	})
}

// kernel emits the tile of rows x 16*panels: for r < rows, panel p, lane j
// acc[r*64 + p*16 + j] = sum_q sum_i a[r*lda + 4q + i] * b[p*bstride + q*64 + 4j + i]
// over the k4 quads q (a u8, b s8; acc overwritten).
func kernel(rows, panels int) {
	name := fmt.Sprintf("qgemmVNNI%dx%d", rows, 16*panels)
	TEXT(name, NOSPLIT, "func(k4 int, a *uint8, lda int, b *int8, bstride int, acc *int32)")
	Doc(
		fmt.Sprintf("%s computes a %dx%d int32 tile of u8 A (row stride lda) times", name, rows, 16*panels),
		"s8 B in panels of 16 columns, k in quads (panel p at b + p*bstride, 64 bytes",
		"a quad), over k4 quads, into acc (row r at acc + r*64 int32s).",
		"",
		"Requires: AVX512F, AVX512_VNNI",
	)
	Pragma("noescape")
	k := Load(Param("k4"), GP64())
	a := Load(Param("a"), GP64())
	lda := Load(Param("lda"), GP64())
	b := Load(Param("b"), GP64())
	bs := Load(Param("bstride"), GP64())
	var a3, l3, b3 Register
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
	Comment(fmt.Sprintf("Zero the %d accumulators: acc[r*%d+p] holds row r, panel p.", rows*panels, panels))
	acc := make([]VecVirtual, rows*panels)
	for i := range acc {
		acc[i] = ZMM()
		VPXORD(acc[i], acc[i], acc[i])
	}
	TESTQ(k, k)
	JZ(LabelRef(name + "_store"))
	Label(name + "_loop")
	bv := make([]VecVirtual, panels)
	for p := range bv {
		bv[p] = ZMM()
		VMOVDQU32(panelAt(p), bv[p])
	}
	for r := 0; r < rows; r++ {
		t := ZMM()
		VPBROADCASTD(rowAt(r), t)
		for p := 0; p < panels; p++ {
			vpdpbusd(bv[p], t, acc[r*panels+p])
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
			VMOVDQU32(acc[r*panels+p], Mem{Base: out, Disp: 4 * (r*accRow + p*16)})
		}
	}
	VZEROUPPER()
	RET()
}
