package templates

// The NHWC window kernels: a depthwise convolution (weights, bias, clamp)
// or a pooling window (max, average) is, per output pixel, a few vector
// operations over contiguous channels along a list of taps. FusedConv with
// layout=NHWC (k_conv_nhwc.go) and PoolNHWC (k_pool_nhwc.go) share them;
// nhwcTaps (k_conv_nhwc_window_amd64.go, _purego.go) runs the assembly
// (asm_nhwc_amd64.s) or the Go twin here.

// Modes of the NHWC window kernels (nhwcTapsGo and asm_nhwc_amd64.s).
const (
	nhwcModeDW = iota
	nhwcModeMax
	nhwcModeAvg
)

// nhwcTapsGo is the pure-Go twin of the NHWC window kernels, for channels
// [j0, c) of npix output pixels that share one tap list: taps holds pairs
// (x offset, w offset) in elements, pixel p reads x at p*xstep beyond them
// and writes y[p*ldy+j]. dw: bias[j] + sum of x*w, clamped to [lo, hi]
// (min(max(v, lo), hi): NaN stays NaN); max: the maximum over
// the taps (at least one), with VMAXPS's rule (a NaN tap is kept only if a
// later tap does not replace it); avg: scale times the sum. Taps are summed
// in list order, as the assembly does.
func nhwcTapsGo(mode int, y, x []float32, taps []int, w, bias []float32, j0, c, npix, xstep, ldy int, scale, lo, hi float32) {
	if j0 >= c {
		return
	}
	nt := len(taps) / 2
	for p := 0; p < npix; p++ {
		yp := y[p*ldy+j0 : p*ldy+c]
		xp := x[p*xstep:]
		switch mode {
		case nhwcModeDW:
			copy(yp, bias[j0:c])
			for t := 0; t < nt; t++ {
				xr := xp[taps[2*t]+j0 : taps[2*t]+c]
				wr := w[taps[2*t+1]+j0 : taps[2*t+1]+c]
				for j := range yp {
					yp[j] += xr[j] * wr[j]
				}
			}
			for j, v := range yp {
				yp[j] = min(max(v, lo), hi)
			}
		case nhwcModeMax:
			copy(yp, xp[taps[0]+j0:taps[0]+c])
			for t := 1; t < nt; t++ {
				xr := xp[taps[2*t]+j0 : taps[2*t]+c]
				for j, v := range xr {
					if !(yp[j] > v) {
						yp[j] = v
					}
				}
			}
		case nhwcModeAvg:
			clear(yp)
			for t := 0; t < nt; t++ {
				xr := xp[taps[2*t]+j0 : taps[2*t]+c]
				for j, v := range xr {
					yp[j] += v
				}
			}
			for j := range yp {
				yp[j] *= scale
			}
		}
	}
}

// nhwcTapsCheck panics unless every access of an nhwcTaps call with these
// arguments is in bounds (the assembly reads through raw pointers).
func nhwcTapsCheck(mode int, y, x []float32, taps []int, w, bias []float32, c, npix, xstep, ldy int) {
	ok := len(taps)%2 == 0 && npix >= 1 && (npix-1)*ldy+c <= len(y) && xstep >= 0
	for t := 0; ok && t < len(taps); t += 2 {
		ok = taps[t] >= 0 && taps[t]+(npix-1)*xstep+c <= len(x)
		if mode == nhwcModeDW {
			ok = ok && taps[t+1] >= 0 && taps[t+1]+c <= len(w)
		}
	}
	if mode == nhwcModeDW {
		ok = ok && c <= len(bias)
	}
	if !ok {
		panic("templates: NHWC window kernel out of bounds")
	}
}

// nhwcGeom is the window geometry of an NHWC convolution or pooling over
// 2-D images: input [N,H,W,C], output [N,OH,OW,C] (depthwise and pooling
// keep the channels). Output columns [lo, hi) of any row have all their
// kernel columns inside the image, so they share one tap list shifted by
// the stride.
type nhwcGeom struct {
	N, H, W, C, OH, OW       int
	kh, kw, sh, sw, dh, dw   int
	ph, pw, peh, pew, lo, hi int
	// A 3-D convolution's time axis (kt > 0; k_conv_nhwc_3d.go): N is
	// then images times OT output frames, each image has T input frames,
	// and output frame ot reads frames ot*st - pt + i*dt for taps i < kt.
	kt, st, dt, pt, T, OT int
}

func nhwcGeomOf(N, H, W, C int, win nnWin) nhwcGeom {
	g := nhwcGeom{N: N, H: H, W: W, C: C, OH: win.out[0], OW: win.out[1],
		kh: win.k[0], kw: win.k[1], sh: win.s[0], sw: win.s[1], dh: win.d[0], dw: win.d[1],
		ph: win.pb[0], pw: win.pb[1], peh: win.pe[0], pew: win.pe[1]}
	g.lo = min((g.pw+g.sw-1)/g.sw, g.OW)
	if num := W - 1 + g.pw - (g.kw-1)*g.dw; num >= 0 {
		g.hi = min(num/g.sw+1, g.OW)
	}
	g.hi = max(g.hi, g.lo)
	return g
}

