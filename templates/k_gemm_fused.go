package templates

// cuvil::FusedGemm and cuvil::FusedMatMul: the GEMM with its epilogue
// (k_epilogue.go) run on each block of output as soon as it is written.

// fusedGemmFloat computes y[m x nn] = act(alpha*op(A)*op(B) + beta*C + z)
// (z after act when after). C is broadcast with strides csi, csj (nil for
// none). The output is split over the pool by column blocks (or row blocks
// when it is tall and narrow); each part runs the GEMM on its block a band
// of rows at a time and its epilogue right after, while the band is in
// cache. With packed set (float32 only), b is op(B) packed whole by
// sgemmPackB at compile time (transB and ldb are then unused).
func fusedGemmFloat[T nnFloat](n *Node, transA, transB bool, m, nn, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, csi, csj int, z []T, after bool, act fusedAct, y []T, packed bool, bh []uint16) {
	if c == nil {
		beta = 0
	}
	if packed {
		transB = false
	}
	t := parTaskOf[fusedGemmTask[T]](n)
	*t = fusedGemmTask[T]{p: n.Pool, transA: transA, transB: transB, m: m, nn: nn, k: k, alpha: alpha, beta: beta,
		a: a, b: b, c: c, z: z, y: y, lda: lda, ldb: ldb, csi: csi, csj: csj, after: after, packed: packed, act: act, bh: bh}
	threads := 1
	if _, f32 := any(a).([]float32); f32 && m*nn*k >= parMinFlops {
		threads = n.Pool.Threads()
	}
	parts := 1
	if threads > 1 {
		// Each part packs the A rows and B columns it reads. With B
		// prepacked and A packed too (no AVX-512, or transA), rows split
		// when there are two row tiles a part, so A is packed once, not
		// once a part; else columns split wide outputs (with A read in
		// place nothing is packed, and 32-column blocks share the work
		// more evenly than 6-row tiles: BERT's 128 rows are 22 tiles).
		t.byCols = (nn >= 32*threads || nn >= m) && !(packed && m >= 12*threads && !sgemmReadsAInPlace(transA))
		if t.byCols {
			parts = min(threads, (nn+15)/16)
		} else {
			// Every part keeps at least 3 rows: one or two rows take the
			// GEMV path, which sums in another order.
			parts = min(threads, m/6)
		}
	}
	n.Pool.Run(max(parts, 1), t)
	*t = fusedGemmTask[T]{}
}

// fusedGemmTask is one fused GEMM split into column or row blocks.
type fusedGemmTask[T nnFloat] struct {
	p                  *WorkPool
	transA, transB     bool
	m, nn, k           int
	alpha, beta        T
	a, b, c, z, y      []T
	lda, ldb, csi, csj int
	after, byCols      bool
	packed             bool // b is op(B) prepacked (float32)
	act                fusedAct
	bh                 []uint16 // op(B) prepacked in bf16 (bf16PackB; b nil, packed and !transA)
}

func (t *fusedGemmTask[T]) runPart(i, parts int) {
	c0, c1, r0, r1 := 0, t.nn, 0, t.m
	if parts > 1 {
		if t.byCols {
			c0, c1 = parSplit(t.nn, parts, i, sgemmColAlign())
		} else {
			r0, r1 = parSplit(t.m, parts, i, 6)
		}
	}
	if c0 >= c1 || r0 >= r1 {
		return
	}
	cb := t.colBlock(r1-r0, c1-c0)
	for j0 := c0; j0 < c1; j0 += cb {
		t.runBlock(i, r0, r1, j0, min(j0+cb, c1))
	}
}

// colBlock is the width of the column blocks runPart takes one at a
// time, each over its rows a band at a time (runBlock), for a part of
// rows x cols outputs. Without an epilogue the part is one block. With
// one, a block of more than fusedMMFloats outputs is cut so that the
// epilogue finds it in L2: into row bands when the part has at least as
// many rows as columns, else into column blocks of whole tiles, so that
// the smaller operand is the one read again (each band reads all of
// op(B)'s columns, each column block all of op(A)'s rows: a language
// model's head, 64 rows by 16384 columns, had read its 16 MiB of B from
// memory once per 12-row band).
func (t *fusedGemmTask[T]) colBlock(rows, cols int) int {
	if t.noEpilogue() || rows >= cols || rows*cols <= fusedMMFloats {
		return cols
	}
	al := sgemmColAlign()
	return max(al, fusedMMFloats/rows/al*al)
}

