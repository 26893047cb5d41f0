package templates

// CuvilAttention is cuvil::Attention: Y = softmax(scale*Q·Kt + mask)·V
// over the last two axes, the scaled-dot-product attention fuse-attention
// finds (MatMul, scale, mask Add, Softmax, MatMul). Each row of scores
// lives in a scratch row of Sk floats and never reaches memory as a
// [Sq, Sk] tensor. Rows run in parallel on the session's pool.
//
// With heads == 0, Q is [..., Sq, D], Kt (K already transposed)
// [..., D, Sk] and V [..., Sk, Dv], sharing their leading (batch, head)
// dims, and Y is [..., Sq, Dv]; the mask broadcasts to [..., Sq, Sk].
//
// With heads = H > 0, the inputs are the projections as the linear layers
// write them, token rows with every head side by side: Q [B, Sq, Wq],
// K (not transposed) [B, Sk, Wk], V [B, Sk, Wv] ([S, B, W] with
// seq_first), head h of Q and K at columns offsets[0] + h*D and
// offsets[1] + h*D, of V at offsets[2] + h*Dv (D = head_size, default
// Wq/H; Dv = v_head_size, default Wv/H), so one projection output may
// serve all three. Y is [B, Sq, H*Dv] ([Sq, B, H*Dv] with seq_first), head
// h at columns h*Dv; the mask broadcasts to [B, H, Sq, Sk]. No transpose
// of Q, K, V or Y is ever made.
func CuvilAttention(n *Node) error {
	q, kt, v, mask := n.Input(0), n.Input(1), n.Input(2), n.Input(3)
	if q == nil || kt == nil || v == nil || len(n.Out) < 1 {
		return n.Errorf("want inputs Q, Kt, V and output Y")
	}
	if q.DType != F32 || kt.DType != F32 || v.DType != F32 || (mask != nil && mask.DType != F32) {
		return n.Errorf("only f32 is supported, have %s", q.DType)
	}
	t := parTaskOf[attnTask](n)
	*t = attnTask{q: q.Data.([]float32), kt: kt.Data.([]float32), v: v.Data.([]float32),
		heads: 1, scale: n.Attrs.Float("scale", 1)}
	// Scratch: Y's shape, the score dims the mask broadcasts to (the row
	// index over all but the last one is (batch*heads + head)*Sq + row)
	// and the mask's strides over them.
	R := max(len(q.Shape), 4)
	sc := n.ScratchInts(3 * R)
	out, sdims, str := sc[:R], sc[R:2*R], sc[2*R:]
	if h := int(n.Attrs.Int("heads", 0)); h > 0 {
		if err := t.setHeads(n, q, kt, v, h); err != nil {
			return err
		}
		sdims = sdims[:4]
		sdims[0], sdims[1], sdims[2], sdims[3] = t.batch, h, t.sq, t.sk
	} else {
		r := len(q.Shape)
		if r < 2 || len(kt.Shape) != r || len(v.Shape) != r {
			return n.Errorf("Q, Kt and V must have the same rank >= 2, have %v %v %v", q.Shape, kt.Shape, v.Shape)
		}
		batch := 1
		for i := 0; i < r-2; i++ {
			if kt.Shape[i] != q.Shape[i] || v.Shape[i] != q.Shape[i] {
				return n.Errorf("leading dims differ: Q %v, Kt %v, V %v", q.Shape, kt.Shape, v.Shape)
			}
			batch *= q.Shape[i]
		}
		sq, d, sk, dv := q.Shape[r-2], q.Shape[r-1], kt.Shape[r-1], v.Shape[r-1]
		if kt.Shape[r-2] != d || v.Shape[r-2] != sk {
			return n.Errorf("shapes do not chain: Q %v, Kt %v, V %v", q.Shape, kt.Shape, v.Shape)
		}
		t.batch, t.sq, t.d, t.sk, t.dv = batch, sq, d, sk, dv
		// Each batch index is one contiguous matrix of each operand.
		t.qbs, t.qrs, t.kbs, t.krs, t.vbs, t.vrs, t.ybs, t.yrs = sq*d, d, d*sk, sk, sk*dv, dv, sq*dv, dv
		out, sdims = out[:r], sdims[:r]
		copy(out, q.Shape[:r-1])
		out[r-1] = dv
		copy(sdims, q.Shape[:r-1])
		sdims[r-1] = sk
		n.Out[0].Resize(F32, out...)
	}
	r := len(sdims)
	if mask != nil {
		// Element strides of the mask per score dim (0 where the mask has
		// size 1 or lacks the dim).
		mr := len(mask.Shape)
		if mr > r {
			return n.Errorf("mask %v has a higher rank than the scores %v", mask.Shape, sdims)
		}
		str = str[:r]
		acc := 1
		for i := r - 1; i >= 0; i-- {
			j := i - (r - mr)
			str[i] = 0
			if j >= 0 {
				switch m := mask.Shape[j]; {
				case m == sdims[i]:
					str[i] = acc
				case m != 1:
					return n.Errorf("mask %v does not broadcast to scores %v", mask.Shape, sdims)
				}
				acc *= mask.Shape[j]
			}
		}
		t.mask, t.mstr, t.mdims = mask.Data.([]float32), str, sdims
	}
	t.y = n.Out[0].Data.([]float32)
	// Work units are (batch, head, block of query rows); the block size
	// depends on the shapes only, so results do not depend on the thread
	// count.
	sq := t.sq
	nblk := (sq + attnRowBlock - 1) / attnRowBlock
	t.rb = max(1, min(sq, (sq+nblk-1)/max(nblk, 1)))
	t.nblk = (sq + t.rb - 1) / t.rb
	units := t.batch * t.heads * t.nblk
	parts := 1
	if n.Pool != nil {
		parts = max(1, min(n.Pool.Threads(), units))
	}
	t.parts = parts
	t.pool = n.Pool
	t.scores = n.ScratchF32(parts * t.rb * (t.sk + 1))
	if units > 0 {
		n.Pool.Run(parts, t)
	}
	t.pool = nil
	return nil
}

