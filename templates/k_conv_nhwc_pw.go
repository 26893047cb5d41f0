package templates

// NHWC convolutions as a GEMM that reads A in place: C [m, M] = A x W'
// with W' [K, M] packed by sgemmPackB (panels of 16 columns) and A either
// row-major [m, K] (a pointwise convolution's activations, row stride
// lda) or gathered through a table of tap offsets (a convolution reading
// an NCHW image: row r, step p is a[r*lda+offs[p]/4]). The AVX-512 tiles
// (asmgen/amd64/pw) are up to 12 rows by 16 or 32 columns, so 16 or 24
// output channels waste no lanes or few, nothing is packed at run time,
// and bias, residual and a clamp run in the tile's epilogue: the block is
// written once. The AVX2 tiles are up to 6 rows by 16 columns.
// nhwcPWTileGo is their pure-Go twin.

// Tile epilogue flags (asmgen/amd64/pw), applied in this order.
const (
	nhwcPWAccum = 1 << iota // add C: the sums of earlier k blocks
	nhwcPWBias              // add bias[j]
	nhwcPWZ                 // add z (residual, row stride ldc)
	nhwcPWClamp             // min(max(v, lo), hi)
	// Prefetch the tile's rows of C and z into L1 before its k loop
	// (ignored by the Go twin): for outputs too large to stay in L2,
	// whose lines would otherwise miss in the epilogue, after the
	// arithmetic that could hide them.
	nhwcPWPrefetch
)

// nhwcPWMaxRows is the tallest tile.
const nhwcPWMaxRows = 12

// nhwcPWTileGo is the pure-Go twin of the tile kernels: a rows x
// (16*panels) tile (rows <= 12, panels 1 or 2) of C over k steps, A read
// as a[r*lda+p] (offs nil) or a[r*lda+offs[p]/4] (byte offsets), panel h
// of B at b[h*bstride:], then the flags' epilogue; the last panel touches
// only its first n columns.
func nhwcPWTileGo(rows, panels, k int, a []float32, lda int, offs []int, b []float32, bstride int, c []float32, ldc int, bias, z []float32, lo, hi float32, flags, n int) {
	const NR = sgemmPkNR
	var acc [nhwcPWMaxRows * 2 * NR]float32
	for r := 0; r < rows; r++ {
		for p := 0; p < k; p++ {
			i := r*lda + p
			if offs != nil {
				i = r*lda + offs[p]/4
			}
			av := a[i]
			for h := 0; h < panels; h++ {
				bp := b[h*bstride+p*NR : h*bstride+p*NR+NR]
				row := acc[(r*2+h)*NR : (r*2+h+1)*NR]
				for j, bv := range bp {
					row[j] += av * bv
				}
			}
		}
	}
	for r := 0; r < rows; r++ {
		for h := 0; h < panels; h++ {
			w := NR
			if h == panels-1 {
				w = n
			}
			for j := 0; j < w; j++ {
				v := acc[(r*2+h)*NR+j]
				o := r*ldc + h*NR + j
				if flags&nhwcPWAccum != 0 {
					v += c[o]
				}
				if flags&nhwcPWBias != 0 {
					v += bias[h*NR+j]
				}
				if flags&nhwcPWZ != 0 {
					v += z[o]
				}
				if flags&nhwcPWClamp != 0 {
					v = min(max(v, lo), hi)
				}
				c[o] = v
			}
		}
	}
}

// nhwcPWEpi is what the tiles apply after the product: bias (nil: none),
// residual z (nil: none; row stride M), clamp bounds, as flags.
type nhwcPWEpi struct {
	bias, z []float32
	lo, hi  float32
	flags   int
}

// nhwcPWEpiOf returns the tile epilogue for a convolution's bias,
// residual and activation, and whether it covers all of them (else the
// caller runs fusedEpilogue32 for z and act after the bias).
func nhwcPWEpiOf(bias, z []float32, after bool, act fusedAct) (nhwcPWEpi, bool) {
	e := nhwcPWEpi{bias: bias}
	if bias != nil {
		e.flags |= nhwcPWBias
	}
	lo, hi, clamp := fusedClampOf(act)
	if !clamp || z != nil && after && act.kind != fusedActNone {
		return e, false
	}
	if z != nil {
		e.z = z
		e.flags |= nhwcPWZ
	}
	if act.kind != fusedActNone {
		e.lo, e.hi = lo, hi
		e.flags |= nhwcPWClamp
	}
	return e, true
}

