//go:build !amd64 || purego

package templates

// bf16Tile is the pure-Go tile (k_gemm_bf16_amd64.go: the AVX512_BF16 ones).
func bf16Tile(a []uint16, lda, rows int, b []uint16, bstride, panels, k2 int, acc *[bf16MR * bf16TW]float32) {
	bf16TileGo(a, lda, rows, b, bstride, panels, k2, acc)
}

// bf16HasAsm reports whether bf16Tile runs the assembly tiles (never here).
func bf16HasAsm() bool { return false }