// setHeads reads the shapes of the heads form of cuvil::Attention into t,
// and sizes Y.
func (t *attnTask) setHeads(n *Node, q, k, v *Tensor, h int) error {
	if len(q.Shape) != 3 || len(k.Shape) != 3 || len(v.Shape) != 3 {
		return n.Errorf("with heads, Q, K and V must have rank 3, have %v %v %v", q.Shape, k.Shape, v.Shape)
	}
	seqFirst := n.Attrs.Int("seq_first", 0) != 0
	bi, si := 0, 1 // where B and S are in each shape
	if seqFirst {
		bi, si = 1, 0
	}
	b, sq, sk := q.Shape[bi], q.Shape[si], k.Shape[si]
	if k.Shape[bi] != b || v.Shape[bi] != b || v.Shape[si] != sk {
		return n.Errorf("batch or sequence dims differ: Q %v, K %v, V %v", q.Shape, k.Shape, v.Shape)
	}
	wq, wk, wv := q.Shape[2], k.Shape[2], v.Shape[2]
	d, dv := int(n.Attrs.Int("head_size", 0)), int(n.Attrs.Int("v_head_size", 0))
	if d == 0 && wq%h == 0 {
		d = wq / h
	}
	if dv == 0 && wv%h == 0 {
		dv = wv / h
	}
	var off [3]int
	if o := n.Attrs.Ints("offsets"); o != nil {
		if len(o) != 3 {
			return n.Errorf("offsets must have 3 entries (Q, K, V), have %v", o)
		}
		for i := range off {
			off[i] = int(o[i])
		}
	}
	if d <= 0 || dv <= 0 || off[0] < 0 || off[1] < 0 || off[2] < 0 ||
		off[0]+h*d > wq || off[1]+h*d > wk || off[2]+h*dv > wv {
		return n.Errorf("%d heads of size %d (V %d) at offsets %v do not fit Q %v, K %v, V %v", h, d, dv, off, q.Shape, k.Shape, v.Shape)
	}
	t.batch, t.heads, t.sq, t.d, t.sk, t.dv, t.ktrans = b, h, sq, d, sk, dv, true
	t.qo, t.ko, t.vo, t.hq, t.hv = off[0], off[1], off[2], d, dv
	// Batch stride and row stride of each operand.
	strides := func(s, w int) (int, int) {
		if seqFirst {
			return w, b * w
		}
		return s * w, w
	}
	t.qbs, t.qrs = strides(sq, wq)
	t.kbs, t.krs = strides(sk, wk)
	t.vbs, t.vrs = strides(sk, wv)
	t.ybs, t.yrs = strides(sq, h*dv)
	if seqFirst {
		n.Out[0].Resize(F32, sq, b, h*dv)
	} else {
		n.Out[0].Resize(F32, b, sq, h*dv)
	}
	return nil
}

