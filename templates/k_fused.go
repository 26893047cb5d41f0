package templates

import "math"

// Kernels of the cuvil-domain ops the fusion passes make (ir/ops_cuvil.go).
// The point of each is to touch the output once: FusedConv, FusedGemm and
// FusedMatMul run the GEMM one block of output columns (or rows) at a time
// and apply bias, residual and activation to that block right after, while
// it is still in cache (the GEMM epilogue), instead of three more passes
// over the whole tensor.

// FusedConv is cuvil::FusedConv: Conv with bias, residual Z and activation
// applied to each block of output columns as soon as the GEMM wrote it
// (convFloat in k_conv.go).
func FusedConv(n *Node) error {
	if ok, err := nnViaF32(n, FusedConv); ok {
		return err
	}
	if nhwcLayout(n) {
		return fusedConvNHWC(n) // k_nhwc.go
	}
	if n.Attrs.Int("out_channels", 0) != 0 || n.Input(4) != nil {
		return n.Errorf("out_channels and Into need layout NHWC")
	}
	X, W, B, Z := n.Input(0), n.Input(1), n.Input(2), n.Input(3)
	if X == nil || W == nil {
		return n.Errorf("needs inputs X and W")
	}
	act, err := fusedActOf(n)
	if err != nil {
		return err
	}
	r := len(X.Shape)
	sc := n.ScratchInts(8*r + 4)
	ws, packed, err := convWeightShape(n, W, sc[7*r+2:])
	if err != nil {
		return err
	}
	if r < 3 || len(ws) != r {
		return n.Errorf("X %v and W %v must have the same rank, at least 3", X.ShapeString(), ws)
	}
	if W.DType != X.DType || B != nil && B.DType != X.DType {
		return n.Errorf("inputs must share one dtype")
	}
	nd := r - 2
	group := int(n.Attrs.Int("group", 1))
	N, C, M := X.Shape[0], X.Shape[1], ws[0]
	if group < 1 || C%group != 0 || M%group != 0 || ws[1]*group != C {
		return n.Errorf("X %v, W %v and group %d do not match", X.ShapeString(), ws, group)
	}
	if B != nil && (len(B.Shape) != 1 || B.Shape[0] != M) {
		return n.Errorf("B %v must have shape [%d]", B.ShapeString(), M)
	}
	if ks := n.Attrs.Ints("kernel_shape"); ks != nil {
		for i, k := range ks {
			if i >= nd || int(k) != ws[2+i] {
				return n.Errorf("kernel_shape %v does not match W %v", ks, ws)
			}
		}
	}
	win, err := nnWindow(n, X.Shape[2:], ws[2:], false, sc[:6*nd])
	if err != nil {
		return err
	}
	shape := sc[6*nd : 7*nd+2]
	shape[0], shape[1] = N, M
	copy(shape[2:], win.out)
	if err := fusedCheckZ(n, Z, X.DType, shape); err != nil {
		return err
	}
	if packed && convIsDepthwise2D(C, M, group, X.Shape[2:]) {
		return n.Errorf("W is prepacked but the convolution is depthwise")
	}
	after := n.Attrs.Int("residual_after_activation", 0) != 0
	Y := n.Out[0]
	nnResize(Y, X.DType, shape...)
	switch x := X.Data.(type) {
	case []float32:
		var z, bias, wp []float32
		if Z != nil {
			z = Z.F32()
		}
		if B != nil {
			bias = B.F32()
		}
		w := W.F32()
		if packed {
			w, wp = nil, w
		}
		convFloat(n, x, w, wp, bias, z, after, act, Y.F32(), X.Shape, M, group, win)
	case []float64:
		var z, bias []float64
		if Z != nil {
			z = Z.F64()
		}
		if B != nil {
			bias = B.F64()
		}
		convFloat(n, x, W.F64(), nil, bias, z, after, act, Y.F64(), X.Shape, M, group, win)
	default:
		return n.Errorf("unsupported dtype %v", X.DType)
	}
	return nil
}

