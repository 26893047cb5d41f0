//go:build amd64 && !purego

package templates

// The F16C conversions (asm_f16_amd64.s) where the CPU has F16C and AVX;
// k_half_purego.go elsewhere.

// cpuHasF16C reports whether the CPU has F16C (CPUID.1:ECX bit 29) and
// AVX with the OS saving YMM state.
var cpuHasF16C = detectF16C()

func detectF16C() bool {
	_, _, ecx1, _ := cpuidAsm(1, 0)
	const f16c, osxsave, avx = 1 << 29, 1 << 27, 1 << 28
	if ecx1&(f16c|osxsave|avx) != f16c|osxsave|avx {
		return false
	}
	xcr0, _ := xgetbvAsm()
	return xcr0&6 == 6
}

func f16ToF32s(dst []float32, src []uint16) {
	n8 := len(src) / 8
	if !cpuHasF16C || n8 == 0 {
		f16ToF32sGo(dst, src)
		return
	}
	f16to32(&dst[0], &src[0], n8)
	f16ToF32sGo(dst[8*n8:], src[8*n8:])
}

func f32ToF16s(dst []uint16, src []float32) {
	n8 := len(src) / 8
	if !cpuHasF16C || n8 == 0 {
		f32ToF16sGo(dst, src)
		return
	}
	if f32to16(&dst[0], &src[0], n8) != 0 {
		f16QuietNaNs(dst[:8*n8])
	}
	f32ToF16sGo(dst[8*n8:], src[8*n8:])
}
