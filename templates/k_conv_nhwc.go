package templates

import (
	"math"
	"slices"
	"sync/atomic"
)

// NHWC kernels: the layout pass (passes/layout.go) runs chains of
// convolutions and pooling with channels last, where a depthwise
// convolution or a pooling window is a few vector operations per output
// pixel over contiguous channels (no per-plane copies), and a 1x1
// convolution is a plain GEMM [N*H*W, C] x W'[C, M]. cuvil::FusedConv with
// layout=NHWC reads X [N,H,W,C] and writes Y (and reads Z) [N,H',W',M];
// cuvil::PoolNHWC (k_pool_nhwc.go) is MaxPool, AveragePool or
// GlobalAveragePool on NHWC data, on the window kernels
// (k_conv_nhwc_window.go); cuvil::ScaleShift with layout=NHWC (k_elem_scaleshift.go)
// scales the last axis. All are float32 only (the pass converts nothing
// else).

// nhwcLayout reports whether n has the attribute layout=NHWC.
func nhwcLayout(n *Node) bool { return n.Attrs.String("layout", "NCHW") == "NHWC" }

// nhwcPackWeights returns the float32 convolution weights w (ONNX shape
// ws = [M, C/group, kH, kW]) in the layout FusedConv with layout=NHWC
// reads, in dst when it has room: depthwise (group == C == M), the
// transpose [kH*kW, C]; group 1, the GEMM operand W'[(kh, kw, c), m]
// packed by sgemmPackB; groups the direct kernel runs (nhwcGrpDirect:
// 2, 4 or 8 channels a group), its layout (nhwcPackGroupedDirect); other
// groups (M a multiple of group), each group's W'_g [(kh, kw, c), m]
// packed so, one after the other. It
// reports false for other shapes.
//
// A 3-D convolution (ws = [M, C/group, kT, kH, kW], not depthwise) packs
// the same way with the taps (kt, kh, kw) in that order: W'[(kt, kh, kw,
// c), m], the order nhwcConvTask.im2col gathers a window of frames in.
func nhwcPackWeights(dst, w []float32, ws []int, group int, tmp []float32) ([]float32, []float32, bool) {
	if len(ws) != 4 && len(ws) != 5 || len(w) != nnProd(ws) {
		return nil, tmp, false
	}
	M, Cg, kk := ws[0], ws[1], nnProd(ws[2:])
	switch {
	case Cg == 1 && group == M && group > 1 && len(ws) == 5:
		return nil, tmp, false // 3-D depthwise: no NDHWC kernel
	case Cg == 1 && group == M && group > 1:
		dst = nnGrow(dst, M*kk)
		for c := 0; c < M; c++ {
			for t := 0; t < kk; t++ {
				dst[t*M+c] = w[c*kk+t]
			}
		}
		return dst, tmp, true
	case nhwcGrpDirect(ws, group):
		// Narrow groups: the direct kernel's layout (k_conv_nhwc_grp.go).
		return nhwcPackGroupedDirect(dst, w, ws), tmp, true
	case group > 1 && M%group == 0:
		// Grouped: group after group, its W'_g [(kh, kw, c), m] packed by
		// sgemmPackB (nhwcConvTask.runGroups).
		Mg, K := M/group, Cg*kk
		gsz := sgemmPackedBSize(K, Mg)
		tmp = nnGrow(tmp, K*Mg)
		dst = nnGrow(dst, group*gsz)
		npad := sgemmRoundUp(Mg, sgemmPkNR)
		kb := sgemmKBlock(K)
		for gi := 0; gi < group; gi++ {
			for m := 0; m < Mg; m++ {
				for c := 0; c < Cg; c++ {
					for t := 0; t < kk; t++ {
						tmp[(t*Cg+c)*Mg+m] = w[((gi*Mg+m)*Cg+c)*kk+t]
					}
				}
			}
			gd := dst[gi*gsz : (gi+1)*gsz]
			for pc := 0; pc < K; pc += kb {
				sgemmPackBBlock(gd[pc*npad:], false, tmp, Mg, pc, 0, min(kb, K-pc), Mg)
			}
		}
		return dst, tmp, true
	case group == 1:
		K := Cg * kk
		tmp = nnGrow(tmp, K*M)
		for m := 0; m < M; m++ {
			for c := 0; c < Cg; c++ {
				for t := 0; t < kk; t++ {
					tmp[(t*Cg+c)*M+m] = w[(m*Cg+c)*kk+t]
				}
			}
		}
		dst = nnGrow(dst, sgemmPackedBSize(K, M))
		npad := sgemmRoundUp(M, sgemmPkNR)
		kb := sgemmKBlock(K)
		for pc := 0; pc < K; pc += kb {
			sgemmPackBBlock(dst[pc*npad:], false, tmp, M, pc, 0, min(kb, K-pc), M)
		}
		return dst, tmp, true
	}
	return nil, tmp, false
}

// nhwcPackedLen is the length of nhwcPackWeights's result.
func nhwcPackedLen(ws []int, group int) int {
	kk := nnProd(ws[2:])
	switch {
	case ws[1] == 1 && group == ws[0] && group > 1:
		return ws[0] * kk
	case nhwcGrpDirect(ws, group):
		return ws[0] * ws[1] * kk
	case group > 1 && ws[0]%group == 0:
		return group * sgemmPackedBSize(ws[1]*kk, ws[0]/group)
	}
	return sgemmPackedBSize(ws[1]*kk, ws[0])
}

