//go:build amd64 && !purego

package templates

// The vector kernels' dispatch: the assembly (asm_vec_amd64.s) on the
// largest multiple of 8 elements when the CPU has AVX2 and FMA, the pure-Go
// twin (k_simd_rows.go) on the rest. The assembly reads and writes through raw
// pointers, so each wrapper checks the bounds it touches first.

// dwConv9 sets y[i] = min(max(bias + sum_t w[t]*src[t][i], lo), hi) for
// every i of y; each src[t] must be at least as long as y.
func dwConv9(y []float32, src *[9][]float32, w *[9]float32, bias, lo, hi float32) {
	n := len(y)
	nv := n &^ 7
	if !cpuHasAVX2FMA || nv == 0 {
		dwConv9Go(y, src, 0, w, bias, lo, hi)
		return
	}
	var p [9]*float32
	for t := range src {
		_ = src[t][n-1]
		p[t] = &src[t][0]
	}
	dwConv9AVX2(&y[0], &p, w, nv, bias, lo, hi)
	if nv < n {
		dwConv9Go(y[nv:], src, nv, w, bias, lo, hi)
	}
}

// biasClamp sets y[i] = min(max(y[i]+bias, lo), hi).
func biasClamp(y []float32, bias, lo, hi float32) {
	nv := len(y) &^ 7
	if !cpuHasAVX2FMA || nv == 0 {
		biasClampGo(y, bias, lo, hi)
		return
	}
	biasClampAVX(&y[0], nv, bias, lo, hi)
	biasClampGo(y[nv:], bias, lo, hi)
}

// gelu32 applies GELU (erf form) to y in place.
func gelu32(y []float32) {
	nv := len(y) &^ 7
	if !cpuHasAVX2FMA || nv == 0 {
		geluGo(y)
		return
	}
	if n32 := len(y) &^ 31; cpuHasAVX512 && n32 > 0 {
		geluAVX512(&y[0], n32)
		y = y[n32:]
		if nv = len(y) &^ 7; nv == 0 {
			geluGo(y)
			return
		}
	}
	geluAVX2(&y[0], nv)
	geluGo(y[nv:])
}

// geluBias32 sets y[i] = gelu(y[i] + b[i]) (b at least as long as y):
// axpy32 then gelu32's bits, in one pass (geluBiasAVX512 on multiples
// of 32, geluBiasAVX2 on multiples of 8, the two passes on the rest).
func geluBias32(y, b []float32) {
	b = b[:len(y)]
	if n32 := len(y) &^ 31; cpuHasAVX512 && n32 > 0 {
		geluBiasAVX512(&y[0], &b[0], n32)
		y, b = y[n32:], b[n32:]
	}
	if nv := len(y) &^ 7; cpuHasAVX2FMA && nv > 0 {
		geluBiasAVX2(&y[0], &b[0], nv)
		y, b = y[nv:], b[nv:]
	}
	axpy32(y, b, 1)
	gelu32(y)
}

// packBT16 sets panel[p*16+j] = b[j*ldb+p] for j in [0, 16), p in
// [0, kc): the SGEMM B panel of 16 columns of op(B) = B^T. The AVX-512
// transpose takes the multiple of 16 k steps, else the AVX2 one the
// multiple of 8, the Go twin the rest.
func packBT16(kc int, b []float32, ldb int, panel []float32) {
	n8 := kc &^ 7
	if !cpuHasAVX2FMA || n8 == 0 {
		packBT16Go(kc, b, ldb, panel, 0)
		return
	}
	_, _ = b[15*ldb+kc-1], panel[16*kc-1]
	if n16 := kc &^ 15; cpuHasAVX512 && n16 > 0 {
		packBT16AVX512(n16, &b[0], ldb, &panel[0])
		packBT16Go(kc, b, ldb, panel, n16)
		return
	}
	packBT16AVX2(n8, &b[0], ldb, &panel[0])
	packBT16Go(kc, b, ldb, panel, n8)
}

// scale32 sets y[i] *= a.
func scale32(y []float32, a float32) {
	nv := len(y) &^ 7
	if !cpuHasAVX2FMA || nv == 0 {
		scaleGo(y, a)
		return
	}
	scaleAVX(&y[0], nv, a)
	scaleGo(y[nv:], a)
}

