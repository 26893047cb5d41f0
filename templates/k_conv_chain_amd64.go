//go:build amd64 && !purego

package templates

// nhwcDWCols is nhwcTaps's depthwise mode for channels [j0, j1) of c (j0
// a multiple of 16): each channel takes the path nhwcTaps gives it (ZMM
// below c&^15, AVX2 below c&^7, Go twin above), so splitting the channels
// does not change results (FusedConvChain's channel split).
func nhwcDWCols(y, x []float32, taps []int, w, bias []float32, j0, j1, c, npix, xstep int, lo, hi float32) {
	nv := c &^ 7
	if !cpuHasAVX2FMA || nv == 0 || len(taps) == 0 {
		nhwcTapsGo(nhwcModeDW, y, x, taps, w, bias, j0, j1, npix, xstep, c, 0, lo, hi)
		return
	}
	if j0 < 0 || j0%16 != 0 || j1 > c {
		panic("templates: nhwcDWCols channels out of range")
	}
	nhwcTapsCheck(nhwcModeDW, y, x, taps, w, bias, c, npix, xstep, c)
	nt := len(taps) / 2
	e := min(j1, nv)
	j := j0
	if n16 := min(e, c&^15); cpuHasAVX512 && j < n16 {
		nhwcDWAVX512(&y[j], &x[j], &taps[0], nt, &w[j], &bias[j], n16-j, npix, xstep, c, lo, hi)
		j = n16
	}
	if j < e {
		nhwcDWAVX2(&y[j], &x[j], &taps[0], nt, &w[j], &bias[j], e-j, npix, xstep, c, lo, hi)
	}
	nhwcTapsGo(nhwcModeDW, y, x, taps, w, bias, max(j0, nv), j1, npix, xstep, c, 0, lo, hi)
}
