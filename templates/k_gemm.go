package templates

// Gemm computes Y = alpha*op(A)*op(B) + beta*C (versions 1-13). C is
// broadcast to M x N (unidirectional; versions 1-6 also accept it through
// the broadcast attribute) and optional since version 11.
func Gemm(n *Node) error {
	if !gemmBF16Packed(n) {
		if ok, err := nnViaF32(n, Gemm); ok {
			return err
		}
	}
	A, B, C := n.Input(0), n.Input(1), n.Input(2)
	if A == nil || B == nil {
		return n.Errorf("needs inputs A and B")
	}
	g, err := gemmArgsOf(n, A, B, C)
	if err != nil {
		return err
	}
	transA, transB, m, nn, k, alpha, beta, csi, csj := g.transA, g.transB, g.m, g.n, g.k, g.alpha, g.beta, g.csi, g.csj
	packed := g.packed
	Y := n.Out[0]
	nnResize(Y, A.DType, m, nn)
	lda, ldb := g.lda, g.ldb
	switch a := A.Data.(type) {
	case []float32:
		// The fused driver adds beta*C in each band's epilogue, in
		// parallel, instead of a strided copy of C first.
		var c []float32
		if C != nil {
			c = C.F32()
		}
		b, bh := gemmPackedF32(B)
		fusedGemmFloat(n, transA, transB, m, nn, k, alpha, a, lda, b, ldb, beta, c, csi, csj, nil, false, fusedAct{}, Y.F32(), packed, bh)
	case []float64:
		gemmFloat(n.Pool, transA, transB, m, nn, k, float64(alpha), a, lda, B.F64(), ldb, float64(beta), C, csi, csj, Y.F64())
	case []int32:
		gemmInt(transA, transB, m, nn, k, alpha, a, lda, B.I32(), ldb, beta, C, csi, csj, Y.I32())
	case []int64:
		gemmInt(transA, transB, m, nn, k, alpha, a, lda, B.I64(), ldb, beta, C, csi, csj, Y.I64())
	case []uint32:
		gemmInt(transA, transB, m, nn, k, alpha, a, lda, B.Data.([]uint32), ldb, beta, C, csi, csj, Y.Data.([]uint32))
	case []uint64:
		gemmInt(transA, transB, m, nn, k, alpha, a, lda, B.Data.([]uint64), ldb, beta, C, csi, csj, Y.Data.([]uint64))
	default:
		return n.Errorf("unsupported dtype %v", A.DType)
	}
	return nil
}

// gemmArgs is what Gemm and FusedGemm read from their inputs and
// attributes: op(A) is m x k, op(B) k x n, C broadcast to m x n with
// strides csi, csj.
type gemmArgs struct {
	transA, transB bool
	m, n, k        int
	alpha, beta    float32
	csi, csj       int
	lda, ldb       int
	packed         bool
}

// gemmArgsOf checks Gemm's inputs A, B and C (nil: none) against each
// other and the attributes.
func gemmArgsOf(n *Node, A, B, C *Tensor) (gemmArgs, error) {
	var g gemmArgs
	transA, transB := n.Attrs.Int("transA", 0) != 0, n.Attrs.Int("transB", 0) != 0
	br, bc, packed, err := gemmBShape(n, B, transB)
	if err != nil {
		return g, err
	}
	if len(A.Shape) != 2 {
		return g, n.Errorf("A %v must be 2-D", A.ShapeString())
	}
	bf16B := packed && B.DType == BF16 // -precision bf16: op(B) in the bf16 GEMM's panels
	if C != nil && C.DType != A.DType || B.DType != A.DType && !(bf16B && A.DType == F32) {
		return g, n.Errorf("inputs must share one dtype")
	}
	if bf16B && transA {
		return g, n.Errorf("a bfloat16 prepacked B needs transA=0")
	}
	alpha, beta := n.Attrs.Float("alpha", 1), n.Attrs.Float("beta", 1)
	m, k := A.Shape[0], A.Shape[1]
	if transA {
		m, k = k, m
	}
	kb, nn := br, bc
	if transB {
		kb, nn = nn, kb
	}
	if k != kb {
		return g, n.Errorf("inner dimensions differ: A %v, B [%d %d] (transA=%v transB=%v)", A.ShapeString(), br, bc, transA, transB)
	}
	// C's strides when broadcast to m x nn.
	var csi, csj int
	if C != nil {
		cm, cn := 1, 1
		switch len(C.Shape) {
		case 0:
		case 1:
			cn = C.Shape[0]
		case 2:
			cm, cn = C.Shape[0], C.Shape[1]
		default:
			return g, n.Errorf("C %v has rank > 2", C.ShapeString())
		}
		if (cm != 1 && cm != m) || (cn != 1 && cn != nn) {
			return g, n.Errorf("C %v does not broadcast to [%d,%d]", C.ShapeString(), m, nn)
		}
		if cm != 1 {
			csi = cn
		}
		if cn != 1 {
			csj = 1
		}
	}
	return gemmArgs{transA, transB, m, nn, k, alpha, beta, csi, csj, A.Shape[1], bc, packed}, nil
}

