package templates

import "sync"

// Packed SGEMM around a 6x16 micro-kernel (generated AVX2/FMA assembly on
// amd64, asm_sgemm_amd64.s; the pure-Go twin sgemmMicroGo elsewhere and the
// reference in tests). The driver blocks the GotoBLAS/BLIS way:
//
//	jc: NC columns of C        (B block, KC x NC, lives in L3)
//	  pc: KC steps of k         (pack op(B)[pc:pc+KC, jc:jc+NC])
//	    ic: MC rows of C        (pack op(A)[ic:ic+MC, pc:pc+KC], lives in L2)
//	      jr: 16 columns        (one B micro-panel, KC x 16, stays in L1)
//	        ir: 6 rows          (one A micro-panel streamed from L2)
//	          micro-kernel: C[6x16] = alpha*Apanel*Bpanel + beta*C
//
// Packed layouts (also the layout of prepacked constant weights, so gen can
// pack at compile time): a packed A block for k steps [pc, pc+kc) is a run
// of micro-panels of 6 rows, each kc steps of 6 contiguous values (rows past
// m are zero); a packed B block is a run of micro-panels of 16 columns, each
// kc steps of 16 contiguous values (columns past n are zero). A whole packed
// matrix (sgemmPackA, sgemmPackB) is its k blocks (sgemmKBlock: balanced,
// at most KC) one after another. The layout depends on MR, NR and KC only,
// so weights packed by the compiler stay valid for the generated package as
// long as both use the same templates.

const (
	sgemmPkMR = 6  // rows of the micro-tile
	sgemmPkNR = 16 // columns of the micro-tile (two YMM vectors)
	// KC: a B micro-panel (KC x 16 floats = 16 KiB) and the A micro-panel
	// in flight (6 KiB) fit the 32 KiB L1d.
	sgemmPkKC = 256
	// MC: the packed A block (MC x KC floats, 264 KiB at most) sits in the
	// 512 KiB L2 beside the B micro-panels streaming through. Larger than
	// BLIS's 144 so that typical convolution heights (m = 256) take one row
	// block and every packed B panel is used while it is hot in L1, never
	// reread from L3. Multiple of MR.
	sgemmPkMC = 264
	// NC: the packed B block (KC x NC floats = 4 MiB at most) sits in L3.
	// Multiple of NR.
	sgemmPkNC = 4080
)

type sgemmPkBufs struct {
	a []float32 // MC x KC
	b []float32 // KC x NC
}

// Pack buffers come from a pool: concurrent sessions never share them and
// steady-state calls do not allocate.
var sgemmPkPool = sync.Pool{New: func() any { return newSgemmPkBufs() }}

func newSgemmPkBufs() *sgemmPkBufs {
	return &sgemmPkBufs{a: make([]float32, sgemmPkMC*sgemmPkKC), b: make([]float32, sgemmPkKC*sgemmPkNC)}
}

