package templates

// Conv is ONNX Conv (versions 1-11) over any number of spatial dims. Each
// group is an im2col followed by one GEMM; 1x1 unit-stride convolutions
// skip the im2col. Depthwise 2-D convolutions run a direct kernel.
func Conv(n *Node) error {
	if ok, err := nnViaF32(n, Conv); ok {
		return err
	}
	return convNCHW(n, fusedAct{}, nil, false)
}

// convNCHW runs Conv, and FusedConv in NCHW with its epilogue: the
// activation act and the residual Z (nil: none), added after the
// activation when after is set.
func convNCHW(n *Node, act fusedAct, Z *Tensor, after bool) error {
	X, W, B := n.Input(0), n.Input(1), n.Input(2)
	if X == nil || W == nil {
		return n.Errorf("needs inputs X and W")
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

// convPackedAttr is the attribute gen sets on a Conv or FusedConv whose
// constant float32 W it stored prepacked (ConvPrepackWeights): W's data is
// then, group after group, the group's [M/group, C/group*prod(kernel)]
// weight matrix in sgemmPackA's layout, W's shape that length, and the
// attribute holds W's ONNX shape. One source of truth: the assembly and
// pure-Go GEMMs both read that layout.
const convPackedAttr = "packed_w_shape"

// convWeightShape returns W's ONNX shape (in sc when W is prepacked; sc
// needs room for the rank) and whether W is prepacked.
func convWeightShape(n *Node, W *Tensor, sc []int) ([]int, bool, error) {
	ps := n.Attrs.Ints(convPackedAttr)
	if n.Attrs.Ints(convWinogradAttr) != nil {
		return convWinogradWeightShape(n, W, sc) // k_conv_winograd.go
	}
	if ps == nil {
		return W.Shape, false, nil
	}
	if W.DType != F32 || len(ps) < 3 || len(ps) > len(sc) {
		return nil, false, n.Errorf("prepacked W must be float32 with a shape of rank 3 or more and of the input's rank, have %v %v", W.DType, ps)
	}
	ws := sc[:len(ps)]
	for i, d := range ps {
		ws[i] = int(d)
	}
	group := int(n.Attrs.Int("group", 1))
	if group < 1 || ws[0]%group != 0 || W.Len() != convPackedLen(ws, group) {
		return nil, false, n.Errorf("prepacked W has %d values, shape %v and group %d want %d", W.Len(), ws, group, convPackedLen(ws, group))
	}
	return ws, true, nil
}

// convPackedLen is the length of W (ONNX shape ws) prepacked for group.
func convPackedLen(ws []int, group int) int {
	if group < 1 || ws[0]%group != 0 {
		return -1
	}
	return group * sgemmPackedASize(ws[0]/group, nnProd(ws[1:]))
}

// convPackWeights packs W (ONNX shape ws, row-major) for group: each group's
// weight matrix through sgemmPackA, one after another.
func convPackWeights(w []float32, ws []int, group int) []float32 {
	Mg, rows := ws[0]/group, nnProd(ws[1:])
	out := make([]float32, 0, convPackedLen(ws, group))
	for g := 0; g < group; g++ {
		out = append(out, sgemmPackA(false, Mg, rows, w[g*Mg*rows:], rows)...)
	}
	return out
}

// convFloat computes one convolution with FusedConv's epilogue (act, the
// residual z, which may be nil): depthwise directly, anything else as an
// im2col and GEMM per image and group. wp (float32 only) is W prepacked by
// convPackWeights, used instead of w when not nil.
func convFloat[T nnFloat](n *Node, x, w []T, wp []float32, bias, z []T, after bool, act fusedAct, y []T, xs []int, M, group int, win nnWin) {
	N, C := xs[0], xs[1]
	in := xs[2:]
	inSize, outSize, kSize := nnProd(in), nnProd(win.out), nnProd(win.k)
	Cg, Mg := C/group, M/group
	rows := Cg * kSize
	if convWinogradTry(n, x, wp, bias, z, after, act, y, xs, M, win) {
		return // 3x3 weights gen stored Winograd-transformed (k_conv_winograd.go)
	}
	if convIsDepthwise2D(C, M, group, in) {
		convDWRun(n, x, w, bias, z, after, act, y, N, C, in, win)
		return
	}
	pointwise := kSize == 1
	for i := range in {
		pointwise = pointwise && win.s[i] == 1 && win.pb[i] == 0 && win.pe[i] == 0
	}
	// Implicit GEMM: float32 2-D (or 1-D) convolutions with prepacked
	// weights pack B blocks straight from the input inside each parallel
	// part (sgemmPackIm2col), no column matrix. Serially it measured
	// slower than im2col2D plus the AVX panel copy (small scattered
	// copies), so it is used only where it takes the serial im2col off
	// the critical path: several threads. The packed values and the GEMM
	// order are the same either way, so results stay bit-identical.
	implicit := !pointwise && wp != nil && len(in) <= 2 && n.Pool.Threads() > 1
	var col []T
	if !pointwise && !implicit {
		col = nnBuf[T](n, 0, rows*outSize)
	}
	// Column blocks: a multiple of the GEMM's 256-column panel, so the
	// split packs no more than one whole-matrix GEMM would, and small
	// enough that Mg x nb outputs stay in L2 for the epilogue.
	nb := max(256, fusedL2Floats/max(Mg, 1)/256*256)
	gsize := 0
	if wp != nil {
		gsize = sgemmPackedASize(Mg, rows)
	}
	for b := 0; b < N; b++ {
		for g := 0; g < group; g++ {
			xg := x[(b*C+g*Cg)*inSize : (b*C+g*Cg+Cg)*inSize]
			base := (b*M + g*Mg) * outSize
			yg := y[base : base+Mg*outSize]
			var zg []T
			if z != nil {
				zg = z[base : base+Mg*outSize]
			}
			src := xg
			if !pointwise && !implicit {
				if len(in) <= 2 {
					im2col2D(xg, col, Cg, in, win)
				} else {
					im2colND(n, xg, col, Cg, in, win)
				}
				src = col
			}
			t := parTaskOf[convGemmTask[T]](n)
			*t = convGemmTask[T]{src: src, y: yg, z: zg, rows: rows, Mg: Mg, g: g, outSize: outSize,
				nb: nb, bias: bias, after: after, act: act, pool: n.Pool}
			if implicit {
				t.im = convIm2colOf(any(xg).([]float32), in, win)
			}
			if wp != nil {
				t.wp = wp[g*gsize : (g+1)*gsize]
			} else {
				t.w = w[g*Mg*rows:]
			}
			parts := 1
			if threads := n.Pool.Threads(); threads > 1 && Mg*outSize*rows >= parMinFlops {
				// Few columns (late, small feature maps): split the
				// output channels instead.
				t.byRows = outSize < 64*threads && Mg >= 12*threads
				if t.byRows {
					parts = min(threads, (Mg+5)/6)
				} else {
					parts = min(threads, (outSize+15)/16)
				}
			}
			n.Pool.Run(parts, t)
			*t = convGemmTask[T]{}
		}
	}
}

// convGemmTask is the GEMM and epilogue of one image and group of a
// convolution, split over output columns (or channels): each part runs
// column blocks of at most nb, each GEMM followed by the epilogue while the
// block is in cache.
type convGemmTask[T nnFloat] struct {
	w, src, y, z         []T
	wp                   []float32
	rows, Mg, g, outSize int
	nb                   int
	byRows               bool
	im                   sgemmIm2col // implicit B when im.x != nil
	pool                 *WorkPool
	bias                 []T
	after                bool
	act                  fusedAct
}

func (t *convGemmTask[T]) runPart(i, parts int) {
	lo, hi := 0, t.outSize
	m0, m1 := 0, t.Mg
	if t.byRows {
		m0, m1 = parSplit(t.Mg, parts, i, 6)
	} else {
		lo, hi = parSplit(t.outSize, parts, i, 16)
	}
	if m0 >= m1 {
		return
	}
	for j0 := lo; j0 < hi; j0 += t.nb {
		cols := min(t.nb, hi-j0)
		if t.im.x != nil {
			sgemmPrepackedAIm2colPart(scratchFor(t.pool, i).pkBufs(), t.Mg, m0, m1-m0, cols, t.rows, 1, t.wp, &t.im, j0,
				0, any(t.y[m0*t.outSize+j0:]).([]float32), t.outSize)
		} else if t.wp != nil {
			sgemmPrepackedAPart(scratchFor(t.pool, i).pkBufs(), t.Mg, m0, m1-m0, cols, t.rows, 1, t.wp, false,
				any(t.src[j0:]).([]float32), t.outSize, 0, any(t.y[m0*t.outSize+j0:]).([]float32), t.outSize)
		} else {
			gemmTPart(t.pool, i, false, false, m1-m0, cols, t.rows, 1, t.w[m0*t.rows:], t.rows, t.src[j0:], t.outSize, 0, t.y[m0*t.outSize+j0:], t.outSize)
		}
		for m := m0; m < m1; m++ {
			off := m*t.outSize + j0
			var bv T
			if t.bias != nil {
				bv = t.bias[t.g*t.Mg+m]
			}
			var zs []T
			if t.z != nil {
				zs = t.z[off : off+cols]
			}
			fusedEpilogue(t.y[off:off+cols], bv, nil, 0, zs, t.after, t.act)
		}
	}
}

// convIm2colOf describes the implicit column matrix of x ([C, H, W] or
// [C, W]) for the window.
func convIm2colOf(x []float32, in []int, win nnWin) sgemmIm2col {
	if len(in) == 1 {
		return sgemmIm2col{x: x, H: 1, W: in[0], KH: 1, KW: win.k[0], OH: 1, OW: win.out[0],
			sh: 1, sw: win.s[0], dh: 1, dw: win.d[0], pw: win.pb[0]}
	}
	return sgemmIm2col{x: x, H: in[0], W: in[1], KH: win.k[0], KW: win.k[1], OH: win.out[0], OW: win.out[1],
		sh: win.s[0], sw: win.s[1], dh: win.d[0], dw: win.d[1], ph: win.pb[0], pw: win.pb[1]}
}

// im2col2D lays out the 1-D or 2-D receptive fields of x ([C, H, W], or
// [C, W]) as col [C*KH*KW, OH*OW], zero where a window covers padding.
func im2col2D[T nnFloat](x, col []T, C int, in []int, win nnWin) {
	H, W, KH, KW, OH, OW := 1, in[0], 1, win.k[0], 1, win.out[0]
	sh, sw, dh, dw, ph, pw := 1, win.s[0], 1, win.d[0], 0, win.pb[0]
	if len(in) == 2 {
		H, W, KH, KW, OH, OW = in[0], in[1], win.k[0], win.k[1], win.out[0], win.out[1]
		sh, sw, dh, dw, ph, pw = win.s[0], win.s[1], win.d[0], win.d[1], win.pb[0], win.pb[1]
	}
	for c := 0; c < C; c++ {
		xc := x[c*H*W : (c+1)*H*W]
		for kh := 0; kh < KH; kh++ {
			for kw := 0; kw < KW; kw++ {
				row := col[((c*KH+kh)*KW+kw)*OH*OW:][:OH*OW]
				// Output columns whose input column lies inside [0, W).
				off := kw*dw - pw
				lo, hi := 0, OW
				for lo < OW && lo*sw+off < 0 {
					lo++
				}
				for hi > lo && (hi-1)*sw+off >= W {
					hi--
				}
				for oh := 0; oh < OH; oh++ {
					ih := oh*sh - ph + kh*dh
					dst := row[oh*OW : oh*OW+OW]
					if ih < 0 || ih >= H {
						clear(dst)
						continue
					}
					xr := xc[ih*W : ih*W+W]
					clear(dst[:lo])
					// lo == hi when the tap sees only padding (a kernel
					// longer than the input): lo+off may then be negative.
					if sw == 1 && lo < hi {
						copy(dst[lo:hi], xr[lo+off:hi+off])
					} else {
						for ow := lo; ow < hi; ow++ {
							dst[ow] = xr[ow*sw+off]
						}
					}
					clear(dst[hi:])
				}
			}
		}
	}
}

// im2colND is im2col for any number of spatial dims.
func im2colND[T nnFloat](n *Node, x, col []T, C int, in []int, win nnWin) {
	nd := len(in)
	if nd == 3 {
		im2col3D(x, col, C, in, win)
		return
	}
	idx := nnBuf[int](n, 1, 2*nd)
	kidx, oidx := idx[:nd], idx[nd:]
	kSize, outSize := nnProd(win.k), nnProd(win.out)
	inSize := nnProd(in)
	for c := 0; c < C; c++ {
		xc := x[c*inSize : (c+1)*inSize]
		clear(kidx)
		for kf := 0; kf < kSize; kf++ {
			row := col[(c*kSize+kf)*outSize:][:outSize]
			clear(oidx)
			for p := range row {
				off, ok := 0, true
				for d := 0; d < nd; d++ {
					i := oidx[d]*win.s[d] - win.pb[d] + kidx[d]*win.d[d]
					if i < 0 || i >= in[d] {
						ok = false
						break
					}
					off = off*in[d] + i
				}
				if ok {
					row[p] = xc[off]
				} else {
					row[p] = 0
				}
				nnNext(oidx, win.out)
			}
			nnNext(kidx, win.k)
		}
	}
}

// ConvTranspose is ONNX ConvTranspose (versions 1-11): one GEMM per group
// into column form, then a scatter-add (col2im) into the output.
func ConvTranspose(n *Node) error {
	if ok, err := nnViaF32(n, ConvTranspose); ok {
		return err
	}
	X, W, B := n.Input(0), n.Input(1), n.Input(2)
	if X == nil || W == nil {
		return n.Errorf("needs inputs X and W")
	}
	r := len(X.Shape)
	if r < 3 || len(W.Shape) != r {
		return n.Errorf("X %v and W %v must have the same rank, at least 3", X.ShapeString(), W.ShapeString())
	}
	if W.DType != X.DType || B != nil && B.DType != X.DType {
		return n.Errorf("inputs must share one dtype")
	}
	nd := r - 2
	group := int(n.Attrs.Int("group", 1))
	N, C := X.Shape[0], X.Shape[1]
	if group < 1 || W.Shape[0] != C || C%group != 0 {
		return n.Errorf("X %v, W %v and group %d do not match", X.ShapeString(), W.ShapeString(), group)
	}
	M := W.Shape[1] * group
	if B != nil && (len(B.Shape) != 1 || B.Shape[0] != M) {
		return n.Errorf("B %v must have shape [%d]", B.ShapeString(), M)
	}
	sc := n.ScratchInts(8*nd + 2)
	win := nnWin{k: sc[:nd], s: sc[nd : 2*nd], d: sc[2*nd : 3*nd], pb: sc[3*nd : 4*nd], pe: sc[4*nd : 5*nd], out: sc[5*nd : 6*nd]}
	idx := sc[6*nd : 7*nd]
	shape := sc[7*nd : 8*nd+2]
	copy(win.k, W.Shape[2:])
	strides, dil, pads := n.Attrs.Ints("strides"), n.Attrs.Ints("dilations"), n.Attrs.Ints("pads")
	outPad, outShape := n.Attrs.Ints("output_padding"), n.Attrs.Ints("output_shape")
	if len(outShape) == nd+2 {
		outShape = outShape[2:]
	}
	if len(strides) != 0 && len(strides) != nd || len(dil) != 0 && len(dil) != nd || len(pads) != 0 && len(pads) != 2*nd ||
		len(outPad) != 0 && len(outPad) != nd || len(outShape) != 0 && len(outShape) != nd {
		return n.Errorf("strides %v, dilations %v, pads %v, output_padding %v or output_shape %v do not match %d spatial dims",
			strides, dil, pads, outPad, outShape, nd)
	}
	autoPad := n.Attrs.String("auto_pad", "NOTSET")
	same := autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER"
	in := X.Shape[2:]
	for i := 0; i < nd; i++ {
		win.s[i], win.d[i] = 1, 1
		if strides != nil {
			win.s[i] = int(strides[i])
		}
		if dil != nil {
			win.d[i] = int(dil[i])
		}
		op := 0
		if outPad != nil {
			op = int(outPad[i])
		}
		full := win.s[i]*(in[i]-1) + op + (win.k[i]-1)*win.d[i] + 1
		switch {
		case outShape != nil || same:
			out := in[i] * win.s[i]
			if outShape != nil {
				out = int(outShape[i])
			}
			total := full - out
			half := total >> 1 // floor division: total may be negative
			if autoPad == "SAME_UPPER" {
				win.pb[i], win.pe[i] = half, total-half
			} else {
				win.pb[i], win.pe[i] = total-half, half
			}
			win.out[i] = out
		default:
			win.pb[i], win.pe[i] = 0, 0
			if pads != nil && autoPad != "VALID" {
				win.pb[i], win.pe[i] = int(pads[i]), int(pads[i+nd])
			}
			win.out[i] = full - win.pb[i] - win.pe[i]
		}
		if win.out[i] <= 0 {
			return n.Errorf("output size %d in spatial dim %d is not positive", win.out[i], i)
		}
	}
	shape[0], shape[1] = N, M
	copy(shape[2:], win.out)
	Y := n.Out[0]
	nnResize(Y, X.DType, shape...)
	switch x := X.Data.(type) {
	case []float32:
		convTransposeFloat(n, x, W.F32(), B, Y.F32(), X.Shape, M, group, win, idx)
	case []float64:
		convTransposeFloat(n, x, W.F64(), B, Y.F64(), X.Shape, M, group, win, idx)
	default:
		return n.Errorf("unsupported dtype %v", X.DType)
	}
	return nil
}

func convTransposeFloat[T nnFloat](n *Node, x, w []T, B *Tensor, y []T, xs []int, M, group int, win nnWin, idx []int) {
	N, C := xs[0], xs[1]
	in := xs[2:]
	nd := len(in)
	if nd <= 2 {
		convTranspose2D(n, x, w, B, y, xs, M, group, win)
		return
	}
	inSize, outSize, kSize := nnProd(in), nnProd(win.out), nnProd(win.k)
	Cg, Mg := C/group, M/group
	rows := Mg * kSize
	col := nnBuf[T](n, 0, rows*inSize)
	var bias []T
	if B != nil {
		bias = B.Data.([]T)
	}
	iidx := nnBuf[int](n, 1, nd)
	for b := 0; b < N; b++ {
		for g := 0; g < group; g++ {
			xg := x[(b*C+g*Cg)*inSize : (b*C+g*Cg+Cg)*inSize]
			yg := y[(b*M+g*Mg)*outSize : (b*M+g*Mg+Mg)*outSize]
			gemmT(true, false, rows, inSize, Cg, 1, w[g*Cg*rows:], rows, xg, inSize, 0, col, inSize)
			for m := 0; m < Mg; m++ {
				ym := yg[m*outSize : (m+1)*outSize]
				bv := T(0)
				if bias != nil {
					bv = bias[g*Mg+m]
				}
				for j := range ym {
					ym[j] = bv
				}
				clear(idx)
				for kf := 0; kf < kSize; kf++ {
					row := col[(m*kSize+kf)*inSize:][:inSize]
					clear(iidx)
					for _, v := range row {
						off, ok := 0, true
						for d := 0; d < nd; d++ {
							o := iidx[d]*win.s[d] - win.pb[d] + idx[d]*win.d[d]
							if o < 0 || o >= win.out[d] {
								ok = false
								break
							}
							off = off*win.out[d] + o
						}
						if ok {
							ym[off] += v
						}
						nnNext(iidx, in)
					}
					nnNext(idx, win.k)
				}
			}
		}
	}
}

// convTranspose2D is ConvTranspose over 1-D or 2-D images: per image, the
// output channels are split over the pool's parts; a part takes blocks
// of its channels (within one group), computes their column rows
// (W_g^T's rows of those channels times the group's input planes, one
// GEMM) and scatters each kernel tap's row into the output planes, a
// strided run per input row (col2im). Each output channel is computed by
// one part in one order, so results do not depend on the thread count.
func convTranspose2D[T nnFloat](n *Node, x, w []T, B *Tensor, y []T, xs []int, M, group int, win nnWin) {
	t := parTaskOf[convTTask[T]](n)
	*t = convTTask[T]{x: x, w: w, y: y, N: xs[0], C: xs[1], M: M, group: group}
	t.H, t.W, t.OH, t.OW = 1, xs[2], 1, win.out[0]
	t.kh, t.kw, t.sh, t.sw, t.dh, t.dw, t.ph, t.pw = 1, win.k[0], 1, win.s[0], 1, win.d[0], 0, win.pb[0]
	if len(xs) == 4 {
		t.H, t.W, t.OH, t.OW = xs[2], xs[3], win.out[0], win.out[1]
		t.kh, t.kw, t.sh, t.sw, t.dh, t.dw, t.ph, t.pw = win.k[0], win.k[1], win.s[0], win.s[1], win.d[0], win.d[1], win.pb[0], win.pb[1]
	}
	if B != nil {
		t.bias = B.Data.([]T)
	}
	kk, inSize := t.kh*t.kw, t.H*t.W
	Mg := M / group
	// Channel blocks of at least 256 column rows (each block's GEMM packs
	// the group's input planes again: unet's 2x2 up-convolution at
	// 112x112 ran 2.3x slower with one channel a block), more while they
	// stay within about 256 KiB.
	t.cb = min(Mg, max((256+kk-1)/kk, (64<<10)/max(1, kk*inSize)))
	parts := 1
	if threads := n.Pool.Threads(); threads > 1 && M*kk*inSize*(t.C/group) >= parMinFlops {
		parts = min(threads, M)
	}
	t.col = nnBuf[T](n, 0, parts*t.cb*kk*inSize)
	for b := 0; b < t.N; b++ {
		t.b = b
		n.Pool.Run(parts, t)
	}
	*t = convTTask[T]{}
}

// convTTask is one image of convTranspose2D.
type convTTask[T nnFloat] struct {
	x, w, y, bias, col     []T
	N, C, M, group, b, cb  int
	H, W, OH, OW           int
	kh, kw, sh, sw, dh, dw int
	ph, pw                 int
}

func (t *convTTask[T]) runPart(i, parts int) {
	kk, inSize, outSize := t.kh*t.kw, t.H*t.W, t.OH*t.OW
	Cg, Mg := t.C/t.group, t.M/t.group
	rows := Mg * kk
	col := t.col[i*t.cb*kk*inSize : (i+1)*t.cb*kk*inSize]
	m0, m1 := parSplit(t.M, parts, i, 1)
	for m := m0; m < m1; {
		g := m / Mg
		e := min(m1, (g+1)*Mg, m+t.cb)
		xg := t.x[(t.b*t.C+g*Cg)*inSize : (t.b*t.C+g*Cg+Cg)*inSize]
		r0 := (m - g*Mg) * kk
		gemmT(true, false, (e-m)*kk, inSize, Cg, 1, t.w[g*Cg*rows+r0:], rows, xg, inSize, 0, col, inSize)
		for c := m; c < e; c++ {
			ym := t.y[(t.b*t.M+c)*outSize : (t.b*t.M+c+1)*outSize]
			var bv T
			if t.bias != nil {
				bv = t.bias[c]
			}
			for j := range ym {
				ym[j] = bv
			}
			for ki := 0; ki < t.kh; ki++ {
				for kj := 0; kj < t.kw; kj++ {
					row := col[((c-m)*kk+ki*t.kw+kj)*inSize:][:inSize]
					t.scatter(ym, row, ki, kj)
				}
			}
		}
		m = e
	}
}

// scatter adds tap (ki, kj)'s column row (one value per input pixel) into
// output plane ym: input (ih, iw) lands on (ih*sh - ph + ki*dh, iw*sw - pw
// + kj*dw) when that is inside the plane.
func (t *convTTask[T]) scatter(ym, row []T, ki, kj int) {
	// Input columns whose output column is in [0, OW).
	ow0 := kj*t.dw - t.pw
	lo := 0
	if ow0 < 0 {
		lo = (-ow0 + t.sw - 1) / t.sw
	}
	hi := t.W
	if last := t.OW - 1 - ow0; last < 0 {
		hi = 0
	} else {
		hi = min(hi, last/t.sw+1)
	}
	if lo >= hi {
		return
	}
	for ih := 0; ih < t.H; ih++ {
		oh := ih*t.sh - t.ph + ki*t.dh
		if oh < 0 || oh >= t.OH {
			continue
		}
		xr := row[ih*t.W+lo : ih*t.W+hi]
		yr := ym[oh*t.OW+ow0+lo*t.sw:]
		if t.sw == 1 {
			yr = yr[:len(xr)]
			for j, v := range xr {
				yr[j] += v
			}
			continue
		}
		for j, v := range xr {
			yr[j*t.sw] += v
		}
	}
}

// im2col3D is im2colND for 3-D images (Conv3D, mc3_18): each (channel,
// tap) row, output row after output row, a copy (unit stride) or a
// strided gather of the input row's in-range columns, zeros around.
func im2col3D[T nnFloat](x, col []T, C int, in []int, win nnWin) {
	D, H, W := in[0], in[1], in[2]
	KD, KH, KW := win.k[0], win.k[1], win.k[2]
	OD, OH, OW := win.out[0], win.out[1], win.out[2]
	sd, sh, sw := win.s[0], win.s[1], win.s[2]
	dd, dh, dw := win.d[0], win.d[1], win.d[2]
	pd, ph, pw := win.pb[0], win.pb[1], win.pb[2]
	outSize := OD * OH * OW
	for c := 0; c < C; c++ {
		xc := x[c*D*H*W : (c+1)*D*H*W]
		for kd := 0; kd < KD; kd++ {
			for kh := 0; kh < KH; kh++ {
				for kw := 0; kw < KW; kw++ {
					row := col[(((c*KD+kd)*KH+kh)*KW+kw)*outSize:][:outSize]
					off := kw*dw - pw
					lo, hi := 0, OW
					for lo < OW && lo*sw+off < 0 {
						lo++
					}
					for hi > lo && (hi-1)*sw+off >= W {
						hi--
					}
					for od := 0; od < OD; od++ {
						id := od*sd - pd + kd*dd
						plane := row[od*OH*OW : (od+1)*OH*OW]
						if id < 0 || id >= D {
							clear(plane)
							continue
						}
						for oh := 0; oh < OH; oh++ {
							ih := oh*sh - ph + kh*dh
							dst := plane[oh*OW : oh*OW+OW]
							if ih < 0 || ih >= H {
								clear(dst)
								continue
							}
							xr := xc[(id*H+ih)*W : (id*H+ih)*W+W]
							clear(dst[:lo])
							if sw == 1 && lo < hi {
								copy(dst[lo:hi], xr[lo+off:hi+off])
							} else {
								for ow := lo; ow < hi; ow++ {
									dst[ow] = xr[ow*sw+off]
								}
							}
							clear(dst[hi:])
						}
					}
				}
			}
		}
	}
}
