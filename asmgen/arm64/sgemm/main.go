// Command sgemm generates the NEON SGEMM micro-kernel of package templates
// and its Go declaration, with asmgen/arm64/build.
//
// Run it through go generate (make generate at the repository root):
//
//	go generate ./asmgen/arm64/sgemm
//
// It writes templates/asm_sgemm_arm64.s and templates/asm_sgemm_arm64.go.
package main

//go:generate go run . -pkg templates -out ../../../templates/asm_sgemm_arm64.s -stubs ../../../templates/asm_sgemm_arm64.go

import (
	"fmt"

	. "github.com/cuvil/cuvil/asmgen/arm64/build"
)

// The tile is the amd64 kernel's 6x16 on the same packing (k_gemm_sgemm.go:
// A micro-panels of 6 rows, B micro-panels of 16 columns, both k-major):
// 6 rows x 4 vectors of 4 floats = 24 accumulators, 4 B vectors and 2 A
// vectors, 30 of the 32 registers, so gen-time prepacking needs no
// per-arch width.
const (
	mr = 6
	nr = 16
	nv = nr / 4 // B vectors per k step
)

func main() {
	f := NewFile("arm64 && !purego")
	sgemm6x16(f)
	f.Generate()
}

func sgemm6x16(f *File) {
	fn := f.Func("sgemmKernel6x16NEON", `computes C = alpha*A*B + beta*C for one 6x16 tile of C,
row-major with row stride ldc (in elements). a is a packed A micro-panel
(k steps of 6 contiguous values, one per row), b a packed B micro-panel
(k steps of 16 contiguous values); k >= 1. When beta is 0, C is only
written, never read (BLAS semantics: NaNs in C do not propagate).`, "ASIMD")
	k, a, b, c := fn.Arg("k", "int"), fn.Arg("a", "*float32"), fn.Arg("b", "*float32"), fn.Arg("c", "*float32")
	ldc, alpha, beta := fn.Arg("ldc", "int"), fn.Arg("alpha", "float32"), fn.Arg("beta", "float32")

	var acc [mr][]V
	for i := range acc {
		acc[i] = fn.AllocVs(nv) // consecutive: one ST1 per row
	}
	bv := fn.AllocVs(nv)
	a03, a45 := fn.AllocV(), fn.AllocV()
	valpha, vbeta := fn.AllocV(), fn.AllocV()

	fn.Comment("Arguments: R0 = k, R1 = A panel, R2 = B panel, R3 = C, R4 = ldc in bytes")
	fn.Load(k, "R0")
	fn.Load(a, "R1")
	fn.Load(b, "R2")
	fn.Load(c, "R3")
	fn.Load(ldc, "R4")
	fn.I("LSL", "$2", "R4", "R4")

	fn.Comment("Zero the %d accumulators (row i, columns 4j..4j+3 in acc[i][j])", mr*nv)
	for i := range acc {
		for _, v := range acc[i] {
			fn.I("VEOR", v.B16(), v.B16(), v.B16())
		}
	}

	fn.Comment("Inner loop, one k step: 16 B values, 6 A values, %d FMLA by element (%d FLOPs in %d instructions)", mr*nv, 2*mr*nr, mr*nv+5)
	fn.Label("loop")
	fn.I("VLD1.P", fmt.Sprintf("%d(R2)", 4*nr), List(bv...))
	fn.I("VLD1.P", "16(R1)", List(a03))
	fn.I("FMOVD.P", "8(R1)", a45.F())
	for i := range acc {
		av, lane := a03, i
		if i >= 4 {
			av, lane = a45, i-4
		}
		for j, v := range acc[i] {
			fn.Word(FMLAElemS(v, bv[j], av, lane))
		}
	}
	fn.I("SUBS", "$1", "R0", "R0")
	fn.I("BNE", "loop")

	fn.Comment("Scale by alpha")
	fn.Load(alpha, valpha.F())
	fn.Load(beta, vbeta.F())
	for i := range acc {
		for _, v := range acc[i] {
			fn.Word(FMULElemS(v, v, valpha, 0))
		}
	}
	fn.I("FCMPS", "$(0.0)", vbeta.F())
	fn.I("BEQ", "store")

	fn.Comment("beta != 0: C = acc + beta*C, row by row")
	for i := range acc {
		fn.I("VLD1", "(R3)", List(bv...))
		for j, v := range acc[i] {
			fn.Word(FMLAElemS(v, bv[j], vbeta, 0))
		}
		fn.I("VST1", List(acc[i]...), "(R3)")
		if i < mr-1 {
			fn.I("ADD", "R4", "R3", "R3")
		}
	}
	fn.I("RET")

	fn.Comment("beta == 0: C = acc, C never read")
	fn.Label("store")
	for i := range acc {
		fn.I("VST1", List(acc[i]...), "(R3)")
		if i < mr-1 {
			fn.I("ADD", "R4", "R3", "R3")
		}
	}
	fn.I("RET")
}