// nhwcPWGemm sets c [m, M] (row stride ldc >= M: a channel slice of a
// wider output, see nhwcOutput) to A x W' and the epilogue e (its z,
// like c, from row 0 of the block with row stride ldc). A is row-major with row
// stride lda from a[0] (offs nil), or gathered: row r, step p at
// a[r*lda+offs[p]/4]. W' [K, M] is packed whole by sgemmPackB. K blocks
// are the packed layout's (sgemmKBlock); a block after the first adds to
// what the earlier ones wrote, and only the last one applies e. Column
// tiles are 32 wide, the last one 16 (or a masked 32 for 17 to 31
// columns left); rows go up to 12 at a time (AVX2: 16 columns by 6 rows). Each element is summed in k order
// whatever m is, so splitting rows does not change results.
func nhwcPWGemm(m, M, K int, a []float32, lda int, offs []int, wp []float32, c []float32, ldc int, e *nhwcPWEpi) {
	nhwcPWGemmCols(m, M, 0, M, K, a, lda, offs, wp, c, ldc, e)
}

// nhwcPWGemmCols is nhwcPWGemm for columns [j0, j1) of C (j0 a multiple
// of the 16-column panel): c, e.z and e.bias still index from column 0.
// Each element is computed as nhwcPWGemm computes it, so splitting
// columns does not change results either.
func nhwcPWGemmCols(m, M, j0, j1, K int, a []float32, lda int, offs []int, wp []float32, c []float32, ldc int, e *nhwcPWEpi) {
	const NR = sgemmPkNR
	if j0 < 0 || j0%NR != 0 || j1 > M || j0 >= j1 {
		panic("templates: nhwcPWGemm columns out of range")
	}
	if m <= 0 || M <= 0 || K <= 0 || len(wp) < sgemmPackedBSize(K, M) || ldc < M || len(c) < (m-1)*ldc+M {
		panic("templates: nhwcPWGemm out of range")
	}
	if e.z != nil && len(e.z) < (m-1)*ldc+M || e.bias != nil && len(e.bias) < M {
		panic("templates: nhwcPWGemm epilogue out of range")
	}
	// The tiles read through raw pointers: the furthest element of A.
	last := (m-1)*lda + K - 1
	if offs != nil {
		maxOff := 0
		for _, o := range offs[:K] {
			if o < 0 || o%4 != 0 {
				panic("templates: nhwcPWGemm tap offset out of range")
			}
			maxOff = max(maxOff, o)
		}
		last = (m-1)*lda + maxOff/4
	}
	if lda < 0 || last >= len(a) {
		panic("templates: nhwcPWGemm A out of range")
	}
	npad := sgemmRoundUp(M, NR)
	kb := sgemmKBlock(K)
	maxRows, maxPanels := nhwcPWTileShape()
	// Row tiles of balanced heights: 49 rows as 10+10+10+10+9, not
	// 12+12+12+12+1 (a 1-row tile has 2 FMA chains and waits on their
	// latency: 7% of resnet50's 7x7 convs for 2% of their rows). The
	// first rowsHi tiles have rowsLo+1 rows.
	tiles := (m + maxRows - 1) / maxRows
	rowsLo, rowsHi := m/tiles, m%tiles
	for pc := 0; pc < K; pc += kb {
		kc := min(kb, K-pc)
		flags := 0
		if pc > 0 {
			flags |= nhwcPWAccum
		}
		if pc+kc == K {
			flags |= e.flags
		}
		var offp []int
		if offs != nil {
			offp = offs[pc : pc+kc]
		}
		ap := a
		if offs == nil {
			ap = a[pc:]
		}
		blk := wp[pc*npad:]
		for j := j0; j < j1; {
			panels, n := 2, 2*NR
			switch left := j1 - j; {
			case left <= NR || maxPanels == 1:
				panels, n = 1, min(left, NR)
			case left < 2*NR:
				n = left
			}
			var bias []float32
			if e.bias != nil {
				bias = e.bias[j:]
			}
			// The row tiles prefetch the next column tile's B panels (or
			// the next k block's first ones) into L2, a share each (the
			// kernel prefetches a line per 2 k steps): cold
			// weights stream from memory during this tile's sweep rather
			// than stall the next one's first row tile (resnet50's layer4:
			// 4-9 MB of weights for 49 rows).
			next := pc*npad + (j+panels*NR)*kc
			if j+n >= j1 {
				next = (pc+kc)*npad + j0*min(kb, K-pc-kc)
			}
			end := min(next+panels*NR*kc, len(wp))
			for ti, r := 0, 0; r < m; ti++ {
				rows := rowsLo
				if ti < rowsHi {
					rows++
				}
				var z []float32
				if e.z != nil {
					z = e.z[r*ldc+j:]
				}
				pf := blk[j*kc:]
				if o := next + ti*(kc/2)*16; o < end {
					pf = wp[o:]
				}
				nhwcPWTile(rows, panels, kc, ap[r*lda:], lda, offp, blk[j*kc:], NR*kc, pf, c[r*ldc+j:], ldc, bias, z, e.lo, e.hi, flags, n-(panels-1)*NR)
				r += rows
			}
			j += n
		}
	}
}
