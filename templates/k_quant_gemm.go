package templates

import "math"

// cuvil::QGemm and cuvil::QConv: integer GEMM and convolution on u8
// activations and s8 weights with int32 accumulation, the zero points,
// int32 bias and the requantisation (or dequantisation to float32) in the
// epilogue (passes/quant.go makes them from QLinearMatMul, QLinearConv and
// QDQ patterns).
//
// The GEMM is C[m,n] = sum_k a'[m,k]*b'[k,n] on a' = A as u8 (s8 A is
// read as A+128, so its zero point is za+128) and b' = B as s8 (u8 B is
// read as B-128, its zero point zb-128), the form VPDPBUSD multiplies.
// The zero points come in as sums:
//
//	sum_k (a'-za')(b'-zb') = C - zb'*rowsum(a') - za'*colsum(b') + K*za'*zb'
//
// B is packed in panels of qgemmNR columns, k in quads (qgemmPackB): panel
// p, quad q holds 64 bytes, column j's four k at j*4, the order one
// VPDPBUSD lane reads. A's rows are read four bytes at a time, so a row is
// padded to a multiple of 4 (its padding meets B's zero padding).

const (
	qgemmNR = 16 // columns of a panel
	qgemmMR = 6  // rows of a tile
	qgemmTW = 64 // columns of a tile (4 panels; the accumulator block's row)
)

// qgemmB is B packed: K, N, the panels, the column sums of b' and b's zero
// points as s8 offsets (zb' per column).
type qgemmB struct {
	k, n, k4 int
	panels   []int8
	colsum   []int32
	// pairsFit: every k pair (0,1), (2,3) of every quad of every column
	// has |b0|+|b1| <= 128, so no u8 x s8 pair sum leaves s16 and the AVX2
	// byte tiles (VPMADDUBSW) are exact (qgemmPairsFit).
	pairsFit bool
}

// qgemmPairsFit reports whether the panels' pairs fit VPMADDUBSW's s16
// sums for every u8 A: 255*(|b0|+|b1|) <= 32767 needs |b0|+|b1| <= 128.
// Weights quantized to 7 bits ([-64, 63], reduce range) always fit;
// full-range s8 weights fit unless a pair holds two large values of the
// same k pair (e.g. -128 and 1, or 100 and -40).
func qgemmPairsFit(panels []int8) bool {
	for i := 0; i+1 < len(panels); i += 2 {
		b0, b1 := int(panels[i]), int(panels[i+1])
		if max(b0, -b0)+max(b1, -b1) > 128 {
			return false
		}
	}
	return true
}

// qgemmPackedAttr (ints: B's or W's ONNX shape) marks a QGemm/QConv
// whose constant s8 B (W) the prepack pass stored as qgemmPackB's panels
// (templates/compiler_prepack.go, PrepackQWeights).
const qgemmPackedAttr = "packed_q_shape"

// qgemmUsePacked points p at prepacked panels of B [k, n] (s8, read only)
// and computes their column sums once: a node keeps them across runs
// while the panels are the same constant.
func qgemmUsePacked(p *qgemmB, panels []int8, k, n int) bool {
	k4 := (k + 3) / 4
	np := (n + qgemmNR - 1) / qgemmNR
	if len(panels) != np*k4*64 {
		return false
	}
	if p.k == k && p.n == n && len(p.panels) == len(panels) && len(panels) > 0 && &p.panels[0] == &panels[0] {
		return true
	}
	p.k, p.n, p.k4, p.panels = k, n, k4, panels
	if cap(p.colsum) < n {
		p.colsum = make([]int32, n)
	}
	p.colsum = p.colsum[:n]
	for j := 0; j < n; j++ {
		base := (j/qgemmNR)*k4*64 + (j%qgemmNR)*4
		var s int32
		for q := 0; q < k4; q++ {
			b := panels[base+q*64 : base+q*64+4]
			s += int32(b[0]) + int32(b[1]) + int32(b[2]) + int32(b[3])
		}
		p.colsum[j] = s
	}
	p.pairsFit = qgemmPairsFit(panels)
	return true
}