// nhwcOutput checks the residual Z against the NHWC output shape, sizes
// Y to it and returns the float32 data of Y, Z and B (nil when absent)
// and Y's row stride. A convolution the concat-into pass gave
// out_channels writes one channel slice of a wider Y (a Concat's output):
// Y is shape with out_channels channels, y starts at channel out_offset,
// its rows ldy = out_channels apart, and the other channels are input
// Into's (copied first unless the memory plan put Y over Into; an Into
// with fewer channels fills Y's first ones) or, with no Into, left for
// later convolutions to write.
func nhwcOutput(n *Node, Z, B *Tensor, shape []int) (y, z, bias []float32, ldy int, err error) {
	if err := fusedCheckZ(n, Z, F32, shape); err != nil {
		return nil, nil, nil, 0, err
	}
	last := len(shape) - 1 // channels last: 3, or 4 for a 3-D convolution's [N,T,H,W,M]
	M := shape[last]
	ldy, off := M, 0
	var Into *Tensor // FusedConv's input 4, only with out_channels (other ops' input 4 is not Into)
	if oc := int(n.Attrs.Int("out_channels", 0)); oc != 0 {
		ldy, off = oc, int(n.Attrs.Int("out_offset", 0))
		if off < 0 || off+M > ldy || Z != nil && ldy != M {
			return nil, nil, nil, 0, n.Errorf("out_offset %d + %d channels must fit out_channels %d, with no residual Z", off, M, ldy)
		}
		Into = n.Input(4)
	}
	if ldy != M && last != 3 {
		return nil, nil, nil, 0, n.Errorf("out_channels needs a 2-D convolution")
	}
	Y := n.Out[0]
	shape[last] = ldy
	nnResize(Y, F32, shape...)
	shape[last] = M
	y = Y.F32()
	if Into != nil {
		ci := 0
		if Into.DType == F32 && len(Into.Shape) == 4 && slices.Equal(Into.Shape[:3], Y.Shape[:3]) {
			ci = Into.Shape[3]
		}
		if ci < 1 || ci > ldy {
			return nil, nil, nil, 0, n.Errorf("Into %v %v must be float32 of Y's shape %v or fewer channels", Into.DType, Into.ShapeString(), Y.ShapeString())
		}
		into := Into.F32()
		switch {
		case ci < ldy:
			// Into's channels are Y's first ones (a dense block's input).
			for p := 0; p < len(into)/ci; p++ {
				copy(y[p*ldy:p*ldy+ci], into[p*ci:(p+1)*ci])
			}
		case len(y) > 0 && &into[0] != &y[0]:
			copy(y, into)
		}
	}
	if Z != nil {
		z = Z.F32()
	}
	if B != nil {
		bias = B.F32()
	}
	return y[off:], z, bias, ldy, nil
}

