//go:build amd64 && !purego

package templates

// nhwcBiasClamp sets y[r*ldy+j] = min(max(y[r*ldy+j]+bias[j], lo), hi)
// over rows rows of m columns (row stride ldy >= m): the assembly on the largest multiple of 8
// columns when the CPU has AVX2 and FMA, the Go twin on the rest.
func nhwcBiasClamp(y, bias []float32, rows, m, ldy int, lo, hi float32) {
	nv := m &^ 7
	if !cpuHasAVX2FMA || nv == 0 || rows <= 0 {
		nhwcBiasClampGo(y, bias, rows, 0, m, ldy, lo, hi)
		return
	}
	if len(bias) < m || ldy < m || len(y) < (rows-1)*ldy+m {
		panic("templates: nhwcBiasClamp out of bounds")
	}
	nhwcBiasClampAVX(&y[0], &bias[0], rows, nv, ldy, lo, hi)
	nhwcBiasClampGo(y, bias, rows, nv, m, ldy, lo, hi)
}