// noEpilogue reports whether the epilogue leaves the GEMM's output as it is.
func (t *fusedGemmTask[T]) noEpilogue() bool {
	return t.beta == 0 && t.z == nil && t.act.kind == fusedActNone
}

// runBlock runs the GEMM and epilogue on rows [r0, r1) and columns
// [c0, c1) of the output, a band of rows at a time (one band without an
// epilogue or when the block has fewer rows than columns; see colBlock).
func (t *fusedGemmTask[T]) runBlock(i, r0, r1, c0, c1 int) {
	cols := c1 - c0
	boff := c0
	if t.transB {
		boff = c0 * t.ldb
	}
	rb := r1 - r0
	if !t.noEpilogue() && rb >= cols {
		rb = max(6, fusedMMFloats/cols/6*6)
	}
	nn := t.nn
	for i0, mr := r0, 0; i0 < r1; i0 += mr {
		mr = min(rb, r1-i0)
		if r1-(i0+mr) <= 2 {
			// No band of one or two rows (see fusedGemmFloat).
			mr = r1 - i0
		}
		aoff := i0 * t.lda
		if t.transA {
			aoff = i0
		}
		if t.bh != nil {
			bf16GemmBand(scratchFor(t.p, i), mr, c0, cols, t.k, float32(t.alpha), any(t.a).([]float32)[aoff:], t.lda, t.bh,
				any(t.y).([]float32)[i0*nn+c0:], nn)
		} else if t.packed {
			// Columns c0.. of the packed B: parSplit and colBlock keep c0 a
			// multiple of the panel width.
			sgemmPrepackedBPart(scratchFor(t.p, i).pkBufs(), nn, c0, mr, cols, t.k, float32(t.alpha), t.transA,
				any(t.a).([]float32)[aoff:], t.lda, any(t.b).([]float32), 0, any(t.y).([]float32)[i0*nn+c0:], nn)
		} else {
			gemmTPart(t.p, i, t.transA, t.transB, mr, cols, t.k, t.alpha, t.a[aoff:], t.lda, t.b[boff:], t.ldb, 0, t.y[i0*nn+c0:], nn)
		}
		if t.noEpilogue() {
			continue
		}
		for r := i0; r < i0+mr; r++ {
			row := t.y[r*nn+c0 : r*nn+c1]
			var zs []T
			if t.z != nil {
				zs = t.z[r*nn+c0 : r*nn+c1]
			}
			var bias T
			var bvec []T
			if t.beta != 0 {
				if t.csj == 1 {
					bvec = t.c[r*t.csi+c0 : r*t.csi+c1]
				} else {
					bias = t.beta * t.c[r*t.csi]
				}
			}
			fusedEpilogue(row, bias, bvec, t.beta, zs, t.after, t.act)
		}
	}
}

// fusedMMFloats is the output band, in elements, fusedGemmTask keeps in
// L2 between the GEMM and its epilogue: large enough that a transformer's
// projections (128 x 1024) take one band and B is packed once.
const fusedMMFloats = 256 << 10

