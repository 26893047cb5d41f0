package templates

// bf16 GEMM: C = A*B with A float32 rounded to bfloat16 (nearest even)
// and B stored bfloat16 in panels, every product exact in float32 and the
// sums float32 (VDPBF16PS semantics: per k pair the odd product is added
// first, then the even one). The tiles (bf16Tile) are AVX512_BF16
// assembly where the CPU has it (k_gemm_bf16_amd64.go, asm_bf16_amd64.s
// from asmgen/amd64/bf16) and bf16TileGo elsewhere.
//
// Packed B: panel p holds columns 16p..16p+15; within it pair q (rows
// 2q and 2q+1 of B) is 32 uint16s, lane j's two values at 2j (row 2q)
// and 2j+1 (row 2q+1); rows past k and columns past n are zero.

const (
	bf16MR = 6  // rows of the largest tile
	bf16NR = 16 // columns of a panel
	bf16TW = 64 // columns of the widest tile (4 panels); the accumulator row stride
)

// bf16K2 is the number of k pairs.
func bf16K2(k int) int { return (k + 1) / 2 }

// bf16PackedBSize is the uint16 length of B [k, n] packed.
func bf16PackedBSize(k, n int) int { return (n + bf16NR - 1) / bf16NR * bf16K2(k) * 2 * bf16NR }

// bf16PackB packs op(B) (k x n; B row-major with row stride ldb, its
// transpose when transB) into dst (bf16PackedBSize(k, n) long).
func bf16PackB(dst []uint16, transB bool, k, n int, b []float32, ldb int) []uint16 {
	k2 := bf16K2(k)
	dst = dst[:bf16PackedBSize(k, n)]
	for i := range dst {
		dst[i] = 0
	}
	at := func(r, c int) float32 {
		if transB {
			return b[c*ldb+r]
		}
		return b[r*ldb+c]
	}
	for c := 0; c < n; c++ {
		p, j := c/bf16NR, c%bf16NR
		panel := dst[p*k2*2*bf16NR:]
		for r := 0; r < k; r++ {
			panel[(r/2)*2*bf16NR+2*j+r%2] = F32ToBF16(at(r, c))
		}
	}
	return dst
}

// bf16PackBF16 packs B given as bf16 bits already (a model's bf16
// weights), like bf16PackB.
func bf16PackBF16(dst []uint16, transB bool, k, n int, b []uint16, ldb int) []uint16 {
	k2 := bf16K2(k)
	dst = dst[:bf16PackedBSize(k, n)]
	for i := range dst {
		dst[i] = 0
	}
	for c := 0; c < n; c++ {
		p, j := c/bf16NR, c%bf16NR
		panel := dst[p*k2*2*bf16NR:]
		for r := 0; r < k; r++ {
			v := b[r*ldb+c]
			if transB {
				v = b[c*ldb+r]
			}
			panel[(r/2)*2*bf16NR+2*j+r%2] = v
		}
	}
	return dst
}

// bf16TileGo is the tiles' pure-Go twin and test reference: for r < rows,
// panel p < panels and lane j < 16, acc[r*64+p*16+j] is the sum over the
// k2 pairs q of a[r*lda+2q+1]*b[p*bstride+32q+2j+1] then
// a[r*lda+2q]*b[p*bstride+32q+2j] (lda and bstride in uint16s), each
// product exact in float32, each addition rounded.
func bf16TileGo(a []uint16, lda, rows int, b []uint16, bstride, panels, k2 int, acc *[bf16MR * bf16TW]float32) {
	for r := 0; r < rows; r++ {
		ar := a[r*lda:]
		for p := 0; p < panels; p++ {
			bp := b[p*bstride:]
			var s [bf16NR]float32
			for q := 0; q < k2; q++ {
				a0, a1 := BF16ToF32(ar[2*q]), BF16ToF32(ar[2*q+1])
				row := bp[q*2*bf16NR : (q+1)*2*bf16NR]
				for j := 0; j < bf16NR; j++ {
					s[j] += a1 * BF16ToF32(row[2*j+1])
					s[j] += a0 * BF16ToF32(row[2*j])
				}
			}
			copy(acc[r*bf16TW+p*bf16NR:], s[:])
		}
	}
}

// bf16Gemm is the driver's state for one call, split over the pool by
// row blocks (part i takes the 6-row blocks i, i+parts...).
type bf16Gemm struct {
	m, n, k int
	a       []float32
	lda     int
	bp      []uint16
	c       []float32
	ldc     int
	ab      []uint16 // A in bf16, m rows of 2*k2 (pairs padded with zero)
	accs    [][bf16MR * bf16TW]float32
}

