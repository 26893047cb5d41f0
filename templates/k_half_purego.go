//go:build !amd64 || purego

package templates

// The pure-Go f16 conversions (k_half_amd64.go runs the F16C kernels).

func f16ToF32s(dst []float32, src []uint16) { f16ToF32sGo(dst, src) }

func f32ToF16s(dst []uint16, src []float32) { f32ToF16sGo(dst, src) }