// expSum32 sets y[i] = exp(x[i]-sub) and returns their sum; x must be at
// least as long as y.
func expSum32(y, x []float32, sub float32) float32 {
	nv := len(y) &^ 7
	if !cpuHasAVX2FMA || nv == 0 {
		return expSumGo(y, x, sub)
	}
	_ = x[len(y)-1]
	var s float32
	if n64 := len(y) &^ 63; cpuHasAVX512 && n64 > 0 {
		// Which kernel takes an element depends on the row length
		// only, so a row's sum does not depend on the thread count.
		s = expSumAVX512(&y[0], &x[0], n64, sub)
		if y, x = y[n64:], x[n64:]; len(y) == 0 {
			return s
		}
		if nv = len(y) &^ 7; nv == 0 {
			return s + expSumGo(y, x, sub)
		}
	}
	s += expSumAVX2(&y[0], &x[0], nv, sub)
	return s + expSumGo(y[nv:], x[nv:], sub)
}

// max32 returns the maximum of x (x not empty).
func max32(x []float32) float32 {
	nv := len(x) &^ 7
	if !cpuHasAVX2FMA || nv == 0 {
		return maxGo(x)
	}
	var m float32
	if n64 := len(x) &^ 63; cpuHasAVX512 && n64 > 0 {
		m = maxAVX512(&x[0], n64)
		if nv > n64 {
			m = max(m, maxAVX(&x[n64], nv-n64))
		}
	} else {
		m = maxAVX(&x[0], nv)
	}
	if nv < len(x) {
		m = max(m, maxGo(x[nv:]))
	}
	return m
}

// axpy32 sets y[i] += a*x[i]; x must be at least as long as y.
func axpy32(y, x []float32, a float32) {
	nv := len(y) &^ 7
	if !cpuHasAVX2FMA || nv == 0 {
		axpyGo(y, x, a)
		return
	}
	_ = x[len(y)-1]
	axpyAVX2(&y[0], &x[0], nv, a)
	axpyGo(y[nv:], x[nv:], a)
}

// addSum32 sets y[i] = a[i] + b[i] and returns their sum; a and b must be
// at least as long as y.
func addSum32(y, a, b []float32) float32 {
	if cpuHasAVX512 && len(y) > 0 {
		_, _ = a[len(y)-1], b[len(y)-1]
		return addSumAVX512(&y[0], &a[0], &b[0], len(y))
	}
	nv := len(y) &^ 7
	if !cpuHasAVX2FMA || nv == 0 {
		return addSumGo(y, a, b)
	}
	_, _ = a[len(y)-1], b[len(y)-1]
	s := addSumAVX(&y[0], &a[0], &b[0], nv)
	return s + addSumGo(y[nv:], a[nv:], b[nv:])
}

// sum32 returns the sum of x.
func sum32(x []float32) float32 {
	if cpuHasAVX512 && len(x) > 0 {
		return sumAVX512(&x[0], len(x))
	}
	nv := len(x) &^ 7
	if !cpuHasAVX2FMA || nv == 0 {
		return sumGo(x)
	}
	return sumAVX(&x[0], nv) + sumGo(x[nv:])
}

// sumSqDev32 returns the sum of (x[i]-mean)^2.
func sumSqDev32(x []float32, mean float32) float32 {
	if cpuHasAVX512 && len(x) > 0 {
		return sumSqDevAVX512(&x[0], len(x), mean)
	}
	nv := len(x) &^ 7
	if !cpuHasAVX2FMA || nv == 0 {
		return sumSqDevGo(x, mean)
	}
	return sumSqDevAVX2(&x[0], nv, mean) + sumSqDevGo(x[nv:], mean)
}

// normAffine32 sets y[i] = (x[i]-mean)*inv*s[i] + b[i] (b nil: no
// shift); x, s and b must be at least as long as y.
func normAffine32(y, x, s, b []float32, mean, inv float32) {
	if cpuHasAVX512 && len(y) > 0 {
		// The whole row on 16 lanes, the tail masked.
		_, _ = x[len(y)-1], s[len(y)-1]
		if b == nil {
			normScaleAVX512(&y[0], &x[0], &s[0], len(y), mean, inv)
			return
		}
		_ = b[len(y)-1]
		normAffineAVX512(&y[0], &x[0], &s[0], &b[0], len(y), mean, inv)
		return
	}
	nv := len(y) &^ 7
	if !cpuHasAVX2FMA || nv == 0 {
		normAffineGo(y, x, s, b, mean, inv)
		return
	}
	_, _ = x[len(y)-1], s[len(y)-1]
	if b == nil {
		normScaleAVX2(&y[0], &x[0], &s[0], nv, mean, inv)
		normAffineGo(y[nv:], x[nv:], s[nv:], nil, mean, inv)
		return
	}
	_ = b[len(y)-1]
	normAffineAVX2(&y[0], &x[0], &s[0], &b[0], nv, mean, inv)
	normAffineGo(y[nv:], x[nv:], s[nv:], b[nv:], mean, inv)
}

