package templates

// The SGEMM path that reads A in place (not packed), for the row-major,
// untransposed A of a transformer's projections: with B prepacked at
// compile time, nothing is packed at run time. The AVX-512 6x32 kernel
// has direct variants of 1 to 6 rows (a partial last row tile, as 128 rows
// leave 2, runs the 2-row one, not a masked 6-row tile), so the path runs
// where sgemmWide and the columns split into whole 32-column tiles.

// sgemmDirectA reports whether sgemmDrive can read op(A) in place for an
// nc-column block.
func sgemmDirectA(A *sgemmOperand, nc int) bool {
	return sgemmWide && !A.packed && !A.trans && A.im2col == nil && nc%(2*sgemmPkNR) == 0
}

// sgemmReadsAInPlace reports whether a float32 GEMM with prepacked B reads
// op(A) in place (for blocks of whole 32-column tiles): then splitting its
// rows over threads saves no packing.
func sgemmReadsAInPlace(transA bool) bool { return sgemmWide && !transA }

// sgemmColAlign is the column alignment of the parts a GEMM's columns are
// split into: whole 32-column tiles where the 6x32 kernels run.
func sgemmColAlign() int {
	if sgemmWide {
		return 2 * sgemmPkNR
	}
	return sgemmPkNR
}

// sgemmMacroDirect is sgemmMacro for A read in place: a holds rows 0..mc-1
// of op(A) from column pc on (row stride lda). nc is a multiple of 32.
func sgemmMacroDirect(mc, nc, kc int, alpha float32, a []float32, lda int, bp []float32, beta float32, c []float32, ldc int, packB *sgemmOperand, pc, jc int) {
	for jr := 0; jr < nc; jr += 2 * sgemmPkNR {
		b0 := bp[jr*kc : (jr+sgemmPkNR)*kc]
		b1 := bp[(jr+sgemmPkNR)*kc : (jr+2*sgemmPkNR)*kc]
		if packB != nil {
			sgemmPackBPanels(b0, packB, pc, jc+jr, kc, sgemmPkNR)
			sgemmPackBPanels(b1, packB, pc, jc+jr+sgemmPkNR, kc, sgemmPkNR)
		}
		for ir := 0; ir < mc; {
			rows := min(sgemmPkMR, mc-ir)
			if r := mc - ir; r == sgemmPkMR+1 || r == sgemmPkMR+2 {
				// The last 7 or 8 rows as 4+3 or 4+4, not 6+1 or 6+2:
				// a tile of 1 or 2 rows has 2 or 4 FMA chains, too few
				// to hide the FMA latency (BERT's 128 rows: the 2-row
				// tile took 3% of the run, for 1.6% of the work).
				rows = 4
			}
			sgemmMicroWideDirect(kc, rows, a[ir*lda:], lda, b0, b1, c[ir*ldc+jr:], ldc, alpha, beta)
			ir += rows
		}
	}
}

// sgemmMicroWideDirectGo is the pure-Go twin of the direct kernels: it
// packs the rows (zero past them) and runs the packed twin on them, the
// same sums in the same order. It allocates: it is a test reference, and
// the fallback for kc <= 0.
func sgemmMicroWideDirectGo(kc, rows int, a []float32, lda int, b0, b1 []float32, c []float32, ldc int, alpha, beta float32) {
	ap := make([]float32, sgemmPkMR*max(kc, 0))
	for r := 0; r < rows; r++ {
		for p := 0; p < kc; p++ {
			ap[p*sgemmPkMR+r] = a[r*lda+p]
		}
	}
	sgemmMicroGo(kc, ap, b0, c, ldc, alpha, beta, rows, sgemmPkNR)
	sgemmMicroGo(kc, ap, b1, c[sgemmPkNR:], ldc, alpha, beta, rows, sgemmPkNR)
}
