// Command nhwc generates the NEON kernels of package templates that run
// NHWC windows (depthwise convolution, max and average pooling) vectorised
// over channels, and the NHWC GEMM's bias-and-clamp rows, with
// asmgen/arm64/build. Their pure-Go twins are nhwcTapsGo
// (templates/k_conv_nhwc_window.go) and nhwcBiasClampGo, the test
// references; the amd64 kernels (asmgen/amd64/nhwc) have the same shape.
//
//	go generate ./asmgen/arm64/nhwc
package main

//go:generate go run . -pkg templates -out ../../../templates/asm_nhwc_arm64.s -stubs ../../../templates/asm_nhwc_arm64.go

import (
	"fmt"

	. "github.com/cuvil/cuvil/asmgen/arm64/build"
)

func main() {
	f := NewFile("arm64 && !purego")
	taps(f, "nhwcDWNEON", modeDW)
	taps(f, "nhwcMaxNEON", modeMax)
	taps(f, "nhwcAvgNEON", modeAvg)
	biasClampRows(f)
	f.Generate()
}

const (
	modeDW = iota
	modeMax
	modeAvg
)

// pg is the pixel group: pg x 4 vectors of accumulators (16) stay in
// registers over all taps, with 4 weight and 4 input vectors and the
// clamp's two (26 of 32).
const pg = 4

