//go:build arm64 && !purego

package templates

// sgemmUseAsm routes sgemm through the packed driver and the NEON
// micro-kernel (asm_sgemm_arm64.s). The kernel reads the same 6x16
// packing as amd64's AVX2 kernel, so prepacked weights need no per-arch
// layout.
var sgemmUseAsm = cpuHasASIMD

// sgemmMicro runs one micro-tile: the NEON kernel for whole 6x16 tiles;
// edge tiles run the kernel into a 6x16 buffer (beta 0) and merge the
// first mr rows and nr columns into C with beta here.
func sgemmMicro(kc int, a, b []float32, c []float32, ldc int, alpha, beta float32, mr, nr int) {
	if !cpuHasASIMD || kc <= 0 || mr <= 0 || nr <= 0 {
		sgemmMicroGo(kc, a, b, c, ldc, alpha, beta, mr, nr)
		return
	}
	// The assembly reads and writes through raw pointers: check the bounds
	// it will touch once here.
	_ = a[kc*sgemmPkMR-1]
	_ = b[kc*sgemmPkNR-1]
	_ = c[(mr-1)*ldc+nr-1]
	if mr == sgemmPkMR && nr == sgemmPkNR {
		sgemmKernel6x16NEON(kc, &a[0], &b[0], &c[0], ldc, alpha, beta)
		return
	}
	var t [sgemmPkMR * sgemmPkNR]float32
	sgemmKernel6x16NEON(kc, &a[0], &b[0], &t[0], sgemmPkNR, alpha, 0)
	for i := 0; i < mr; i++ {
		ci, ti := c[i*ldc:i*ldc+nr], t[i*sgemmPkNR:i*sgemmPkNR+nr]
		if beta == 0 {
			copy(ci, ti)
			continue
		}
		for j := range ci {
			ci[j] = ti[j] + beta*ci[j]
		}
	}
}

// sgemmPackB16 copies kc rows of 16 floats (row stride ldb) from src to dst
// contiguously (Go: the copy is memory bound either way).
func sgemmPackB16(kc int, src []float32, ldb int, dst []float32) {
	sgemmPackB16Go(kc, src, ldb, dst)
}

// sgemmWide is false on arm64: no 6x32 kernel (the 6x16 tile already
// takes 30 of the 32 vector registers).
const sgemmWide = false

// sgemmMicroWide is never called in this build (sgemmWide is false); it
// is the two 6x16 tiles it stands for.
func sgemmMicroWide(kc int, a, b0, b1 []float32, c []float32, ldc int, alpha, beta float32) {
	sgemmMicro(kc, a, b0, c, ldc, alpha, beta, sgemmPkMR, sgemmPkNR)
	sgemmMicro(kc, a, b1, c[sgemmPkNR:], ldc, alpha, beta, sgemmPkMR, sgemmPkNR)
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
