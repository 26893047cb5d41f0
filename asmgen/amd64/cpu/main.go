// Command cpu generates the CPU feature probes of package templates:
// cpuidAsm and xgetbvAsm, which templates/k_cpu_amd64.go reads once at init
// to decide which assembly kernels the CPU and the OS support. They live in
// a pair of their own so a model whose kernels only ask the CPU does not
// copy the SGEMM assembly.
//
//	go generate ./asmgen/amd64/cpu
package main

//go:generate go run . -pkg templates -out ../../../templates/asm_cpu_amd64.s -stubs ../../../templates/asm_cpu_amd64.go

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/reg"
)

func main() {
	ConstraintExpr("amd64,!purego")
	cpuFeatures()
	Generate()
}

// cpuFeatures emits the two instructions the templates need to decide, at
// init, which kernels the CPU and the OS support. Templates import only the
// standard library, so golang.org/x/sys/cpu is not an option.
func cpuFeatures() {
	TEXT("cpuidAsm", NOSPLIT, "func(leaf, subleaf uint32) (eax, ebx, ecx, edx uint32)")
	Doc("cpuidAsm executes CPUID with EAX=leaf and ECX=subleaf.")
	Load(Param("leaf"), EAX)
	Load(Param("subleaf"), ECX)
	CPUID()
	Store(EAX, Return("eax"))
	Store(EBX, Return("ebx"))
	Store(ECX, Return("ecx"))
	Store(EDX, Return("edx"))
	RET()

	TEXT("xgetbvAsm", NOSPLIT, "func() (eax, edx uint32)")
	Doc(
		"xgetbvAsm reads XCR0, the register enabling extended state; the OS must",
		"save YMM state (bits 1 and 2) before AVX code may run. Call it only when",
		"CPUID reports OSXSAVE.",
	)
	XORL(ECX, ECX)
	XGETBV()
	Store(EAX, Return("eax"))
	Store(EDX, Return("edx"))
	RET()
}
