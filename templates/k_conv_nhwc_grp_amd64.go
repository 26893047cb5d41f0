//go:build amd64 && !purego

package templates

// nhwcGrpTaps runs the grouped direct kernel (see nhwcGrpTapsGo) of G
// channels a group on nv channels (a multiple of 8 and, G >= 16, of G) of npix pixels: the
// AVX2 kernel when the CPU has AVX2 and FMA (AVX-512 CPUs too), else the
// Go twin.
func nhwcGrpTaps(G int, y, x []float32, taps []int, w, bias []float32, nv, npix, xstep, ldy int, lo, hi float32) {
	if !cpuHasAVX2FMA {
		nhwcGrpTapsGo(G, y, x, taps, w, bias, nv, npix, xstep, ldy, lo, hi)
		return
	}
	nhwcGrpCheck(G, y, x, taps, w, bias, nv, npix, xstep, ldy)
	tp := new(int) // never read when there are no taps
	if len(taps) > 0 {
		tp = &taps[0]
	}
	nt := len(taps) / 2
	switch G {
	case 2:
		nhwcGrp2AVX2(&y[0], &x[0], tp, nt, &w[0], &bias[0], nv, npix, xstep, ldy, lo, hi)
	case 4:
		nhwcGrp4AVX2(&y[0], &x[0], tp, nt, &w[0], &bias[0], nv, npix, xstep, ldy, lo, hi)
	case 8:
		nhwcGrp8AVX2(&y[0], &x[0], tp, nt, &w[0], &bias[0], nv, npix, xstep, ldy, lo, hi)
	case 16:
		nhwcGrp16AVX2(&y[0], &x[0], tp, nt, &w[0], &bias[0], nv, npix, xstep, ldy, lo, hi)
	case 32:
		nhwcGrp32AVX2(&y[0], &x[0], tp, nt, &w[0], &bias[0], nv, npix, xstep, ldy, lo, hi)
	default:
		nhwcGrpTapsGo(G, y, x, taps, w, bias, nv, npix, xstep, ldy, lo, hi)
	}
}