// qgemmPackB packs B[k,n] = src[k*sk+n*sn] (u8 when u8, else s8) into p,
// reusing its buffers.
func qgemmPackB(p *qgemmB, src *Tensor, k, n, sk, sn int) {
	k4 := (k + 3) / 4
	np := (n + qgemmNR - 1) / qgemmNR
	p.k, p.n, p.k4 = k, n, k4
	if cap(p.panels) < np*k4*64 {
		p.panels = make([]int8, np*k4*64)
	}
	p.panels = p.panels[:np*k4*64]
	clear(p.panels)
	if cap(p.colsum) < n {
		p.colsum = make([]int32, n)
	}
	p.colsum = p.colsum[:n]
	u8, _ := src.Data.([]uint8)
	s8, _ := src.Data.([]int8)
	for j := 0; j < n; j++ {
		base := (j/qgemmNR)*k4*64 + (j%qgemmNR)*4
		var s int32
		for kk := 0; kk < k; kk++ {
			var v int8
			if u8 != nil {
				v = int8(int32(u8[kk*sk+j*sn]) - 128)
			} else {
				v = s8[kk*sk+j*sn]
			}
			p.panels[base+(kk/4)*64+kk%4] = v
			s += int32(v)
		}
		p.colsum[j] = s
	}
	p.pairsFit = qgemmPairsFit(p.panels)
}

// qgemmTileGo is the pure-Go micro-kernel: for rows r < rows (at a +
// r*lda) and panels p < panels (at b + p*bstride), acc[r*qgemmTW + p*16 + j]
// = the sum over the k4 quads of row r times panel p's column j. It is the
// reference of the VNNI and AVX2 tiles (asmgen/amd64/q8). qgemmTile has
// its contract plus fit, B's pairsFit (which AVX2 tile may run).
func qgemmTileGo(a []uint8, lda, rows int, b []int8, bstride, panels, k4 int, acc *[qgemmMR * qgemmTW]int32) {
	for r := 0; r < rows; r++ {
		row := a[r*lda : r*lda+k4*4]
		for p := 0; p < panels; p++ {
			out := acc[r*qgemmTW+p*qgemmNR : r*qgemmTW+p*qgemmNR+qgemmNR]
			clear(out)
			pb := b[p*bstride : p*bstride+k4*64]
			for q := 0; q < k4; q++ {
				a0, a1, a2, a3 := int32(row[4*q]), int32(row[4*q+1]), int32(row[4*q+2]), int32(row[4*q+3])
				bq := pb[q*64 : q*64+64]
				for j := 0; j < qgemmNR; j++ {
					out[j] += a0*int32(bq[4*j]) + a1*int32(bq[4*j+1]) + a2*int32(bq[4*j+2]) + a3*int32(bq[4*j+3])
				}
			}
		}
	}
}

// qgemmEpi is the epilogue of a QGemm/QConv: the zero-point terms, bias and
// requantisation (quant) or dequantisation to float32.
type qgemmEpi struct {
	za, zy   int32   // za' (u8 domain), y's zero point
	zb       []int32 // zb' per column (len 1: per tensor)
	bias     []int32 // nil or per column
	mult     []float64
	quant    bool
	lo, hi   float64 // saturation (quant) or clamp (float) bounds
	yu8      []uint8
	ys8      []int8
	yf       []float32
	colMajor bool // y[n*ldy + m] (NCHW conv), else y[m*ldy + n]
	ldy      int
	// Per column, from prepare: zb', the constant part of the sum
	// (-za'*colsum + K*za'*zb' + bias) and the multiplier.
	zbc, colterm []int32
	multd        []float64
	multf        []float32
	zbZero       bool // every zb' is 0 (symmetric s8 weights): no row sums needed
	// vecF32, vecU8: storeRow may run the vector epilogue
	// (qgemmEpiF32Vec, qgemmEpiU8Vec), whose bits equal its Go loop's on
	// these bounds and multipliers (see prepare).
	vecF32, vecU8 bool
}

