//go:build amd64 && !purego

package templates

// The Winograd transforms' dispatch: the assembly (asm_wino_amd64.s) when
// the CPU has AVX2 and FMA, the pure-Go twins (k_conv_winograd.go) elsewhere.
// The assembly reads and writes through raw pointers, so each wrapper
// checks the bounds it touches first.

// wgInput8 is wgInput8Go through wgInputAVX2.
func wgInput8(v []float32, ldd, ldc int, p []float32, offs *[8]int, lds, nc, cs int) {
	if !cpuHasAVX2FMA || nc <= 0 {
		wgInput8Go(v, ldd, ldc, p, offs, lds, nc, cs)
		return
	}
	_ = v[(wgPoints-1)*ldd+(nc-1)*ldc+7]
	var src [8]*float32
	for j, o := range offs {
		_ = p[o+(nc-1)*cs+5*lds+7]
		src[j] = &p[o]
	}
	wgInputAVX2(&v[0], ldd, ldc, &src, lds, nc, cs)
}

// wgOutput8 is wgOutput8Go through wgOutputAVX2.
func wgOutput8(dst *[8][]float32, ldy int, mo []float32, lds int) {
	if !cpuHasAVX2FMA {
		wgOutput8Go(dst, ldy, mo, lds)
		return
	}
	_ = mo[(wgPoints-1)*lds+7]
	var d [8]*float32
	for j, s := range dst {
		_ = s[3*ldy+3]
		d[j] = &s[0]
	}
	wgOutputAVX2(&d, ldy, &mo[0], lds)
}
