package templates

import "math"

// NHWC convolutions with bf16 weights (-precision bf16): W' [K, M] stored
// in the bf16 GEMM's panels (bf16PackB, rounded by bf16Round), the
// activations rounded to bf16 as they are gathered (a pointwise
// convolution's rows, or the im2col block), every product exact in
// float32 and the sums float32 (VDPBF16PS), then the float32 tiles'
// epilogue (bias, residual, clamp) in the tile. The AVX512_BF16 tiles and
// converter are asm_bf16_amd64.s (asmgen/amd64/bf16); bf16PWTileGo and
// bf16RoundRowGo are their pure-Go twins and give the same bits.

// bf16Round rounds f to bf16 as VCVTNEPS2BF16 does: nearest even, a
// denormal to zero of its sign, a NaN quieted.
func bf16Round(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7f800000 == 0 {
		return uint16(b>>16) & 0x8000
	}
	return F32ToBF16(f)
}

// bf16RoundRowGo is bf16RoundRow's pure-Go twin.
func bf16RoundRowGo(dst []uint16, src []float32) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = bf16Round(v)
	}
}

// bf16PackConvNHWC returns the bf16 weights of a group-1 NHWC convolution
// (w ONNX [M, C, kh, kw]): W' [(kh, kw, c), m] rounded by bf16Round in
// bf16PackB's panels; false for other shapes.
func bf16PackConvNHWC(w []float32, ws []int) ([]uint16, bool) {
	if len(ws) != 4 || len(w) != nnProd(ws) || nnProd(ws) == 0 {
		return nil, false
	}
	M, C, kk := ws[0], ws[1], ws[2]*ws[3]
	K := C * kk
	tmp := make([]float32, K*M)
	for m := 0; m < M; m++ {
		for c := 0; c < C; c++ {
			for t := 0; t < kk; t++ {
				v := w[(m*C+c)*kk+t]
				if math.Float32bits(v)&0x7f800000 == 0 {
					v = 0 // a denormal weight: VDPBF16PS reads it as zero
				}
				tmp[(t*C+c)*M+m] = v
			}
		}
	}
	return bf16PackB(make([]uint16, bf16PackedBSize(K, M)), false, K, M, tmp, M), true
}

// bf16PWTileGo is the pure-Go twin of the convolution tiles: a rows x
// (16*panels) tile (rows <= 6, panels <= 4) of A (bf16, row stride lda
// uint16s, k2 pairs) times the panels of B (panel p at b[p*bstride:]) as
// bf16TileGo sums it, then the flags' epilogue (nhwcPWBias, nhwcPWZ,
// nhwcPWClamp) into c (row stride ldc); the last panel touches only its
// first n columns.
func bf16PWTileGo(rows, panels, k2 int, a []uint16, lda int, b []uint16, bstride int, c []float32, ldc int, bias, z []float32, lo, hi float32, flags, n int) {
	var acc [bf16MR * bf16TW]float32
	bf16TileGo(a, lda, rows, b, bstride, panels, k2, &acc)
	w := (panels-1)*bf16NR + n
	for r := 0; r < rows; r++ {
		for j := 0; j < w; j++ {
			v := acc[r*bf16TW+j]
			if flags&nhwcPWBias != 0 {
				v += bias[j]
			}
			if flags&nhwcPWZ != 0 {
				v += z[r*ldc+j]
			}
			if flags&nhwcPWClamp != 0 {
				v = min(max(v, lo), hi)
			}
			c[r*ldc+j] = v
		}
	}
}

