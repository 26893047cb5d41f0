//go:build !amd64 || purego

package templates

// The vector kernels without assembly: their pure-Go twins (k_simd_rows.go).

func dwConv9(y []float32, src *[9][]float32, w *[9]float32, bias, lo, hi float32) {
	dwConv9Go(y, src, 0, w, bias, lo, hi)
}

func biasClamp(y []float32, bias, lo, hi float32) { biasClampGo(y, bias, lo, hi) }

func gelu32(y []float32) { geluGo(y) }

func scale32(y []float32, a float32) { scaleGo(y, a) }

func packBT16(kc int, b []float32, ldb int, panel []float32) { packBT16Go(kc, b, ldb, panel, 0) }

func geluBias32(y, b []float32) {
	axpyGo(y, b[:len(y)], 1)
	geluGo(y)
}

func expSum32(y, x []float32, sub float32) float32 { return expSumGo(y, x, sub) }

func max32(x []float32) float32 { return maxGo(x) }

func axpy32(y, x []float32, a float32) { axpyGo(y, x, a) }

func addSum32(y, a, b []float32) float32 { return addSumGo(y, a, b) }

func sum32(x []float32) float32 { return sumGo(x) }

func sumSqDev32(x []float32, mean float32) float32 { return sumSqDevGo(x, mean) }

func normAffine32(y, x, s, b []float32, mean, inv float32) { normAffineGo(y, x, s, b, mean, inv) }

func dot4x32(a, b []float32, ldb int, out *[4]float32) { dot4Go(a, b, ldb, out) }

func lstmGates32(g, c, h []float32) { lstmGatesGo(g, c, h) }

func gemvRows32(y, x, a []float32, lda int) { gemvRowsGo(y, x, a, lda) }

// gemvRowsVec: no vector row kernels without assembly.
func gemvRowsVec(n, k int) bool { return false }

func mul32(y, a, b []float32) { mulGo(y, a, b) }

func mulRows16(y, x, s []float32) { mulRows16Go(y, x, s) }

func interleave2(y, a, b []float32) { interleave2Go(y, a, b) }