// Gelu is cuvil::Gelu (ONNX only has Gelu from opset 20).
func Gelu(n *Node) error {
	if ok, err := nnViaF32(n, Gelu); ok {
		return err
	}
	X := n.Input(0)
	if X == nil {
		return n.Errorf("needs input X")
	}
	act := fusedAct{kind: fusedActGelu}
	switch ap := n.Attrs.String("approximate", "none"); ap {
	case "none":
	case "tanh":
		act.kind = fusedActGeluTanh
	default:
		return n.Errorf("approximate %q: want none or tanh", ap)
	}
	Y := n.Out[0]
	nnResize(Y, X.DType, X.Shape...)
	switch x := X.Data.(type) {
	case []float32:
		y := Y.F32()
		copy(y, x)
		fusedActRow(act, y)
	case []float64:
		y := Y.F64()
		copy(y, x)
		fusedActRow(act, y)
	default:
		return n.Errorf("unsupported dtype %v", X.DType)
	}
	return nil
}

// CuvilLayerNorm is cuvil::LayerNorm: LayerNormalization for models whose
// opset predates it (the fuse-layernorm pass makes it from the
// ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div/Mul/Add chain).
func CuvilLayerNorm(n *Node) error {
	if len(n.Out) > 1 {
		return n.Errorf("has %d outputs, want 1", len(n.Out))
	}
	return LayerNormalization(n)
}

// SkipLayerNorm is cuvil::SkipLayerNorm: LayerNorm(X + Skip) over the last
// axis, one row at a time (the sum never leaves cache unless Sum is asked
// for).
func SkipLayerNorm(n *Node) error {
	if ok, err := nnViaF32(n, SkipLayerNorm); ok {
		return err
	}
	X, Skip, S, B := n.Input(0), n.Input(1), n.Input(2), n.Input(3)
	if X == nil || Skip == nil || S == nil {
		return n.Errorf("needs inputs X, Skip and Scale")
	}
	r := len(X.Shape)
	if r < 1 {
		return n.Errorf("X must have rank >= 1")
	}
	if Skip.DType != X.DType || S.DType != X.DType || B != nil && B.DType != X.DType {
		return n.Errorf("inputs must share one dtype")
	}
	inner := X.Shape[r-1]
	rows := nnProd(X.Shape[:r-1])
	if Skip.Len() != X.Len() && Skip.Len() != inner {
		return n.Errorf("Skip %v must have X's shape %v or its last dim", Skip.ShapeString(), X.ShapeString())
	}
	if S.Len() != inner || B != nil && B.Len() != inner {
		return n.Errorf("Scale %v and B must have %d elements", S.ShapeString(), inner)
	}
	eps := float64(n.Attrs.Float("epsilon", 1e-5))
	nnResize(n.Out[0], X.DType, X.Shape...)
	var sum *Tensor
	if len(n.Out) > 1 && n.Out[1] != nil {
		sum = n.Out[1]
		nnResize(sum, X.DType, X.Shape...)
	}
	switch x := X.Data.(type) {
	case []float32:
		var sb, bb []float32
		if sum != nil {
			sb = sum.F32()
		}
		if B != nil {
			bb = B.F32()
		}
		layerNorm32(n, x, Skip.F32(), S.F32(), bb, n.Out[0].F32(), sb, rows, inner, eps, nil, nil)
	case []float64:
		var sb, bb []float64
		if sum != nil {
			sb = sum.F64()
		}
		if B != nil {
			bb = B.F64()
		}
		skipLayerNorm(x, Skip.F64(), S.F64(), bb, n.Out[0].F64(), sb, rows, inner, eps)
	default:
		return n.Errorf("unsupported dtype %v", X.DType)
	}
	return nil
}

func skipLayerNorm[T nnFloat](x, skip, scale, bias, y, sum []T, rows, inner int, eps float64) {
	for r := 0; r < rows; r++ {
		xr, yr := x[r*inner:(r+1)*inner], y[r*inner:(r+1)*inner]
		sr := skip[:inner]
		if len(skip) != inner {
			sr = skip[r*inner : (r+1)*inner]
		}
		var s float64
		for i, v := range xr {
			t := v + sr[i]
			yr[i] = t
			s += float64(t)
		}
		if sum != nil {
			copy(sum[r*inner:(r+1)*inner], yr)
		}
		mean := s / float64(inner)
		var ss float64
		for _, v := range yr {
			d := float64(v) - mean
			ss += d * d
		}
		inv := 1 / math.Sqrt(ss/float64(inner)+eps)
		for i, v := range yr {
			o := (float64(v) - mean) * inv * float64(scale[i])
			if bias != nil {
				o += float64(bias[i])
			}
			yr[i] = T(o)
		}
	}
}

