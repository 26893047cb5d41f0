//go:build arm64 && !purego

package templates

// nhwcDWCols is nhwcTaps's depthwise mode for channels [j0, j1) of c (j0
// a multiple of 16): each channel takes the path nhwcTaps gives it, so
// splitting the channels does not change results.
func nhwcDWCols(y, x []float32, taps []int, w, bias []float32, j0, j1, c, npix, xstep int, lo, hi float32) {
	nv := c &^ 3
	if !cpuHasASIMD || nv == 0 || len(taps) == 0 {
		nhwcTapsGo(nhwcModeDW, y, x, taps, w, bias, j0, j1, npix, xstep, c, 0, lo, hi)
		return
	}
	if j0 < 0 || j0%16 != 0 || j1 > c {
		panic("templates: nhwcDWCols channels out of range")
	}
	nhwcTapsCheck(nhwcModeDW, y, x, taps, w, bias, c, npix, xstep, c)
	if e := min(j1, nv); j0 < e {
		nhwcDWNEON(&y[j0], &x[j0], &taps[0], len(taps)/2, &w[j0], &bias[j0], e-j0, npix, xstep, c, lo, hi)
	}
	nhwcTapsGo(nhwcModeDW, y, x, taps, w, bias, max(j0, nv), j1, npix, xstep, c, 0, lo, hi)
}
