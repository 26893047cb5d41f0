//go:build !(amd64 || arm64) || purego

package templates

// The NHWC Winograd transforms without assembly: their Go twins
// (k_conv_winograd_nhwc.go) on every channel.

func wnInput(v []float32, ldv int, src *[wgPoints][]float32, c, f int) {
	wnInputGo(v, ldv, src, 0, c, f)
}

func wnOutput(dst *[16][]float32, mo []float32, ldm int, bias []float32, z *[16][]float32, m, zmode int, lo, hi float32, f int) {
	wnOutputGo(dst, mo, ldm, bias, z, 0, m, zmode, lo, hi, f)
}