// attnRowBlock is the most query rows one Attention work unit takes: its
// scores (rows x Sk) stay in L2 between the two GEMMs, and each unit packs
// its head's K and V once (BERT at seq 128: one unit per head, half the
// packing of 64-row units).
const attnRowBlock = 128

// attnTask is one Attention call split into (batch, head, row block)
// units. Operand X of batch b, head h, row i starts at
// b*xbs + i*xrs + xo + h*hx (hx: D for Q and K, Dv for V and Y); K is
// stored transposed (Kt, [D, Sk] per batch) unless ktrans.
type attnTask struct {
	q, kt, v, y, mask, scores []float32
	mstr, mdims               []int
	batch, heads              int
	sq, d, sk, dv             int
	qbs, qrs, kbs, krs        int
	vbs, vrs, ybs, yrs        int
	qo, ko, vo, hq, hv        int
	ktrans                    bool
	rb, nblk, parts           int
	scale                     float32
	pool                      *WorkPool
}

func (t *attnTask) runPart(part, parts int) {
	lo, hi := parSplit(t.batch*t.heads*t.nblk, parts, part, 1)
	buf := t.scores[part*t.rb*(t.sk+1) : (part+1)*t.rb*(t.sk+1)]
	sums := buf[t.rb*t.sk:]
	gs := scratchFor(t.pool, part)
	r := len(t.mdims)
	sk, d, dv := t.sk, t.d, t.dv
	for u := lo; u < hi; u++ {
		bh, i0 := u/t.nblk, (u%t.nblk)*t.rb
		b, h := bh/t.heads, bh%t.heads
		mr := min(t.rb, t.sq-i0)
		row0 := bh*t.sq + i0 // the score row index over all but the last score dim
		s := buf[:mr*sk]
		// scores = scale * Q[rows] . Kt
		q := t.q[b*t.qbs+i0*t.qrs+t.qo+h*t.hq:]
		k := t.kt[b*t.kbs+t.ko+h*t.hq:]
		sgemmWith(gs, false, t.ktrans, mr, sk, d, t.scale, q, t.qrs, k, t.krs, 0, s, sk)
		for i := 0; i < mr; i++ {
			si := s[i*sk : (i+1)*sk]
			if t.mask != nil {
				// The mask offset of score row row0+i: unravel it over
				// dims[:r-1].
				moff, rem := 0, row0+i
				for k := r - 2; k >= 0; k-- {
					moff += (rem % t.mdims[k]) * t.mstr[k]
					rem /= t.mdims[k]
				}
				if ms := t.mstr[r-1]; ms == 1 {
					attnAddRow(si, t.mask[moff:moff+sk])
				} else {
					mv := t.mask[moff]
					for j := range si {
						si[j] += mv
					}
				}
			}
			mx := max32(si)
			sums[i] = 1 / expSum32(si, si, mx)
		}
		// Y[rows] = P . V, then each row by 1/sum.
		y := t.y[b*t.ybs+i0*t.yrs+h*t.hv:]
		sgemmWith(gs, false, false, mr, dv, sk, 1, s, sk, t.v[b*t.vbs+t.vo+h*t.hv:], t.vrs, 0, y, t.yrs)
		for i := 0; i < mr; i++ {
			scale32(y[i*t.yrs:i*t.yrs+dv], sums[i])
		}
	}
}

// attnAddRow sets s[j] += m[j]: axpy32 with a = 1 (s + 1*m rounds once,
// as the add does, so the bits of the scalar loop it replaces).
func attnAddRow(s, m []float32) { axpy32(s, m[:len(s)], 1) }
