package templates

import "math"

// The direct kernel of grouped NHWC convolutions with narrow groups
// (ResNeXt's 32x4d layer1: 4 channels a group; RegNet's 8): each group as
// its own GEMM (nhwcConvTask.runGroups) runs tiles 16 or more columns wide
// on Mg = 4 or 8 columns and pays a call per group and chunk. Here the
// vector lanes span the output channels of several groups: output channel
// m of group m/G reads the input channels of its group, the G channels at
// the same offset rounded down to G, so a tap is G broadcasts (lane c of
// each group of G lanes) and FMAs per output vector, over the taps of one
// window list (nhwcGeom.pixelTaps: interior pixels share one, border
// pixels drop the taps in the padding), with no gathering and no per-group
// calls. asm_nhwc_amd64.s has the AVX2 kernels (asmgen/amd64/nhwc,
// grpTaps); nhwcGrpTapsGo is their twin and runs under -tags purego and on
// other architectures.
//
// The cost rule (nhwcGrpDirect): G input = G output channels a group, G 2,
// 4 or 8, and a multiple of 8 channels in all. Wider groups (16, 32: the
// later ResNeXt stages) fill the GEMM tiles' columns, where the tiles
// reuse each broadcast over 16 or more columns instead of 8; other shapes
// (Cg != Mg, odd widths) stay on the per-group GEMM too. The layout of the
// packed weights depends on the shape only (not the CPU), as prepacking
// at compile time needs.

// nhwcGrpDirect reports whether a grouped convolution with ONNX weight
// shape ws and group groups runs on the direct kernel (see above).
func nhwcGrpDirect(ws []int, group int) bool {
	if len(ws) != 4 || group <= 1 {
		return false
	}
	G := ws[1]
	return (G == 2 || G == 4 || G == 8 || G == 16 || G == 32) && G <= nhwcGrpWidest && ws[0] == G*group && ws[0]%8 == 0
}

// nhwcGrpWidest is the widest group the direct kernel takes: a variable
// so that BenchmarkGroupedNHWC can time the per-group GEMM on the same
// shapes (never changed otherwise).
var nhwcGrpWidest = 32

// nhwcPackGroupedDirect returns W (ONNX [M, G, kh, kw]) in the direct
// kernel's layout, in dst when it has room: [tap][m/8][c][m%8], so that
// a tap's weights for output vector m/8 and input channel c are 8
// contiguous floats.
func nhwcPackGroupedDirect(dst, w []float32, ws []int) []float32 {
	M, G, kk := ws[0], ws[1], ws[2]*ws[3]
	dst = nnGrow(dst, M*G*kk)
	for m := 0; m < M; m++ {
		for c := 0; c < G; c++ {
			for t := 0; t < kk; t++ {
				dst[t*M*G+(m/8)*8*G+c*8+m%8] = w[(m*G+c)*kk+t]
			}
		}
	}
	return dst
}

// nhwcGrpTapsGo is the twin of the nhwcGrp<G>AVX2 kernels, for channels
// [0, nv) (nv a multiple of 8) of npix output pixels sharing one tap list
// (pairs (x offset, w offset) in elements; pixel p reads x at p*xstep
// beyond them and writes y[p*ldy+j]):
//
//	y[p*ldy+j] = min(max(bias[j] + sum_t sum_{c<G} x[p*xstep+xo_t+(j/G)*G+c] * w[wo_t+(j/8)*8*G+8c+j%8], lo), hi)
//
// summed in the order (t, c), as the assembly does.
func nhwcGrpTapsGo(G int, y, x []float32, taps []int, w, bias []float32, nv, npix, xstep, ldy int, lo, hi float32) {
	nt := len(taps) / 2
	for p := 0; p < npix; p++ {
		yp := y[p*ldy : p*ldy+nv]
		xp := x[p*xstep:]
		copy(yp, bias[:nv])
		for t := 0; t < nt; t++ {
			xo, wo := taps[2*t], taps[2*t+1]
			for j0 := 0; j0 < nv; j0 += 8 {
				wb := w[wo+j0*G : wo+j0*G+8*G]
				ya := yp[j0 : j0+8]
				if G >= 8 {
					// The 8 channels are one group's: x broadcast.
					g0 := xo + j0 - j0%G
					for c, xv := range xp[g0 : g0+G] {
						wc := wb[8*c : 8*c+8]
						for l := range ya {
							ya[l] += xv * wc[l]
						}
					}
					continue
				}
				xg := xp[xo+j0 : xo+j0+8]
				for c := 0; c < G; c++ {
					wc := wb[8*c : 8*c+8]
					for l := range ya {
						ya[l] += xg[l/G*G+c] * wc[l]
					}
				}
			}
		}
		for j, v := range yp {
			yp[j] = min(max(v, lo), hi)
		}
	}
}

