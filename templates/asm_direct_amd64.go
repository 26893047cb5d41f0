//go:build amd64 && !purego

package templates

// sgemmMicroWideDirect runs a whole 6x32 tile with A read in place: six
// rows of a row-major A from a[0], row stride lda. Call it only when
// sgemmWide.
func sgemmMicroWideDirect(kc int, a []float32, lda int, b0, b1 []float32, c []float32, ldc int, alpha, beta float32) {
	if kc <= 0 {
		sgemmMicroWideDirectGo(kc, a, lda, b0, b1, c, ldc, alpha, beta)
		return
	}
	_ = a[5*lda+kc-1]
	_ = b0[kc*sgemmPkNR-1]
	_ = b1[kc*sgemmPkNR-1]
	_ = c[(sgemmPkMR-1)*ldc+2*sgemmPkNR-1]
	sgemmKernel6x32DirectAVX512(kc, &a[0], lda, &b0[0], &b1[0], &c[0], ldc, alpha, beta)
}
