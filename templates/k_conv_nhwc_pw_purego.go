//go:build !(amd64 || arm64) || purego

package templates

// nhwcPWFast is false without assembly: NHWC convolutions take the packed
// SGEMM driver.
const nhwcPWFast = false

// nhwcPWTileShape is the largest tile: rows, and panels of 16 columns.
func nhwcPWTileShape() (rows, panels int) { return nhwcPWMaxRows, 2 }

// nhwcPWTile without assembly: the pure-Go twin (pf, a prefetch hint, is
// unused).
func nhwcPWTile(rows, panels, k int, a []float32, lda int, offs []int, b []float32, bstride int, pf, c []float32, ldc int, bias, z []float32, lo, hi float32, flags, n int) {
	nhwcPWTileGo(rows, panels, k, a, lda, offs, b, bstride, c, ldc, bias, z, lo, hi, flags, n)
}
