//go:build !amd64 || purego

package templates

// bf16PWTile is the pure-Go convolution tile.
func bf16PWTile(rows, panels, k2 int, a []uint16, lda int, b []uint16, bstride int, c []float32, ldc int, bias, z []float32, lo, hi float32, flags, n int) {
	bf16PWTileGo(rows, panels, k2, a, lda, b, bstride, c, ldc, bias, z, lo, hi, flags, n)
}

// bf16RoundRow rounds src to bf16 into dst (bf16Round).
func bf16RoundRow(dst []uint16, src []float32) { bf16RoundRowGo(dst, src) }