// dot4x32 sets out[r] = sum_p a[p]*b[r*ldb+p] for r in [0, 4): b holds
// four rows ldb apart, each at least len(a) long. The sums are taken in
// float64 and rounded once.
func dot4x32(a, b []float32, ldb int, out *[4]float32) {
	k := len(a)
	if k == 0 {
		*out = [4]float32{}
		return
	}
	_ = b[3*ldb+k-1]
	kv := k &^ 7
	if !cpuHasAVX2FMA || kv == 0 {
		dot4Go(a, b, ldb, out)
		return
	}
	var s [4]float64
	dot4AVX2(&a[0], &b[0], ldb, kv, &s)
	if kv < k {
		dot4Go64(a[kv:], b[kv:], ldb, &s)
	}
	out[0], out[1], out[2], out[3] = float32(s[0]), float32(s[1]), float32(s[2]), float32(s[3])
}

// gemvRows32 adds x . a[j*lda : j*lda+len(x)] to y[j] for every j: the
// recurrent product of an RNN step (a = R as stored, [rows, hidden]),
// summed in float32 (R stays in L2 across steps, so the float64 widening
// of dot4x32 would double the step's cost): gemvRowsAVX512 (16 lanes)
// with AVX-512, else gemvRowsAVX2 (8 lanes) with AVX2 and FMA, on the
// rows in fours and the columns in 16s or 8s, the Go twin on the rest;
// sgemvRow on CPUs with neither.
func gemvRows32(y, x, a []float32, lda int) {
	n, k := len(y), len(x)
	if n == 0 {
		return
	}
	switch {
	case cpuHasAVX512 && n >= 4 && k >= 16:
		_ = a[(n-1)*lda+k-1]
		n4, k16 := n&^3, k&^15
		gemvRowsAVX512(&y[0], &x[0], &a[0], lda, n4, k16)
		gemvRowsGo(y[:n4], x[k16:], a[k16:], lda)
		if n4 < n {
			gemvRowsGo(y[n4:], x, a[n4*lda:], lda)
		}
	case cpuHasAVX2FMA && n >= 4 && k >= 8:
		_ = a[(n-1)*lda+k-1]
		n4, k8 := n&^3, k&^7
		gemvRowsAVX2(&y[0], &x[0], &a[0], lda, n4, k8)
		gemvRowsGo(y[:n4], x[k8:], a[k8:], lda)
		if n4 < n {
			gemvRowsGo(y[n4:], x, a[n4*lda:], lda)
		}
	default:
		sgemvRow(true, n, k, 1, x, a, lda, 1, y)
	}
}

// gemvRowsVec reports whether gemvRows32 runs n rows of length k on its
// vector kernels (else it calls sgemvRow, which must not call it back).
func gemvRowsVec(n, k int) bool {
	return n >= 4 && (cpuHasAVX512 && k >= 16 || cpuHasAVX2FMA && k >= 8)
}

// lstmGates32 is lstmGatesGo, in assembly when len(h) is a multiple of 8.
func lstmGates32(g, c, h []float32) {
	hs := len(h)
	if !cpuHasAVX2FMA || hs == 0 || hs&7 != 0 {
		lstmGatesGo(g, c, h)
		return
	}
	_, _ = g[4*hs-1], c[hs-1]
	lstmGatesAVX2(&g[0], &c[0], &h[0], hs)
}

// mul32 sets y[i] = a[i] * b[i]; a and b must be at least as long as y.
func mul32(y, a, b []float32) {
	nv := len(y) &^ 7
	if !cpuHasAVX2FMA || nv == 0 {
		mulGo(y, a, b)
		return
	}
	_, _ = a[len(y)-1], b[len(y)-1]
	mulAVX(&y[0], &a[0], &b[0], nv)
	mulGo(y[nv:], a[nv:], b[nv:])
}

// mulRows16 sets y[16r+j] = x[16r+j] * s[r] for the len(s) rows of 16.
func mulRows16(y, x, s []float32) {
	if !cpuHasAVX2FMA || len(s) == 0 {
		mulRows16Go(y, x, s)
		return
	}
	_, _ = y[16*len(s)-1], x[16*len(s)-1]
	mulRows16AVX(&y[0], &x[0], &s[0], len(s))
}

// interleave2 sets y[2i] = a[i], y[2i+1] = b[i] (y twice a's length, b at
// least as long as a).
func interleave2(y, a, b []float32) {
	nv := len(a) &^ 7
	if !cpuHasAVX2FMA || nv == 0 || len(y) < 2*len(a) {
		interleave2Go(y, a, b)
		return
	}
	_ = b[len(a)-1]
	interleave2AVX(&y[0], &a[0], &b[0], nv)
	interleave2Go(y[2*nv:], a[nv:], b[nv:])
}
