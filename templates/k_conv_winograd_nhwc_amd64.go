//go:build amd64 && !purego

package templates

// The NHWC Winograd transforms' dispatch (see nhwcTaps): the AVX-512
// assembly (asm_wnhwc_amd64.s) on the largest multiple of 16 channels, the
// AVX2 one on the largest multiple of 8 of the rest when the CPU has AVX2
// and FMA, the Go twins (k_conv_winograd_nhwc.go) on the rest. Each channel takes one
// path, the same at every thread count. The assembly reads and writes
// through raw pointers, so each wrapper checks the bounds first.

// wnInput is wnInputGo over channels [0, c) for F(f x f, 3x3).
func wnInput(v []float32, ldv int, src *[wgPoints][]float32, c, f int) {
	nv := c &^ 7
	if !cpuHasAVX2FMA || nv == 0 {
		wnInputGo(v, ldv, src, 0, c, f)
		return
	}
	pts := wnPoints(f)
	_ = v[(pts-1)*ldv+c-1]
	var p [wgPoints]*float32
	for k, s := range src[:pts] {
		p[k] = &s[:c][0]
	}
	j0 := 0
	if n16 := c &^ 15; cpuHasAVX512 && n16 > 0 {
		// Direct calls (not through a func value) keep p on the stack.
		if f == 2 {
			wnInput2AVX512(&v[0], ldv, &p, n16)
		} else {
			wnInput4AVX512(&v[0], ldv, &p, n16)
		}
		j0 = n16
	}
	if j0 < nv {
		// The kernels index from their base pointers: shifting all of
		// them by j0 runs channels [j0, nv).
		for k, s := range src[:pts] {
			p[k] = &s[j0]
		}
		if f == 2 {
			wnInput2AVX2(&v[j0], ldv, &p, nv-j0)
		} else {
			wnInput4AVX2(&v[j0], ldv, &p, nv-j0)
		}
	}
	wnInputGo(v, ldv, src, nv, c, f)
}

// wnOutput is wnOutputGo over channels [0, m) for F(f x f, 3x3).
func wnOutput(dst *[16][]float32, mo []float32, ldm int, bias []float32, z *[16][]float32, m, zmode int, lo, hi float32, f int) {
	nv := m &^ 7
	if !cpuHasAVX2FMA || nv == 0 {
		wnOutputGo(dst, mo, ldm, bias, z, 0, m, zmode, lo, hi, f)
		return
	}
	_ = mo[(wnPoints(f)-1)*ldm+m-1]
	_ = bias[m-1]
	var d, zp [16]*float32
	for p := range f * f {
		d[p] = &dst[p][:m][0]
		if zmode != 0 {
			zp[p] = &z[p][:m][0]
		}
	}
	j0 := 0
	if n16 := m &^ 15; cpuHasAVX512 && n16 > 0 {
		if f == 2 {
			wnOutput2AVX512(&d, &mo[0], ldm, &bias[0], &zp, n16, zmode, lo, hi)
		} else {
			wnOutput4AVX512(&d, &mo[0], ldm, &bias[0], &zp, n16, zmode, lo, hi)
		}
		j0 = n16
	}
	if j0 < nv {
		for p := range f * f {
			d[p] = &dst[p][j0]
			if zmode != 0 {
				zp[p] = &z[p][j0]
			}
		}
		if f == 2 {
			wnOutput2AVX2(&d, &mo[j0], ldm, &bias[j0], &zp, nv-j0, zmode, lo, hi)
		} else {
			wnOutput4AVX2(&d, &mo[j0], ldm, &bias[j0], &zp, nv-j0, zmode, lo, hi)
		}
	}
	wnOutputGo(dst, mo, ldm, bias, z, nv, m, zmode, lo, hi, f)
}
