//go:build amd64 && !purego

package templates

// CPU feature detection for every amd64 assembly kernel, read once at init
// (cpuidAsm and xgetbvAsm: the generated pair asm_cpu_amd64.s, from
// asmgen/amd64/cpu).

// cpuHasAVX2FMA reports whether the CPU has AVX2 and FMA and the OS saves
// YMM state across context switches (XCR0 bits 1 and 2), read once at init
// through the generated cpuidAsm and xgetbvAsm.
var cpuHasAVX2FMA = detectAVX2FMA()

// cpuHasAVX512 reports whether the CPU has AVX512F and the OS saves the
// opmask and ZMM state (XCR0 bits 5-7) besides YMM state.
var cpuHasAVX512 = cpuHasAVX2FMA && detectAVX512()

func detectAVX512() bool {
	if xcr0, _ := xgetbvAsm(); xcr0&0xe6 != 0xe6 {
		return false
	}
	_, ebx7, _, _ := cpuidAsm(7, 0)
	const avx512f, bmi2 = 1 << 16, 1 << 8
	return ebx7&(avx512f|bmi2) == avx512f|bmi2
}

func detectAVX2FMA() bool {
	maxLeaf, _, _, _ := cpuidAsm(0, 0)
	if maxLeaf < 7 {
		return false
	}
	_, _, ecx1, _ := cpuidAsm(1, 0)
	const (
		fma     = 1 << 12
		osxsave = 1 << 27
		avx     = 1 << 28
	)
	if ecx1&(fma|osxsave|avx) != fma|osxsave|avx {
		return false
	}
	if xcr0, _ := xgetbvAsm(); xcr0&6 != 6 {
		return false
	}
	_, ebx7, _, _ := cpuidAsm(7, 0)
	const avx2 = 1 << 5
	return ebx7&avx2 != 0
}
