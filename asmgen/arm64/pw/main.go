// Command pw generates the NEON NHWC GEMM tiles of package templates
// (k_conv_nhwc_pw.go): C [rows, 16] = A x W' over k steps with the
// epilogue (accumulate, bias, residual, clamp) fused, A read in place
// (row-major, or gathered through a table of byte offsets), W' in the
// packed 16-column panels gen prepacks for every architecture. Their
// pure-Go twin is nhwcPWTileGo, the test reference; the amd64 tiles
// (asmgen/amd64/pw) have the same contract.
//
//	go generate ./asmgen/arm64/pw
package main

//go:generate go run . -pkg templates -out ../../../templates/asm_pw_arm64.s -stubs ../../../templates/asm_pw_arm64.go

import (
	"fmt"

	. "github.com/cuvil/cuvil/asmgen/arm64/build"
)

// maxRows is the tallest tile: rows x 4 vectors of accumulators (24), the
// 4 B vectors of a k step and 2 A scalars rotating: 30 of 32 registers.
const maxRows = 6

// The epilogue flags (k_conv_nhwc_pw.go), as bit numbers for TBZ.
const (
	bitAccum = 0
	bitBias  = 1
	bitZ     = 2
	bitClamp = 3
)

func main() {
	f := NewFile("arm64 && !purego")
	for _, offs := range []bool{false, true} {
		for rows := 1; rows <= maxRows; rows++ {
			for nv := 1; nv <= 4; nv++ {
				tile(f, rows, nv, offs)
			}
		}
	}
	f.Generate()
}