// fusedConvNHWC is cuvil::FusedConv with layout=NHWC: depthwise directly
// (nhwcWinTask), anything else (group 1) as a GEMM of the output pixels'
// rows (nhwcConvTask).
func fusedConvNHWC(n *Node) error {
	X, W, B, Z := n.Input(0), n.Input(1), n.Input(2), n.Input(3)
	if X == nil || W == nil {
		return n.Errorf("needs inputs X and W")
	}
	act, err := fusedActOf(n)
	if err != nil {
		return err
	}
	bf16W := W.DType == BF16 // -precision bf16: W' in bf16 panels (k_conv_nhwc_bf16.go)
	if X.DType != F32 || W.DType != F32 && !bf16W || B != nil && B.DType != F32 {
		return n.Errorf("layout NHWC needs float32 inputs, have %v", X.DType)
	}
	if len(X.Shape) != 4 && len(X.Shape) != 5 {
		return n.Errorf("layout NHWC needs X of rank 4 (or 5: NDHWC), have %v", X.ShapeString())
	}
	if n.Attrs.Ints(convWinogradAttr) != nil {
		if n.Input(5) != nil {
			return n.Errorf("input Scale needs a pointwise convolution, not Winograd")
		}
		return fusedConvWinogradNHWC(n, X, W, B, Z, act) // k_conv_winograd_nhwc.go
	}
	rank := len(X.Shape)
	sc := n.ScratchInts(48)
	ws := W.Shape
	packed := false
	if ps := n.Attrs.Ints(convPackedAttr); ps != nil {
		if len(ps) != rank {
			return n.Errorf("prepacked W shape %v must have X's rank %d", ps, rank)
		}
		ws = sc[16 : 16+rank]
		nnIntsInto(ws, ps)
		packed = true
	}
	if len(ws) != rank {
		return n.Errorf("W %v must have X's rank %d", ws, rank)
	}
	if rank == 5 {
		return fusedConvNHWC3D(n, X, W, B, Z, act, ws, packed, sc[24:48]) // k_conv_nhwc_3d.go
	}
	N, H, Wd, C := X.Shape[0], X.Shape[1], X.Shape[2], X.Shape[3]
	hw := X.Shape[1:3]
	inNCHW := n.Attrs.String("in_layout", "NHWC") == "NCHW"
	if inNCHW {
		// The layout pass folded the entry Transpose: X is [N,C,H,W].
		C, H, Wd, hw = X.Shape[1], X.Shape[2], X.Shape[3], X.Shape[2:4]
	}
	M := ws[0]
	group := int(n.Attrs.Int("group", 1))
	dw := group == C && M == C && ws[1] == 1 && group > 1
	grouped := !dw && group > 1 && C%group == 0 && M%group == 0 && ws[1]*group == C
	if !dw && !grouped && (group != 1 || ws[1] != C) {
		return n.Errorf("X %v, W %v and group %d do not match", X.ShapeString(), ws, group)
	}
	if bf16W {
		if !packed || group != 1 || n.Input(5) != nil {
			return n.Errorf("bfloat16 W needs a prepacked group-1 convolution without input Scale")
		}
		if want := bf16PackedBSize(ws[1]*ws[2]*ws[3], M); W.Len() != want {
			return n.Errorf("prepacked bfloat16 W has %d values, want %d for shape %v", W.Len(), want, ws)
		}
	} else if packed && W.Len() != nhwcPackedLen(ws, group) {
		return n.Errorf("prepacked W has %d values, want %d for shape %v", W.Len(), nhwcPackedLen(ws, group), ws)
	}
	if B != nil && B.Len() != M {
		return n.Errorf("B %v must have %d values", B.ShapeString(), M)
	}
	if inNCHW && group != 1 {
		return n.Errorf("in_layout NCHW takes group 1 convolutions only")
	}
	win, err := nnWindow(n, hw, ws[2:], false, sc[:12])
	if err != nil {
		return err
	}
	shape := sc[12:16]
	shape[0], shape[1], shape[2], shape[3] = N, win.out[0], win.out[1], M
	y, z, bias, ldy, err := nhwcOutput(n, Z, B, shape)
	if err != nil {
		return err
	}
	if dw && ldy != M {
		return n.Errorf("out_channels needs a group 1 convolution")
	}
	var wp []float32
	var wh []uint16
	if bf16W {
		wh = W.Data.([]uint16)
	} else {
		wp = W.F32()
	}
	if !packed {
		c := nnCacheOf(n)
		dst, _ := c.slots[1].([]float32)
		tmp, _ := c.slots[4].([]float32)
		wp, tmp, _ = nhwcPackWeights(dst, wp, ws, group, tmp)
		c.slots[1], c.slots[4] = wp, tmp
	}
	after := n.Attrs.Int("residual_after_activation", 0) != 0
	g := nhwcGeomOf(N, H, Wd, C, win)
	x := X.F32()
	var scale []float32
	scaleW := false
	if S := n.Input(5); S != nil {
		// A squeeze-excitation gate folded in (passes/segate.go), on group
		// 1 only (the grouped paths' weights are not sgemmPackB's).
		if grouped {
			return n.Errorf("input Scale needs a group-1 pointwise convolution")
		}
		if scale, scaleW, err = nhwcInScale(n, S, N, H*Wd, C, M, win, dw || inNCHW); err != nil {
			return err
		}
	}
	if dw {
		if bias == nil {
			bias = nnBuf[float32](n, 3, C)
			clear(bias)
		}
		t := parTaskOf[nhwcWinTask](n)
		*t = nhwcWinTask{g: g, mode: nhwcModeDW, x: x, w: wp, bias: bias, y: y, z: z,
			after: after, act: act, epilogue: z != nil || act.kind != fusedActNone}
		t.lo, t.hi = float32(math.Inf(-1)), float32(math.Inf(1))
		if lo, hi, clamp := fusedClampOf(act); clamp && z == nil {
			t.lo, t.hi, t.epilogue = lo, hi, false
		}
		nhwcRunWin(n, t, N*g.OH*g.OW*C*g.kh*g.kw)
		*t = nhwcWinTask{}
		return nil
	}
	if grouped && g.kt == 0 && nhwcGrpDirect(ws, group) {
		nhwcRunGrouped(n, g, ws[1], M, ldy, x, wp, bias, y, z, after, act)
		return nil
	}
	nhwcConvGemm(n, g, x, wp, wh, bias, z, y, ldy, M, group, grouped, inNCHW, after, act, scale, scaleW)
	return nil
}

