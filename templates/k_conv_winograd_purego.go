//go:build !amd64 || purego

package templates

// The Winograd transforms without assembly: their pure-Go twins
// (k_conv_winograd.go).

func wgInput8(v []float32, ldd, ldc int, p []float32, offs *[8]int, lds, nc, cs int) {
	wgInput8Go(v, ldd, ldc, p, offs, lds, nc, cs)
}

func wgOutput8(dst *[8][]float32, ldy int, mo []float32, lds int) {
	wgOutput8Go(dst, ldy, mo, lds)
}
