//go:build arm64 && !purego

package templates

// The NHWC Winograd transforms' dispatch on arm64: the NEON kernels
// (asm_wnhwc_arm64.s) on the largest multiple of 4 channels, the Go twins
// (k_conv_winograd_nhwc.go) on the rest. The F(2x2) kernels add and
// subtract in the twins' order (same bits); the F(4x4) ones agree within
// FMA rounding (the Go compiler may fuse the twins' multiply-adds). The
// kernels read and write through raw pointers, so each wrapper checks the
// bounds first.

// wnNEON reports whether the transforms of F(f x f, 3x3) take the NEON
// kernels (the dispatch below asks it; TestCPUDispatchARM64 checks it).
func wnNEON(f int) bool { return cpuHasASIMD && (f == 2 || f == 4) }

// wnInput is wnInputGo over channels [0, c) for F(f x f, 3x3).
func wnInput(v []float32, ldv int, src *[wgPoints][]float32, c, f int) {
	nv := c &^ 3
	if !wnNEON(f) || nv == 0 {
		wnInputGo(v, ldv, src, 0, c, f)
		return
	}
	pts := wnPoints(f)
	_ = v[(pts-1)*ldv+c-1]
	var p [wgPoints]*float32
	for k, s := range src[:pts] {
		p[k] = &s[:c][0]
	}
	if f == 2 {
		wnInput2NEON(&v[0], ldv, &p, nv)
	} else {
		wnInput4NEON(&v[0], ldv, &p, nv)
	}
	wnInputGo(v, ldv, src, nv, c, f)
}

// wnOutput is wnOutputGo over channels [0, m) for F(f x f, 3x3).
func wnOutput(dst *[16][]float32, mo []float32, ldm int, bias []float32, z *[16][]float32, m, zmode int, lo, hi float32, f int) {
	nv := m &^ 3
	if !wnNEON(f) || nv == 0 {
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
	if f == 2 {
		wnOutput2NEON(&d, &mo[0], ldm, &bias[0], &zp, nv, zmode, lo, hi)
	} else {
		wnOutput4NEON(&d, &mo[0], ldm, &bias[0], &zp, nv, zmode, lo, hi)
	}
	wnOutputGo(dst, mo, ldm, bias, z, nv, m, zmode, lo, hi, f)
}
