//go:build !(amd64 || arm64) || purego

package templates

// nhwcBiasClamp without assembly: the Go twin for every column.
func nhwcBiasClamp(y, bias []float32, rows, m, ldy int, lo, hi float32) {
	nhwcBiasClampGo(y, bias, rows, 0, m, ldy, lo, hi)
}
