//go:build !amd64 || purego

package templates

// qgemmTile is the pure-Go tile (k_quant_gemm_amd64.go: the VNNI and AVX2 ones).
func qgemmTile(a []uint8, lda, rows int, b []int8, bstride, panels, k4 int, fit bool, acc *[qgemmMR * qgemmTW]int32) {
	qgemmTileGo(a, lda, rows, b, bstride, panels, k4, acc)
}