func gemmFloat[T nnFloat](p *WorkPool, transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, C *Tensor, csi, csj int, y []T) {
	if C == nil || beta == 0 {
		beta = 0
	} else {
		c := C.Data.([]T)
		for i := 0; i < m; i++ {
			row := y[i*n : i*n+n]
			for j := range row {
				row[j] = c[i*csi+j*csj]
			}
		}
	}
	gemmTPar(p, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, y, n)
}

func gemmInt[T nnNum](transA, transB bool, m, n, k int, alpha float32, a []T, lda int, b []T, ldb int, beta float32, C *Tensor, csi, csj int, y []T) {
	var c []T
	if C != nil {
		c = C.Data.([]T)
	}
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s T
			for p := 0; p < k; p++ {
				var av, bv T
				if transA {
					av = a[p*lda+i]
				} else {
					av = a[i*lda+p]
				}
				if transB {
					bv = b[j*ldb+p]
				} else {
					bv = b[p*ldb+j]
				}
				s += av * bv
			}
			if alpha != 1 {
				s = T(float64(alpha) * float64(s))
			}
			if c != nil && beta != 0 {
				s += T(float64(beta) * float64(c[i*csi+j*csj]))
			}
			y[i*n+j] = s
		}
	}
}

// MatMul is numpy matmul (versions 1-13): 1-D operands are promoted (and
// the promoted dimension dropped), leading batch dimensions broadcast.
func MatMul(n *Node) error {
	if !gemmBF16Packed(n) {
		if ok, err := nnViaF32(n, MatMul); ok {
			return err
		}
	}
	A, B := n.Input(0), n.Input(1)
	if A == nil || B == nil {
		return n.Errorf("needs inputs A and B")
	}
	if A.DType != B.DType && !gemmBF16Packed(n) {
		return n.Errorf("A is %v but B is %v", A.DType, B.DType)
	}
	if n.Attrs.Ints(gemmPackedAttr) != nil {
		return matmulPackedB(n, A, B)
	}
	ra, rb := len(A.Shape), len(B.Shape)
	if ra == 0 || rb == 0 {
		return n.Errorf("scalars are not allowed: A %v, B %v", A.ShapeString(), B.ShapeString())
	}
	m, k, kb, nn := 1, A.Shape[ra-1], B.Shape[0], 1
	if ra >= 2 {
		m = A.Shape[ra-2]
	}
	if rb >= 2 {
		kb, nn = B.Shape[rb-2], B.Shape[rb-1]
	}
	if k != kb {
		return n.Errorf("inner dimensions differ: A %v, B %v", A.ShapeString(), B.ShapeString())
	}
	ba, bb := A.Shape[:max(ra-2, 0)], B.Shape[:max(rb-2, 0)]
	nb := max(len(ba), len(bb))
	// scratch: out shape (nb+2) | batch dims (nb) | A strides (nb) | B strides (nb) | index (nb)
	sc := n.ScratchInts(5*nb + 2)
	shape, bdims, sa, sb, idx := sc[:0], sc[nb+2:2*nb+2], sc[2*nb+2:3*nb+2], sc[3*nb+2:4*nb+2], sc[4*nb+2:5*nb+2]
	strideA, strideB := m*k, k*nn
	for i := nb - 1; i >= 0; i-- {
		da, db := 1, 1
		if j := i - (nb - len(ba)); j >= 0 {
			da = ba[j]
		}
		if j := i - (nb - len(bb)); j >= 0 {
			db = bb[j]
		}
		if da != db && da != 1 && db != 1 {
			return n.Errorf("batch dimensions of A %v and B %v do not broadcast", A.ShapeString(), B.ShapeString())
		}
		bdims[i] = max(da, db)
		if da == 1 {
			sa[i] = 0
		} else {
			sa[i] = strideA
		}
		if db == 1 {
			sb[i] = 0
		} else {
			sb[i] = strideB
		}
		strideA *= da
		strideB *= db
	}
	shape = append(shape, bdims...)
	if ra >= 2 {
		shape = append(shape, m)
	}
	if rb >= 2 {
		shape = append(shape, nn)
	}
	Y := n.Out[0]
	nnResize(Y, A.DType, shape...)
	switch a := A.Data.(type) {
	case []float32:
		matmulFloat(n, a, B.F32(), Y.F32(), m, nn, k, bdims, sa, sb, idx)
	case []float64:
		matmulFloat(n, a, B.F64(), Y.F64(), m, nn, k, bdims, sa, sb, idx)
	case []int32:
		matmulInt(a, B.I32(), Y.I32(), m, nn, k, bdims, sa, sb, idx)
	case []int64:
		matmulInt(a, B.I64(), Y.I64(), m, nn, k, bdims, sa, sb, idx)
	case []uint32:
		matmulInt(a, B.Data.([]uint32), Y.Data.([]uint32), m, nn, k, bdims, sa, sb, idx)
	case []uint64:
		matmulInt(a, B.Data.([]uint64), Y.Data.([]uint64), m, nn, k, bdims, sa, sb, idx)
	default:
		return n.Errorf("unsupported dtype %v", A.DType)
	}
	return nil
}