// nhwcConvGemm runs the GEMM paths of an NHWC convolution of geometry g
// (group 1, grouped, or reading NCHW; bf16 W' when wh is set; scale: an
// input Scale, applied to W's rows when scaleW, else to X's rows) on the
// session pool: output pixel rows times W'.
func nhwcConvGemm(n *Node, g nhwcGeom, x, wp []float32, wh []uint16, bias, z, y []float32, ldy, M, group int, grouped, inNCHW, after bool, act fusedAct, scale []float32, scaleW bool) {
	C := g.C
	K := C * g.kh * g.kw * max(g.kt, 1)
	pointwise := !inNCHW && g.kt == 0 && g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.ph == 0 && g.pw == 0 && g.peh == 0 && g.pew == 0
	t := parTaskOf[nhwcConvTask](n)
	*t = nhwcConvTask{g: g, x: x, wp: wp, bias: bias, z: z, y: y, ldy: ldy, M: M, K: K,
		pointwise: pointwise, after: after, act: act, pool: n.Pool}
	rows := g.N * g.OH * g.OW
	// Row chunks: a multiple of the GEMM's 6-row tile, big enough that
	// streaming W' once per chunk is amortised, small enough that the
	// column block (128K floats) or the output block stays in L2.
	if pointwise {
		t.chunk = max(48, fusedL2Floats/max(M, 1))
	} else {
		t.chunk = max(48, (128<<10)/K)
	}
	if grouped {
		t.groups, t.Cg, t.Mg = group, C/group, M/group
		t.goffs = nnBuf[int](n, 2, K/group)
		for s := 0; s < K/C; s++ { // taps: kh*kw (kt*kh*kw in 3-D)
			for c := 0; c < t.Cg; c++ {
				t.goffs[s*t.Cg+c] = 4 * (s*C + c)
			}
		}
	}
	parts := 1
	if threads := n.Pool.Threads(); threads > 1 && rows*M*K/group >= parMinFlops {
		parts = min(threads, (rows+5)/6)
		// Fewer rows than output channels (resnet50's 7x7 and 14x14
		// stages): split the columns, so each part streams its share of W'
		// (the larger operand) rather than all of it. Each part gathers
		// all the rows' windows, so a KxK conv needs half as many rows.
		few := M > rows
		if !pointwise {
			few = M >= 2*rows
		}
		if few && !inNCHW && !grouped && M >= 2*threads*sgemmColAlign() {
			t.byCols = true
			parts = threads
		}
	}
	// Chunks of about equal size (rounding their number to the nearest:
	// 49 rows in chunks of 48 would stream W' a second time for one row,
	// resnet50's layer4 convs 1.35x slower). They cover all the rows, not
	// a part's share, and the parts take them one at a time from t.next
	// (t.nch work units; by columns, units of columns): a part whose core
	// runs faster takes more, where a fixed share left the other core
	// waiting (resnet50 at 2 threads: 2-4 ms of 56 a run, either core the
	// slower one). A row's values do not depend on its chunk, so results
	// do not depend on the split.
	nch := max(1, (rows+t.chunk/2)/t.chunk)
	if !t.byCols {
		// At least eight chunks of 48 rows or more, whatever the thread
		// count, so the chunks, and the elements an activation's vector
		// kernel or its scalar tail computes, are the same at any count;
		// fewer than one a part only on small maps.
		nch = max(nch, min(8, rows/48), parts)
	}
	t.chunk = (rows + nch - 1) / nch
	t.nch = (rows + t.chunk - 1) / t.chunk
	if t.byCols {
		// Column units: about four a part of 64 columns at least when a
		// part's rows are read in place or gathered once (one chunk),
		// else one a part (each unit gathers every chunk's windows).
		t.nch = parts
		if pointwise || t.chunk >= rows {
			t.nch = max(parts, min(4*parts, M/64)/parts*parts)
		}
	}
	parts = min(parts, t.nch)
	t.next.Store(0)
	if inNCHW {
		t.nchw = true
		t.nchwOffsets(n)
	}
	switch {
	case wh != nil:
		t.runBF16(n, wh, parts)
		*t = nhwcConvTask{}
		return
	case scale != nil && scaleW:
		// Every part reads all of W': scale a copy of it first, split
		// over the pool by panels (see runPre).
		ws := nnBuf[float32](n, 2, len(wp))
		t.preScale(n, nhwcPreW, ws, wp, scale, C*sgemmRoundUp(M, sgemmPkNR))
		t.wp = ws
	case scale != nil && t.byCols:
		// Every column part reads all rows: scale the map once, split
		// over the pool by rows.
		xs := nnBuf[float32](n, 2, len(x))
		t.preScale(n, nhwcPreX, xs, x, scale, rows*C)
		t.x = xs
	case scale != nil:
		// Each part scales its chunk of rows into its column block.
		t.scale, t.hw = scale, g.H*g.W
		t.col = nnBuf[float32](n, 0, parts*t.chunk*K)
	case !pointwise:
		t.col = nnBuf[float32](n, 0, parts*t.chunk*K)
	}
	n.Pool.Run(parts, t)
	*t = nhwcConvTask{}
}

// nhwcInScale checks FusedConv's input Scale (x times Scale[b, c] for
// image b and input channel c; Scale is [N,1,1,C], a squeeze-excitation
// gate) on a pointwise NHWC convolution. With one image whose map has more
// pixels than W' has (padded) columns, it returns scaleW: nhwcConvGemm
// scales a copy of the packed weights, row c of W' [C, M] times Scale[c]
// (C*M' products instead of H*W*C; x*(s*w) differs from (x*s)*w by float32
// rounding only). Otherwise the GEMM's parts apply the scale to each chunk
// of rows as they gather it (nhwcScaleRows), exactly what the unfused Mul
// wrote.
func nhwcInScale(n *Node, S *Tensor, N, HW, C, M int, win nnWin, other bool) (scale []float32, scaleW bool, err error) {
	pointwise := !other
	for i := range 2 {
		pointwise = pointwise && win.k[i] == 1 && win.s[i] == 1 && win.pb[i] == 0 && win.pe[i] == 0
	}
	if !pointwise {
		return nil, false, n.Errorf("input Scale needs a group-1 pointwise convolution reading NHWC")
	}
	if S.DType != F32 || len(S.Shape) != 4 || S.Shape[0] != N || S.Shape[1] != 1 || S.Shape[2] != 1 || S.Shape[3] != C {
		return nil, false, n.Errorf("Scale %v %v must be float32 [%d,1,1,%d]", S.DType, S.ShapeString(), N, C)
	}
	return S.F32(), N == 1 && HW > sgemmRoundUp(M, sgemmPkNR), nil
}