// sgemmPacked computes C = alpha*op(A)*op(B) + beta*C for row-major matrices,
// where op(A) is m x k (A is k x m when transA) and op(B) is k x n (B is
// n x k when transB). It has the semantics of sgemm: with beta == 0, C is
// overwritten (NaNs in C vanish); with alpha == 0 or k == 0, C = beta*C.
func sgemmPacked(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	sgemmPackedWith(nil, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// sgemmPackedWith is sgemmPacked packing into bufs (nil: buffers from
// sgemmPkPool). A worker pool gives each part its own buffers: sync.Pool
// caches per P, so goroutines that move between Ps would miss and allocate.
func sgemmPackedWith(bufs *sgemmPkBufs, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	sgemmDrive(bufs, m, n, k, alpha,
		sgemmOperand{trans: transA, data: a, ld: lda},
		sgemmOperand{trans: transB, data: b, ld: ldb},
		beta, c, ldc)
}

// sgemmPrepackedB is sgemmPacked with op(B) already packed by sgemmPackB
// (constant weights packed at compile time).
func sgemmPrepackedB(transA bool, m, n, k int, alpha float32, a []float32, lda int, bp []float32, beta float32, c []float32, ldc int) {
	if len(bp) < sgemmPackedBSize(k, n) {
		panic("templates: prepacked B is too short for its shape")
	}
	sgemmDrive(nil, m, n, k, alpha,
		sgemmOperand{trans: transA, data: a, ld: lda},
		sgemmOperand{data: bp, packed: true},
		beta, c, ldc)
}

// sgemmPrepackedBPart is sgemmPrepackedB for columns [j0, j0+n) of a
// matrix of nAll columns packed whole by sgemmPackB (j0 a multiple of NR),
// packing A into bufs (nil: from the pool).
func sgemmPrepackedBPart(bufs *sgemmPkBufs, nAll, j0, m, n, k int, alpha float32, transA bool, a []float32, lda int, bp []float32, beta float32, c []float32, ldc int) {
	if j0%sgemmPkNR != 0 || j0+n > nAll || len(bp) < sgemmPackedBSize(k, nAll) {
		panic("templates: prepacked B part out of range")
	}
	sgemmDrive(bufs, m, n, k, alpha,
		sgemmOperand{trans: transA, data: a, ld: lda},
		sgemmOperand{data: bp, packed: true, ld: sgemmRoundUp(nAll, sgemmPkNR), off: j0},
		beta, c, ldc)
}

// sgemmPrepackedA is sgemmPacked with op(A) already packed by sgemmPackA
// (convolution weights are the A operand of an im2col GEMM).
func sgemmPrepackedA(transB bool, m, n, k int, alpha float32, ap []float32, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if len(ap) < sgemmPackedASize(m, k) {
		panic("templates: prepacked A is too short for its shape")
	}
	sgemmDrive(nil, m, n, k, alpha,
		sgemmOperand{data: ap, packed: true},
		sgemmOperand{trans: transB, data: b, ld: ldb},
		beta, c, ldc)
}

// sgemmPackedBSize is the length of sgemmPackB's result.
func sgemmPackedBSize(k, n int) int { return k * sgemmRoundUp(n, sgemmPkNR) }

// sgemmPackedASize is the length of sgemmPackA's result.
func sgemmPackedASize(m, k int) int { return k * sgemmRoundUp(m, sgemmPkMR) }

// sgemmPackB packs op(B) (k x n; B is n x k when transB) for sgemmPrepackedB.
func sgemmPackB(transB bool, k, n int, b []float32, ldb int) []float32 {
	dst := make([]float32, sgemmPackedBSize(k, n))
	npad := sgemmRoundUp(n, sgemmPkNR)
	kb := sgemmKBlock(k)
	for pc := 0; pc < k; pc += kb {
		kc := min(kb, k-pc)
		sgemmPackBBlock(dst[pc*npad:], transB, b, ldb, pc, 0, kc, n)
	}
	return dst
}

// sgemmPackA packs op(A) (m x k; A is k x m when transA) for sgemmPrepackedA.
func sgemmPackA(transA bool, m, k int, a []float32, lda int) []float32 {
	dst := make([]float32, sgemmPackedASize(m, k))
	mpad := sgemmRoundUp(m, sgemmPkMR)
	kb := sgemmKBlock(k)
	for pc := 0; pc < k; pc += kb {
		kc := min(kb, k-pc)
		sgemmPackABlock(dst[pc*mpad:], transA, a, lda, 0, pc, m, kc)
	}
	return dst
}

// sgemmOperand is one GEMM input: a row-major matrix (transposed or not), or
// a whole matrix packed by sgemmPackA/sgemmPackB. A packed operand may be a
// slice of a larger packed matrix: ld is then the padded row count (A) or
// column count (B) of the whole, and off the first row (A) or column (B)
// used, a multiple of MR (A) or NR (B); ld 0 means the operand is whole.
//
// An implicit operand (im2col set, B only) is the column matrix of a 2-D
// convolution, never materialised: its micro-panels are packed straight
// from the input image (sgemmPackIm2col); off is then the first column.
type sgemmOperand struct {
	trans  bool
	data   []float32
	ld     int
	packed bool
	off    int
	im2col *sgemmIm2col
}

// sgemmIm2col describes the implicit column matrix of one image and group
// of a 1-D or 2-D convolution: row (c*KH+kh)*KW+kw, column oh*OW+ow holds
// x[c, oh*sh-ph+kh*dh, ow*sw-pw+kw*dw], zero in the padding. A 1-D
// convolution has H = KH = OH = 1.
type sgemmIm2col struct {
	x                      []float32 // [C, H, W]
	H, W, KH, KW, OH, OW   int
	sh, sw, dh, dw, ph, pw int
}

// sgemmPrepackedAIm2colPart is sgemmPrepackedAPart with B the implicit
// column matrix im, columns [j0, j0+n): the im2col is done while packing
// each B micro-panel, so no column matrix is written or read back.
func sgemmPrepackedAIm2colPart(bufs *sgemmPkBufs, mAll, m0, m, n, k int, alpha float32, ap []float32, im *sgemmIm2col, j0 int, beta float32, c []float32, ldc int) {
	if m0%sgemmPkMR != 0 || m0+m > mAll || len(ap) < sgemmPackedASize(mAll, k) {
		panic("templates: prepacked A part out of range")
	}
	sgemmDrive(bufs, m, n, k, alpha,
		sgemmOperand{data: ap, packed: true, ld: sgemmRoundUp(mAll, sgemmPkMR), off: m0},
		sgemmOperand{im2col: im, off: j0},
		beta, c, ldc)
}

// sgemmPackIm2col packs rows [pc, pc+kc) and columns [j0, j0+nc) of the
// implicit column matrix t into dst as B micro-panels (each kc steps of 16
// values, zero past nc): what im2col2D followed by sgemmPackBBlock would
// store, in one pass. It walks each k row along output rows, so the
// bounds work is per output row, not per panel.
func sgemmPackIm2col(dst []float32, t *sgemmIm2col, pc, j0, kc, nc int) {
	const NR = sgemmPkNR
	H, W, KW, KK := t.H, t.W, t.KW, t.KH*t.KW
	c, kk := pc/KK, pc%KK
	kh, kw := kk/KW, kk%KW
	pstride := kc * NR
	dst = dst[:sgemmRoundUp(nc, NR)*kc]
	// put writes src (nil: zeros) to columns [a, a+len) of k row p,
	// split at panel boundaries.
	put := func(p, a int, src []float32, n int) {
		for n > 0 {
			off := a & (NR - 1)
			m := min(NR-off, n)
			d := dst[(a>>4)*pstride+p*NR+off:][:m]
			if src == nil {
				clear(d)
			} else {
				copy(d, src[:m])
				src = src[m:]
			}
			a += m
			n -= m
		}
	}
	oh0, ow0 := j0/t.OW, j0%t.OW
	for p := 0; p < kc; p++ {
		xc := t.x[c*H*W : (c+1)*H*W]
		oh, ow := oh0, ow0
		for rel := 0; rel < nc; {
			n := min(t.OW-ow, nc-rel)
			ih := oh*t.sh - t.ph + kh*t.dh
			if ih < 0 || ih >= H {
				put(p, rel, nil, n)
			} else {
				xr := xc[ih*W : ih*W+W]
				iw0 := ow*t.sw - t.pw + kw*t.dw
				// Columns [lo, hi) of the run read inside [0, W).
				lo, hi := 0, n
				if iw0 < 0 {
					lo = min((-iw0+t.sw-1)/t.sw, n)
				}
				if iw0+(n-1)*t.sw >= W {
					hi = 0
					if W-1-iw0 >= 0 {
						hi = (W-1-iw0)/t.sw + 1
					}
				}
				hi = max(hi, lo)
				put(p, rel, nil, lo)
				if t.sw == 1 {
					if hi > lo { // an empty run may start before the row (iw0+lo < 0)
						put(p, rel+lo, xr[iw0+lo:iw0+hi], hi-lo)
					}
				} else {
					for i := lo; i < hi; i++ {
						col := rel + i
						dst[(col>>4)*pstride+p*NR+col&(NR-1)] = xr[iw0+i*t.sw]
					}
				}
				put(p, rel+hi, nil, n-hi)
			}
			rel += n
			oh, ow = oh+1, 0
		}
		if kw++; kw == KW {
			kw = 0
			if kh++; kh == t.KH {
				kh = 0
				c++
			}
		}
	}
	if tail := nc & (NR - 1); tail != 0 {
		last := dst[(nc>>4)*pstride:]
		for p := 0; p < kc; p++ {
			clear(last[p*NR+tail : p*NR+NR])
		}
	}
}

// sgemmPackBPanels packs columns [j, j+nr) of op(B) for k steps
// [pc, pc+kc) into dst: nr <= 16 is one micro-panel.
func sgemmPackBPanels(dst []float32, B *sgemmOperand, pc, j, kc, nr int) {
	sgemmPackBBlock(dst, B.trans, B.data, B.ld, pc, j, kc, nr)
}

// sgemmPrepackedAPart is sgemmPrepackedA for rows [m0, m0+m) of a matrix
// of mAll rows packed whole by sgemmPackA (m0 a multiple of MR), packing B
// into bufs (nil: from the pool).
func sgemmPrepackedAPart(bufs *sgemmPkBufs, mAll, m0, m, n, k int, alpha float32, ap []float32, transB bool, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if m0%sgemmPkMR != 0 || m0+m > mAll || len(ap) < sgemmPackedASize(mAll, k) {
		panic("templates: prepacked A part out of range")
	}
	sgemmDrive(bufs, m, n, k, alpha,
		sgemmOperand{data: ap, packed: true, ld: sgemmRoundUp(mAll, sgemmPkMR), off: m0},
		sgemmOperand{trans: transB, data: b, ld: ldb},
		beta, c, ldc)
}

func sgemmDrive(bufs *sgemmPkBufs, m, n, k int, alpha float32, A, B sgemmOperand, beta float32, c []float32, ldc int) {
	if m <= 0 || n <= 0 {
		return
	}
	if k <= 0 || alpha == 0 {
		sgemmScaleC(m, n, beta, c, ldc)
		return
	}
	if bufs == nil && (!A.packed || !B.packed) {
		bufs = sgemmPkPool.Get().(*sgemmPkBufs)
		defer sgemmPkPool.Put(bufs)
	}
	mpad := sgemmRoundUp(m, sgemmPkMR)
	if A.packed && A.ld > 0 {
		mpad = A.ld
	}
	npad := sgemmRoundUp(n, sgemmPkNR)
	if B.packed && B.ld > 0 {
		npad = B.ld
	}
	kb := sgemmKBlock(k)
	mb := sgemmMBlock(m)
	for jc := 0; jc < n; jc += sgemmPkNC {
		nc := min(sgemmPkNC, n-jc)
		for pc := 0; pc < k; pc += kb {
			kc := min(kb, k-pc)
			var bp []float32
			switch {
			case B.packed:
				bp = B.data[pc*npad+(B.off+jc)*kc:]
			case B.im2col != nil:
				// The whole KC x NC block at once: its packing walks
				// output rows, not panels.
				bp = bufs.b
				sgemmPackIm2col(bp, B.im2col, pc, B.off+jc, kc, nc)
			default:
				bp = bufs.b
			}
			// Later k blocks accumulate into what the first one wrote.
			cbeta := beta
			if pc > 0 {
				cbeta = 1
			}
			direct := sgemmDirectA(&A, nc)
			for ic := 0; ic < m; ic += mb {
				mc := min(mb, m-ic)
				// The first row block packs the B panels as it goes, the
				// later ones reuse them.
				var packB *sgemmOperand
				if !B.packed && B.im2col == nil && ic == 0 {
					packB = &B
				}
				if direct {
					// A in place (k_gemm_sgemm_direct.go).
					sgemmMacroDirect(mc, nc, kc, alpha, A.data[ic*A.ld+pc:], A.ld, bp, cbeta, c[ic*ldc+jc:], ldc, packB, pc, jc)
					continue
				}
				var ap []float32
				if A.packed {
					ap = A.data[pc*mpad+(A.off+ic)*kc:]
				} else {
					sgemmPackABlock(bufs.a, A.trans, A.data, A.ld, ic, pc, mc, kc)
					ap = bufs.a
				}
				sgemmMacro(mc, nc, kc, alpha, ap, bp, cbeta, c[ic*ldc+jc:], ldc, packB, pc, jc)
			}
		}
	}
}

// sgemmMacro runs the micro-kernel over an mc x nc block of C from a packed
// A block and a packed B block. The B micro-panel is the outer loop so it
// stays in L1 while the A micro-panels stream past it. With packB set, it
// first packs each B micro-panel (op(B)[pc:pc+kc, jc+jr:...]) into bp: the
// panel is then hot in L1 for its first use instead of coming back from L3
// after a pack of the whole block.
func sgemmMacro(mc, nc, kc int, alpha float32, ap, bp []float32, beta float32, c []float32, ldc int, packB *sgemmOperand, pc, jc int) {
	for jr := 0; jr < nc; jr += sgemmPkNR {
		nr := min(sgemmPkNR, nc-jr)
		b := bp[jr*kc : jr*kc+sgemmPkNR*kc]
		if packB != nil {
			sgemmPackBPanels(b, packB, pc, jc+jr, kc, nr)
		}
		if sgemmWide && jr+2*sgemmPkNR <= nc {
			// Two whole B micro-panels: 6x32 tiles (AVX-512).
			b1 := bp[(jr+sgemmPkNR)*kc : (jr+2*sgemmPkNR)*kc]
			if packB != nil {
				sgemmPackBPanels(b1, packB, pc, jc+jr+sgemmPkNR, kc, sgemmPkNR)
			}
			for ir := 0; ir < mc; ir += sgemmPkMR {
				mr := min(sgemmPkMR, mc-ir)
				a := ap[ir*kc : ir*kc+sgemmPkMR*kc]
				if mr == sgemmPkMR {
					sgemmMicroWide(kc, a, b, b1, c[ir*ldc+jr:], ldc, alpha, beta)
					continue
				}
				// Partial row tile (64 or 256 rows leave 4): one masked
				// 6x32 call, not two 6x16 edge tiles.
				sgemmMicroWideEdge(kc, a, b, b1, c[ir*ldc+jr:], ldc, alpha, beta, mr, 2*sgemmPkNR)
			}
			jr += sgemmPkNR
			continue
		}
		if sgemmWide && jr+sgemmPkNR < nc {
			// 17 to 31 columns left: two packed panels (the second zero
			// padded), one masked 6x32 tile per row tile.
			if packB != nil {
				sgemmPackBPanels(bp[(jr+sgemmPkNR)*kc:], packB, pc, jc+jr+sgemmPkNR, kc, nc-jr-sgemmPkNR)
			}
			b1 := bp[(jr+sgemmPkNR)*kc : (jr+2*sgemmPkNR)*kc]
			for ir := 0; ir < mc; ir += sgemmPkMR {
				mr := min(sgemmPkMR, mc-ir)
				a := ap[ir*kc : ir*kc+sgemmPkMR*kc]
				sgemmMicroWideEdge(kc, a, b, b1, c[ir*ldc+jr:], ldc, alpha, beta, mr, nc-jr)
			}
			break
		}
		for ir := 0; ir < mc; ir += sgemmPkMR {
			mr := min(sgemmPkMR, mc-ir)
			a := ap[ir*kc : ir*kc+sgemmPkMR*kc]
			sgemmMicro(kc, a, b, c[ir*ldc+jr:], ldc, alpha, beta, mr, nr)
		}
	}
}

// sgemmScaleC sets C = beta*C (C = 0 when beta is 0, whatever C held).
func sgemmScaleC(m, n int, beta float32, c []float32, ldc int) {
	if beta == 1 {
		return
	}
	for i := 0; i < m; i++ {
		row := c[i*ldc : i*ldc+n]
		if beta == 0 {
			clear(row)
			continue
		}
		for j := range row {
			row[j] *= beta
		}
	}
}

// sgemmPackBBlock packs op(B)[pc:pc+kc, jc:jc+nc] into dst as micro-panels
// of 16 columns, each kc steps of 16 values, zero past nc.
func sgemmPackBBlock(dst []float32, transB bool, b []float32, ldb, pc, jc, kc, nc int) {
	const NR = sgemmPkNR
	for j0 := 0; j0 < nc; j0 += NR {
		nr := min(NR, nc-j0)
		panel := dst[j0*kc : j0*kc+NR*kc]
		switch {
		case !transB && nr == NR:
			sgemmPackB16(kc, b[pc*ldb+jc+j0:], ldb, panel)
		case !transB:
			for p := 0; p < kc; p++ {
				src := (pc+p)*ldb + jc + j0
				d := panel[p*NR : p*NR+NR]
				copy(d, b[src:src+nr])
				clear(d[nr:])
			}
		case nr == NR:
			// B is n x k: column j of op(B) is row j of B, contiguous in
			// p; a whole panel is a 16 x kc transpose (k_simd_rows.go).
			packBT16(kc, b[(jc+j0)*ldb+pc:], ldb, panel)
		default:
			for j := 0; j < NR; j++ {
				if j >= nr {
					for p := 0; p < kc; p++ {
						panel[p*NR+j] = 0
					}
					continue
				}
				row := b[(jc+j0+j)*ldb+pc : (jc+j0+j)*ldb+pc+kc]
				for p, v := range row {
					panel[p*NR+j] = v
				}
			}
		}
	}
}

// sgemmPackABlock packs op(A)[ic:ic+mc, pc:pc+kc] into dst as micro-panels
// of 6 rows, each kc steps of 6 values, zero past mc.
func sgemmPackABlock(dst []float32, transA bool, a []float32, lda, ic, pc, mc, kc int) {
	const MR = sgemmPkMR
	for i0 := 0; i0 < mc; i0 += MR {
		mr := min(MR, mc-i0)
		panel := dst[i0*kc : i0*kc+MR*kc]
		switch {
		case !transA && mr == MR:
			sgemmPackA6(kc, a[(ic+i0)*lda+pc:], lda, panel)
		case !transA:
			for i := 0; i < MR; i++ {
				if i >= mr {
					for p := 0; p < kc; p++ {
						panel[p*MR+i] = 0
					}
					continue
				}
				row := a[(ic+i0+i)*lda+pc : (ic+i0+i)*lda+pc+kc]
				for p, v := range row {
					panel[p*MR+i] = v
				}
			}
		default:
			// A is k x m: step p of the panel is a contiguous run of row pc+p.
			for p := 0; p < kc; p++ {
				src := (pc+p)*lda + ic + i0
				d := panel[p*MR : p*MR+MR]
				copy(d, a[src:src+mr])
				clear(d[mr:])
			}
		}
	}
}

// sgemmPackA6Go sets dst[p*6+i] = a[i*lda+p] for i in [0, 6), p in
// [p0, kc): one packed A micro-panel of six whole rows, the pure-Go twin
// of sgemmPackA6AVX and its tail.
func sgemmPackA6Go(kc int, a []float32, lda int, dst []float32, p0 int) {
	const MR = sgemmPkMR
	if p0 >= kc {
		return
	}
	r0 := a[p0:kc]
	r1 := a[lda+p0 : lda+kc]
	r2 := a[2*lda+p0 : 2*lda+kc]
	r3 := a[3*lda+p0 : 3*lda+kc]
	r4 := a[4*lda+p0 : 4*lda+kc]
	r5 := a[5*lda+p0 : 5*lda+kc]
	dst = dst[p0*MR : kc*MR]
	for p := range r0 {
		d := (*[MR]float32)(dst[p*MR:])
		d[0], d[1], d[2], d[3], d[4], d[5] = r0[p], r1[p], r2[p], r3[p], r4[p], r5[p]
	}
}

// sgemmPackB16Go copies kc rows of 16 floats, row stride ldb, from src to
// dst contiguously: the pure-Go twin of sgemmPackB16AVX.
func sgemmPackB16Go(kc int, src []float32, ldb int, dst []float32) {
	const NR = sgemmPkNR
	for p := 0; p < kc; p++ {
		*(*[NR]float32)(dst[p*NR:]) = *(*[NR]float32)(src[p*ldb : p*ldb+NR])
	}
}

// sgemmMicroGo is the pure-Go twin of the assembly micro-kernels: for the
// mr x nr corner (mr <= 6, nr <= 16) of the tile at c it sets
// C = alpha*Apanel*Bpanel + beta*C, reading C only when beta != 0. a holds
// kc steps of 6 values, b kc steps of 16.
func sgemmMicroGo(kc int, a, b []float32, c []float32, ldc int, alpha, beta float32, mr, nr int) {
	const MR, NR = sgemmPkMR, sgemmPkNR
	var acc [MR * NR]float32
	a = a[:kc*MR]
	b = b[:kc*NR]
	for p := 0; p < kc; p++ {
		bp := (*[NR]float32)(b[p*NR:])
		ap := (*[MR]float32)(a[p*MR:])
		for i := 0; i < MR; i++ {
			ai := ap[i]
			row := (*[NR]float32)(acc[i*NR:])
			for j := 0; j < NR; j++ {
				row[j] += ai * bp[j]
			}
		}
	}
	for i := 0; i < mr; i++ {
		row := c[i*ldc : i*ldc+nr]
		for j := range row {
			v := alpha * acc[i*NR+j]
			if beta != 0 {
				v += beta * row[j]
			}
			row[j] = v
		}
	}
}

// sgemmMicroWideEdgeGo is the pure-Go twin of the AVX-512 edge kernel: the
// mr x nr corner (mr <= 6, nr <= 32) of the 6x32 tile at c from panels b0
// (columns 0-15) and b1 (16-31).
func sgemmMicroWideEdgeGo(kc int, a, b0, b1 []float32, c []float32, ldc int, alpha, beta float32, mr, nr int) {
	sgemmMicroGo(kc, a, b0, c, ldc, alpha, beta, mr, min(nr, sgemmPkNR))
	if nr > sgemmPkNR {
		sgemmMicroGo(kc, a, b1, c[sgemmPkNR:], ldc, alpha, beta, mr, nr-sgemmPkNR)
	}
}

// sgemmKBlock is the k block length for a GEMM of depth k: at most KC,
// with the blocks balanced (a multiple of 8 but for the last) so no block is
// a short one whose C traffic and call overheads weigh on few FMAs. Packed
// layouts follow the same blocks.
func sgemmKBlock(k int) int {
	blocks := (k + sgemmPkKC - 1) / sgemmPkKC
	if blocks <= 1 {
		return sgemmPkKC
	}
	return min(sgemmRoundUp((k+blocks-1)/blocks, 8), sgemmPkKC)
}

// sgemmMBlock is the row block length for m rows: at most MC, balanced, a
// multiple of 6.
func sgemmMBlock(m int) int {
	blocks := (m + sgemmPkMC - 1) / sgemmPkMC
	if blocks <= 1 {
		return sgemmPkMC
	}
	return min(sgemmRoundUp((m+blocks-1)/blocks, sgemmPkMR), sgemmPkMC)
}

func sgemmRoundUp(x, to int) int { return (x + to - 1) / to * to }
