// Command nhwc generates the AVX2/FMA kernels of package templates that run
// NHWC windows (depthwise convolution, max and average pooling) vectorised
// over channels, and their Go declarations, with avo's build API. Their
// pure-Go twin is nhwcTapsGo in templates/k_nhwc.go, the test reference.
//
//	go generate ./asmgen/amd64/nhwc
package main

//go:generate go run . -pkg templates -out ../../../templates/asm_nhwc_amd64.s -stubs ../../../templates/asm_nhwc_amd64.go

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

func main() {
	ConstraintExpr("amd64,!purego")
	taps("nhwcDWAVX2", modeDW, 8)
	taps("nhwcMaxAVX", modeMax, 8)
	taps("nhwcAvgAVX", modeAvg, 8)
	taps("nhwcDWAVX512", modeDW, 16)
	taps("nhwcMaxAVX512", modeMax, 16)
	taps("nhwcAvgAVX512", modeAvg, 16)
	biasClampRows()
	Generate()
}

const (
	modeDW = iota
	modeMax
	modeAvg
)

// paramAddr is the stack address of an argument: float and rarely used
// integer arguments are read from there (VEX broadcasts, never avo's
// legacy-SSE Load; see asmgen/amd64), which keeps general registers free.
func paramAddr(name string) Mem {
	b, err := Param(name).Resolve()
	if err != nil {
		panic(err)
	}
	return b.Addr
}

