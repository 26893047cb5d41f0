//go:build !(amd64 || arm64) || purego

package templates

// nhwcDWCols is nhwcTaps's depthwise mode for channels [j0, j1) of c.
func nhwcDWCols(y, x []float32, taps []int, w, bias []float32, j0, j1, c, npix, xstep int, lo, hi float32) {
	nhwcTapsGo(nhwcModeDW, y, x, taps, w, bias, j0, j1, npix, xstep, c, 0, lo, hi)
}