// nhwcScaleRows sets dst's rows [0, r1-r0) to x's rows [r0, r1) (C
// channels each) times the scale of their image (hw rows per image).
func nhwcScaleRows(dst, x, scale []float32, r0, r1, hw, C int) {
	for p := r0; p < r1; p++ {
		b := p / hw
		mul32(dst[(p-r0)*C:(p-r0+1)*C], x[p*C:(p+1)*C], scale[b*C:(b+1)*C])
	}
}

// nhwcScalePackedRows sets dst to W' packed by sgemmPackB (K rows, mp
// padded columns: K blocks of sgemmKBlock rows, each panels of sgemmPkNR
// columns, row by row) with row k times s[k].
func nhwcScalePackedRows(dst, wp, s []float32, K, mp int) {
	nhwcScalePackedPanels(dst, wp, s, K, mp, 0, mp/sgemmPkNR*nhwcKBlocks(K))
}

// nhwcKBlocks is the number of sgemmKBlock row blocks of K rows.
func nhwcKBlocks(K int) int {
	kb := sgemmKBlock(K)
	return (K + kb - 1) / kb
}

// nhwcScalePackedPanels is nhwcScalePackedRows for panels [u0, u1) of
// all row blocks' panels in memory order (block pc's mp/sgemmPkNR panels,
// then the next block's): one part's share (runPre).
func nhwcScalePackedPanels(dst, wp, s []float32, K, mp, u0, u1 int) {
	const NR = sgemmPkNR
	kb, np := sgemmKBlock(K), mp/NR
	for u := u0; u < u1; u++ {
		pc, j0 := u/np*kb, u%np*NR
		kc := min(kb, K-pc)
		off := pc*mp + j0*kc
		mulRows16(dst[off:off+kc*NR], wp[off:off+kc*NR], s[pc:pc+kc])
	}
}

// nhwcConvTask is an NHWC convolution of group 1 as a GEMM: output pixel
// rows (N*OH*OW of them) times W' [K, M] (K = kh*kw*C, packed by
// sgemmPackB), split over parts by rows (by columns, runCols, when there
// are fewer rows than columns); each part takes chunk rows at a time
// (gathered into its own column block unless the convolution is pointwise,
// when X's rows are the GEMM's A as they are) and applies the epilogue to
// the chunk right after its GEMM. A row's values do not depend
// on the chunking (the GEMM sums over K in one order), so results are the
// same at any thread count. Y's rows are ldy apart (>= M: a channel
// slice of a wider output, see nhwcOutput); Z's are M apart.
type nhwcConvTask struct {
	g              nhwcGeom
	x, wp, bias, z []float32
	y, col         []float32
	M, K, chunk    int
	ldy            int
	// nch work units (row chunks, or column units by columns), handed
	// out by next.
	nch       int
	next      atomic.Int64
	pointwise bool
	byCols    bool
	after     bool
	// scale (pointwise only): X's rows times it per image (hw rows
	// each) and channel, applied chunk by chunk into col (input Scale).
	scale []float32
	hw    int
	// X is NCHW (in_layout NCHW); offs: see nchwOffsets.
	nchw bool
	offs []int
	act  fusedAct
	pool *WorkPool
	// Grouped (groups > 1, not depthwise): Cg input and Mg output
	// channels a group, K = kh*kw*C the gathered row of all groups, goffs
	// the byte offsets of one group's GEMM steps in it (runGroups).
	groups, Cg, Mg int
	goffs          []int
	// pre (nhwcPreW, nhwcPreX): the pool pass before the GEMM that sets
	// pdst to psrc scaled by the input Scale (preScale).
	pre        int
	pdst, psrc []float32
}

// The passes of nhwcConvTask.preScale.
const (
	nhwcPreNone = iota
	nhwcPreW    // W' packed, each row times its channel's scale
	nhwcPreX    // X's rows times their image's scale
)

// nhwcPreMin is the least number of products worth a pool pass of their own.
const nhwcPreMin = 1 << 15

// preScale sets dst to src times scale (mode nhwcPreW or nhwcPreX, work
// products) with a pass of its own over the pool; each product is one
// float32 multiplication, so the split does not change any bits.
func (t *nhwcConvTask) preScale(n *Node, mode int, dst, src, scale []float32, work int) {
	t.pre, t.pdst, t.psrc, t.scale = mode, dst, src, scale
	parts := 1
	if threads := n.Pool.Threads(); threads > 1 && work >= nhwcPreMin {
		parts = threads
	}
	n.Pool.Run(parts, t)
	t.pre, t.pdst, t.psrc, t.scale = nhwcPreNone, nil, nil, nil
}

// runPre is part i of preScale's pass: a share of W's panels, or of X's
// rows.
func (t *nhwcConvTask) runPre(i, parts int) {
	g, C := &t.g, t.g.C
	if t.pre == nhwcPreW {
		mp := sgemmRoundUp(t.M, sgemmPkNR)
		u0, u1 := parSplit(mp/sgemmPkNR*nhwcKBlocks(C), parts, i, 1)
		nhwcScalePackedPanels(t.pdst, t.psrc, t.scale, C, mp, u0, u1)
		return
	}
	r0, r1 := parSplit(g.N*g.H*g.W, parts, i, 1)
	if r0 < r1 {
		nhwcScaleRows(t.pdst[r0*C:r1*C], t.psrc, t.scale, r0, r1, g.H*g.W, C)
	}
}

