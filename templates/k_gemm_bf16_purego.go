//go:build !amd64 || purego

package templates

// bf16Tile is the pure-Go tile (k_gemm_bf16_amd64.go: the AVX512_BF16 ones).
func bf16Tile(a []uint16, lda, rows int, b []uint16, bstride, panels, k2 int, acc *[bf16MR * bf16TW]float32) {
	bf16TileGo(a, lda, rows, b, bstride, panels, k2, acc)
}

// bf16HasAsm reports whether bf16Tile runs the assembly tiles (never here).
func bf16HasAsm() bool { return false }

// bf16PWTile is the pure-Go convolution tile.
func bf16PWTile(rows, panels, k2 int, a []uint16, lda int, b []uint16, bstride int, c []float32, ldc int, bias, z []float32, lo, hi float32, flags, n int) {
	bf16PWTileGo(rows, panels, k2, a, lda, b, bstride, c, ldc, bias, z, lo, hi, flags, n)
}

// bf16RoundRow rounds src to bf16 into dst (bf16Round).
func bf16RoundRow(dst []uint16, src []float32) { bf16RoundRowGo(dst, src) }
