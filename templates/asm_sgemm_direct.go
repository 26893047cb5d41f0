package templates

// The SGEMM path that reads A in place (not packed), for the row-major,
// untransposed A of a transformer's projections: with B prepacked at
// compile time, nothing is packed at run time. Only the 6x32 AVX-512
// kernel has a direct variant, so the path runs where sgemmWide and the
// columns split into whole 32-column tiles; a partial last row tile still
// reads a packed copy of its rows.

// sgemmDirectA reports whether sgemmDrive can read op(A) in place for an
// nc-column block.
func sgemmDirectA(A *sgemmOperand, nc int) bool {
	return sgemmWide && !A.packed && !A.trans && A.im2col == nil && nc%(2*sgemmPkNR) == 0
}

// sgemmMacroDirect is sgemmMacro for A read in place: a holds rows 0..mc-1
// of op(A) from column pc on (row stride lda); tail is the packed panel of
// the last mc%6 rows (unused when mc is a multiple of 6). nc is a
// multiple of 32.
func sgemmMacroDirect(mc, nc, kc int, alpha float32, a []float32, lda int, tail, bp []float32, beta float32, c []float32, ldc int, packB *sgemmOperand, pc, jc int) {
	full := mc / sgemmPkMR * sgemmPkMR
	for jr := 0; jr < nc; jr += 2 * sgemmPkNR {
		b0 := bp[jr*kc : (jr+sgemmPkNR)*kc]
		b1 := bp[(jr+sgemmPkNR)*kc : (jr+2*sgemmPkNR)*kc]
		if packB != nil {
			sgemmPackBPanels(b0, packB, pc, jc+jr, kc, sgemmPkNR)
			sgemmPackBPanels(b1, packB, pc, jc+jr+sgemmPkNR, kc, sgemmPkNR)
		}
		for ir := 0; ir < full; ir += sgemmPkMR {
			sgemmMicroWideDirect(kc, a[ir*lda:], lda, b0, b1, c[ir*ldc+jr:], ldc, alpha, beta)
		}
		if full < mc {
			sgemmMicroWideEdge(kc, tail, b0, b1, c[full*ldc+jr:], ldc, alpha, beta, mc-full, 2*sgemmPkNR)
		}
	}
}

// sgemmMicroWideDirectGo is the pure-Go twin of the direct 6x32 kernel:
// it packs the six rows and runs the packed twin, the same sums in the
// same order. It allocates: it is a test reference, and the fallback for
// kc <= 0.
func sgemmMicroWideDirectGo(kc int, a []float32, lda int, b0, b1 []float32, c []float32, ldc int, alpha, beta float32) {
	ap := make([]float32, sgemmPkMR*max(kc, 0))
	for r := 0; r < sgemmPkMR; r++ {
		for p := 0; p < kc; p++ {
			ap[p*sgemmPkMR+r] = a[r*lda+p]
		}
	}
	sgemmMicroGo(kc, ap, b0, c, ldc, alpha, beta, sgemmPkMR, sgemmPkNR)
	sgemmMicroGo(kc, ap, b1, c[sgemmPkNR:], ldc, alpha, beta, sgemmPkMR, sgemmPkNR)
}
