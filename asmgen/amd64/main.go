// Command amd64 generates the AVX2/FMA assembly kernels of package templates
// and their Go declarations, with avo's build API.
//
// Run it through go generate (make generate at the repository root):
//
//	go generate ./asmgen/amd64
//
// It writes templates/asm_sgemm_amd64.s and templates/asm_sgemm_amd64.go
// (the CPU feature probes are asmgen/amd64/cpu's).
package main

//go:generate go run . -pkg templates -out ../../templates/asm_sgemm_amd64.s -stubs ../../templates/asm_sgemm_amd64.go

import (
	. "github.com/mmcloughlin/avo/build"
)

func main() {
	ConstraintExpr("amd64,!purego")
	sgemmKernels()
	sgemmPackA6()
	sgemmKernel512()
	Generate()
}
