// Command fmapeak generates the FMA-peak probes of package templates: loops
// of independent FMA chains held in registers (no memory traffic), AVX2 and
// AVX-512, that measure the core's float32 FMA throughput, against which
// BenchmarkFMAPeak* in templates/k_gemm_sgemm_test.go rates the SGEMM kernels.
// Only tests call them, so gen never copies them into a generated package.
//
//	go generate ./asmgen/amd64/fmapeak
package main

//go:generate go run . -pkg templates -out ../../../templates/asm_fmapeak_amd64.s -stubs ../../../templates/asm_fmapeak_amd64.go

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

func main() {
	ConstraintExpr("amd64,!purego")
	// 12 YMM chains: 4-cycle FMA latency times 2 FMA ports needs at least
	// 8 in flight; 24 ZMM chains leave room for 5-6 cycle latencies.
	probe("fmaPeakAVX2", "AVX, FMA3", 12, 8, YMM)
	probe("fmaPeakAVX512", "AVX512F", 24, 16, ZMM)
	Generate()
}

func probe(name, requires string, chains, lanes int, vec func() VecVirtual) {
	TEXT(name, NOSPLIT, "func(n int)")
	Doc(
		fmt.Sprintf("%s runs n iterations of %d independent %d-lane FMAs", name, chains, lanes),
		fmt.Sprintf("(%d float32 flops per iteration) on zeroed registers.", 2*chains*lanes),
		"",
		"Requires: "+requires,
	)
	n := Load(Param("n"), GP64())
	zero := func(v VecVirtual) {
		if lanes == 16 {
			VPXORD(v, v, v) // VXORPS on ZMM needs AVX512DQ
		} else {
			VXORPS(v, v, v)
		}
	}
	a, b := vec(), vec()
	zero(a)
	zero(b)
	acc := make([]VecVirtual, chains)
	for i := range acc {
		acc[i] = vec()
		zero(acc[i])
	}
	Label(name + "_loop")
	TESTQ(n, n)
	JZ(LabelRef(name + "_done"))
	for i := range acc {
		VFMADD231PS(a, b, acc[i])
	}
	DECQ(n)
	JMP(LabelRef(name + "_loop"))
	Label(name + "_done")
	// Keep the accumulators live.
	for i := 1; i < chains; i++ {
		VADDPS(acc[i], acc[0], acc[0])
	}
	VADDPS(acc[0], a, a)
	VZEROUPPER()
	RET()
}