// nhwcBF16Gemm sets columns [j0, j1) of c [m, M] (row stride ldc; j0 a
// multiple of 16) to A x W' and the epilogue e (its z, like c, from row 0
// with row stride ldc; bias and z indexed from column 0). A is m rows of
// bf16 pairs (lda >= 2*bf16K2(K) uint16s a row, the pad past K zero), W'
// [K, M] packed by bf16PackB. Tiles are 64 columns (the last one 16 to 64,
// masked) by up to 6 rows of balanced heights; each element is summed in
// k order whatever m and the column split, so results do not depend on
// them.
func nhwcBF16Gemm(m, M, j0, j1, K int, a []uint16, lda int, wp []uint16, c []float32, ldc int, e *nhwcPWEpi) {
	k2 := bf16K2(K)
	if j0 < 0 || j0%bf16NR != 0 || j1 > M || j0 >= j1 {
		panic("templates: nhwcBF16Gemm columns out of range")
	}
	if m <= 0 || K <= 0 || lda < 2*k2 || len(a) < (m-1)*lda+2*k2 || len(wp) < bf16PackedBSize(K, M) || ldc < M || len(c) < (m-1)*ldc+M {
		panic("templates: nhwcBF16Gemm out of range")
	}
	if e.z != nil && len(e.z) < (m-1)*ldc+M || e.bias != nil && len(e.bias) < M {
		panic("templates: nhwcBF16Gemm epilogue out of range")
	}
	flags := e.flags &^ (nhwcPWAccum | nhwcPWPrefetch)
	panelLen := k2 * 2 * bf16NR
	tiles := (m + bf16MR - 1) / bf16MR
	rowsLo, rowsHi := m/tiles, m%tiles
	for j := j0; j < j1; j += bf16TW {
		cols := min(bf16TW, j1-j)
		panels := (cols + bf16NR - 1) / bf16NR
		var bias []float32
		if e.bias != nil {
			bias = e.bias[j:]
		}
		bp := wp[(j/bf16NR)*panelLen:]
		for ti, r := 0, 0; r < m; ti++ {
			rows := rowsLo
			if ti < rowsHi {
				rows++
			}
			var z []float32
			if e.z != nil {
				z = e.z[r*ldc+j:]
			}
			bf16PWTile(rows, panels, k2, a[r*lda:], lda, bp, panelLen, c[r*ldc+j:], ldc, bias, z, e.lo, e.hi, flags, cols-(panels-1)*bf16NR)
			r += rows
		}
	}
}

// nhwcBF16Task is a group-1 NHWC convolution with bf16 weights: conv's
// geometry, operands and split (fusedConvNHWC's, by rows or by columns),
// wh the bf16 W', colh each part's chunk of bf16 A rows (lda = 2*k2), col
// each part's float32 im2col block (nil for a pointwise convolution).
type nhwcBF16Task struct {
	conv *nhwcConvTask
	wh   []uint16
	colh []uint16
	col  []float32
}

func (t *nhwcBF16Task) runPart(i, parts int) {
	ct := t.conv
	g, M, K := &ct.g, ct.M, ct.K
	rows := g.N * g.OH * g.OW
	lda := 2 * bf16K2(K)
	r0, r1, j0, j1 := 0, rows, 0, M
	if ct.byCols {
		j0, j1 = parSplit(M, parts, i, bf16NR)
		if j0 >= j1 {
			return
		}
	} else {
		r0, r1 = parSplit(rows, parts, i, 6)
	}
	ah := t.colh[i*ct.chunk*lda : (i+1)*ct.chunk*lda]
	var col []float32
	if t.col != nil {
		col = t.col[i*ct.chunk*K : (i+1)*ct.chunk*K]
	}
	for a := r0; a < r1; a += ct.chunk {
		b := min(a+ct.chunk, r1)
		src := col
		switch {
		case ct.pointwise:
			src = ct.x[a*K : b*K]
		case ct.nchw:
			ct.nchwIm2col(col, a, b)
		default:
			ct.im2col(col, a, b)
		}
		if lda == K {
			bf16RoundRow(ah[:(b-a)*K], src[:(b-a)*K])
		} else {
			for r := 0; r < b-a; r++ {
				bf16RoundRow(ah[r*lda:r*lda+K], src[r*K:(r+1)*K])
				ah[r*lda+K] = 0
			}
		}
		var z []float32
		if ct.z != nil {
			z = ct.z[a*M:]
		}
		e, all := nhwcPWEpiOf(ct.bias, z, ct.after, ct.act)
		nhwcBF16Gemm(b-a, M, j0, j1, K, ah, lda, t.wh, ct.y[a*ct.ldy:], ct.ldy, &e)
		for r := a; r < b && !all; r++ {
			var zr []float32
			if ct.z != nil {
				zr = ct.z[r*M+j0 : r*M+j1]
			}
			fusedEpilogue32(ct.y[r*ct.ldy+j0:r*ct.ldy+j1], 0, nil, 0, zr, ct.after, ct.act)
		}
	}
}

// runBF16 runs the convolution t (set up by fusedConvNHWC) with the bf16
// weights wh over parts.
func (t *nhwcConvTask) runBF16(n *Node, wh []uint16, parts int) {
	lda := 2 * bf16K2(t.K)
	bt := &nhwcBF16Task{conv: t, wh: wh, colh: nnBuf[uint16](n, 4, parts*t.chunk*lda)}
	if !t.pointwise {
		bt.col = nnBuf[float32](n, 0, parts*t.chunk*t.K)
	}
	n.Pool.Run(parts, bt)
}
