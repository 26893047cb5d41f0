//go:build !amd64 || purego

package templates

// sgemmUseAsm is false without assembly: sgemm keeps its own pure-Go
// 4x4 kernel, faster than the 6x16 twin written for testing.
const sgemmUseAsm = false

// sgemmMicro runs one micro-tile with the pure-Go twin: this build has no
// assembly kernels (purego tag, or an architecture without them yet).
func sgemmMicro(kc int, a, b []float32, c []float32, ldc int, alpha, beta float32, mr, nr int) {
	sgemmMicroGo(kc, a, b, c, ldc, alpha, beta, mr, nr)
}

// sgemmPackB16 copies kc rows of 16 floats (row stride ldb) from src to dst
// contiguously.
func sgemmPackB16(kc int, src []float32, ldb int, dst []float32) {
	sgemmPackB16Go(kc, src, ldb, dst)
}