// nhwcGrpCheck panics unless every access of an nhwcGrpTaps call with
// these arguments is in bounds (the assembly reads through raw pointers).
func nhwcGrpCheck(G int, y, x []float32, taps []int, w, bias []float32, nv, npix, xstep, ldy int) {
	ok := len(taps)%2 == 0 && npix >= 1 && nv%8 == 0 && (G < 16 || nv%G == 0) && (npix-1)*ldy+nv <= len(y) && xstep >= 0 && nv <= len(bias)
	for t := 0; ok && t < len(taps); t += 2 {
		ok = taps[t] >= 0 && taps[t]+(npix-1)*xstep+nv <= len(x) && taps[t+1] >= 0 && taps[t+1]+nv*G <= len(w)
	}
	if !ok {
		panic("templates: grouped NHWC kernel out of bounds")
	}
}

// nhwcGrpTask is a grouped convolution on the direct kernel, split over
// units of (channel block, output row); each part has 2*kh*kw ints of
// taps scratch. The kernel streams the weights of its channels for every
// pixel group, so channels go in blocks whose weights stay in L2 (bw
// channels, nb blocks; one block for all but the widest layers:
// ResNeXt's layer4 has 1.2 MB of weights). A clamp activation without
// residual is in the kernel; otherwise FusedConv's epilogue (residual z,
// activation) follows each unit. Y's pixels are ldy apart (a channel
// slice of a wider output, see nhwcOutput).
type nhwcGrpTask struct {
	g             nhwcGeom
	G, M, ldy     int
	bw, nb        int
	x, w, bias, y []float32
	z             []float32
	taps          []int
	after         bool
	act           fusedAct
	epilogue      bool
	lo, hi        float32
	// virtual: x padded and y scratch, out the output (runVirtual).
	virtual bool
	out     []float32
}

// nhwcGrpBlockFloats bounds a channel block's weights (128 KB: a quarter
// of a Zen 2 L2, with room for the windows and the output rows).
const nhwcGrpBlockFloats = 32 << 10

func (t *nhwcGrpTask) runPart(i, parts int) {
	if t.virtual {
		t.runVirtual(i, parts)
		return
	}
	g := &t.g
	rows := g.N * g.OH
	u0, u1 := parSplit(t.nb*rows, parts, i, 1)
	taps := t.taps[i*2*g.kh*g.kw : (i+1)*2*g.kh*g.kw]
	M, ldy, G := t.M, t.ldy, t.G
	for u := u0; u < u1; u++ {
		j0, r := u/rows*t.bw, u%rows
		nv := min(t.bw, M-j0)
		b, oh := r/g.OH, r%g.OH
		ybase := r*g.OW*ldy + j0
		for ow := 0; ow < g.OW; {
			np := 1
			if ow == g.lo && g.hi > g.lo {
				np = g.hi - g.lo
			}
			nt := g.pixelTaps(b, oh, ow, taps)
			for k := 0; k < nt; k++ {
				taps[2*k+1] *= G // tap index times M*G, not times C
			}
			// Channels [j0, j0+nv): the kernel's pointers shifted by j0
			// (a multiple of G and of 8).
			yp := t.y[ybase+ow*ldy : ybase+(ow+np-1)*ldy+nv]
			nhwcGrpTaps(G, yp, t.x[j0:], taps[:2*nt], t.w[j0*G:], t.bias[j0:], nv, np, g.sw*g.C, ldy, t.lo, t.hi)
			ow += np
		}
		if !t.epilogue {
			continue
		}
		if ldy == M && nv == M {
			var z []float32
			if t.z != nil {
				z = t.z[r*g.OW*M : (r+1)*g.OW*M]
			}
			fusedEpilogue32(t.y[ybase:ybase+g.OW*M], 0, nil, 0, z, t.after, t.act)
			continue
		}
		for p := 0; p < g.OW; p++ {
			var z []float32
			if t.z != nil {
				z = t.z[(r*g.OW+p)*M+j0 : (r*g.OW+p)*M+j0+nv]
			}
			fusedEpilogue32(t.y[ybase+p*ldy:ybase+p*ldy+nv], 0, nil, 0, z, t.after, t.act)
		}
	}
}