// ScaleShift is cuvil::ScaleShift: activation(X*scale + shift) with one
// scale and shift per channel (axis 1), in one pass.
func ScaleShift(n *Node) error {
	if ok, err := nnViaF32(n, ScaleShift); ok {
		return err
	}
	X, S, B := n.Input(0), n.Input(1), n.Input(2)
	if X == nil || S == nil || B == nil {
		return n.Errorf("needs inputs X, scale and shift")
	}
	act, err := fusedActOf(n)
	if err != nil {
		return err
	}
	if len(X.Shape) < 2 {
		return n.Errorf("X %v must have rank >= 2", X.ShapeString())
	}
	if S.DType != X.DType || B.DType != X.DType {
		return n.Errorf("inputs must share one dtype")
	}
	N, C := X.Shape[0], X.Shape[1]
	nhwc := nhwcLayout(n)
	ldx := 0
	if nhwc {
		// Channels last (k_nhwc.go): N is then every other axis.
		N, C = nnProd(X.Shape[:len(X.Shape)-1]), X.Shape[len(X.Shape)-1]
		ldx = C
		if ch := int(n.Attrs.Int("channels", 0)); ch != 0 {
			// The first ch channels of wider rows (concat-into).
			if ch < 0 || ch > C {
				return n.Errorf("channels %d must be in [1, %d]", ch, C)
			}
			C = ch
		}
	} else if n.Attrs.Int("channels", 0) != 0 {
		return n.Errorf("channels needs layout NHWC")
	}
	if S.Len() != C || B.Len() != C {
		return n.Errorf("scale %v and shift %v must have %d elements", S.ShapeString(), B.ShapeString(), C)
	}
	inner := nnProd(X.Shape[2:])
	Y := n.Out[0]
	if nhwc {
		sc := n.ScratchInts(len(X.Shape))
		copy(sc, X.Shape)
		sc[len(sc)-1] = C
		nnResize(Y, X.DType, sc...)
		switch x := X.Data.(type) {
		case []float32:
			// Rows split over the pool where each element's bits do not
			// depend on the split (a clamp; other activations' vector
			// bodies and scalar tails may differ): densenet's ScaleShift
			// + Relu is ~20% of its run.
			t := parTaskOf[scaleShiftNHWCTask](n)
			*t = scaleShiftNHWCTask{x: x, scale: S.F32(), shift: B.F32(), y: Y.F32(), C: C, ldx: ldx, act: act}
			parts := 1
			if _, _, clamp := fusedClampOf(act); clamp && N*C >= parMinFlops/4 {
				parts = min(n.Pool.Threads(), N)
			}
			n.Pool.Run(parts, t)
			*t = scaleShiftNHWCTask{}
		case []float64:
			scaleShiftNHWC(x, S.F64(), B.F64(), Y.F64(), N, C, ldx, act)
		default:
			return n.Errorf("unsupported dtype %v", X.DType)
		}
		return nil
	}
	nnResize(Y, X.DType, X.Shape...)
	switch x := X.Data.(type) {
	case []float32:
		scaleShift(x, S.F32(), B.F32(), Y.F32(), N, C, inner, act)
	case []float64:
		scaleShift(x, S.F64(), B.F64(), Y.F64(), N, C, inner, act)
	default:
		return n.Errorf("unsupported dtype %v", X.DType)
	}
	return nil
}

func scaleShift[T nnFloat](x, scale, shift, y []T, N, C, inner int, act fusedAct) {
	for b := 0; b < N; b++ {
		for c := 0; c < C; c++ {
			off := (b*C + c) * inner
			xr, yr := x[off:off+inner], y[off:off+inner]
			s, t := scale[c], shift[c]
			for i, v := range xr {
				yr[i] = v*s + t
			}
			fusedActRow(act, yr)
		}
	}
}

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

// attnAddRow sets s[j] += m[j].
func attnAddRow(s, m []float32) {
	m = m[:len(s)]
	for j := range s {
		s[j] += m[j]
	}
}
