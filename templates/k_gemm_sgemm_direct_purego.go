//go:build !amd64 || purego

package templates

// sgemmMicroWideDirect is never called in this build (sgemmWide is
// false); it is its pure-Go twin.
func sgemmMicroWideDirect(kc, rows int, a []float32, lda int, b0, b1 []float32, c []float32, ldc int, alpha, beta float32) {
	sgemmMicroWideDirectGo(kc, rows, a, lda, b0, b1, c, ldc, alpha, beta)
}
