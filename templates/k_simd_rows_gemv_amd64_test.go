//go:build amd64 && !purego

package templates

// gemvRowsDirect runs gemvRowsAVX2 (when the CPU has AVX2 and FMA) and
// gemvRowsAVX512 (with AVX-512) on copies of y0, on the rows in fours and
// the columns in 8s or 16s, the Go twin on the rest, as gemvRows32 does.
func gemvRowsDirect(y0, x, a []float32, lda int) [][]float32 {
	var out [][]float32
	n, k := len(y0), len(x)
	run := func(kern func(y, x, a *float32, lda, n, k int), kq int) {
		y := append([]float32(nil), y0...)
		n4, kv := n&^3, k&^(kq-1)
		if n4 > 0 && kv > 0 {
			kern(&y[0], &x[0], &a[0], lda, n4, kv)
		}
		gemvRowsGo(y[:n4], x[kv:], a[kv:], lda)
		if n4 < n {
			gemvRowsGo(y[n4:], x, a[n4*lda:], lda)
		}
		out = append(out, y)
	}
	if cpuHasAVX2FMA {
		run(gemvRowsAVX2, 8)
	}
	if cpuHasAVX512 {
		run(gemvRowsAVX512, 16)
	}
	return out
}
