// Command nhwc generates the AVX2/FMA kernels of package templates that run
// NHWC windows (depthwise convolution, max and average pooling) vectorised
// over channels, and their Go declarations, with avo's build API. Their
// pure-Go twin is nhwcTapsGo in templates/k_conv_nhwc_window.go, the test reference.
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
	for _, G := range []int{2, 4, 8, 16, 32} {
		grpTaps(fmt.Sprintf("nhwcGrp%dAVX2", G), G)
	}
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
//	dw:  y[p*ldy+j] = min(max(bias[j] + sum_t x[p*xstep+xo_t+j] * w[wo_t+j], lo), hi)
//	max: y[p*ldy+j] = max_t x[p*xstep+xo_t+j]          (ntaps >= 1)
//	avg: y[p*ldy+j] = scale * sum_t x[p*xstep+xo_t+j]
//
// Pixels go in groups of pg (4 with ZMM, 2 with YMM or for avg; the last few one by
// one) and channels 4, 2, then 1 vector at a time: pg x vecs accumulators
// stay in registers over all taps, and each tap's weight vectors are
// loaded once for the group (a depthwise tap is then pg FMAs per weight
// load, in independent chains). Taps are summed in list order, so the
// grouping does not change results. lanes is 8 (YMM, AVX2) or 16 (ZMM,
// AVX-512: nv a multiple of 16).
func taps(name string, mode, lanes int) {
	vec := YMM
	req := "Requires: AVX, FMA"
	pg := 2
	if lanes == 16 {
		vec = ZMM
		req = "Requires: AVX512F"
		pg = 4
		if mode == modeAvg {
			pg = 2 // avo fails to allocate 16 accumulators and the scale
		}
	}
	vb := 4 * lanes // bytes per vector
	var sig, what string
	switch mode {
	case modeDW:
		sig = "func(y, x *float32, taps *int, ntaps int, w, bias *float32, nv, npix, xstep, ldy int, lo, hi float32)"
		what = "y[p*ldy+j] = min(max(bias[j] + sum_t x[p*xstep+taps[2t]+j]*w[taps[2t+1]+j], lo), hi)"
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
	tend := Load(Param("ntaps"), GP64())
	SHLQ(U8(4), tend)
	ADDQ(paramAddr("taps"), tend) // end of the tap list
	var w Register
	if mode == modeDW {
		w = Load(Param("w"), GP64())
	}
	npix := Load(Param("npix"), GP64())
	xs := Load(Param("xstep"), GP64())
	j, tp, xi := GP64(), GP64(), GP64()
	var scale, lo, hi VecVirtual
	if mode == modeAvg {
		scale = vec()
		VBROADCASTSS(paramAddr("scale"), scale)
	}
	if mode == modeDW {
		// The activation's clamp (infinite bounds for none), fused.
		lo, hi = vec(), vec()
		VBROADCASTSS(paramAddr("lo"), lo)
		VBROADCASTSS(paramAddr("hi"), hi)
	}

	// body reduces the taps for channels [j, j+vecs*lanes) of np pixels.
	body := func(vecs, np int) {
		label := fmt.Sprintf("%s_p%dv%d", name, np, vecs)
		acc := make([][]VecVirtual, np)
		for p := range acc {
			acc[p] = make([]VecVirtual, vecs)
			for v := range acc[p] {
				acc[p][v] = vec()
			}
		}
		MOVQ(paramAddr("taps"), tp)
		switch mode {
		case modeDW:
			bias := GP64()
			MOVQ(paramAddr("bias"), bias)
			for v := 0; v < vecs; v++ {
				VMOVUPS(Mem{Base: bias, Index: j, Scale: 4, Disp: vb * v}, acc[0][v])
				for p := 1; p < np; p++ {
					VMOVUPS(acc[0][v], acc[p][v])
				}
			}
		case modeMax:
			// The first tap initialises the maximum.
			MOVQ(Mem{Base: tp}, xi)
			ADDQ(j, xi)
			for p := range acc {
				if p > 0 {
					ADDQ(xs, xi)
				}
				for v := range acc[p] {
					VMOVUPS(Mem{Base: x, Index: xi, Scale: 4, Disp: vb * v}, acc[p][v])
				}
			}
			ADDQ(U8(16), tp)
		case modeAvg:
			for p := range acc {
				for v := range acc[p] {
					if lanes == 16 {
						VPXORD(acc[p][v], acc[p][v], acc[p][v]) // VXORPS on ZMM needs AVX512DQ
					} else {
						VXORPS(acc[p][v], acc[p][v], acc[p][v])
					}
				}
			}
		}
		Label(label)
		CMPQ(tp, tend)
		JGE(LabelRef(label + "_end"))
		MOVQ(Mem{Base: tp}, xi)
		ADDQ(j, xi)
		var wv []VecVirtual
		if mode == modeDW {
			wi := GP64()
			MOVQ(Mem{Base: tp, Disp: 8}, wi)
			ADDQ(j, wi)
			for v := 0; v < vecs; v++ {
				wv = append(wv, vec())
				VMOVUPS(Mem{Base: w, Index: wi, Scale: 4, Disp: vb * v}, wv[v])
			}
		}
		for p := range acc {
			if p > 0 {
				ADDQ(xs, xi) // the next pixel's window
			}
			for v := range acc[p] {
				xm := Mem{Base: x, Index: xi, Scale: 4, Disp: vb * v}
				switch mode {
				case modeDW:
					VFMADD231PS(xm, wv[v], acc[p][v])
				case modeMax:
					VMAXPS(xm, acc[p][v], acc[p][v])
				case modeAvg:
					VADDPS(xm, acc[p][v], acc[p][v])
				}
			}
		}
		ADDQ(U8(16), tp)
		JMP(LabelRef(label))
		Label(label + "_end")
		yi, ld := GP64(), GP64()
		MOVQ(j, yi)
		MOVQ(paramAddr("ldy"), ld)
		for p := range acc {
			if p > 0 {
				ADDQ(ld, yi)
			}
			for v := range acc[p] {
				switch mode {
				case modeAvg:
					VMULPS(scale, acc[p][v], acc[p][v])
				case modeDW:
					// The value as the second source: NaN passes through.
					VMAXPS(acc[p][v], lo, acc[p][v])
					VMINPS(acc[p][v], hi, acc[p][v])
				}
				VMOVUPS(acc[p][v], Mem{Base: y, Index: yi, Scale: 4, Disp: vb * v})
			}
		}
	}

	// channels runs body over all nv channels of np pixels: 4 vectors at a
	// time, then 2, then 1.
	channels := func(np int) {
		XORQ(j, j)
		for _, vecs := range []int{4, 2, 1} {
			label := fmt.Sprintf("%s_ch%dv%d", name, np, vecs)
			Label(label)
			last := GP64()
			MOVQ(paramAddr("nv"), last)
			SUBQ(U32(vecs*lanes), last)
			CMPQ(j, last)
			JG(LabelRef(label + "_end"))
			body(vecs, np)
			ADDQ(U32(vecs*lanes), j)
			JMP(LabelRef(label))
			Label(label + "_end")
		}
	}
	// next moves x and y on by np pixels (xstep and ldy elements each).
	next := func(np int) {
		ld := GP64()
		MOVQ(paramAddr("ldy"), ld)
		for p := 0; p < np; p++ {
			LEAQ(Mem{Base: x, Index: xs, Scale: 4}, x)
			LEAQ(Mem{Base: y, Index: ld, Scale: 4}, y)
		}
		SUBQ(U8(np), npix)
	}

	Comment(fmt.Sprintf("Groups of %d pixels.", pg))
	Label(name + "_group")
	CMPQ(npix, U8(pg))
	JL(LabelRef(name + "_pix"))
	channels(pg)
	next(pg)
	JMP(LabelRef(name + "_group"))
	Comment("Then pixel by pixel.")
	Label(name + "_pix")
	CMPQ(npix, Imm(0))
	JLE(LabelRef(name + "_done"))
	channels(1)
	next(1)
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

// grpTaps emits the direct kernel of a grouped NHWC convolution whose
// groups have G input and G output channels (G 2, 4, 8, 16 or 32:
// ResNeXt's and RegNet's groups), with vector lanes spanning the output
// channels of 8/G groups (G < 8) or a group spanning G/8 vectors. For each of npix output pixels p and channels j in
// [0, nv) (nv a multiple of 8) it sums over the taps t, pairs (x offset,
// w offset) in elements, and the group's input channels c < G:
//
//	y[p*ldy+j] = min(max(bias[j] + sum_t sum_c x[p*xstep+xo_t+(j/G)*G+c] * w[wo_t+(j/8)*8*G+8c+j%8], lo), hi)
//
// (W packed [tap][j/8][c][8], templates.nhwcPackGroupedDirect). Output
// channel j reads the input vector at its own channel offset (the group's
// base is j rounded down to G): with G = 8 each vector is one group and
// lane c is a broadcast from memory, with G >= 16 one broadcast for the
// two vectors of 16 channels of a group (nv a multiple of G); with G = 2
// or 4, VPERMILPS with an immediate broadcasts lane c of each group of G
// lanes within each 128-bit half, straight from memory. Pixels go in
// groups of 6, 4, 2, then 1, and channels 2 vectors at a time, then 1: np x vecs accumulators stay in
// registers over all taps, and each (tap, c) weight vector is loaded once
// for the np pixels. Sums are in the order (t, c), the Go twin's
// (nhwcGrpTapsGo), so results do not depend on the grouping.
func grpTaps(name string, G int) {
	TEXT(name, NOSPLIT, "func(y, x *float32, taps *int, ntaps int, w, bias *float32, nv, npix, xstep, ldy int, lo, hi float32)")
	Doc(
		fmt.Sprintf("%s sets y[p*ldy+j] = min(max(bias[j] + sum_t sum_{c<%d}", name, G),
		fmt.Sprintf("x[p*xstep+taps[2t]+(j/%d)*%d+c] * w[taps[2t+1]+(j/8)*%d+8c+j%%8], lo), hi)", G, G, 8*G),
		"for p in [0, npix) and j in [0, nv), nv a multiple of 8: a grouped NHWC",
		fmt.Sprintf("convolution with %d input and %d output channels a group.", G, G),
		"",
		"Requires: AVX, FMA",
	)
	Pragma("noescape")
	x := Load(Param("x"), GP64())
	tend := Load(Param("ntaps"), GP64())
	SHLQ(U8(4), tend)
	ADDQ(paramAddr("taps"), tend) // end of the tap list
	y := Load(Param("y"), GP64())
	npix := Load(Param("npix"), GP64())
	xs := Load(Param("xstep"), GP64())
	SHLQ(U8(2), xs) // bytes
	j, wj, tp := GP64(), GP64(), GP64()

	// perm is VPERMILPS's immediate that broadcasts lane c of each group
	// of G lanes (G < 8) within a 128-bit half.
	perm := func(c int) U8 {
		imm := 0
		for l := 0; l < 4; l++ {
			imm |= ((l/G)*G + c) << (2 * l)
		}
		return U8(imm)
	}

	// body sums the taps for channels [j, j+8*vecs) of np pixels; with G
	// >= 16 they are the 16 channels h*16.. of their group.
	body := func(vecs, np, h int) {
		label := fmt.Sprintf("%s_p%dv%dh%d", name, np, vecs, h)
		acc := make([][]VecVirtual, np)
		bias := GP64()
		MOVQ(paramAddr("bias"), bias)
		for p := range acc {
			acc[p] = make([]VecVirtual, vecs)
			for v := range acc[p] {
				acc[p][v] = YMM()
				VMOVUPS(Mem{Base: bias, Index: j, Scale: 4, Disp: 32 * v}, acc[p][v])
			}
		}
		MOVQ(paramAddr("taps"), tp)
		Label(label)
		CMPQ(tp, tend)
		JGE(LabelRef(label + "_end"))
		// ra: pixel 0's x at this tap and channel j; rb: pixel 3's.
		ra, rb, wi := GP64(), GP64(), GP64()
		MOVQ(Mem{Base: tp}, ra)
		ADDQ(j, ra)
		LEAQ(Mem{Base: x, Index: ra, Scale: 4}, ra)
		if np > 3 {
			LEAQ(Mem{Base: ra, Index: xs, Scale: 2}, rb)
			ADDQ(xs, rb)
		}
		pix := func(p, disp int) Mem {
			base := ra
			if p >= 3 {
				base, p = rb, p-3
			}
			switch p {
			case 0:
				return Mem{Base: base, Disp: disp}
			case 1:
				return Mem{Base: base, Index: xs, Scale: 1, Disp: disp}
			}
			return Mem{Base: base, Index: xs, Scale: 2, Disp: disp}
		}
		MOVQ(Mem{Base: tp, Disp: 8}, wi)
		for c := 0; c < G; c++ {
			wv := make([]VecVirtual, vecs)
			for v := range wv {
				wv[v] = YMM()
				VMOVUPS(Mem{Base: wj, Index: wi, Scale: 4, Disp: 4 * (8*G*v + 8*c)}, wv[v])
			}
			for p := 0; p < np; p++ {
				var b VecVirtual
				for v := 0; v < vecs; v++ {
					switch {
					case G >= 16 && v > 0:
						// Both vectors are one group's: one broadcast.
					case G >= 16:
						b = YMM()
						VBROADCASTSS(pix(p, 4*(c-16*h)), b)
					case G == 8:
						b = YMM()
						VBROADCASTSS(pix(p, 4*(8*v+c)), b)
					default:
						b = YMM()
						VPERMILPS(perm(c), pix(p, 32*v), b)
					}
					VFMADD231PS(wv[v], b, acc[p][v])
				}
			}
		}
		ADDQ(U8(16), tp)
		JMP(LabelRef(label))
		Label(label + "_end")
		lo, hi := YMM(), YMM()
		VBROADCASTSS(paramAddr("lo"), lo)
		VBROADCASTSS(paramAddr("hi"), hi)
		yp, ld := GP64(), GP64()
		LEAQ(Mem{Base: y, Index: j, Scale: 4}, yp)
		MOVQ(paramAddr("ldy"), ld)
		SHLQ(U8(2), ld)
		for p := range acc {
			if p > 0 {
				ADDQ(ld, yp)
			}
			for v := range acc[p] {
				// The value as the second source: NaN passes through.
				VMAXPS(acc[p][v], lo, acc[p][v])
				VMINPS(acc[p][v], hi, acc[p][v])
				VMOVUPS(acc[p][v], Mem{Base: yp, Disp: 32 * v})
			}
		}
	}

	// channels runs body over all nv channels of np pixels: 2 vectors at
	// a time, then 1; wj is W at channel j's vector block.
	channels := func(np int) {
		XORQ(j, j)
		MOVQ(paramAddr("w"), wj)
		if G >= 16 {
			// A group at a time (nv a multiple of G), 16 channels at a
			// time.
			label := fmt.Sprintf("%s_ch%d", name, np)
			Label(label)
			last := GP64()
			MOVQ(paramAddr("nv"), last)
			SUBQ(U32(G), last)
			CMPQ(j, last)
			JG(LabelRef(label + "_end"))
			for h := 0; h < G/16; h++ {
				body(2, np, h)
				ADDQ(U32(16), j)
				ADDQ(U32(4*16*G), wj)
			}
			JMP(LabelRef(label))
			Label(label + "_end")
			return
		}
		for _, vecs := range []int{2, 1} {
			label := fmt.Sprintf("%s_ch%dv%d", name, np, vecs)
			Label(label)
			last := GP64()
			MOVQ(paramAddr("nv"), last)
			SUBQ(U32(8*vecs), last)
			CMPQ(j, last)
			JG(LabelRef(label + "_end"))
			body(vecs, np, 0)
			ADDQ(U32(8*vecs), j)
			ADDQ(U32(4*8*G*vecs), wj)
			JMP(LabelRef(label))
			Label(label + "_end")
		}
	}

	for _, pg := range []int{6, 4, 2, 1} {
		label := fmt.Sprintf("%s_px%d", name, pg)
		Comment(fmt.Sprintf("Groups of %d pixels.", pg))
		Label(label)
		CMPQ(npix, U8(pg))
		JL(LabelRef(label + "_end"))
		channels(pg)
		// On by pg pixels: xstep elements of x and ldy of y each.
		ld := GP64()
		MOVQ(paramAddr("ldy"), ld)
		for p := 0; p < pg; p++ {
			ADDQ(xs, x)
			LEAQ(Mem{Base: y, Index: ld, Scale: 4}, y)
		}
		SUBQ(U8(pg), npix)
		JMP(LabelRef(label))
		Label(label + "_end")
	}
	VZEROUPPER()
	RET()
}
