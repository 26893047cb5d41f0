package templates

import "math"

// Depthwise 2-D convolution (group == C == M): a direct kernel, one
// channel at a time, split over channels.

// convIsDepthwise2D reports whether a convolution has one 2-D filter per
// channel (group == C == M), which convDepthwise2D computes directly: as a
// GEMM it would be C products of a single row, all packing and edge tiles.
func convIsDepthwise2D(C, M, group int, in []int) bool {
	return group == C && M == C && group > 1 && len(in) == 2
}

// convDWTask is a depthwise convolution of one image split over channels,
// with FusedConv's epilogue when fused.
type convDWTask[T nnFloat] struct {
	x, w, bias, y []T
	C             int
	in            []int
	win           nnWin
	fused         bool
	z             []T
	after         bool
	act           fusedAct
	// buf holds per floats of convDW3x3 scratch for each part, nil when
	// convDW3x3 does not apply.
	buf []float32
	per int
}

func (t *convDWTask[T]) runPart(i, parts int) {
	c0, c1 := parSplit(t.C, parts, i, 1)
	if c0 >= c1 {
		return
	}
	if t.buf != nil {
		x, w, y := any(t.x).([]float32), any(t.w).([]float32), any(t.y).([]float32)
		bias, _ := any(t.bias).([]float32)
		convDW3x3(x, w, bias, y, c0, c1, t.in, t.win, t.act, t.buf[i*t.per:(i+1)*t.per])
		return
	}
	convDepthwise2D(t.x, t.w, t.bias, t.y, c0, c1, t.in, t.win)
	if !t.fused {
		return
	}
	size := nnProd(t.win.out)
	for c := c0; c < c1; c++ {
		var zs []T
		if t.z != nil {
			zs = t.z[c*size : (c+1)*size]
		}
		fusedEpilogue(t.y[c*size:(c+1)*size], 0, nil, 0, zs, t.after, t.act)
	}
}

// convDepthwise2D sets y = conv(x, w) + bias for channels [c0, c1) of one
// image (x [C, H, W], w [C, 1, KH, KW], y [C, OH, OW]; bias may be nil).
// For each output row and each tap it runs one multiply-add along the
// output columns whose input column lies inside the row, so no padding
// tests run in the inner loop.
func convDepthwise2D[T nnFloat](x, w, bias, y []T, c0, c1 int, in []int, win nnWin) {
	H, W := in[0], in[1]
	OH, OW := win.out[0], win.out[1]
	KH, KW := win.k[0], win.k[1]
	sh, sw, dh, dw, ph, pw := win.s[0], win.s[1], win.d[0], win.d[1], win.pb[0], win.pb[1]
	for c := c0; c < c1; c++ {
		xc := x[c*H*W : (c+1)*H*W]
		yc := y[c*OH*OW : (c+1)*OH*OW]
		wc := w[c*KH*KW : (c+1)*KH*KW]
		var bv T
		if bias != nil {
			bv = bias[c]
		}
		for oh := 0; oh < OH; oh++ {
			yr := yc[oh*OW : oh*OW+OW]
			for j := range yr {
				yr[j] = bv
			}
			for kh := 0; kh < KH; kh++ {
				h := oh*sh - ph + kh*dh
				if h < 0 || h >= H {
					continue
				}
				xr := xc[h*W : h*W+W]
				for kw := 0; kw < KW; kw++ {
					convDWRow(yr, xr, wc[kh*KW+kw], kw*dw-pw, sw)
				}
			}
		}
	}
}

// convDWRow adds wv*xr[o*s+off] to yr[o] for every o whose input column
// o*s+off lies in xr.
func convDWRow[T nnFloat](yr, xr []T, wv T, off, s int) {
	lo := 0
	if off < 0 {
		lo = (-off + s - 1) / s
	}
	hi := 0
	if last := len(xr) - 1 - off; last >= 0 {
		hi = min(len(yr), last/s+1)
	}
	if lo >= hi {
		return
	}
	if s == 1 {
		src := xr[lo+off : hi+off]
		dst := yr[lo:hi]
		dst = dst[:len(src)]
		for i, v := range src {
			dst[i] += wv * v
		}
		return
	}
	if s == 2 {
		src := xr[2*lo+off : 2*(hi-1)+off+1]
		dst := yr[lo:hi]
		for i := range dst {
			dst[i] += wv * src[2*i]
		}
		return
	}
	for o := lo; o < hi; o++ {
		yr[o] += wv * xr[o*s+off]
	}
}

// convDWRun computes a depthwise convolution of N images with FusedConv's
// epilogue (act, residual z; both optional), split over channels. 3x3
// float32 kernels of stride 1 or 2 with at most a Relu or Clip take
// convDW3x3, which fuses bias and clamp into the vector kernel.
func convDWRun[T nnFloat](n *Node, x, w, bias, z []T, after bool, act fusedAct, y []T, N, C int, in []int, win nnWin) {
	inSize, outSize := nnProd(in), nnProd(win.out)
	fused := z != nil || act.kind != fusedActNone
	t := parTaskOf[convDWTask[T]](n)
	parts := min(n.Pool.Threads(), C)
	var buf []float32
	per := 0
	if _, ok := any(x).([]float32); ok && z == nil && convDW3x3Ok(win, act) {
		per = convDW3x3Scratch(win)
		buf = nnBuf[float32](n, 3, parts*per)
	}
	for b := 0; b < N; b++ {
		base := b * C * outSize
		var zb []T
		if z != nil {
			zb = z[base : base+C*outSize]
		}
		*t = convDWTask[T]{x: x[b*C*inSize : (b+1)*C*inSize], w: w, bias: bias, y: y[base : base+C*outSize], C: C, in: in, win: win,
			fused: fused, z: zb, after: after, act: act, buf: buf, per: per}
		n.Pool.Run(parts, t)
	}
	*t = convDWTask[T]{}
}

