//go:build !amd64 || purego

package templates

// qgemmTile is the pure-Go tile (k_quant_gemm_amd64.go: the VNNI and AVX2 ones).
func qgemmTile(a []uint8, lda, rows int, b []int8, bstride, panels, k4 int, fit bool, acc *[qgemmMR * qgemmTW]int32) {
	qgemmTileGo(a, lda, rows, b, bstride, panels, k4, acc)
}

// qgemmEpiF32Vec and qgemmEpiU8Vec store nothing here: storeRow's Go loops
// do it all (k_quant_gemm_amd64.go: the AVX2 epilogues).
func qgemmEpiF32Vec(acc, ct []int32, mu []float32, lo, hi float32, y []float32) int { return 0 }

func qgemmEpiU8Vec(acc, ct []int32, mu []float64, zy, lo, hi float64, y []uint8) int { return 0 }