func (t *nhwcConvTask) runPart(i, parts int) {
	if t.pre != nhwcPreNone {
		t.runPre(i, parts)
		return
	}
	if t.byCols {
		t.runCols(i, parts)
		return
	}
	if t.groups > 1 {
		t.runGroups(i, parts)
		return
	}
	g, M, K := &t.g, t.M, t.K
	rows := g.N * g.OH * g.OW
	bufs := scratchFor(t.pool, i).pkBufs()
	var col []float32
	if t.col != nil {
		col = t.col[i*t.chunk*K : (i+1)*t.chunk*K]
	}
	for {
		u := int(t.next.Add(1)) - 1
		if u >= t.nch {
			return
		}
		a := u * t.chunk
		b := min(a+t.chunk, rows)
		src := col
		blk := t.y[a*t.ldy:]
		var z []float32
		if t.z != nil {
			z = t.z[a*M : b*M]
		}
		switch {
		case t.pointwise && t.scale != nil:
			nhwcScaleRows(col, t.x, t.scale, a, b, t.hw, K)
		case t.pointwise:
			src = t.x[a*K:]
		case t.nchw && nhwcPWFast:
			t.nchwGemm(col, a, b)
			continue
		case t.nchw:
			t.nchwIm2col(col, a, b)
		default:
			t.im2col(col, a, b)
		}
		if nhwcPWFast {
			// A in place, the epilogue in the tiles (k_conv_nhwc_pw.go).
			e, all := t.epi(z)
			nhwcPWGemm(b-a, M, K, src, K, nil, t.wp, blk, t.ldy, &e)
			if !all {
				t.epilogue(blk, z, b-a)
			}
			continue
		}
		sgemmPrepackedBPart(bufs, M, 0, b-a, M, K, 1, false, src, K, t.wp, 0, blk, t.ldy)
		// The bias (a row vector) and a clamp activation in one pass over
		// the block; other activations and the residual after it.
		lo, hi, clamp := fusedClampOf(t.act)
		if t.bias != nil && t.z == nil && clamp {
			nhwcBiasClamp(blk, t.bias, b-a, M, t.ldy, lo, hi)
			continue
		}
		if t.bias != nil {
			nhwcBiasClamp(blk, t.bias, b-a, M, t.ldy, float32(math.Inf(-1)), float32(math.Inf(1)))
		}
		t.epilogue(blk, z, b-a)
	}
}

// runGroups is runPart for a grouped convolution: chunk rows at a time,
// the windows of all groups are gathered once (a pointwise convolution
// reads X in place), then each group's GEMM reads its channels of every
// tap through the offset table (the tiles broadcast A's elements one by
// one, so a gathered A costs them nothing) and writes its Mg columns of Y
// with bias, residual and clamp in the tiles.
func (t *nhwcConvTask) runGroups(i, parts int) {
	g, M, K := &t.g, t.M, t.K
	Cg, Mg, Kg := t.Cg, t.Mg, K/t.groups
	gsz := sgemmPackedBSize(Kg, Mg)
	rows := g.N * g.OH * g.OW
	var col []float32
	if t.col != nil {
		col = t.col[i*t.chunk*K : (i+1)*t.chunk*K]
	}
	for {
		u := int(t.next.Add(1)) - 1
		if u >= t.nch {
			return
		}
		a := u * t.chunk
		b := min(a+t.chunk, rows)
		src := col
		if t.pointwise {
			src = t.x[a*K:]
		} else {
			t.im2col(col, a, b)
		}
		blk := t.y[a*t.ldy:]
		var z []float32
		if t.z != nil {
			z = t.z[a*M : b*M]
		}
		all := true
		for gi := 0; gi < t.groups; gi++ {
			var bias, zg []float32
			if t.bias != nil {
				bias = t.bias[gi*Mg : (gi+1)*Mg]
			}
			if z != nil {
				zg = z[gi*Mg:]
			}
			e, ok := nhwcPWEpiOf(bias, zg, t.after, t.act)
			if len(t.y) >= 256<<10 {
				e.flags |= nhwcPWPrefetch
			}
			all = ok
			nhwcPWGemm(b-a, Mg, Kg, src[gi*Cg:], K, t.goffs, t.wp[gi*gsz:(gi+1)*gsz], blk[gi*Mg:], t.ldy, &e)
		}
		if !all {
			t.epilogue(blk, z, b-a)
		}
	}
}

// epilogue adds the residual z and applies the activation to rows rows
// of blk (Y from a block's first row): in one pass when the rows are
// contiguous, else row by row (a channel slice has no residual).
func (t *nhwcConvTask) epilogue(blk, z []float32, rows int) {
	M, ldy := t.M, t.ldy
	switch {
	case ldy == M:
		fusedEpilogue32(blk[:rows*M], 0, nil, 0, z, t.after, t.act)
	case t.act.kind != fusedActNone:
		for r := 0; r < rows; r++ {
			fusedEpilogue32(blk[r*ldy:r*ldy+M], 0, nil, 0, nil, t.after, t.act)
		}
	}
}

// epi is the tile epilogue of a block whose residual is z (see
// nhwcPWEpiOf); outputs over 1 MB (resnet50's 56x56x256 and 28x28x512)
// also prefetch each tile's rows of Y and Z before its k loop (1 thread,
// per node: layer1 conv3 and downsample 0.81-0.94, layer2.0 downsample
// 0.90 of before; smaller outputs stay in L2, where it cost 3-6%).
func (t *nhwcConvTask) epi(z []float32) (nhwcPWEpi, bool) {
	e, all := nhwcPWEpiOf(t.bias, z, t.after, t.act)
	if len(t.y) >= 256<<10 {
		e.flags |= nhwcPWPrefetch
	}
	return e, all
}

