//go:build amd64 && !purego

package templates

// sgemmMicroWideDirect runs a 32-column tile of rows (1..6) rows with A
// read in place: rows of a row-major A from a[0], row stride lda. Call it
// only when sgemmWide.
func sgemmMicroWideDirect(kc, rows int, a []float32, lda int, b0, b1 []float32, c []float32, ldc int, alpha, beta float32) {
	if kc <= 0 || rows <= 0 || rows > sgemmPkMR {
		sgemmMicroWideDirectGo(kc, rows, a, lda, b0, b1, c, ldc, alpha, beta)
		return
	}
	_ = a[(rows-1)*lda+kc-1]
	_ = b0[kc*sgemmPkNR-1]
	_ = b1[kc*sgemmPkNR-1]
	_ = c[(rows-1)*ldc+2*sgemmPkNR-1]
	switch rows {
	case 6:
		sgemmKernel6x32DirectAVX512(kc, &a[0], lda, &b0[0], &b1[0], &c[0], ldc, alpha, beta)
	case 5:
		sgemmKernel5x32DirectAVX512(kc, &a[0], lda, &b0[0], &b1[0], &c[0], ldc, alpha, beta)
	case 4:
		sgemmKernel4x32DirectAVX512(kc, &a[0], lda, &b0[0], &b1[0], &c[0], ldc, alpha, beta)
	case 3:
		sgemmKernel3x32DirectAVX512(kc, &a[0], lda, &b0[0], &b1[0], &c[0], ldc, alpha, beta)
	case 2:
		sgemmKernel2x32DirectAVX512(kc, &a[0], lda, &b0[0], &b1[0], &c[0], ldc, alpha, beta)
	default:
		sgemmKernel1x32DirectAVX512(kc, &a[0], lda, &b0[0], &b1[0], &c[0], ldc, alpha, beta)
	}
}
