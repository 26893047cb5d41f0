package templates

import "sync"

// GEMM in plain Go, blocked the GotoBLAS way: B is packed into KC x NC
// panels NR columns wide, A into MC x KC panels MR rows tall (pre-scaled by
// alpha), and a 4x4 register-blocked micro-kernel walks both. sgemm is the
// single entry point the float32 kernels use, so an assembly version can
// replace it without touching its callers.

const (
	gemmMR = 4
	gemmNR = 4
	gemmKC = 256
	gemmMC = 64
	gemmNC = 256
)

type gemmBufs[T nnFloat] struct {
	a []T
	b []T
}

// Pack buffers come from pools so concurrent sessions never share them and
// steady-state calls do not allocate.
var (
	sgemmPool = sync.Pool{New: func() any {
		return &gemmBufs[float32]{a: make([]float32, gemmMC*gemmKC), b: make([]float32, gemmKC*gemmNC)}
	}}
	dgemmPool = sync.Pool{New: func() any {
		return &gemmBufs[float64]{a: make([]float64, gemmMC*gemmKC), b: make([]float64, gemmKC*gemmNC)}
	}}
)

// sgemm computes C = alpha*op(A)*op(B) + beta*C for row-major matrices,
// where op(A) is m x k (A is k x m when transA) and op(B) is k x n (B is
// n x k when transB). With beta == 0, C is overwritten (NaNs in C vanish).
//
// When the CPU has the assembly micro-kernel (sgemmUseAsm, decided once at
// init from CPUID), the packed 6x16 driver in k_gemm_sgemm.go does the work.
func sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	sgemmWith(nil, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// gemmScratch is pack buffers owned by one part of a worker pool, made on
// first use.
type gemmScratch struct {
	g  *gemmBufs[float32]
	pk *sgemmPkBufs
	// band: FusedConvChain's band buffers (k_conv_chain.go), one per part
	// for every node, so they stay in cache from one node to the next.
	band []float32
	// half: the bf16 GEMM's A buffer and accumulator tile (k_gemm_bf16.go),
	// made on first use.
	half *bf16Gemm
}

// bandBuf returns s's band buffer resized to n (grown only when too
// small).
func (s *gemmScratch) bandBuf(n int) []float32 {
	s.band = nnGrow(s.band, n)
	return s.band
}

// pkBufs returns the packed driver's buffers of s, made on first use (nil
// for a nil s: the driver then takes them from its pool).
func (s *gemmScratch) pkBufs() *sgemmPkBufs {
	if s == nil {
		return nil
	}
	if s.pk == nil {
		s.pk = newSgemmPkBufs()
	}
	return s.pk
}

// sgemmWith is sgemm packing into s (nil: buffers from the sync.Pools).
func sgemmWith(s *gemmScratch, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if m <= 2 && !transA && m > 0 && n > 0 && k > 0 {
		// Matrix-vector products (batch-1 fully connected layers): packing
		// all of B for one or two rows of C costs more than the product.
		for i := 0; i < m; i++ {
			sgemvRow(transB, n, k, alpha, a[i*lda:i*lda+k], b, ldb, beta, c[i*ldc:i*ldc+n])
		}
		return
	}
	if sgemmUseAsm {
		var pk *sgemmPkBufs
		if s != nil {
			if s.pk == nil {
				s.pk = newSgemmPkBufs()
			}
			pk = s.pk
		}
		sgemmPackedWith(pk, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	if s != nil {
		if s.g == nil {
			s.g = &gemmBufs[float32]{a: make([]float32, gemmMC*gemmKC), b: make([]float32, gemmKC*gemmNC)}
		}
		gemmGo(s.g, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	bufs := sgemmPool.Get().(*gemmBufs[float32])
	gemmGo(bufs, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	sgemmPool.Put(bufs)
}

// dgemm is sgemm for float64.
func dgemm(transA, transB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	bufs := dgemmPool.Get().(*gemmBufs[float64])
	gemmGo(bufs, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	dgemmPool.Put(bufs)
}

// gemmT dispatches to sgemm or dgemm by element type.
func gemmT[T nnFloat](transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	switch av := any(a).(type) {
	case []float32:
		sgemm(transA, transB, m, n, k, float32(alpha), av, lda, any(b).([]float32), ldb, float32(beta), any(c).([]float32), ldc)
	case []float64:
		dgemm(transA, transB, m, n, k, float64(alpha), av, lda, any(b).([]float64), ldb, float64(beta), any(c).([]float64), ldc)
	}
}

func gemmGo[T nnFloat](bufs *gemmBufs[T], transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	if m <= 0 || n <= 0 {
		return
	}
	if beta != 1 {
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
	if k <= 0 || alpha == 0 {
		return
	}
	for jc := 0; jc < n; jc += gemmNC {
		nc := min(gemmNC, n-jc)
		for pc := 0; pc < k; pc += gemmKC {
			kc := min(gemmKC, k-pc)
			gemmPackB(bufs.b, transB, b, ldb, pc, jc, kc, nc)
			for ic := 0; ic < m; ic += gemmMC {
				mc := min(gemmMC, m-ic)
				gemmPackA(bufs.a, transA, a, lda, ic, pc, mc, kc, alpha)
				for jr := 0; jr < nc; jr += gemmNR {
					nr := min(gemmNR, nc-jr)
					bp := bufs.b[jr*kc : jr*kc+gemmNR*kc]
					for ir := 0; ir < mc; ir += gemmMR {
						mr := min(gemmMR, mc-ir)
						ap := bufs.a[ir*kc : ir*kc+gemmMR*kc]
						off := (ic+ir)*ldc + jc + jr
						gemmMicro(kc, ap, bp, c[off:], ldc, mr, nr)
					}
				}
			}
		}
	}
}

// gemmPackB stores op(B)[pc:pc+kc, jc:jc+nc] as panels of NR columns, each
// panel kc rows of NR values, zero-padded past nc.
func gemmPackB[T nnFloat](dst []T, transB bool, b []T, ldb, pc, jc, kc, nc int) {
	for j0 := 0; j0 < nc; j0 += gemmNR {
		nr := min(gemmNR, nc-j0)
		panel := dst[j0*kc : j0*kc+gemmNR*kc]
		if !transB && nr == gemmNR {
			for p := 0; p < kc; p++ {
				src := b[(pc+p)*ldb+jc+j0 : (pc+p)*ldb+jc+j0+gemmNR]
				d := panel[p*gemmNR : p*gemmNR+gemmNR]
				d[0], d[1], d[2], d[3] = src[0], src[1], src[2], src[3]
			}
			continue
		}
		for p := 0; p < kc; p++ {
			d := panel[p*gemmNR : p*gemmNR+gemmNR]
			for j := 0; j < gemmNR; j++ {
				if j >= nr {
					d[j] = 0
				} else if transB {
					d[j] = b[(jc+j0+j)*ldb+pc+p]
				} else {
					d[j] = b[(pc+p)*ldb+jc+j0+j]
				}
			}
		}
	}
}

// gemmPackA stores alpha*op(A)[ic:ic+mc, pc:pc+kc] as panels of MR rows,
// each panel kc columns of MR values, zero-padded past mc.
func gemmPackA[T nnFloat](dst []T, transA bool, a []T, lda, ic, pc, mc, kc int, alpha T) {
	for i0 := 0; i0 < mc; i0 += gemmMR {
		mr := min(gemmMR, mc-i0)
		panel := dst[i0*kc : i0*kc+gemmMR*kc]
		if !transA && mr == gemmMR {
			r0 := a[(ic+i0)*lda+pc : (ic+i0)*lda+pc+kc]
			r1 := a[(ic+i0+1)*lda+pc : (ic+i0+1)*lda+pc+kc]
			r2 := a[(ic+i0+2)*lda+pc : (ic+i0+2)*lda+pc+kc]
			r3 := a[(ic+i0+3)*lda+pc : (ic+i0+3)*lda+pc+kc]
			for p := range r0 {
				d := panel[p*gemmMR : p*gemmMR+gemmMR]
				d[0], d[1], d[2], d[3] = alpha*r0[p], alpha*r1[p], alpha*r2[p], alpha*r3[p]
			}
			continue
		}
		for p := 0; p < kc; p++ {
			d := panel[p*gemmMR : p*gemmMR+gemmMR]
			for i := 0; i < gemmMR; i++ {
				if i >= mr {
					d[i] = 0
				} else if transA {
					d[i] = alpha * a[(pc+p)*lda+ic+i0+i]
				} else {
					d[i] = alpha * a[(ic+i0+i)*lda+pc+p]
				}
			}
		}
	}
}

// gemmMicro adds the 4x4 product of packed panels ap and bp into the mr x nr
// corner of c.
func gemmMicro[T nnFloat](kc int, ap, bp []T, c []T, ldc, mr, nr int) {
	var c00, c01, c02, c03, c10, c11, c12, c13, c20, c21, c22, c23, c30, c31, c32, c33 T
	ap = ap[:kc*gemmMR]
	bp = bp[:kc*gemmNR]
	for len(ap) >= 4 && len(bp) >= 4 {
		a0, a1, a2, a3 := ap[0], ap[1], ap[2], ap[3]
		b0, b1, b2, b3 := bp[0], bp[1], bp[2], bp[3]
		c00 += a0 * b0
		c01 += a0 * b1
		c02 += a0 * b2
		c03 += a0 * b3
		c10 += a1 * b0
		c11 += a1 * b1
		c12 += a1 * b2
		c13 += a1 * b3
		c20 += a2 * b0
		c21 += a2 * b1
		c22 += a2 * b2
		c23 += a2 * b3
		c30 += a3 * b0
		c31 += a3 * b1
		c32 += a3 * b2
		c33 += a3 * b3
		ap = ap[4:]
		bp = bp[4:]
	}
	if mr == gemmMR && nr == gemmNR {
		r := c[0:4:4]
		r[0] += c00
		r[1] += c01
		r[2] += c02
		r[3] += c03
		r = c[ldc : ldc+4 : ldc+4]
		r[0] += c10
		r[1] += c11
		r[2] += c12
		r[3] += c13
		r = c[2*ldc : 2*ldc+4 : 2*ldc+4]
		r[0] += c20
		r[1] += c21
		r[2] += c22
		r[3] += c23
		r = c[3*ldc : 3*ldc+4 : 3*ldc+4]
		r[0] += c30
		r[1] += c31
		r[2] += c32
		r[3] += c33
		return
	}
	acc := [16]T{c00, c01, c02, c03, c10, c11, c12, c13, c20, c21, c22, c23, c30, c31, c32, c33}
	for i := 0; i < mr; i++ {
		for j := 0; j < nr; j++ {
			c[i*ldc+j] += acc[i*4+j]
		}
	}
}

// dotGo32 is sum_p a[p]*b[p] over len(a) (b at least as long), in float32
// with four partial sums.
func dotGo32(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	p := 0
	for ; p+4 <= len(a); p += 4 {
		s0 += a[p] * b[p]
		s1 += a[p+1] * b[p+1]
		s2 += a[p+2] * b[p+2]
		s3 += a[p+3] * b[p+3]
	}
	for ; p < len(a); p++ {
		s0 += a[p] * b[p]
	}
	return (s0 + s1) + (s2 + s3)
}

// sgemvRow sets c = alpha*a*op(B) + beta*c for one row a of length k
// (c has n entries; beta == 0 overwrites c).
func sgemvRow(transB bool, n, k int, alpha float32, a, b []float32, ldb int, beta float32, c []float32) {
	if transB {
		if alpha == 1 && (beta == 0 || beta == 1) && gemvRowsVec(n, k) {
			// The vector row kernels (AVX2/AVX-512), summing in float32:
			// 1.3-1.7x the float64 dot4x32 on classifier heads.
			if beta == 0 {
				clear(c[:n])
			}
			gemvRows32(c[:n], a[:k], b, ldb)
			return
		}
		// B is n x k: each c[j] is a dot product of contiguous rows, four
		// rows at a time (a is read once per four rows of B).
		j := 0
		if k >= 8 {
			var d [4]float32
			for ; j+4 <= n; j += 4 {
				dot4x32(a[:k], b[j*ldb:], ldb, &d)
				if alpha == 1 && beta == 1 {
					cj := c[j : j+4 : j+4]
					cj[0] += d[0]
					cj[1] += d[1]
					cj[2] += d[2]
					cj[3] += d[3]
					continue
				}
				for q, s := range d {
					v := alpha * s
					if beta != 0 {
						v += beta * c[j+q]
					}
					c[j+q] = v
				}
			}
		}
		for ; j < n; j++ {
			v := alpha * dotGo32(a[:k], b[j*ldb:j*ldb+k])
			if beta != 0 {
				v += beta * c[j]
			}
			c[j] = v
		}
		return
	}
	// B is k x n: accumulate rows of B scaled by a[p].
	sgemmScaleC(1, n, beta, c, n)
	for p := 0; p < k; p++ {
		axpy32(c[:n], b[p*ldb:p*ldb+n], alpha*a[p])
	}
}

// scratchFor returns part i's GEMM buffers, kept in the pool's slot i
// (nil without a pool). A function, not a WorkPool method, so the runtime
// does not pull the GEMM code into every package.
func scratchFor(p *WorkPool, i int) *gemmScratch {
	if p == nil || i >= len(p.slots) {
		return nil
	}
	s, _ := p.slots[i].(*gemmScratch)
	if s == nil {
		s = new(gemmScratch)
		p.slots[i] = s
	}
	return s
}

// sgemmParTask is one float32 GEMM split into column or row blocks.
type sgemmParTask struct {
	transA, transB bool
	m, n, k        int
	alpha, beta    float32
	a, b, c        []float32
	lda, ldb, ldc  int
	byCols         bool
	pool           *WorkPool
}

func (t *sgemmParTask) runPart(i, parts int) {
	if t.byCols {
		lo, hi := parSplit(t.n, parts, i, 16)
		if lo >= hi {
			return
		}
		boff := lo
		if t.transB {
			boff = lo * t.ldb
		}
		sgemmWith(scratchFor(t.pool, i), t.transA, t.transB, t.m, hi-lo, t.k, t.alpha, t.a, t.lda, t.b[boff:], t.ldb, t.beta, t.c[lo:], t.ldc)
		return
	}
	lo, hi := parSplit(t.m, parts, i, 6)
	if lo >= hi {
		return
	}
	aoff := lo * t.lda
	if t.transA {
		aoff = lo
	}
	sgemmWith(scratchFor(t.pool, i), t.transA, t.transB, hi-lo, t.n, t.k, t.alpha, t.a[aoff:], t.lda, t.b, t.ldb, t.beta, t.c[lo*t.ldc:], t.ldc)
}

// sgemmPar is sgemm spread over p: over column blocks when C is wide,
// else over row blocks. Each element of C is computed by one goroutine in
// the same order as sgemm would, so results do not depend on the threads.
func sgemmPar(p *WorkPool, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	threads := p.Threads()
	if threads == 1 || m*n*k < parMinFlops {
		sgemmWith(scratchFor(p, 0), transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	t, _ := p.gemmTask.(*sgemmParTask)
	if t == nil {
		t = new(sgemmParTask)
		p.gemmTask = t
	}
	*t = sgemmParTask{transA: transA, transB: transB, m: m, n: n, k: k, alpha: alpha, beta: beta,
		a: a, b: b, c: c, lda: lda, ldb: ldb, ldc: ldc, pool: p, byCols: n >= 32*threads || n >= m}
	parts := threads
	if t.byCols {
		parts = min(parts, (n+15)/16)
	} else {
		parts = min(parts, (m+5)/6)
	}
	p.Run(parts, t)
	*t = sgemmParTask{}
}

// gemmTPart is gemmT for part i of a parallel section of p: float32
// packs into the part's own buffers.
func gemmTPart[T nnFloat](p *WorkPool, i int, transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	if av, ok := any(a).([]float32); ok {
		sgemmWith(scratchFor(p, i), transA, transB, m, n, k, float32(alpha), av, lda, any(b).([]float32), ldb, float32(beta), any(c).([]float32), ldc)
		return
	}
	gemmT(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// gemmTPar is gemmT spread over p for float32 (float64 stays serial).
func gemmTPar[T nnFloat](p *WorkPool, transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	if av, ok := any(a).([]float32); ok && p != nil {
		sgemmPar(p, transA, transB, m, n, k, float32(alpha), av, lda, any(b).([]float32), ldb, float32(beta), any(c).([]float32), ldc)
		return
	}
	gemmT(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}
