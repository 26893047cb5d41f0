//go:build amd64 && !purego

package templates

// nhwcTaps runs an NHWC window kernel (see nhwcTapsGo) over c channels of
// npix pixels (output pixels c apart in y): with AVX-512 the ZMM kernel on
// the largest multiple of 16 channels, the AVX2 kernel on the largest
// multiple of 8 (of the rest) when the CPU has AVX2 and FMA, the Go twin on
// the rest. Each channel takes one path, the same at every thread count.
func nhwcTaps(mode int, y, x []float32, taps []int, w, bias []float32, c, npix, xstep int, scale, lo, hi float32) {
	nv := c &^ 7
	if !cpuHasAVX2FMA || nv == 0 || len(taps) == 0 {
		nhwcTapsGo(mode, y, x, taps, w, bias, 0, c, npix, xstep, c, scale, lo, hi)
		return
	}
	nhwcTapsCheck(mode, y, x, taps, w, bias, c, npix, xstep, c)
	nt := len(taps) / 2
	j0 := 0
	if n16 := c &^ 15; cpuHasAVX512 && n16 > 0 {
		switch mode {
		case nhwcModeDW:
			nhwcDWAVX512(&y[0], &x[0], &taps[0], nt, &w[0], &bias[0], n16, npix, xstep, c, lo, hi)
		case nhwcModeMax:
			nhwcMaxAVX512(&y[0], &x[0], &taps[0], nt, n16, npix, xstep, c)
		case nhwcModeAvg:
			nhwcAvgAVX512(&y[0], &x[0], &taps[0], nt, n16, npix, xstep, c, scale)
		}
		j0 = n16
	}
	if j0 < nv {
		// The kernels index from their base pointers: shifting all of them
		// by j0 runs channels [j0, nv).
		var wp, bp *float32
		if mode == nhwcModeDW {
			wp, bp = &w[j0], &bias[j0]
		}
		switch mode {
		case nhwcModeDW:
			nhwcDWAVX2(&y[j0], &x[j0], &taps[0], nt, wp, bp, nv-j0, npix, xstep, c, lo, hi)
		case nhwcModeMax:
			nhwcMaxAVX(&y[j0], &x[j0], &taps[0], nt, nv-j0, npix, xstep, c)
		case nhwcModeAvg:
			nhwcAvgAVX(&y[j0], &x[j0], &taps[0], nt, nv-j0, npix, xstep, c, scale)
		}
	}
	nhwcTapsGo(mode, y, x, taps, w, bias, nv, c, npix, xstep, c, scale, lo, hi)
}