// nhwcRunGrouped runs the grouped convolution of G channels a group on
// the direct kernel over n's pool: one part per thread when the
// multiply-adds are worth it.
func nhwcRunGrouped(n *Node, g nhwcGeom, G, M, ldy int, x, w, bias, y, z []float32, after bool, act fusedAct) {
	if bias == nil {
		bias = nnBuf[float32](n, 3, M)
		clear(bias)
	}
	t := parTaskOf[nhwcGrpTask](n)
	*t = nhwcGrpTask{g: g, G: G, M: M, ldy: ldy, x: x, w: w, bias: bias, y: y, z: z,
		after: after, act: act, epilogue: z != nil || act.kind != fusedActNone}
	if lo, hi, clamp := fusedClampOf(act); clamp && z == nil {
		t.lo, t.hi, t.epilogue = lo, hi, false
	} else {
		t.lo, t.hi = float32(math.Inf(-1)), float32(math.Inf(1))
	}
	// Channel blocks: multiples of 8 and of G, the weights of each within
	// nhwcGrpBlockFloats, balanced.
	unit := max(8, G)
	per := G * g.kh * g.kw // weights per channel
	most := max(unit, nhwcGrpBlockFloats/per/unit*unit)
	t.nb = (M + most - 1) / most
	t.bw = ((M+t.nb-1)/t.nb + unit - 1) / unit * unit
	t.nb = (M + t.bw - 1) / t.bw
	parts := 1
	big := g.N*g.OH*g.OW*M*G*g.kh*g.kw >= parMinFlops/2
	if Wp := g.OW + (g.kw-1)*g.dw; g.sh == 1 && g.sw == 1 && G >= 16 && g.OW <= 8 && 4*(Wp-g.OW) <= Wp {
		// Short rows at stride 1 and wide groups: virtual rows (see
		// runVirtual). BenchmarkGroupedNHWC, GFLOP/s of CPU time, row
		// by row -> virtual: 1024 channels in groups of 32 at 7x7 40 ->
		// 54 (the per-group GEMM: 52); groups of 8 at 7x7 41 -> 41;
		// at 14x14 and 28x28 0.85-0.95x (the copy out and the wasted
		// columns cost more than the short pixel groups). Slot 0 holds
		// the padded x, then the virtual rows' output.
		t.x, t.g = nhwcGrpPad(n, g, x, g.N*g.OH*Wp*M)
		t.y = t.x[len(t.x):cap(t.x)][:g.N*g.OH*Wp*M]
		t.taps = nnBuf[int](n, 2, 2*g.kh*g.kw)
		for i := 0; i < g.kh; i++ {
			for j := 0; j < g.kw; j++ {
				k := i*g.kw + j
				t.taps[2*k], t.taps[2*k+1] = (i*g.dh*Wp+j*g.dw)*g.C, k*M*G
			}
		}
		t.out, t.virtual = y, true
		if big {
			parts = min(n.Pool.Threads(), (g.OH*Wp+5)/6)
		}
		n.Pool.Run(parts, t)
		*t = nhwcGrpTask{}
		return
	}
	if big {
		parts = min(n.Pool.Threads(), t.nb*g.N*g.OH)
	}
	t.taps = nnBuf[int](n, 2, parts*2*g.kh*g.kw)
	n.Pool.Run(parts, t)
	*t = nhwcGrpTask{}
}