// matmulPackedB is MatMul with a constant 2-D B gen stored prepacked
// (gemmPackedAttr): A's batches stack into one tall GEMM.
func matmulPackedB(n *Node, A, B *Tensor) error {
	k, nn, _, err := gemmBShape(n, B, false)
	if err != nil {
		return err
	}
	ra := len(A.Shape)
	if ra == 0 || A.Shape[ra-1] != k {
		return n.Errorf("inner dimensions differ: A %v, B [%d %d]", A.ShapeString(), k, nn)
	}
	if A.DType != F32 {
		return n.Errorf("A is %v but prepacked B is float32", A.DType)
	}
	shape := n.ScratchInts(ra)
	copy(shape, A.Shape[:ra-1])
	shape[ra-1] = nn
	m := nnProd(A.Shape[:ra-1])
	Y := n.Out[0]
	nnResize(Y, F32, shape...)
	b, bh := gemmPackedF32(B)
	fusedGemmFloat(n, false, false, m, nn, k, 1, A.F32(), k, b, nn, 0, nil, 0, 0, nil, false, fusedAct{}, Y.F32(), true, bh)
	return nil
}

// gemmBF16Packed reports whether n's B is a prepacked bf16 B
// (-precision bf16: bf16PackB's layout, gemmPackedAttr set).
func gemmBF16Packed(n *Node) bool {
	B := n.Input(1)
	return B != nil && B.DType == BF16 && n.Attrs.Ints(gemmPackedAttr) != nil
}

// gemmPackedF32 returns a prepacked B's float32 panels, or its bf16 ones.
func gemmPackedF32(B *Tensor) ([]float32, []uint16) {
	if B.DType == BF16 {
		return nil, B.Data.([]uint16)
	}
	return B.F32(), nil
}

// gemmPackedAttr is the attribute gen sets on a Gemm, MatMul, FusedGemm
// or FusedMatMul whose constant float32 B it stored prepacked: B's data is
// then op(B) (k x n) in sgemmPackB's layout, whatever transB says, B's
// shape that length, and the attribute holds B's ONNX shape (2-D). The
// assembly and pure-Go GEMMs both read that layout.
const gemmPackedAttr = "packed_b_shape"