// convDW3x3Ok reports whether convDW3x3 computes a depthwise convolution
// with activation act: 3x3, no dilation, equal strides of 1 or 2, and an
// activation that is a clamp.
func convDW3x3Ok(win nnWin, act fusedAct) bool {
	if win.k[0] != 3 || win.k[1] != 3 || win.d[0] != 1 || win.d[1] != 1 || win.s[0] != win.s[1] || win.s[0] > 2 {
		return false
	}
	switch act.kind {
	case fusedActNone, fusedActRelu, fusedActClip:
		return true
	}
	return false
}

// convDW3x3Geom is the layout of convDW3x3's planes: s*s phase planes of
// the zero-padded input, plane (a, b) holding padded rows s*r+a and columns
// s*c+b, each `rows` rows of `pitch` floats, so that every tap of every
// output is one shifted contiguous run; the output is computed at the same
// pitch (flat index oh*pitch+ow) and copied out row by row.
func convDW3x3Geom(win nnWin) (s, pitch, rows, planeLen, outLen int) {
	s = win.s[0]
	OH, OW := win.out[0], win.out[1]
	pitch = OW + 2/s
	rows = OH + 2/s + 1
	planeLen = rows*pitch + 8
	outLen = ((OH-1)*pitch + OW + 7) &^ 7
	return
}

// convDW3x3Scratch is the float32 scratch one part of convDW3x3 needs.
func convDW3x3Scratch(win nnWin) int {
	s, _, _, planeLen, outLen := convDW3x3Geom(win)
	return s*s*planeLen + outLen
}

// convDW3x3 computes channels [c0, c1) of one image's 3x3 depthwise
// convolution with y = min(max(conv + bias, lo), hi), in scratch buf of
// convDW3x3Scratch floats.
func convDW3x3(x, w, bias, y []float32, c0, c1 int, in []int, win nnWin, act fusedAct, buf []float32) {
	H, W := in[0], in[1]
	OH, OW := win.out[0], win.out[1]
	ph, pw := win.pb[0], win.pb[1]
	s, pitch, rows, planeLen, outLen := convDW3x3Geom(win)
	lo, hi := float32(math.Inf(-1)), float32(math.Inf(1))
	switch act.kind {
	case fusedActRelu:
		lo = 0
	case fusedActClip:
		lo, hi = float32(act.p0), float32(act.p1)
	}
	planes := buf[:s*s*planeLen]
	out := buf[s*s*planeLen : s*s*planeLen+outLen]
	var src [9][]float32
	var w9 [9]float32
	// Every channel writes the same plane positions (the geometry decides
	// them), so the zero padding around them is cleared once per call.
	clear(planes)
	// Tap (kh, kw) reads phase plane (kh%s, kw%s) shifted by (kh/s, kw/s).
	for kh := 0; kh < 3; kh++ {
		for kw := 0; kw < 3; kw++ {
			p := (kh%s)*s + kw%s
			src[kh*3+kw] = planes[p*planeLen+(kh/s)*pitch+kw/s : (p+1)*planeLen]
		}
	}
	for c := c0; c < c1; c++ {
		xc := x[c*H*W : (c+1)*H*W]
		for a := 0; a < s; a++ {
			for r := 0; r < rows; r++ {
				h := s*r + a - ph
				if h < 0 || h >= H {
					continue
				}
				xr := xc[h*W : h*W+W]
				if s == 1 {
					// Input column w goes to plane column w+pw.
					n := min(W, pitch-pw)
					copy(planes[r*pitch+pw:r*pitch+pw+n], xr[:n])
					continue
				}
				// Stride 2: padded column j = w+pw goes to plane j&1,
				// column j>>1; walk the input in pairs (even j, odd j).
				d0 := planes[(a*2)*planeLen+r*pitch : (a*2)*planeLen+(r+1)*pitch]
				d1 := planes[(a*2+1)*planeLen+r*pitch : (a*2+1)*planeLen+(r+1)*pitch]
				w0 := pw & 1
				if w0 == 1 && pw>>1 < pitch {
					d1[pw>>1] = xr[0]
				}
				c := (w0 + pw) >> 1
				last := min(W-1, 2*(pitch-c)+w0-1)
				w := w0
				if pairs := (last - w0 + 1) / 2; pairs > 0 {
					e0, e1 := d0[c:c+pairs], d1[c:c+pairs]
					xs := xr[w0 : w0+2*pairs]
					for i := range e0 {
						e0[i], e1[i] = xs[2*i], xs[2*i+1]
					}
					w += 2 * pairs
					c += pairs
				}
				if w == W-1 && c < pitch {
					d0[c] = xr[w]
				}
			}
		}
		copy(w9[:], w[c*9:c*9+9])
		var bv float32
		if bias != nil {
			bv = bias[c]
		}
		dwConv9(out, &src, &w9, bv, lo, hi)
		yc := y[c*OH*OW : (c+1)*OH*OW]
		for oh := 0; oh < OH; oh++ {
			copy(yc[oh*OW:oh*OW+OW], out[oh*pitch:oh*pitch+OW])
		}
	}
}