// prepare fills the epilogue's per-column terms for B b, in st's buffers
// (int32 arithmetic wraps, so the regrouped sum is store's exactly).
func (e *qgemmEpi) prepare(b *qgemmB, st *qgemmState) {
	n := b.n
	if cap(st.colterm) < n {
		st.zbc, st.colterm = make([]int32, n), make([]int32, n)
		st.multd, st.multf = make([]float64, n), make([]float32, n)
	}
	e.zbc, e.colterm, e.multd, e.multf = st.zbc[:n], st.colterm[:n], st.multd[:n], st.multf[:n]
	kz := int32(b.k) * e.za
	for c := 0; c < n; c++ {
		zb := e.zb[0]
		if len(e.zb) > 1 {
			zb = e.zb[c]
		}
		t := -e.za*b.colsum[c] + kz*zb
		if e.bias != nil {
			t += e.bias[c]
		}
		mu := e.mult[0]
		if len(e.mult) > 1 {
			mu = e.mult[c]
		}
		e.zbc[c], e.colterm[c], e.multd[c], e.multf[c] = zb, t, mu, float32(mu)
	}
	e.zbZero = true
	for _, z := range e.zbc {
		e.zbZero = e.zbZero && z == 0
	}
	// The vector epilogues' min/max differ from Go's only on NaNs and
	// signed zeros: float32 products with mu > 0 are never -0 or NaN, so
	// a lo that is not -0 and a hi that is not 0 keep the bits; the u8
	// requantisation's clamped value is an integer when 0 <= lo <= hi <=
	// 255 and mu is finite.
	lo32, hi32 := float32(e.lo), float32(e.hi)
	e.vecF32 = !e.quant && e.yf != nil && lo32 == lo32 && hi32 == hi32 && !(lo32 == 0 && math.Signbit(float64(lo32))) && hi32 != 0
	for _, mu := range e.multf {
		e.vecF32 = e.vecF32 && mu > 0 && !math.IsInf(float64(mu), 0)
	}
	e.vecU8 = e.quant && e.yu8 != nil && e.lo >= 0 && e.lo <= e.hi && e.hi <= 255
	for _, mu := range e.multd {
		e.vecU8 = e.vecU8 && !math.IsNaN(mu) && !math.IsInf(mu, 0)
	}
}

// store writes the finished row r's columns [c0, c0+cols) from acc.
func (e *qgemmEpi) store(m, c0, cols int, acc []int32, rowsum int32, b *qgemmB) {
	acc = acc[:cols]
	zb, ct := e.zbc[c0:c0+cols], e.colterm[c0:c0+cols]
	step, o := 1, m*e.ldy+c0
	if e.colMajor {
		step, o = e.ldy, c0*e.ldy+m
	} else {
		e.storeRow(o, c0, acc, rowsum)
		return
	}
	if !e.quant {
		mu := e.multf[c0 : c0+cols]
		lo, hi := float32(e.lo), float32(e.hi)
		y := e.yf
		for j, a := range acc {
			f := float32(a-zb[j]*rowsum+ct[j]) * mu[j]
			y[o+j*step] = max(lo, min(hi, f))
		}
		return
	}
	mu := e.multd[c0 : c0+cols]
	zy := float64(e.zy)
	for j, a := range acc {
		q := math.RoundToEven(float64(a-zb[j]*rowsum+ct[j])*mu[j]) + zy
		q = max(e.lo, min(e.hi, q))
		if e.yu8 != nil {
			e.yu8[o+j*step] = uint8(q)
		} else {
			e.ys8[o+j*step] = int8(q)
		}
	}
}

// storeRow is store for a row-major Y: len(acc) contiguous outputs at o.
func (e *qgemmEpi) storeRow(o, c0 int, acc []int32, rowsum int32) {
	cols := len(acc)
	zb, ct := e.zbc[c0:c0+cols], e.colterm[c0:c0+cols]
	if !e.zbZero && rowsum != 0 {
		// Fold the row's zero-point term into a scratch copy of acc.
		var buf [qgemmTW]int32
		t := buf[:cols]
		for j, a := range acc {
			t[j] = a - zb[j]*rowsum
		}
		acc = t
	}
	if !e.quant {
		mu := e.multf[c0 : c0+cols]
		y := e.yf[o : o+cols]
		lo, hi := float32(e.lo), float32(e.hi)
		j0 := 0
		if e.vecF32 {
			j0 = qgemmEpiF32Vec(acc, ct, mu, lo, hi, y)
		}
		for j := j0; j < len(acc); j++ {
			f := float32(acc[j]+ct[j]) * mu[j]
			y[j] = max(lo, min(hi, f))
		}
		return
	}
	mu := e.multd[c0 : c0+cols]
	zy, lo, hi := float64(e.zy), e.lo, e.hi
	if e.yu8 != nil {
		y := e.yu8[o : o+cols]
		j0 := 0
		if e.vecU8 {
			j0 = qgemmEpiU8Vec(acc, ct, mu, zy, lo, hi, y)
		}
		for j := j0; j < len(acc); j++ {
			q := math.RoundToEven(float64(acc[j]+ct[j])*mu[j]) + zy
			y[j] = uint8(max(lo, min(hi, q)))
		}
		return
	}
	y := e.ys8[o : o+cols]
	for j, a := range acc {
		q := math.RoundToEven(float64(a+ct[j])*mu[j]) + zy
		y[j] = int8(max(lo, min(hi, q)))
	}
}