// nchwOffsets fills t.offs: the byte offset in an NCHW image of each
// GEMM step (tap, channel) from a window's corner.
func (t *nhwcConvTask) nchwOffsets(n *Node) {
	g := &t.g
	t.offs = nnBuf[int](n, 2, t.K)
	for i := 0; i < g.kh; i++ {
		for j := 0; j < g.kw; j++ {
			for c := 0; c < g.C; c++ {
				t.offs[(i*g.kw+j)*g.C+c] = 4 * ((c*g.H+i*g.dh)*g.W + j*g.dw)
			}
		}
	}
}

// nchwGemm computes output pixels [a, b) from the NCHW images t.x: the
// pixels whose windows lie inside the image read it in place (a run of
// an output row's pixels is a GEMM with A row r at r*sw from the first
// window's corner, step p at offs[p]); border pixels are gathered into
// col (chunk rows of K) first.
func (t *nhwcConvTask) nchwGemm(col []float32, a, b int) {
	g := &t.g
	for r := a; r < b; {
		ow, oh, img := r%g.OW, r/g.OW%g.OH, r/(g.OW*g.OH)
		n := min(g.OW-ow, b-r)
		// Interior columns [lo, hi) of this run (none when the window's
		// rows leave the image).
		lo, hi := ow+n, ow+n
		if ih := oh*g.sh - g.ph; ih >= 0 && ih+(g.kh-1)*g.dh < g.H {
			lo, hi = max(ow, g.lo), min(ow+n, g.hi)
			if lo >= hi {
				lo, hi = ow+n, ow+n
			} else {
				x0 := (img*g.C*g.H+ih)*g.W + lo*g.sw - g.pw
				t.nchwTiles(r+lo-ow, hi-lo, t.x[x0:], g.sw, t.offs)
			}
		}
		t.nchwBorder(col, r, r+lo-ow)
		t.nchwBorder(col, r+hi-ow, r+n)
		r += n
	}
}

// nchwBorder computes output pixels [a, b) through col: gathered, then
// read in place.
func (t *nhwcConvTask) nchwBorder(col []float32, a, b int) {
	for a < b {
		n := min(b-a, t.chunk)
		t.nchwIm2col(col, a, a+n)
		t.nchwTiles(a, n, col, t.K, nil)
		a += n
	}
}

// nchwTiles runs the tile GEMM for output pixels [r, r+n) with A from a
// (row stride lda; gathered through offs unless nil), the epilogue in
// the tiles where it can be.
func (t *nhwcConvTask) nchwTiles(r, n int, a []float32, lda int, offs []int) {
	M := t.M
	var z []float32
	if t.z != nil {
		z = t.z[r*M : (r+n)*M]
	}
	blk := t.y[r*t.ldy:]
	e, all := t.epi(z)
	nhwcPWGemm(n, M, t.K, a, lda, offs, t.wp, blk, t.ldy, &e)
	if !all {
		t.epilogue(blk, z, n)
	}
}

// nchwIm2col is im2col from the NCHW images t.x: column row r-a holds
// output pixel r's window in (tap, channel) order, zeros in the padding.
func (t *nhwcConvTask) nchwIm2col(col []float32, a, b int) {
	g := &t.g
	for r := a; r < b; r++ {
		ow, oh, img := r%g.OW, r/g.OW%g.OH, r/(g.OW*g.OH)
		dst := col[(r-a)*t.K : (r-a+1)*t.K]
		for i := 0; i < g.kh; i++ {
			ih := oh*g.sh - g.ph + i*g.dh
			for j := 0; j < g.kw; j++ {
				iw := ow*g.sw - g.pw + j*g.dw
				d := dst[(i*g.kw+j)*g.C : (i*g.kw+j+1)*g.C]
				if ih < 0 || ih >= g.H || iw < 0 || iw >= g.W {
					clear(d)
					continue
				}
				for c := range d {
					d[c] = t.x[((img*g.C+c)*g.H+ih)*g.W+iw]
				}
			}
		}
	}
}

// runCols is runPart for a split by columns: part i computes output
// columns [j0, j1) of every row, chunk rows at a time (gathering all of
// their windows when the convolution is not pointwise), the epilogue in
// the tiles (without them, row by row after the SGEMM driver).
func (t *nhwcConvTask) runCols(i, parts int) {
	g, M, K := &t.g, t.M, t.K
	rows := g.N * g.OH * g.OW
	bufs := scratchFor(t.pool, i).pkBufs()
	var col []float32
	if !t.pointwise {
		col = t.col[i*t.chunk*K : (i+1)*t.chunk*K]
	}
	gathered := -1 // the chunk whose windows col holds
	for {
		u := int(t.next.Add(1)) - 1
		if u >= t.nch {
			return
		}
		j0, j1 := parSplit(M, t.nch, u, sgemmColAlign())
		if j0 < j1 {
			t.cols(j0, j1, rows, bufs, col, &gathered)
		}
	}
}

