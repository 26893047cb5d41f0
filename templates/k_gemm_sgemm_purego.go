//go:build !(amd64 || arm64) || purego

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

// sgemmWide is false without assembly: no 6x32 kernel.
const sgemmWide = false

// sgemmMicroWide is never called in this build (sgemmWide is false); it
// is the two 6x16 tiles it stands for.
func sgemmMicroWide(kc int, a, b0, b1 []float32, c []float32, ldc int, alpha, beta float32) {
	sgemmMicroGo(kc, a, b0, c, ldc, alpha, beta, sgemmPkMR, sgemmPkNR)
	sgemmMicroGo(kc, a, b1, c[sgemmPkNR:], ldc, alpha, beta, sgemmPkMR, sgemmPkNR)
}

// sgemmMicroWideEdge is never called in this build (sgemmWide is false).
func sgemmMicroWideEdge(kc int, a, b0, b1 []float32, c []float32, ldc int, alpha, beta float32, mr, nr int) {
	sgemmMicroWideEdgeGo(kc, a, b0, b1, c, ldc, alpha, beta, mr, nr)
}

// sgemmPackA6 packs six rows of A (row stride lda), kc steps, into one A
// micro-panel with the Go twin.
func sgemmPackA6(kc int, a []float32, lda int, dst []float32) {
	sgemmPackA6Go(kc, a, lda, dst, 0)
}