// qgemmTask runs rows [r0,r1) x panels of one GEMM over a' (rows padded,
// lda >= k4*4).
type qgemmTask struct {
	a      []uint8
	lda, m int
	b      *qgemmB
	e      *qgemmEpi
	byCols bool
}

func (t *qgemmTask) runPart(i, parts int) {
	r0, r1, c0, c1 := 0, t.m, 0, t.b.n
	if parts > 1 {
		if t.byCols {
			c0, c1 = parSplit(t.b.n, parts, i, qgemmNR)
		} else {
			r0, r1 = parSplit(t.m, parts, i, qgemmMR)
		}
	}
	qgemmRun(t.a, t.lda, r0, r1, c0, c1, t.b, t.e)
}

// qgemmRun computes rows [r0,r1) and columns [c0,c1) (c0 a multiple of
// qgemmNR) of the GEMM and stores them through e.
func qgemmRun(a []uint8, lda, r0, r1, c0, c1 int, b *qgemmB, e *qgemmEpi) {
	var acc [qgemmMR * qgemmTW]int32
	var rs [qgemmMR]int32
	k4 := b.k4
	for i0 := r0; i0 < r1; i0 += qgemmMR {
		rows := min(qgemmMR, r1-i0)
		for r := 0; r < rows && !e.zbZero; r++ {
			var s int32
			for _, v := range a[(i0+r)*lda : (i0+r)*lda+b.k] {
				s += int32(v)
			}
			rs[r] = s
		}
		for c := c0; c < c1; c += qgemmTW {
			cols := min(qgemmTW, c1-c)
			panels := (cols + qgemmNR - 1) / qgemmNR
			pb := b.panels[(c/qgemmNR)*k4*64:]
			qgemmTile(a[i0*lda:], lda, rows, pb, k4*64, panels, k4, b.pairsFit, &acc)
			for r := 0; r < rows; r++ {
				e.store(i0+r, c, cols, acc[r*qgemmTW:], rs[r], b)
			}
		}
	}
}

// qgemm runs the GEMM over the pool.
func qgemm(n *Node, a []uint8, lda, m int, b *qgemmB, e *qgemmEpi) {
	t := parTaskOf[qgemmTask](n)
	*t = qgemmTask{a: a, lda: lda, m: m, b: b, e: e}
	parts := 1
	if m*b.n*b.k >= parMinFlops {
		threads := n.Pool.Threads()
		if m >= 2*qgemmMR*threads {
			parts = threads
		} else if b.n >= 2*qgemmNR*threads {
			parts, t.byCols = threads, true
		}
	}
	n.Pool.Run(parts, t)
	*t = qgemmTask{}
}

// qgemmState is what a QGemm/QConv node keeps between runs.
type qgemmState struct {
	b            qgemmB
	e            qgemmEpi
	zb           []int32
	mul          []float64
	zbc, colterm []int32
	multd        []float64
	multf        []float32
}