// gemmBShape returns B's 2-D ONNX shape (from gemmPackedAttr when B is
// prepacked) and whether B is prepacked.
func gemmBShape(n *Node, B *Tensor, transB bool) (rows, cols int, packed bool, err error) {
	ps := n.Attrs.Ints(gemmPackedAttr)
	if ps == nil {
		if len(B.Shape) != 2 {
			return 0, 0, false, n.Errorf("B %v must be 2-D", B.ShapeString())
		}
		return B.Shape[0], B.Shape[1], false, nil
	}
	if B.DType != F32 && B.DType != BF16 || len(ps) != 2 || ps[0] < 0 || ps[1] < 0 {
		return 0, 0, false, n.Errorf("prepacked B must be float32 or bfloat16 with a 2-D shape, have %v %v", B.DType, ps)
	}
	rows, cols = int(ps[0]), int(ps[1])
	k, nn := rows, cols
	if transB {
		k, nn = nn, k
	}
	want := sgemmPackedBSize(k, nn)
	if B.DType == BF16 {
		want = bf16PackedBSize(k, nn)
	}
	if B.Len() != want {
		return 0, 0, false, n.Errorf("prepacked B has %d values, shape %v (transB=%v) wants %d", B.Len(), ps, transB, want)
	}
	return rows, cols, true, nil
}

func matmulFloat[T nnFloat](nd *Node, a, b, y []T, m, n, k int, bdims, sa, sb, idx []int) {
	p := nd.Pool
	// When B is shared by every batch and A's batches are contiguous, the
	// batches stack into one tall GEMM.
	shared, contig := true, true
	stride := m * k
	for i := len(bdims) - 1; i >= 0; i-- {
		if sb[i] != 0 {
			shared = false
		}
		if bdims[i] != 1 && sa[i] != stride {
			contig = false
		}
		stride *= bdims[i]
	}
	if shared && contig {
		gemmTPar(p, false, false, m*nnProd(bdims), n, k, 1, a, k, b, n, 0, y, n)
		return
	}
	total := nnProd(bdims)
	if _, f32 := any(a).([]float32); f32 && p.Threads() > 1 && total > 1 {
		// One GEMM per batch, the batches split over the pool (each
		// part packs into its own buffers).
		t := parTaskOf[matmulTask[T]](nd)
		*t = matmulTask[T]{p: p, a: a, b: b, y: y, m: m, n: n, k: k, bdims: bdims, sa: sa, sb: sb}
		p.Run(min(p.Threads(), total), t)
		*t = matmulTask[T]{}
		return
	}
	clear(idx)
	for bi := 0; bi < total; bi++ {
		ao, bo := matmulOffsets(bi, bdims, sa, sb)
		gemmTPar(p, false, false, m, n, k, 1, a[ao:], k, b[bo:], n, 0, y[bi*m*n:], n)
	}
}

// matmulOffsets returns the offsets into A and B of batch bi.
func matmulOffsets(bi int, bdims, sa, sb []int) (ao, bo int) {
	for i := len(bdims) - 1; i >= 0; i-- {
		v := bi % bdims[i]
		bi /= bdims[i]
		ao += v * sa[i]
		bo += v * sb[i]
	}
	return ao, bo
}

// matmulTask is a batched MatMul split over the pool by batches.
type matmulTask[T nnFloat] struct {
	p       *WorkPool
	a, b, y []T
	m, n, k int
	bdims   []int
	sa, sb  []int
}

func (t *matmulTask[T]) runPart(i, parts int) {
	lo, hi := parSplit(nnProd(t.bdims), parts, i, 1)
	for bi := lo; bi < hi; bi++ {
		ao, bo := matmulOffsets(bi, t.bdims, t.sa, t.sb)
		gemmTPart(t.p, i, false, false, t.m, t.n, t.k, 1, t.a[ao:], t.k, t.b[bo:], t.n, 0, t.y[bi*t.m*t.n:], t.n)
	}
}

func matmulInt[T nnNum](a, b, y []T, m, n, k int, bdims, sa, sb, idx []int) {
	clear(idx)
	total := nnProd(bdims)
	for bi := 0; bi < total; bi++ {
		ao, bo := 0, 0
		for i, v := range idx {
			ao += v * sa[i]
			bo += v * sb[i]
		}
		yb := y[bi*m*n : bi*m*n+m*n]
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				var s T
				for p := 0; p < k; p++ {
					s += a[ao+i*k+p] * b[bo+p*n+j]
				}
				yb[i*n+j] = s
			}
		}
		for i := len(idx) - 1; i >= 0; i-- {
			idx[i]++
			if idx[i] < bdims[i] {
				break
			}
			idx[i] = 0
		}
	}
}