// runVirtual is runPart on virtual rows: with stride 1 and x padded
// (nhwcGrpPad, Wp columns), output pixel (oh, ow) reads x at (oh*Wp +
// ow)*C beyond the window list of pixel (0, 0), so the pixels of an image
// are one run of virtual pixels q = oh*Wp + ow, q < (OH-1)*Wp + OW, whose
// Wp - OW columns past each row's end are computed into t.y (scratch,
// [N, OH*Wp, M]) and dropped when the rows are copied out to Y. Short
// rows (7 or 14 pixels) then run in pixel groups of 6 instead of a group
// and a tail each, with no border pixels one by one, for (Wp - OW)/Wp
// more multiply-adds (at most a quarter: 2 of 9 at 7x7 with a 3x3
// window). Part i takes its share of each image's virtual pixels, all
// channel blocks, then copies them out with the epilogue.
func (t *nhwcGrpTask) runVirtual(i, parts int) {
	g := &t.g
	M, G, C, Wp, Hp := t.M, t.G, g.C, g.W, g.H
	nq := (g.OH-1)*Wp + g.OW
	q0, q1 := parSplit(nq, parts, i, 6)
	if q0 >= q1 {
		return
	}
	for b := 0; b < g.N; b++ {
		yb := t.y[b*g.OH*Wp*M:]
		xb := t.x[b*Hp*Wp*C:]
		for j0 := 0; j0 < M; j0 += t.bw {
			nv := min(t.bw, M-j0)
			nhwcGrpTaps(G, yb[q0*M+j0:(q1-1)*M+j0+nv], xb[q0*C+j0:], t.taps, t.w[j0*G:], t.bias[j0:], nv, q1-q0, C, M, t.lo, t.hi)
		}
		// Copy out the real pixels of [q0, q1), a row's run at a time.
		for q := q0; q < q1; {
			oh, ow := q/Wp, q%Wp
			e := min(q1, oh*Wp+Wp)
			if ow >= g.OW {
				q = e
				continue
			}
			e = min(e, oh*Wp+g.OW)
			p := (b*g.OH+oh)*g.OW + ow // first output pixel
			np := e - q
			for k := 0; k < np; k++ {
				copy(t.out[(p+k)*t.ldy:(p+k)*t.ldy+M], yb[(q+k)*M:(q+k+1)*M])
			}
			if t.epilogue {
				switch {
				case t.ldy == M:
					var z []float32
					if t.z != nil {
						z = t.z[p*M : (p+np)*M]
					}
					fusedEpilogue32(t.out[p*M:(p+np)*M], 0, nil, 0, z, t.after, t.act)
				default:
					for k := 0; k < np; k++ {
						fusedEpilogue32(t.out[(p+k)*t.ldy:(p+k)*t.ldy+M], 0, nil, 0, nil, t.after, t.act)
					}
				}
			}
			q = e
		}
	}
}

// nhwcGrpPad returns x copied into a zero-padded map ([N, Hp, Wp, C]:
// the rows and columns the windows of g reach) and its geometry, with no
// padding, for runVirtual; its slot has room for extra floats past the
// map's end.
func nhwcGrpPad(n *Node, g nhwcGeom, x []float32, extra int) ([]float32, nhwcGeom) {
	Hp := (g.OH-1)*g.sh + (g.kh-1)*g.dh + 1
	Wp := (g.OW-1)*g.sw + (g.kw-1)*g.dw + 1
	C := g.C
	xp := nnBuf[float32](n, 0, g.N*Hp*Wp*C+extra)[:g.N*Hp*Wp*C]
	for b := 0; b < g.N; b++ {
		for h := 0; h < Hp; h++ {
			row := xp[(b*Hp+h)*Wp*C : (b*Hp+h+1)*Wp*C]
			ih := h - g.ph
			if ih < 0 || ih >= g.H {
				clear(row)
				continue
			}
			// Columns [w0, w1) of the padded row are x's [w0-pw, w1-pw).
			w0, w1 := min(g.pw, Wp), min(g.pw+g.W, Wp)
			clear(row[:w0*C])
			src := x[((b*g.H+ih)*g.W+w0-g.pw)*C:]
			copy(row[w0*C:w1*C], src[:(w1-w0)*C])
			clear(row[w1*C:])
		}
	}
	p := g
	p.H, p.W, p.ph, p.pw, p.peh, p.pew = Hp, Wp, 0, 0, 0, 0
	p.lo, p.hi = 0, g.OW
	return xp, p
}
