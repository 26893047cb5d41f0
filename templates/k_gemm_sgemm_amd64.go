//go:build amd64 && !purego

package templates

// sgemmWide makes the packed driver run 6x32 tiles (two B micro-panels)
// through the AVX-512 kernel.
var sgemmWide = cpuHasAVX512

// sgemmMicroWide runs a whole 6x32 tile: columns 0-15 from the packed B
// micro-panel b0, 16-31 from b1. Call it only when sgemmWide.
func sgemmMicroWide(kc int, a, b0, b1 []float32, c []float32, ldc int, alpha, beta float32) {
	if kc <= 0 {
		sgemmMicroGo(kc, a, b0, c, ldc, alpha, beta, sgemmPkMR, sgemmPkNR)
		sgemmMicroGo(kc, a, b1, c[sgemmPkNR:], ldc, alpha, beta, sgemmPkMR, sgemmPkNR)
		return
	}
	_ = a[kc*sgemmPkMR-1]
	_ = b0[kc*sgemmPkNR-1]
	_ = b1[kc*sgemmPkNR-1]
	_ = c[(sgemmPkMR-1)*ldc+2*sgemmPkNR-1]
	sgemmKernel6x32AVX512(kc, &a[0], &b0[0], &b1[0], &c[0], ldc, alpha, beta)
}

// sgemmMicroWideEdge runs the first mr rows (1..6) and nr columns (1..32)
// of a 6x32 tile: columns 0-15 from b0, 16-31 from b1 (read even when
// nr <= 16). Call it only when sgemmWide.
func sgemmMicroWideEdge(kc int, a, b0, b1 []float32, c []float32, ldc int, alpha, beta float32, mr, nr int) {
	if kc <= 0 || mr <= 0 || nr <= 0 {
		sgemmMicroWideEdgeGo(kc, a, b0, b1, c, ldc, alpha, beta, mr, nr)
		return
	}
	_ = a[kc*sgemmPkMR-1]
	_ = b0[kc*sgemmPkNR-1]
	_ = b1[kc*sgemmPkNR-1]
	_ = c[(mr-1)*ldc+nr-1]
	sgemmKernel6x32EdgeAVX512(kc, &a[0], &b0[0], &b1[0], &c[0], ldc, alpha, beta, mr, nr)
}

// sgemmUseAsm routes sgemm through the packed driver and its assembly
// micro-kernel.
var sgemmUseAsm = cpuHasAVX2FMA

// sgemmMicro runs one micro-tile: the assembly kernels when the CPU allows,
// the full kernel for whole 6x16 tiles and the masked one for edges.
func sgemmMicro(kc int, a, b []float32, c []float32, ldc int, alpha, beta float32, mr, nr int) {
	if !cpuHasAVX2FMA || kc <= 0 {
		sgemmMicroGo(kc, a, b, c, ldc, alpha, beta, mr, nr)
		return
	}
	// The assembly reads and writes through raw pointers: check the bounds
	// it will touch once here.
	_ = a[kc*sgemmPkMR-1]
	_ = b[kc*sgemmPkNR-1]
	_ = c[(mr-1)*ldc+nr-1]
	if mr == sgemmPkMR && nr == sgemmPkNR {
		sgemmKernel6x16AVX2(kc, &a[0], &b[0], &c[0], ldc, alpha, beta)
		return
	}
	sgemmKernel6x16EdgeAVX2(kc, &a[0], &b[0], &c[0], ldc, alpha, beta, mr, nr)
}

// sgemmPackB16 copies kc rows of 16 floats (row stride ldb) from src to dst
// contiguously, with the AVX copy when the CPU allows.
func sgemmPackB16(kc int, src []float32, ldb int, dst []float32) {
	if !cpuHasAVX2FMA || kc <= 0 {
		sgemmPackB16Go(kc, src, ldb, dst)
		return
	}
	_ = src[(kc-1)*ldb+sgemmPkNR-1]
	_ = dst[kc*sgemmPkNR-1]
	sgemmPackB16AVX(kc, &src[0], ldb, &dst[0])
}

// sgemmPackA6 packs six rows of A (row stride lda), kc steps, into one A
// micro-panel (dst[p*6+i] = a[i*lda+p]): the AVX transpose on the
// multiple of 8 steps, the Go twin on the rest.
func sgemmPackA6(kc int, a []float32, lda int, dst []float32) {
	k8 := kc &^ 7
	if !cpuHasAVX2FMA || k8 == 0 {
		sgemmPackA6Go(kc, a, lda, dst, 0)
		return
	}
	_, _ = a[5*lda+kc-1], dst[6*kc-1]
	sgemmPackA6AVX(k8, &a[0], lda, &dst[0])
	sgemmPackA6Go(kc, a, lda, dst, k8)
}
