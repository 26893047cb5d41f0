//go:build amd64 && !purego

package templates

// nhwcTaps runs an NHWC window kernel (see nhwcTapsGo) over c channels of
// npix pixels (output pixels c apart in y): the assembly on the largest
// multiple of 8 channels when the CPU has AVX2 and FMA, the Go twin on the
// rest.
func nhwcTaps(mode int, y, x []float32, taps []int, w, bias []float32, c, npix, xstep int, scale float32) {
	nv := c &^ 7
	if !cpuHasAVX2FMA || nv == 0 || len(taps) == 0 {
		nhwcTapsGo(mode, y, x, taps, w, bias, 0, c, npix, xstep, c, scale)
		return
	}
	nhwcTapsCheck(mode, y, x, taps, w, bias, c, npix, xstep, c)
	nt := len(taps) / 2
	switch mode {
	case nhwcModeDW:
		nhwcDWAVX2(&y[0], &x[0], &taps[0], nt, &w[0], &bias[0], nv, npix, xstep, c)
	case nhwcModeMax:
		nhwcMaxAVX(&y[0], &x[0], &taps[0], nt, nv, npix, xstep, c)
	case nhwcModeAvg:
		nhwcAvgAVX(&y[0], &x[0], &taps[0], nt, nv, npix, xstep, c, scale)
	}
	nhwcTapsGo(mode, y, x, taps, w, bias, nv, c, npix, xstep, c, scale)
}

// nhwcBiasClamp sets y[r*m+j] = min(max(y[r*m+j]+bias[j], lo), hi) over
// rows rows of m columns: the assembly on the largest multiple of 8
// columns when the CPU has AVX2 and FMA, the Go twin on the rest.
func nhwcBiasClamp(y, bias []float32, rows, m int, lo, hi float32) {
	nv := m &^ 7
	if !cpuHasAVX2FMA || nv == 0 || rows <= 0 {
		nhwcBiasClampGo(y, bias, rows, 0, m, lo, hi)
		return
	}
	if len(bias) < m || len(y) < rows*m {
		panic("templates: nhwcBiasClamp out of bounds")
	}
	nhwcBiasClampAVX(&y[0], &bias[0], rows, nv, m, lo, hi)
	nhwcBiasClampGo(y, bias, rows, nv, m, lo, hi)
}
