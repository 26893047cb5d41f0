package templates

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
}

func (t *convDWTask[T]) runPart(i, parts int) {
	c0, c1 := parSplit(t.C, parts, i, 1)
	if c0 >= c1 {
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
