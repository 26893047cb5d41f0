//go:build arm64 && !purego

package templates

// nhwcTaps runs an NHWC window kernel (see nhwcTapsGo) over c channels of
// npix pixels (output pixels c apart in y): the NEON kernel
// (asm_nhwc_arm64.s) on the largest multiple of 4 channels, the Go twin on
// the rest. Each channel takes one path, the same at every thread count.
func nhwcTaps(mode int, y, x []float32, taps []int, w, bias []float32, c, npix, xstep int, scale, lo, hi float32) {
	nv := c &^ 3
	if !cpuHasASIMD || nv == 0 || len(taps) == 0 {
		nhwcTapsGo(mode, y, x, taps, w, bias, 0, c, npix, xstep, c, scale, lo, hi)
		return
	}
	nhwcTapsCheck(mode, y, x, taps, w, bias, c, npix, xstep, c)
	nt := len(taps) / 2
	switch mode {
	case nhwcModeDW:
		nhwcDWNEON(&y[0], &x[0], &taps[0], nt, &w[0], &bias[0], nv, npix, xstep, c, lo, hi)
	case nhwcModeMax:
		nhwcMaxNEON(&y[0], &x[0], &taps[0], nt, nv, npix, xstep, c)
	case nhwcModeAvg:
		nhwcAvgNEON(&y[0], &x[0], &taps[0], nt, nv, npix, xstep, c, scale)
	}
	nhwcTapsGo(mode, y, x, taps, w, bias, nv, c, npix, xstep, c, scale, lo, hi)
}
