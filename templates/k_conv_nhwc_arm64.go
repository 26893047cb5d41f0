//go:build arm64 && !purego

package templates

// nhwcBiasClamp sets y[r*ldy+j] = min(max(y[r*ldy+j]+bias[j], lo), hi)
// over rows rows of m columns (row stride ldy >= m): the NEON kernel on the
// largest multiple of 4 columns, the Go twin on the rest.
func nhwcBiasClamp(y, bias []float32, rows, m, ldy int, lo, hi float32) {
	nv := m &^ 3
	if !cpuHasASIMD || nv == 0 || rows <= 0 {
		nhwcBiasClampGo(y, bias, rows, 0, m, ldy, lo, hi)
		return
	}
	if len(bias) < m || ldy < m || len(y) < (rows-1)*ldy+m {
		panic("templates: nhwcBiasClamp out of bounds")
	}
	nhwcBiasClampNEON(&y[0], &bias[0], rows, nv, ldy, lo, hi)
	nhwcBiasClampGo(y, bias, rows, nv, m, ldy, lo, hi)
}