// taps emits one tap-list kernel. For each of npix output pixels p and
// channels j in [0, nv) (nv a multiple of 8) it reduces the taps t, each a
// pair (x offset, w offset) in elements:
//
//	dw:  y[p*ldy+j] = bias[j] + sum_t x[p*xstep+xo_t+j] * w[wo_t+j]
//	max: y[p*ldy+j] = max_t x[p*xstep+xo_t+j]          (ntaps >= 1)
//	avg: y[p*ldy+j] = scale * sum_t x[p*xstep+xo_t+j]
//
// 32 channels at a time in four accumulators that stay in registers over
// all taps, then one vector at a time; the taps are summed in list order.
// lanes is 8 (YMM, AVX2) or 16 (ZMM, AVX-512: nv a multiple of 16).
func taps(name string, mode, lanes int) {
	vec := YMM
	req := "Requires: AVX, FMA"
	if lanes == 16 {
		vec = ZMM
		req = "Requires: AVX512F"
	}
	vb := 4 * lanes // bytes per vector
	var sig, what string
	switch mode {
	case modeDW:
		sig = "func(y, x *float32, taps *int, ntaps int, w, bias *float32, nv, npix, xstep, ldy int)"
		what = "y[p*ldy+j] = bias[j] + sum_t x[p*xstep+taps[2t]+j]*w[taps[2t+1]+j]"
	case modeMax:
		sig = "func(y, x *float32, taps *int, ntaps int, nv, npix, xstep, ldy int)"
		what = "y[p*ldy+j] = max_t x[p*xstep+taps[2t]+j] (ntaps >= 1)"
	case modeAvg:
		sig = "func(y, x *float32, taps *int, ntaps int, nv, npix, xstep, ldy int, scale float32)"
		what = "y[p*ldy+j] = scale * sum_t x[p*xstep+taps[2t]+j]"
	}
	TEXT(name, NOSPLIT, sig)
	Doc(
		fmt.Sprintf("%s sets %s", name, what),
		fmt.Sprintf("for p in [0, npix) and j in [0, nv), nv a multiple of %d: NHWC output", lanes),
		"pixels sharing one list of (x offset, w offset) taps, in elements.",
		"",
		req,
	)
	Pragma("noescape")
	y := Load(Param("y"), GP64())
	x := Load(Param("x"), GP64())
	tp0 := Load(Param("taps"), GP64())
	tend := Load(Param("ntaps"), GP64())
	SHLQ(U8(4), tend)
	ADDQ(tp0, tend) // end of the tap list
	var w, bias Register
	if mode == modeDW {
		w = Load(Param("w"), GP64())
		bias = Load(Param("bias"), GP64())
	}
	npix := Load(Param("npix"), GP64())
	j, tp, xi, wi := GP64(), GP64(), GP64(), GP64()
	var scale VecVirtual
	if mode == modeAvg {
		scale = vec()
		VBROADCASTSS(paramAddr("scale"), scale)
	}

	body := func(vecs int, label string) {
		acc := make([]VecVirtual, vecs)
		for v := range acc {
			acc[v] = vec()
		}
		MOVQ(tp0, tp)
		switch mode {
		case modeDW:
			for v := range acc {
				VMOVUPS(Mem{Base: bias, Index: j, Scale: 4, Disp: vb * v}, acc[v])
			}
		case modeMax:
			// The first tap initialises the maximum.
			MOVQ(Mem{Base: tp}, xi)
			ADDQ(j, xi)
			for v := range acc {
				VMOVUPS(Mem{Base: x, Index: xi, Scale: 4, Disp: vb * v}, acc[v])
			}
			ADDQ(U8(16), tp)
		case modeAvg:
			for v := range acc {
				if lanes == 16 {
					VPXORD(acc[v], acc[v], acc[v]) // VXORPS on ZMM needs AVX512DQ
				} else {
					VXORPS(acc[v], acc[v], acc[v])
				}
			}
		}
		Label(name + "_" + label)
		CMPQ(tp, tend)
		JGE(LabelRef(name + "_" + label + "_end"))
		MOVQ(Mem{Base: tp}, xi)
		ADDQ(j, xi)
		if mode == modeDW {
			MOVQ(Mem{Base: tp, Disp: 8}, wi)
			ADDQ(j, wi)
		}
		for v := range acc {
			xm := Mem{Base: x, Index: xi, Scale: 4, Disp: vb * v}
			switch mode {
			case modeDW:
				t := vec()
				VMOVUPS(Mem{Base: w, Index: wi, Scale: 4, Disp: vb * v}, t)
				VFMADD231PS(xm, t, acc[v])
			case modeMax:
				VMAXPS(xm, acc[v], acc[v])
			case modeAvg:
				VADDPS(xm, acc[v], acc[v])
			}
		}
		ADDQ(U8(16), tp)
		JMP(LabelRef(name + "_" + label))
		Label(name + "_" + label + "_end")
		for v := range acc {
			if mode == modeAvg {
				VMULPS(scale, acc[v], acc[v])
			}
			VMOVUPS(acc[v], Mem{Base: y, Index: j, Scale: 4, Disp: vb * v})
		}
	}

	Label(name + "_pix")
	CMPQ(npix, Imm(0))
	JLE(LabelRef(name + "_done"))
	XORQ(j, j)
	Comment(fmt.Sprintf("%d channels at a time.", 4*lanes))
	Label(name + "_loop4")
	last := GP64()
	MOVQ(paramAddr("nv"), last)
	SUBQ(U8(4*lanes), last)
	CMPQ(j, last)
	JG(LabelRef(name + "_loop1"))
	body(4, "taps4")
	ADDQ(U8(4*lanes), j)
	JMP(LabelRef(name + "_loop4"))
	Comment(fmt.Sprintf("Then %d at a time.", lanes))
	Label(name + "_loop1")
	CMPQ(j, paramAddr("nv"))
	JGE(LabelRef(name + "_next"))
	body(1, "taps1")
	ADDQ(U8(lanes), j)
	JMP(LabelRef(name + "_loop1"))
	Comment("Next pixel: x moves by xstep, y by ldy elements.")
	Label(name + "_next")
	step := GP64()
	MOVQ(paramAddr("xstep"), step)
	LEAQ(Mem{Base: x, Index: step, Scale: 4}, x)
	MOVQ(paramAddr("ldy"), step)
	LEAQ(Mem{Base: y, Index: step, Scale: 4}, y)
	DECQ(npix)
	JMP(LabelRef(name + "_pix"))
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// biasClampRows emits the NHWC GEMM epilogue: a per-column bias and a
// clamp (Relu, Clip, or none with infinite bounds) over rows of an
// [rows, ldy] output, in one pass and one call per row block.
func biasClampRows() {
	TEXT("nhwcBiasClampAVX", NOSPLIT, "func(y, bias *float32, rows, nv, ldy int, lo, hi float32)")
	Doc(
		"nhwcBiasClampAVX sets y[r*ldy+j] = min(max(y[r*ldy+j] + bias[j], lo), hi)",
		"for r in [0, rows) and j in [0, nv), nv a multiple of 8.",
		"",
		"Requires: AVX",
	)
	Pragma("noescape")
	y := Load(Param("y"), GP64())
	bias := Load(Param("bias"), GP64())
	rows := Load(Param("rows"), GP64())
	nv := Load(Param("nv"), GP64())
	ldy := Load(Param("ldy"), GP64())
	SHLQ(U8(2), ldy)
	lo, hi := YMM(), YMM()
	VBROADCASTSS(paramAddr("lo"), lo)
	VBROADCASTSS(paramAddr("hi"), hi)
	j := GP64()
	Label("bc_row")
	CMPQ(rows, Imm(0))
	JLE(LabelRef("bc_done"))
	XORQ(j, j)
	Label("bc_loop")
	CMPQ(j, nv)
	JGE(LabelRef("bc_next"))
	v := YMM()
	VMOVUPS(Mem{Base: y, Index: j, Scale: 4}, v)
	VADDPS(Mem{Base: bias, Index: j, Scale: 4}, v, v)
	// The value as the second source: NaN passes through.
	VMAXPS(v, lo, v)
	VMINPS(v, hi, v)
	VMOVUPS(v, Mem{Base: y, Index: j, Scale: 4})
	ADDQ(U8(8), j)
	JMP(LabelRef("bc_loop"))
	Label("bc_next")
	ADDQ(ldy, y)
	DECQ(rows)
	JMP(LabelRef("bc_row"))
	Label("bc_done")
	VZEROUPPER()
	RET()
}