// qgemmSetup reads the scales, zero points, bias and activation of a
// QGemm/QConv with inputs (A, A_scale, A_zero, B, B_scale, B_zero, bias,
// Y_scale, Y_zero) into st.e for n columns and resizes y to shape.
func qgemmSetup(n *Node, st *qgemmState, nn int, shape []int) error {
	a, as, azp := n.In[0], n.In[1], n.Input(2)
	b, bs, bzp := n.In[3], n.In[4], n.Input(5)
	bias, ys, yzp := n.Input(6), n.Input(7), n.Input(8)
	if as.Len() != 1 || (azp != nil && azp.Len() != 1) {
		return n.Errorf("A's scale and zero point must be scalars")
	}
	if bs.Len() != 1 && bs.Len() != nn {
		return n.Errorf("B_scale has %d values for %d columns", bs.Len(), nn)
	}
	if bzp != nil && bzp.Len() != 1 && bzp.Len() != nn {
		return n.Errorf("B_zero has %d values for %d columns", bzp.Len(), nn)
	}
	if bias != nil && bias.Len() != nn {
		return n.Errorf("bias has %d values for %d columns", bias.Len(), nn)
	}
	e := &st.e
	*e = qgemmEpi{}
	e.za = 0
	if azp != nil {
		e.za = int32(ewI64At(azp, 0))
	}
	if a.DType == I8 {
		e.za += 128
	}
	nz := 1
	if bzp != nil {
		nz = bzp.Len()
	}
	if cap(st.zb) < nz {
		st.zb = make([]int32, nz)
	}
	e.zb = st.zb[:nz]
	for i := range e.zb {
		var z int32
		if bzp != nil {
			z = int32(ewI64At(bzp, i))
		}
		if b.DType == U8 {
			z -= 128
		}
		e.zb[i] = z
	}
	if bias != nil {
		e.bias = bias.I32()
	}
	sa := ewF64At(as, 0)
	f32 := n.Attrs.Int("f32_multiplier", 0) != 0
	e.quant = ys != nil
	var sy float64 = 1
	if e.quant {
		sy = ewF64At(ys, 0)
		if yzp != nil {
			e.zy = int32(ewI64At(yzp, 0))
		}
	}
	if cap(st.mul) < bs.Len() {
		st.mul = make([]float64, bs.Len())
	}
	e.mult = st.mul[:bs.Len()]
	for i := range e.mult {
		sb := ewF64At(bs, i)
		switch {
		case !e.quant:
			e.mult[i] = float64(float32(sa * sb))
		case f32:
			e.mult[i] = float64(float32(float64(float32(sa*sb)) / sy))
		default:
			e.mult[i] = sa * sb / sy
		}
	}
	y := n.Out[0]
	odt := F32
	if e.quant {
		odt = U8
		if yzp != nil {
			odt = yzp.DType
		}
	}
	y.Resize(odt, shape...)
	switch odt {
	case U8:
		e.yu8 = y.U8()
		e.lo, e.hi = 0, 255
	case I8:
		e.ys8 = y.I8()
		e.lo, e.hi = -128, 127
	case F32:
		e.yf = y.F32()
		e.lo, e.hi = math.Inf(-1), math.Inf(1)
	default:
		return n.Errorf("unsupported output dtype %s", odt)
	}
	// Relu and Clip: the bounds, through y's quantisation when quantised
	// (Q is monotone, so Q(clip(x, a, b)) = clamp(Q(x), Q(a), Q(b))).
	var clo, chi float64
	switch act := n.Attrs.String("activation", ""); act {
	case "":
		return nil
	case "Relu":
		clo, chi = 0, math.Inf(1)
	case "Clip":
		p := n.Attrs.Floats("activation_params")
		if len(p) != 2 {
			return n.Errorf("Clip needs activation_params [min, max]")
		}
		clo, chi = float64(p[0]), float64(p[1])
	default:
		return n.Errorf("activation %q is not Relu or Clip", act)
	}
	if e.quant {
		q := func(v float64) float64 {
			if math.IsInf(v, 0) {
				return v
			}
			return math.RoundToEven(float64(float32(v/sy))) + float64(e.zy)
		}
		clo, chi = q(clo), q(chi)
	}
	e.lo, e.hi = math.Max(e.lo, clo), math.Min(e.hi, chi)
	return nil
}

// qgemmRowsA returns A [m, k] as u8 rows padded to a multiple of 4 (lda):
// in place when it is u8 and k%4 == 0, else copied (s8 xor 0x80).
func qgemmRowsA(n *Node, a *Tensor, m, k int) ([]uint8, int) {
	if u, ok := a.Data.([]uint8); ok && k%4 == 0 {
		return u, k
	}
	lda := (k + 3) &^ 3
	buf := nnBuf[uint8](n, 0, m*lda)
	u, _ := a.Data.([]uint8)
	s, _ := a.Data.([]int8)
	for i := 0; i < m; i++ {
		row := buf[i*lda : (i+1)*lda]
		if u != nil {
			copy(row, u[i*k:(i+1)*k])
		} else {
			for j, v := range s[i*k : (i+1)*k] {
				row[j] = uint8(v) ^ 0x80
			}
		}
		clear(row[k:])
	}
	return buf, lda
}