// bf16GemmPacked computes C = A*B (C overwritten; A m x k row-major with
// row stride lda; bp B packed by bf16PackB) on p, with s's buffers (grown
// once, reused). The sums of each element are in the same order whatever
// the thread count.
func bf16GemmPacked(p *WorkPool, s *bf16Gemm, m, n, k int, a []float32, lda int, bp []uint16, c []float32, ldc int) {
	if m <= 0 || n <= 0 {
		return
	}
	k2 := bf16K2(k)
	if need := m * 2 * k2; cap(s.ab) < need {
		s.ab = make([]uint16, need)
	}
	s.m, s.n, s.k, s.a, s.lda, s.bp, s.c, s.ldc = m, n, k, a, lda, bp, c, ldc
	s.ab = s.ab[:m*2*k2]
	for r := 0; r < m; r++ {
		dst := s.ab[r*2*k2 : (r+1)*2*k2]
		for i, v := range a[r*lda : r*lda+k] {
			dst[i] = F32ToBF16(v)
		}
		if k%2 != 0 {
			dst[k] = 0
		}
	}
	blocks := (m + bf16MR - 1) / bf16MR
	parts := min(p.Threads(), blocks)
	if len(s.accs) < parts {
		s.accs = make([][bf16MR * bf16TW]float32, parts)
	}
	p.Run(parts, s)
	s.a, s.c, s.bp = nil, nil, nil
}

func (s *bf16Gemm) runPart(i, parts int) {
	k2 := bf16K2(s.k)
	acc := &s.accs[i]
	panelLen := k2 * 2 * bf16NR
	for blk := i; blk*bf16MR < s.m; blk += parts {
		r0 := blk * bf16MR
		rows := min(bf16MR, s.m-r0)
		for c0 := 0; c0 < s.n; c0 += bf16TW {
			cols := min(bf16TW, s.n-c0)
			panels := (cols + bf16NR - 1) / bf16NR
			bf16Tile(s.ab[r0*2*k2:], 2*k2, rows, s.bp[(c0/bf16NR)*panelLen:], panelLen, panels, k2, acc)
			for r := 0; r < rows; r++ {
				copy(s.c[(r0+r)*s.ldc+c0:(r0+r)*s.ldc+c0+cols], acc[r*bf16TW:r*bf16TW+cols])
			}
		}
	}
}

// bf16GemmBand computes m rows of Y = alpha*A*B for the columns c0 ..
// c0+cols of the bf16-packed B (bp, n columns in all; c0 a multiple of
// 16): y[r*ldy+j] for j < cols is column c0+j. A (row stride lda) is
// rounded to bf16 into s's buffer (s nil: a buffer of its own).
func bf16GemmBand(s *gemmScratch, m, c0, cols, k int, alpha float32, a []float32, lda int, bp []uint16, y []float32, ldy int) {
	if c0%bf16NR != 0 {
		panic("templates: bf16 GEMM band not on a panel boundary")
	}
	var g *bf16Gemm
	if s != nil {
		if s.half == nil {
			s.half = new(bf16Gemm)
		}
		g = s.half
	} else {
		g = new(bf16Gemm)
	}
	k2 := bf16K2(k)
	rows := min(m, bf16MR)
	if need := bf16MR * 2 * k2; cap(g.ab) < need {
		g.ab = make([]uint16, need)
	}
	if len(g.accs) < 1 {
		g.accs = make([][bf16MR * bf16TW]float32, 1)
	}
	acc := &g.accs[0]
	panelLen := k2 * 2 * bf16NR
	ab := g.ab[:bf16MR*2*k2]
	for r0 := 0; r0 < m; r0 += rows {
		rows = min(bf16MR, m-r0)
		for r := 0; r < rows; r++ {
			dst := ab[r*2*k2 : (r+1)*2*k2]
			for i, v := range a[(r0+r)*lda : (r0+r)*lda+k] {
				dst[i] = F32ToBF16(v)
			}
			if k%2 != 0 {
				dst[k] = 0
			}
		}
		for j0 := 0; j0 < cols; j0 += bf16TW {
			w := min(bf16TW, cols-j0)
			panels := (w + bf16NR - 1) / bf16NR
			bf16Tile(ab, 2*k2, rows, bp[((c0+j0)/bf16NR)*panelLen:], panelLen, panels, k2, acc)
			for r := 0; r < rows; r++ {
				out := y[(r0+r)*ldy+j0 : (r0+r)*ldy+j0+w]
				src := acc[r*bf16TW : r*bf16TW+w]
				if alpha == 1 {
					copy(out, src)
					continue
				}
				for j, v := range src {
					out[j] = alpha * v
				}
			}
		}
	}
}