// tile emits one rows x 4*nv tile: the first nv vectors of a 16-column
// panel (a panel of 4*nv columns wastes no lanes: 24 output channels are
// a 16- and an 8-column tile). Each k step loads the tile's B values, then
// per row one A value (post-incremented, or at the step's gathered byte
// offset) and nv FMLA by element: 2*4*nv*rows FLOPs in 1+rows*(1+nv) (+1
// gathered, +1 for nv < 4) instructions, plus the loop's 2; the 6x16 tile's
// 192 FLOPs take 33.
func tile(f *File, rows, nv int, offs bool) {
	cols := 4 * nv
	name := fmt.Sprintf("nhwcPW%dx%dNEON", rows, cols)
	aDoc := "A row r at a+r*lda, step p at a[r*lda+p]"
	if offs {
		name = fmt.Sprintf("nhwcPWOffs%dx%dNEON", rows, cols)
		aDoc = "A row r at a+r*lda, step p at a[r*lda+offs[p]/4] (byte offsets)"
	}
	fn := f.Func(name, fmt.Sprintf(`sets the %dx%d tile of C (row stride ldc) to the product of k >= 1
steps (%s; B a packed
16-column panel, 16 values per step, of which the first %d are used) and
then, in this order by flags: adds C (nhwcPWAccum), bias[j] (nhwcPWBias),
z (nhwcPWZ, row stride ldc), clamps to [lo, hi] (nhwcPWClamp). Other flag
bits are ignored.`, rows, cols, aDoc, cols), "ASIMD")
	ak, aa, alda := fn.Arg("k", "int"), fn.Arg("a", "*float32"), fn.Arg("lda", "int")
	var aoffs Arg
	if offs {
		aoffs = fn.Arg("offs", "*int")
	}
	ab, ac, aldc := fn.Arg("b", "*float32"), fn.Arg("c", "*float32"), fn.Arg("ldc", "int")
	abias, az := fn.Arg("bias", "*float32"), fn.Arg("z", "*float32")
	alo, ahi, aflags := fn.Arg("lo", "float32"), fn.Arg("hi", "float32"), fn.Arg("flags", "int")

	rowReg := func(r int) string { return fmt.Sprintf("R%d", 1+r) }
	fn.Comment("R0 = k, R1..R%d = the A rows, R7 = B, R8 = C, R9 = ldc in bytes, R10 = bias, R11 = z, R12 = flags", rows)
	fn.Load(ak, "R0")
	fn.Load(aa, "R1")
	if rows > 1 {
		fn.Load(alda, "R15")
		fn.I("LSL", "$2", "R15", "R15")
		for r := 1; r < rows; r++ {
			fn.I("ADD", "R15", rowReg(r-1), rowReg(r))
		}
	}
	if offs {
		fn.Load(aoffs, "R13")
	}
	fn.Load(ab, "R7")
	fn.Load(ac, "R8")
	fn.Load(aldc, "R9")
	fn.I("LSL", "$2", "R9", "R9")
	fn.Load(abias, "R10")
	fn.Load(az, "R11")
	fn.Load(aflags, "R12")

	acc := make([][]V, rows)
	for r := range acc {
		acc[r] = fn.AllocVs(nv) // consecutive: one VLD1/VST1 per row
	}
	bv := fn.AllocVs(nv)
	av := [2]V{fn.AllocV(), fn.AllocV()}

	fn.Comment("Zero the %d accumulators (row r, columns 4j..4j+3 in acc[r][j])", nv*rows)
	for r := range acc {
		for _, v := range acc[r] {
			fn.I("VEOR", v.B16(), v.B16(), v.B16())
		}
	}

	fn.Comment("One k step: %d B values, %d A values, %d FMLA by element", cols, rows, nv*rows)
	fn.Label("loop")
	if nv == 4 {
		fn.I("VLD1.P", "64(R7)", List(bv...))
	} else {
		fn.I("VLD1", "(R7)", List(bv...))
		fn.I("ADD", "$64", "R7", "R7")
	}
	if offs {
		fn.I("MOVD.P", "8(R13)", "R14")
	}
	for r := range acc {
		a := av[r%2]
		if offs {
			fn.I("FMOVS", fmt.Sprintf("(%s)(R14)", rowReg(r)), a.F())
		} else {
			fn.I("FMOVS.P", fmt.Sprintf("4(%s)", rowReg(r)), a.F())
		}
		for j, v := range acc[r] {
			fn.Word(FMLAElemS(v, bv[j], a, 0))
		}
	}
	fn.I("SUBS", "$1", "R0", "R0")
	fn.I("BNE", "loop")

	// rowsPass adds the rows of a matrix of row stride ldc at base to the
	// accumulators (B's registers hold each row).
	rowsPass := func(base string) {
		fn.I("MOVD", base, "R15")
		for r := range acc {
			fn.I("VLD1", "(R15)", List(bv...))
			for j, v := range acc[r] {
				fn.Word(FADD(v, v, bv[j]))
			}
			if r < rows-1 {
				fn.I("ADD", "R9", "R15", "R15")
			}
		}
	}
	fn.Comment("Epilogue: C, bias, z, clamp, as the flags say")
	fn.I("TBZ", fmt.Sprintf("$%d", bitAccum), "R12", "noaccum")
	rowsPass("R8")
	fn.Label("noaccum")
	fn.I("TBZ", fmt.Sprintf("$%d", bitBias), "R12", "nobias")
	fn.I("VLD1", "(R10)", List(bv...))
	for r := range acc {
		for j, v := range acc[r] {
			fn.Word(FADD(v, v, bv[j]))
		}
	}
	fn.Label("nobias")
	fn.I("TBZ", fmt.Sprintf("$%d", bitZ), "R12", "noz")
	rowsPass("R11")
	fn.Label("noz")
	fn.I("TBZ", fmt.Sprintf("$%d", bitClamp), "R12", "store")
	lo, hi := av[0], av[1]
	fn.Load(alo, lo.F())
	fn.I("VDUP", fmt.Sprintf("V%d.S[0]", lo), lo.S4())
	fn.Load(ahi, hi.F())
	fn.I("VDUP", fmt.Sprintf("V%d.S[0]", hi), hi.S4())
	for r := range acc {
		for _, v := range acc[r] {
			fn.Word(FMAX(v, v, lo)) // NaN passes through, as in Go's max
			fn.Word(FMIN(v, v, hi))
		}
	}
	fn.Label("store")
	for r := range acc {
		fn.I("VST1", List(acc[r]...), "(R8)")
		if r < rows-1 {
			fn.I("ADD", "R9", "R8", "R8")
		}
	}
	fn.I("RET")
}