// QGemm is cuvil::QGemm: Y[..., N] = requant(A[..., K] x B[K, N]).
func QGemm(n *Node) error {
	if len(n.In) < 5 || n.In[0] == nil || n.In[1] == nil || n.In[3] == nil || n.In[4] == nil {
		return n.Errorf("needs A, A_scale, B and B_scale")
	}
	a, b := n.In[0], n.In[3]
	bshape := b.Shape
	packed := n.Attrs.Ints(qgemmPackedAttr)
	if packed != nil {
		bshape = []int{len(packed), 0}
		if len(packed) == 2 {
			bshape = []int{int(packed[0]), int(packed[1])}
		}
	}
	if len(bshape) != 2 || len(a.Shape) < 1 {
		return n.Errorf("A must be [..., K] and B [K, N]")
	}
	k, nn := bshape[0], bshape[1]
	if a.Shape[len(a.Shape)-1] != k {
		return n.Errorf("A's last dimension %d is not B's K %d", a.Shape[len(a.Shape)-1], k)
	}
	m := a.Len() / max(k, 1)
	if k == 0 {
		m = 1
		for _, d := range a.Shape[:len(a.Shape)-1] {
			m *= d
		}
	}
	st := qgemmStateOf(n)
	shape := append(append(n.ScratchInts(0)[:0:0], a.Shape[:len(a.Shape)-1]...), nn)
	if err := qgemmSetup(n, st, nn, shape); err != nil {
		return err
	}
	if packed != nil {
		if pb, ok := b.Data.([]int8); !ok || !qgemmUsePacked(&st.b, pb, k, nn) {
			return n.Errorf("prepacked B does not match %s %v", qgemmPackedAttr, packed)
		}
	} else {
		qgemmPackB(&st.b, b, k, nn, nn, 1)
	}
	st.e.ldy = nn
	st.e.prepare(&st.b, st)
	ap, lda := qgemmRowsA(n, a, m, k)
	qgemm(n, ap, lda, m, &st.b, &st.e)
	return nil
}

func qgemmStateOf(n *Node) *qgemmState {
	c := nnCacheOf(n)
	if s, ok := c.slots[4].(*qgemmState); ok {
		return s
	}
	s := &qgemmState{}
	c.slots[4] = s
	return s
}

