//go:build !(amd64 || arm64) || purego

package templates

// nhwcTaps without assembly: the pure-Go twin for every channel.
func nhwcTaps(mode int, y, x []float32, taps []int, w, bias []float32, c, npix, xstep int, scale, lo, hi float32) {
	nhwcTapsGo(mode, y, x, taps, w, bias, 0, c, npix, xstep, c, scale, lo, hi)
}
