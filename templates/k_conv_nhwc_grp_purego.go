//go:build !amd64 || purego

package templates

// nhwcGrpTaps without assembly: the pure-Go twin.
func nhwcGrpTaps(G int, y, x []float32, taps []int, w, bias []float32, nv, npix, xstep, ldy int, lo, hi float32) {
	nhwcGrpTapsGo(G, y, x, taps, w, bias, nv, npix, xstep, ldy, lo, hi)
}