// QConv is cuvil::QConv: a 2-D NCHW convolution (group 1) of u8/s8 X by
// s8/u8 W [M, C, kh, kw] as an im2col GEMM: rows are output pixels, K is
// C*kh*kw, columns output channels; Y is written NCHW.
func QConv(n *Node) error {
	if len(n.In) < 5 || n.In[0] == nil || n.In[1] == nil || n.In[3] == nil || n.In[4] == nil {
		return n.Errorf("needs X, X_scale, W and W_scale")
	}
	x, w := n.In[0], n.In[3]
	wshape := w.Shape
	packed := n.Attrs.Ints(qgemmPackedAttr)
	if packed != nil {
		wshape = make([]int, len(packed))
		for i, d := range packed {
			wshape[i] = int(d)
		}
	}
	if len(x.Shape) != 4 || len(wshape) != 4 {
		return n.Errorf("only 2-D convolutions (X [N,C,H,W])")
	}
	if g := n.Attrs.Int("group", 1); g != 1 {
		return n.Errorf("group %d: only group 1", g)
	}
	nhwc := false
	switch l := n.Attrs.String("layout", "NCHW"); l {
	case "NCHW":
	case "NHWC":
		nhwc = true
	default:
		return n.Errorf("unknown layout %q (want NCHW or NHWC)", l)
	}
	nb, c, h, wd := x.Shape[0], x.Shape[1], x.Shape[2], x.Shape[3]
	mo, wc, kh, kw := wshape[0], wshape[1], wshape[2], wshape[3]
	if nhwc { // X [N,H,W,C], W [M,kh,kw,C]
		h, wd, c = x.Shape[1], x.Shape[2], x.Shape[3]
		kh, kw, wc = wshape[1], wshape[2], wshape[3]
	}
	if wc != c {
		return n.Errorf("W has %d input channels, X %d", wc, c)
	}
	strides := attrInts2(n, "strides", 1)
	dil := attrInts2(n, "dilations", 1)
	pads := n.Attrs.Ints("pads")
	var pt, pl, pb, pr int
	if len(pads) == 4 {
		pt, pl, pb, pr = int(pads[0]), int(pads[1]), int(pads[2]), int(pads[3])
	}
	ekh, ekw := (kh-1)*dil[0]+1, (kw-1)*dil[1]+1
	switch ap := n.Attrs.String("auto_pad", "NOTSET"); ap {
	case "NOTSET", "VALID":
		if ap == "VALID" {
			pt, pl, pb, pr = 0, 0, 0, 0
		}
	case "SAME_UPPER", "SAME_LOWER":
		for i, sz := range []int{h, wd} {
			ek := []int{ekh, ekw}[i]
			o := (sz + strides[i] - 1) / strides[i]
			tot := max(0, (o-1)*strides[i]+ek-sz)
			lo := tot / 2
			if ap == "SAME_LOWER" {
				lo = tot - tot/2
			}
			if i == 0 {
				pt, pb = lo, tot-lo
			} else {
				pl, pr = lo, tot-lo
			}
		}
	default:
		return n.Errorf("unsupported auto_pad %q", ap)
	}
	oh := (h+pt+pb-ekh)/strides[0] + 1
	ow := (wd+pl+pr-ekw)/strides[1] + 1
	if oh <= 0 || ow <= 0 {
		return n.Errorf("empty output")
	}
	k := c * kh * kw
	st := qgemmStateOf(n)
	yshape := []int{nb, mo, oh, ow}
	if nhwc {
		yshape = []int{nb, oh, ow, mo}
	}
	if err := qgemmSetup(n, st, mo, yshape); err != nil {
		return err
	}
	if packed != nil {
		if pw, ok := w.Data.([]int8); !ok || !qgemmUsePacked(&st.b, pw, k, mo) {
			return n.Errorf("prepacked W does not match %s %v", qgemmPackedAttr, packed)
		}
	} else {
		qgemmPackB(&st.b, w, k, mo, 1, k)
	}
	if nhwc {
		qconvNHWC(n, st, x, qconvGeom{nb: nb, h: h, w: wd, c: c, kh: kh, kw: kw, oh: oh, ow: ow,
			sy: strides[0], sx: strides[1], dy: dil[0], dx: dil[1], pt: pt, pl: pl})
		return nil
	}
	st.e.colMajor = true
	st.e.ldy = oh * ow
	st.e.prepare(&st.b, st)
	lda := (k + 3) &^ 3
	p := oh * ow
	col := nnBuf[uint8](n, 0, p*lda)
	za := uint8(st.e.za)
	xu, _ := x.Data.([]uint8)
	xs, _ := x.Data.([]int8)
	ye := st.e
	// A pointwise convolution's im2col is a transpose of each image's
	// [C, H*W] plane stack: done in blocks of 64 pixels, whose rows stay
	// in cache while the channels fill them.
	pointwise := xu != nil && kh == 1 && kw == 1 && strides[0] == 1 && strides[1] == 1 && pt == 0 && pl == 0 && pb == 0 && pr == 0 && oh == h && ow == wd
	for img := 0; img < nb; img++ {
		if pointwise {
			for p0 := 0; p0 < p; p0 += 64 {
				pe := min(p, p0+64)
				for ci := 0; ci < c; ci++ {
					src := xu[(img*c+ci)*p+p0 : (img*c+ci)*p+pe]
					for j, v := range src {
						col[(p0+j)*lda+ci] = v
					}
				}
				if lda > k {
					for q := p0; q < pe; q++ {
						clear(col[q*lda+k : (q+1)*lda])
					}
				}
			}
		}
		for oy := 0; oy < oh && !pointwise; oy++ {
			for ox := 0; ox < ow; ox++ {
				row := col[(oy*ow+ox)*lda : (oy*ow+ox+1)*lda]
				i := 0
				ix0 := ox*strides[1] - pl
				inner := xu != nil && dil[1] == 1 && ix0 >= 0 && ix0+kw <= wd
				for ci := 0; ci < c; ci++ {
					base := (img*c + ci) * h * wd
					for ky := 0; ky < kh; ky++ {
						iy := oy*strides[0] - pt + ky*dil[0]
						if iy < 0 || iy >= h {
							for kx := 0; kx < kw; kx++ {
								row[i+kx] = za
							}
							i += kw
							continue
						}
						if inner { // the window's row lies inside X
							src := xu[base+iy*wd+ix0 : base+iy*wd+ix0+kw]
							if kw > 16 {
								copy(row[i:i+kw], src)
							} else {
								dst := row[i : i+kw]
								for kx, v := range src {
									dst[kx] = v
								}
							}
							i += kw
							continue
						}
						for kx := 0; kx < kw; kx++ {
							ix := ox*strides[1] - pl + kx*dil[1]
							v := za
							if iy >= 0 && iy < h && ix >= 0 && ix < wd {
								if xu != nil {
									v = xu[base+iy*wd+ix]
								} else {
									v = uint8(xs[base+iy*wd+ix]) ^ 0x80
								}
							}
							row[i] = v
							i++
						}
					}
				}
				clear(row[k:])
			}
		}
		e := ye
		off := img * mo * p
		switch {
		case e.yu8 != nil:
			e.yu8 = e.yu8[off:]
		case e.ys8 != nil:
			e.ys8 = e.ys8[off:]
		default:
			e.yf = e.yf[off:]
		}
		qgemm(n, col, lda, p, &st.b, &e)
	}
	return nil
}