// cols is runCols for the column unit [j0, j1): chunk rows at a time,
// their windows gathered into col unless it holds them already.
func (t *nhwcConvTask) cols(j0, j1, rows int, bufs *sgemmPkBufs, col []float32, gathered *int) {
	M, K := t.M, t.K
	lo, hi, clamp := fusedClampOf(t.act)
	for a := 0; a < rows; a += t.chunk {
		b := min(a+t.chunk, rows)
		src := col
		if t.pointwise {
			src = t.x[a*K:]
		} else if *gathered != a {
			t.im2col(col, a, b)
			*gathered = a
		}
		if nhwcPWFast {
			// The tiles on this part's columns, A in place (or the
			// gathered windows), the epilogue in the tile, rather than
			// the SGEMM driver packing A per part: tiles/driver (minima
			// of alternating runs) 0.92-0.98 on resnet50's layer3/4 and
			// squeezenet's classifier (512 -> 1000 at 13x13), 0.78 on
			// squeezenet's 48->192 at 13x13; runPart's tiles, so results
			// do not depend on the split.
			var z []float32
			if t.z != nil {
				z = t.z[a*M:]
			}
			e, all := t.epi(z)
			nhwcPWGemmCols(b-a, M, j0, j1, K, src, K, nil, t.wp, t.y[a*t.ldy:], t.ldy, &e)
			for r := a; r < b && !all; r++ {
				var z []float32
				if t.z != nil {
					z = t.z[r*M+j0 : r*M+j1]
				}
				fusedEpilogue32(t.y[r*t.ldy+j0:r*t.ldy+j1], 0, nil, 0, z, t.after, t.act)
			}
			continue
		}
		sgemmPrepackedBPart(bufs, M, j0, b-a, j1-j0, K, 1, false, src, K, t.wp, 0, t.y[a*t.ldy+j0:], t.ldy)
		for r := a; r < b; r++ {
			yr := t.y[r*t.ldy+j0 : r*t.ldy+j1]
			var bias, z []float32
			if t.bias != nil {
				bias = t.bias[j0:j1]
			}
			if bias != nil && t.z == nil && clamp {
				nhwcBiasClamp(yr, bias, 1, j1-j0, j1-j0, lo, hi)
				continue
			}
			if bias != nil {
				nhwcBiasClamp(yr, bias, 1, j1-j0, j1-j0, float32(math.Inf(-1)), float32(math.Inf(1)))
			}
			if t.z != nil {
				z = t.z[r*M+j0 : r*M+j1]
			}
			fusedEpilogue32(yr, 0, nil, 0, z, t.after, t.act)
		}
	}
}

// im2col gathers the input windows of output pixels [a, b) into col, one
// row of K = kh*kw*C values per pixel, tap after tap, each tap's C channels
// one contiguous copy (zeros where the tap falls in the padding).
func (t *nhwcConvTask) im2col(col []float32, a, b int) {
	g := &t.g
	if g.kt > 0 {
		t.im2col3D(col, a, b) // k_conv_nhwc_3d.go
		return
	}
	for r := a; r < b; r++ {
		ow := r % g.OW
		oh := r / g.OW % g.OH
		n := r / (g.OW * g.OH)
		t.gather(col[(r-a)*t.K:(r-a+1)*t.K], n, oh, ow)
	}
}

// gather writes the kh*kw*C window values of output pixel (oh, ow) of
// image (or frame) n to dst, tap after tap, zeros in the padding.
func (t *nhwcConvTask) gather(dst []float32, n, oh, ow int) {
	g := &t.g
	C := g.C
	for i := 0; i < g.kh; i++ {
		ih := oh*g.sh - g.ph + i*g.dh
		if iw0 := ow*g.sw - g.pw; g.dw == 1 && ih >= 0 && ih < g.H && iw0 >= 0 && iw0+g.kw <= g.W {
			// The kernel row's taps are one contiguous run of kw*C
			// values in both X and the column row.
			off := ((n*g.H+ih)*g.W + iw0) * C
			copy(dst[i*g.kw*C:(i+1)*g.kw*C], t.x[off:off+g.kw*C])
			continue
		}
		for j := 0; j < g.kw; j++ {
			d := dst[(i*g.kw+j)*C : (i*g.kw+j+1)*C]
			iw := ow*g.sw - g.pw + j*g.dw
			if ih < 0 || ih >= g.H || iw < 0 || iw >= g.W {
				clear(d)
				continue
			}
			off := ((n*g.H+ih)*g.W + iw) * C
			copy(d, t.x[off:off+C])
		}
	}
}

// fusedClampOf returns the bounds of activation a when it is a clamp
// (none, Relu or Clip).
func fusedClampOf(a fusedAct) (lo, hi float32, ok bool) {
	lo, hi = float32(math.Inf(-1)), float32(math.Inf(1))
	switch a.kind {
	case fusedActNone:
	case fusedActRelu:
		lo = 0
	case fusedActClip:
		lo, hi = float32(a.p0), float32(a.p1)
	default:
		return lo, hi, false
	}
	return lo, hi, true
}

// nhwcBiasClampGo sets y[r*ldy+j] = min(max(y[r*ldy+j]+bias[j], lo), hi)
// for rows r and columns j in [j0, m): the twin of nhwcBiasClampAVX.
func nhwcBiasClampGo(y, bias []float32, rows, j0, m, ldy int, lo, hi float32) {
	for r := 0; r < rows; r++ {
		yr := y[r*ldy+j0 : r*ldy+m]
		for j, v := range yr {
			yr[j] = min(max(v+bias[j0+j], lo), hi)
		}
	}
}