// taps emits one tap-list kernel. For each of npix output pixels p and
// channels j in [0, nv) (nv a multiple of 4) it reduces the taps t, each a
// pair (x offset, w offset) in elements:
//
//	dw:  y[p*ldy+j] = min(max(bias[j] + sum_t x[p*xstep+xo_t+j] * w[wo_t+j], lo), hi)
//	max: y[p*ldy+j] = max_t x[p*xstep+xo_t+j]          (ntaps >= 1)
//	avg: y[p*ldy+j] = scale * sum_t x[p*xstep+xo_t+j]
//
// Pixels go in groups of pg (the last few one by one) and channels 4, 2,
// then 1 vector (of 4 lanes) at a time; each tap's weight vectors are
// loaded once for the group. Taps are summed in list order, so the
// grouping does not change results; max keeps the twin's NaN rule (the
// running maximum is replaced unless it is greater: FCMGT and BIF).
func taps(f *File, name string, mode int) {
	var what string
	switch mode {
	case modeDW:
		what = "y[p*ldy+j] = min(max(bias[j] + sum_t x[p*xstep+taps[2t]+j]*w[taps[2t+1]+j], lo), hi)"
	case modeMax:
		what = "y[p*ldy+j] = max_t x[p*xstep+taps[2t]+j] (ntaps >= 1)"
	case modeAvg:
		what = "y[p*ldy+j] = scale * sum_t x[p*xstep+taps[2t]+j]"
	}
	fn := f.Func(name, fmt.Sprintf(`sets %s
for p in [0, npix) and j in [0, nv), nv a multiple of 4: NHWC output
pixels sharing one list of (x offset, w offset) taps, in elements.`, what), "ASIMD")
	ay, ax, atp, ant := fn.Arg("y", "*float32"), fn.Arg("x", "*float32"), fn.Arg("taps", "*int"), fn.Arg("ntaps", "int")
	var aw, ab, alo, ahi, asc Arg
	if mode == modeDW {
		aw, ab = fn.Arg("w", "*float32"), fn.Arg("bias", "*float32")
	}
	anv, anp, axs, ald := fn.Arg("nv", "int"), fn.Arg("npix", "int"), fn.Arg("xstep", "int"), fn.Arg("ldy", "int")
	switch mode {
	case modeDW:
		alo, ahi = fn.Arg("lo", "float32"), fn.Arg("hi", "float32")
	case modeAvg:
		asc = fn.Arg("scale", "float32")
	}

	fn.Comment("R0 = y, R1 = x, R2 = taps, R3 = end of taps, R4 = w, R5 = bias, R6 = nv, R7 = npix,")
	fn.Comment("R8 = xstep, R9 = ldy (R6, R8, R9 in bytes); R10 = channel offset in bytes")
	fn.Load(ay, "R0")
	fn.Load(ax, "R1")
	fn.Load(atp, "R2")
	fn.Load(ant, "R3")
	fn.I("ADD", "R3<<4", "R2", "R3")
	if mode == modeDW {
		fn.Load(aw, "R4")
		fn.Load(ab, "R5")
	}
	fn.Load(anv, "R6")
	fn.I("LSL", "$2", "R6", "R6")
	fn.Load(anp, "R7")
	fn.Load(axs, "R8")
	fn.I("LSL", "$2", "R8", "R8")
	fn.Load(ald, "R9")
	fn.I("LSL", "$2", "R9", "R9")

	var acc [pg][4]V
	for p := range acc {
		for v := range acc[p] {
			acc[p][v] = fn.AllocV()
		}
	}
	wv := fn.AllocVs(4)
	xv := fn.AllocVs(4)
	var lo, hi, sc, mask V
	switch mode {
	case modeDW:
		lo, hi = fn.AllocV(), fn.AllocV()
		fn.Comment("The activation's clamp (infinite bounds for none), fused")
		fn.Load(alo, lo.F())
		fn.I("VDUP", fmt.Sprintf("V%d.S[0]", lo), lo.S4())
		fn.Load(ahi, hi.F())
		fn.I("VDUP", fmt.Sprintf("V%d.S[0]", hi), hi.S4())
	case modeAvg:
		sc = fn.AllocV()
		fn.Load(asc, sc.F())
	case modeMax:
		mask = fn.AllocV()
	}

	// body reduces the taps for channels [j, j+vecs*4) of np pixels.
	body := func(vecs, np int) {
		label := fmt.Sprintf("p%dv%d", np, vecs)
		accs := func(p int) []V { return acc[p][:vecs] }
		fn.I("MOVD", "R2", "R11")
		switch mode {
		case modeDW:
			fn.I("ADD", "R10", "R5", "R12")
			fn.I("VLD1", "(R12)", List(accs(0)...))
			for p := 1; p < np; p++ {
				for v := 0; v < vecs; v++ {
					fn.I("VORR", acc[0][v].B16(), acc[0][v].B16(), acc[p][v].B16())
				}
			}
		case modeMax:
			fn.Comment("The first tap initialises the maximum")
			fn.I("MOVD", "(R11)", "R12")
			fn.I("ADD", "R12<<2", "R1", "R12")
			fn.I("ADD", "R10", "R12", "R12")
			for p := 0; p < np; p++ {
				if p > 0 {
					fn.I("ADD", "R8", "R12", "R12")
				}
				fn.I("VLD1", "(R12)", List(accs(p)...))
			}
			fn.I("ADD", "$16", "R11", "R11")
		case modeAvg:
			for p := 0; p < np; p++ {
				for _, v := range accs(p) {
					fn.I("VEOR", v.B16(), v.B16(), v.B16())
				}
			}
		}
		fn.Label(label)
		fn.I("CMP", "R3", "R11")
		fn.I("BGE", label+"_end")
		fn.I("MOVD", "(R11)", "R12")
		fn.I("ADD", "R12<<2", "R1", "R12")
		fn.I("ADD", "R10", "R12", "R12")
		if mode == modeDW {
			fn.I("MOVD", "8(R11)", "R13")
			fn.I("ADD", "R13<<2", "R4", "R13")
			fn.I("ADD", "R10", "R13", "R13")
			fn.I("VLD1", "(R13)", List(wv[:vecs]...))
		}
		for p := 0; p < np; p++ {
			if p > 0 {
				fn.I("ADD", "R8", "R12", "R12") // the next pixel's window
			}
			fn.I("VLD1", "(R12)", List(xv[:vecs]...))
			for v, a := range accs(p) {
				switch mode {
				case modeDW:
					fn.I("VFMLA", wv[v].S4(), xv[v].S4(), a.S4())
				case modeMax:
					// a = a > x ? a : x
					fn.Word(FCMGT(mask, a, xv[v]))
					fn.I("VBIF", mask.B16(), xv[v].B16(), a.B16())
				case modeAvg:
					fn.Word(FADD(a, a, xv[v]))
				}
			}
		}
		fn.I("ADD", "$16", "R11", "R11")
		fn.I("B", label)
		fn.Label(label + "_end")
		fn.I("ADD", "R10", "R0", "R14")
		for p := 0; p < np; p++ {
			if p > 0 {
				fn.I("ADD", "R9", "R14", "R14")
			}
			for _, a := range accs(p) {
				switch mode {
				case modeAvg:
					fn.Word(FMULElemS(a, a, sc, 0))
				case modeDW:
					fn.Word(FMAX(a, a, lo)) // NaN passes through, as in Go's max
					fn.Word(FMIN(a, a, hi))
				}
			}
			fn.I("VST1", List(accs(p)...), "(R14)")
		}
	}

	// channels runs body over all nv channels of np pixels: 4 vectors at a
	// time, then 2, then 1.
	channels := func(np int) {
		fn.I("MOVD", "ZR", "R10")
		for _, vecs := range []int{4, 2, 1} {
			label := fmt.Sprintf("ch%dv%d", np, vecs)
			fn.Label(label)
			fn.I("SUB", fmt.Sprintf("$%d", 16*vecs), "R6", "R15")
			fn.I("CMP", "R15", "R10")
			fn.I("BGT", label+"_end")
			body(vecs, np)
			fn.I("ADD", fmt.Sprintf("$%d", 16*vecs), "R10", "R10")
			fn.I("B", label)
			fn.Label(label + "_end")
		}
	}
	// next moves x and y on by np pixels.
	next := func(np int) {
		for p := 0; p < np; p++ {
			fn.I("ADD", "R8", "R1", "R1")
			fn.I("ADD", "R9", "R0", "R0")
		}
		fn.I("SUB", fmt.Sprintf("$%d", np), "R7", "R7")
	}

	fn.Comment("Groups of %d pixels", pg)
	fn.Label("group")
	fn.I("CMP", fmt.Sprintf("$%d", pg), "R7")
	fn.I("BLT", "pix")
	channels(pg)
	next(pg)
	fn.I("B", "group")
	fn.Comment("Then pixel by pixel")
	fn.Label("pix")
	fn.I("CMP", "$0", "R7")
	fn.I("BLE", "done")
	channels(1)
	next(1)
	fn.I("B", "pix")
	fn.Label("done")
	fn.I("RET")
}

