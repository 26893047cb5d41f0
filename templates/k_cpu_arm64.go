//go:build arm64 && !purego

package templates

// CPU feature detection for the arm64 assembly kernels, read once at init
// without x/sys: Linux (and Android) from the HWCAP/HWCAP2 words of the
// auxiliary vector (/proc/self/auxv, k_cpu_arm64_linux.go), darwin/ios
// from what every Apple core has, other systems ASIMD only (the base of
// ARMv8-A, which Go's arm64 port requires).

// Linux hwcap bits (arch/arm64/include/uapi/asm/hwcap.h).
const (
	hwcapASIMD   = 1 << 1
	hwcapASIMDHP = 1 << 10 // FP16 arithmetic in ASIMD
	hwcapASIMDDP = 1 << 20 // SDOT/UDOT
	hwcap2I8MM   = 1 << 13 // SMMLA/UMMLA/USMMLA
)

var cpuHWCap, cpuHWCap2, cpuHWCapKnown = cpuArm64HWCaps()

// cpuHasASIMD: Advanced SIMD (NEON), the SGEMM kernel's only requirement.
var cpuHasASIMD = cpuHWCap&hwcapASIMD != 0

// cpuHasDotProd: SDOT/UDOT (FEAT_DotProd).
var cpuHasDotProd = cpuHWCap&hwcapASIMDDP != 0

// cpuHasFP16: half-precision ASIMD arithmetic (FEAT_FP16).
var cpuHasFP16 = cpuHWCap&hwcapASIMDHP != 0

// cpuHasI8MM: int8 matrix multiply (FEAT_I8MM).
var cpuHasI8MM = cpuHWCap2&hwcap2I8MM != 0