// FusedGemm is cuvil::FusedGemm: Gemm, then residual Z and activation in
// the epilogue of each block of output rows.
func FusedGemm(n *Node) error {
	if !gemmBF16Packed(n) {
		if ok, err := nnViaF32(n, FusedGemm); ok {
			return err
		}
	}
	A, B, C, Z := n.Input(0), n.Input(1), n.Input(2), n.Input(3)
	if A == nil || B == nil {
		return n.Errorf("needs inputs A and B")
	}
	act, err := fusedActOf(n)
	if err != nil {
		return err
	}
	g, err := gemmArgsOf(n, A, B, C) // k_gemm.go
	if err != nil {
		return err
	}
	transA, transB, m, nn, k, alpha, beta, csi, csj := g.transA, g.transB, g.m, g.n, g.k, g.alpha, g.beta, g.csi, g.csj
	packed := g.packed
	sc := n.ScratchInts(2)
	sc[0], sc[1] = m, nn
	if err := fusedCheckZ(n, Z, A.DType, sc); err != nil {
		return err
	}
	after := n.Attrs.Int("residual_after_activation", 0) != 0
	Y := n.Out[0]
	nnResize(Y, A.DType, m, nn)
	lda, ldb := g.lda, g.ldb
	switch a := A.Data.(type) {
	case []float32:
		var c, z []float32
		if C != nil {
			c = C.F32()
		}
		if Z != nil {
			z = Z.F32()
		}
		b, bh := gemmPackedF32(B)
		fusedGemmFloat(n, transA, transB, m, nn, k, alpha, a, lda, b, ldb, beta, c, csi, csj, z, after, act, Y.F32(), packed, bh)
	case []float64:
		var c, z []float64
		if C != nil {
			c = C.F64()
		}
		if Z != nil {
			z = Z.F64()
		}
		fusedGemmFloat(n, transA, transB, m, nn, k, float64(alpha), a, lda, B.F64(), ldb, float64(beta), c, csi, csj, z, after, act, Y.F64(), false, nil)
	default:
		return n.Errorf("unsupported dtype %v", A.DType)
	}
	return nil
}

// FusedMatMul is cuvil::FusedMatMul: A [..., M, K] times a 2-D B [K, N]
// (the batches of A stack into one tall GEMM), plus bias [N], residual Z
// and activation in the epilogue of each block of output rows.
func FusedMatMul(n *Node) error {
	if !gemmBF16Packed(n) {
		if ok, err := nnViaF32(n, FusedMatMul); ok {
			return err
		}
	}
	A, B, bias, Z := n.Input(0), n.Input(1), n.Input(2), n.Input(3)
	if A == nil || B == nil {
		return n.Errorf("needs inputs A and B")
	}
	act, err := fusedActOf(n)
	if err != nil {
		return err
	}
	ra := len(A.Shape)
	k, nn, packed, err := gemmBShape(n, B, false)
	if err != nil {
		return err
	}
	if ra < 1 {
		return n.Errorf("A %v must have rank >= 1", A.ShapeString())
	}
	if B.DType != A.DType && !(gemmBF16Packed(n) && A.DType == F32) || bias != nil && bias.DType != A.DType {
		return n.Errorf("inputs must share one dtype")
	}
	if A.Shape[ra-1] != k {
		return n.Errorf("inner dimensions differ: A %v, B [%d %d]", A.ShapeString(), k, nn)
	}
	if bias != nil && bias.Len() != nn {
		return n.Errorf("bias %v must have %d elements", bias.ShapeString(), nn)
	}
	shape := n.ScratchInts(ra)
	copy(shape, A.Shape[:ra-1])
	shape[ra-1] = nn
	if err := fusedCheckZ(n, Z, A.DType, shape); err != nil {
		return err
	}
	m := nnProd(A.Shape[:ra-1])
	after := n.Attrs.Int("residual_after_activation", 0) != 0
	Y := n.Out[0]
	nnResize(Y, A.DType, shape...)
	switch a := A.Data.(type) {
	case []float32:
		var c, z []float32
		if bias != nil {
			c = bias.F32()
		}
		if Z != nil {
			z = Z.F32()
		}
		b, bh := gemmPackedF32(B)
		fusedGemmFloat(n, false, false, m, nn, k, 1, a, k, b, nn, 1, c, 0, 1, z, after, act, Y.F32(), packed, bh)
	case []float64:
		var c, z []float64
		if bias != nil {
			c = bias.F64()
		}
		if Z != nil {
			z = Z.F64()
		}
		fusedGemmFloat(n, false, false, m, nn, k, 1, a, k, B.F64(), nn, 1, c, 0, 1, z, after, act, Y.F64(), false, nil)
	default:
		return n.Errorf("unsupported dtype %v", A.DType)
	}
	return nil
}