// attrInts2 is a 2-element int attribute with default d.
func attrInts2(n *Node, name string, d int) [2]int {
	v := n.Attrs.Ints(name)
	if len(v) == 2 {
		return [2]int{int(v[0]), int(v[1])}
	}
	return [2]int{d, d}
}

// qconvGeom is a QConv's geometry: input, kernel and output sizes,
// strides, dilations and the top and left pads.
type qconvGeom struct {
	nb, h, w, c, kh, kw, oh, ow int
	sy, sx, dy, dx, pt, pl      int
}

// qconvNHWC runs a QConv with layout NHWC: X [N,H,W,C], W [M,kh,kw,C]
// (so the GEMM's k runs over ky, kx, c: an output pixel's window is kh
// runs of kw*C contiguous bytes), Y [N,OH,OW,M]. One GEMM covers every
// image: rows are the N*OH*OW output pixels, columns the output channels,
// stored row-major (contiguous runs of M). A pointwise convolution of u8
// X with C%4 == 0 reads X's rows in place, with no copy at all.
func qconvNHWC(n *Node, st *qgemmState, x *Tensor, g qconvGeom) {
	st.e.colMajor = false
	st.e.ldy = st.b.n
	st.e.prepare(&st.b, st)
	k := g.c * g.kh * g.kw
	rows := g.nb * g.oh * g.ow
	pointwise := g.kh == 1 && g.kw == 1 && g.sy == 1 && g.sx == 1 && g.pt == 0 && g.pl == 0 && g.oh == g.h && g.ow == g.w
	if pointwise {
		a, lda := qgemmRowsA(n, x, rows, k)
		qgemm(n, a, lda, rows, &st.b, &st.e)
		return
	}
	lda := (k + 3) &^ 3
	col := nnBuf[uint8](n, 0, rows*lda)
	za := uint8(st.e.za)
	xu, _ := x.Data.([]uint8)
	xs, _ := x.Data.([]int8)
	run := g.kw * g.c // one kernel row of a window, when dx is 1
	for img := 0; img < g.nb; img++ {
		for oy := 0; oy < g.oh; oy++ {
			for ox := 0; ox < g.ow; ox++ {
				r := (img*g.oh+oy)*g.ow + ox
				row := col[r*lda : (r+1)*lda]
				ix0 := ox*g.sx - g.pl
				inner := g.dx == 1 && ix0 >= 0 && ix0+g.kw <= g.w
				i := 0
				for ky := 0; ky < g.kh; ky++ {
					iy := oy*g.sy - g.pt + ky*g.dy
					if iy < 0 || iy >= g.h {
						qconvFill(row[i:i+run], za)
						i += run
						continue
					}
					base := ((img*g.h + iy) * g.w) * g.c
					if inner {
						qconvCopy(row[i:i+run], xu, xs, base+ix0*g.c)
						i += run
						continue
					}
					for kx := 0; kx < g.kw; kx++ {
						ix := ix0 + kx*g.dx
						if ix < 0 || ix >= g.w {
							qconvFill(row[i:i+g.c], za)
						} else {
							qconvCopy(row[i:i+g.c], xu, xs, base+ix*g.c)
						}
						i += g.c
					}
				}
				clear(row[k:])
			}
		}
	}
	qgemm(n, col, lda, rows, &st.b, &st.e)
}

// qconvFill sets dst to the zero point v.
func qconvFill(dst []uint8, v uint8) {
	for i := range dst {
		dst[i] = v
	}
}

// qconvCopy copies len(dst) elements of X from off as u8 (s8 xor 0x80).
func qconvCopy(dst []uint8, xu []uint8, xs []int8, off int) {
	if xu != nil {
		copy(dst, xu[off:off+len(dst)])
		return
	}
	for j, v := range xs[off : off+len(dst)] {
		dst[j] = uint8(v) ^ 0x80
	}
}