// biasClampRows emits the NHWC GEMM epilogue: a per-column bias and a
// clamp (Relu, Clip, or none with infinite bounds) over rows of an
// [rows, ldy] output, in one pass.
func biasClampRows(f *File) {
	fn := f.Func("nhwcBiasClampNEON", `sets y[r*ldy+j] = min(max(y[r*ldy+j] + bias[j], lo), hi)
for r in [0, rows) and j in [0, nv), nv a multiple of 4.`, "ASIMD")
	ay, ab, ar, anv, ald := fn.Arg("y", "*float32"), fn.Arg("bias", "*float32"), fn.Arg("rows", "int"), fn.Arg("nv", "int"), fn.Arg("ldy", "int")
	alo, ahi := fn.Arg("lo", "float32"), fn.Arg("hi", "float32")
	fn.Comment("R0 = y row, R1 = bias, R2 = rows, R3 = nv, R4 = ldy in bytes")
	fn.Load(ay, "R0")
	fn.Load(ab, "R1")
	fn.Load(ar, "R2")
	fn.Load(anv, "R3")
	fn.Load(ald, "R4")
	fn.I("LSL", "$2", "R4", "R4")
	lo, hi, v, b := fn.AllocV(), fn.AllocV(), fn.AllocV(), fn.AllocV()
	fn.Load(alo, lo.F())
	fn.I("VDUP", fmt.Sprintf("V%d.S[0]", lo), lo.S4())
	fn.Load(ahi, hi.F())
	fn.I("VDUP", fmt.Sprintf("V%d.S[0]", hi), hi.S4())
	fn.Label("row")
	fn.I("CMP", "$0", "R2")
	fn.I("BLE", "done")
	fn.I("MOVD", "R0", "R5")
	fn.I("MOVD", "R1", "R6")
	fn.I("MOVD", "R3", "R7")
	fn.Comment("Four columns at a time")
	fn.Label("loop")
	fn.I("CMP", "$4", "R7")
	fn.I("BLT", "next")
	fn.I("VLD1", "(R5)", List(v))
	fn.I("VLD1.P", "16(R6)", List(b))
	fn.Word(FADD(v, v, b))
	fn.Word(FMAX(v, v, lo)) // NaN passes through, as in Go's max
	fn.Word(FMIN(v, v, hi))
	fn.I("VST1.P", List(v), "16(R5)")
	fn.I("SUB", "$4", "R7", "R7")
	fn.I("B", "loop")
	fn.Label("next")
	fn.I("ADD", "R4", "R0", "R0")
	fn.I("SUB", "$1", "R2", "R2")
	fn.I("B", "row")
	fn.Label("done")
	fn.I("RET")
}