// pixelTaps writes the (x offset, w offset) pairs of the taps of output
// pixel (b, oh, ow) that fall inside the image to dst (room for 2*kh*kw)
// and returns their number; the w offset is the tap's index times C.
func (g *nhwcGeom) pixelTaps(b, oh, ow int, dst []int) int {
	n := 0
	for i := 0; i < g.kh; i++ {
		ih := oh*g.sh - g.ph + i*g.dh
		if ih < 0 || ih >= g.H {
			continue
		}
		for j := 0; j < g.kw; j++ {
			iw := ow*g.sw - g.pw + j*g.dw
			if iw < 0 || iw >= g.W {
				continue
			}
			dst[2*n] = ((b*g.H+ih)*g.W + iw) * g.C
			dst[2*n+1] = (i*g.kw + j) * g.C
			n++
		}
	}
	return n
}

// padCount is the number of taps of output pixel (oh, ow) inside the
// padded input: AveragePool's divisor with count_include_pad.
func (g *nhwcGeom) padCount(oh, ow int) int {
	rows, cols := 0, 0
	for i := 0; i < g.kh; i++ {
		if ih := oh*g.sh - g.ph + i*g.dh; ih >= -g.ph && ih < g.H+g.peh {
			rows++
		}
	}
	for j := 0; j < g.kw; j++ {
		if iw := ow*g.sw - g.pw + j*g.dw; iw >= -g.pw && iw < g.W+g.pew {
			cols++
		}
	}
	return rows * cols
}

// row computes output row (b, oh) of a depthwise convolution (w, bias,
// clamped to [lo, hi]) or a pooling, using taps (2*kh*kw ints) as
// scratch: border pixels one by one, the interior ones [g.lo, g.hi) in one
// kernel call.
func (g *nhwcGeom) row(mode int, x, w, bias, y []float32, b, oh int, taps []int, avgPad bool, lo, hi float32) {
	C := g.C
	ybase := (b*g.OH + oh) * g.OW * C
	for ow := 0; ow < g.OW; {
		np := 1
		if ow == g.lo && g.hi > g.lo {
			np = g.hi - g.lo
		}
		nt := g.pixelTaps(b, oh, ow, taps)
		yp := y[ybase+ow*C : ybase+(ow+np)*C]
		switch {
		case mode == nhwcModeDW:
			nhwcTaps(mode, yp, x, taps[:2*nt], w, bias, C, np, g.sw*C, 0, lo, hi)
		case mode == nhwcModeMax && nt == 0:
			for j := range yp {
				yp[j] = nnLowest[float32]()
			}
		case mode == nhwcModeMax:
			nhwcTaps(mode, yp, x, taps[:2*nt], nil, nil, C, np, g.sw*C, 0, 0, 0)
		default:
			cnt := nt
			if avgPad {
				cnt = g.padCount(oh, ow)
			}
			if cnt == 0 {
				clear(yp)
				break
			}
			nhwcTaps(mode, yp, x, taps[:2*nt], nil, nil, C, np, g.sw*C, 1/float32(cnt), 0, 0)
		}
		ow += np
	}
}

// nhwcWinTask is a depthwise convolution or pooling split over output
// rows; each part has 2*kh*kw ints of taps scratch. Depthwise clamps to
// [lo, hi] in the kernel (a clamp activation without residual) or adds
// FusedConv's epilogue (residual z, activation) per row.
type nhwcWinTask struct {
	g             nhwcGeom
	mode          int
	x, w, bias, y []float32
	z             []float32
	taps          []int
	avgPad, after bool
	act           fusedAct
	epilogue      bool
	lo, hi        float32
}

func (t *nhwcWinTask) runPart(i, parts int) {
	g := &t.g
	r0, r1 := parSplit(g.N*g.OH, parts, i, 1)
	nt := 2 * g.kh * g.kw
	taps := t.taps[i*nt : (i+1)*nt]
	rl := g.OW * g.C
	for r := r0; r < r1; r++ {
		g.row(t.mode, t.x, t.w, t.bias, t.y, r/g.OH, r%g.OH, taps, t.avgPad, t.lo, t.hi)
		if t.epilogue {
			var z []float32
			if t.z != nil {
				z = t.z[r*rl : (r+1)*rl]
			}
			fusedEpilogue32(t.y[r*rl:(r+1)*rl], 0, nil, 0, z, t.after, t.act)
		}
	}
}

// nhwcRunWin runs t over n's pool: one part per thread when the work
// (ops, multiply-adds or comparisons) is worth it.
func nhwcRunWin(n *Node, t *nhwcWinTask, ops int) {
	parts := 1
	if ops >= parMinFlops/4 {
		parts = min(n.Pool.Threads(), t.g.N*t.g.OH)
	}
	t.taps = nnBuf[int](n, 2, parts*2*t.g.kh*t.g.kw)
	n.Pool.Run(parts, t)
}
