package templates

// PoolNHWC is cuvil::PoolNHWC: MaxPool (mode "max"), AveragePool ("avg")
// or GlobalAveragePool ("global_avg") of X [N,H,W,C] into [N,H',W',C],
// vectorised over channels.
func PoolNHWC(n *Node) error {
	X := n.Input(0)
	if X == nil {
		return n.Errorf("needs input X")
	}
	if X.DType != F32 || len(X.Shape) != 4 {
		return n.Errorf("X must be float32 of rank 4, have %v %v", X.DType, X.ShapeString())
	}
	N, H, W, C := X.Shape[0], X.Shape[1], X.Shape[2], X.Shape[3]
	x, Y := X.F32(), n.Out[0]
	mode := n.Attrs.String("mode", "")
	if mode == "global_avg" {
		nnResize(Y, F32, N, 1, 1, C)
		poolGlobalAvg(n, Y.F32(), x, N, H*W, C)
		return nil
	}
	var m int
	switch mode {
	case "max":
		m = nhwcModeMax
	case "avg":
		m = nhwcModeAvg
	default:
		return n.Errorf("unknown mode %q (want max, avg or global_avg)", mode)
	}
	ks := n.Attrs.Ints("kernel_shape")
	if len(ks) != 2 {
		return n.Errorf("kernel_shape %v must have 2 values", ks)
	}
	sc := n.ScratchInts(16)
	k := sc[12:14]
	k[0], k[1] = int(ks[0]), int(ks[1])
	win, err := nnWindow(n, X.Shape[1:3], k, n.Attrs.Int("ceil_mode", 0) != 0, sc[:12])
	if err != nil {
		return err
	}
	nnResize(Y, F32, N, win.out[0], win.out[1], C)
	g := nhwcGeomOf(N, H, W, C, win)
	t := parTaskOf[nhwcWinTask](n)
	*t = nhwcWinTask{g: g, mode: m, x: x, y: Y.F32(), avgPad: n.Attrs.Int("count_include_pad", 0) != 0}
	nhwcRunWin(n, t, N*g.OH*g.OW*C*g.kh*g.kw)
	*t = nhwcWinTask{}
	return nil
}

// poolGlobalBlock is the pixels a block of GlobalAveragePool sums on its
// own (poolGlobalAvg); fixed, so the order of the sums is too.
const poolGlobalBlock = 128

// poolGlobalAvg sets y [N, C] to the averages of x's N images of hw pixels
// (NHWC) over the session pool. Each block of poolGlobalBlock pixels is
// summed by the average kernel of nhwcTaps (one output pixel, every block
// pixel a tap: each channel block's sums stay in registers over the
// block); the parts split the blocks, and the block sums are added in
// block order and scaled afterwards. The order of the additions depends
// on hw only, so results are the same at any thread count; the blocks
// split the work by pixels, so each part reads its own cache lines.
func poolGlobalAvg(n *Node, y, x []float32, N, hw, C int) {
	if N*hw*C == 0 {
		clear(y)
		return
	}
	t := parTaskOf[poolGlobalTask](n)
	nb := (hw + poolGlobalBlock - 1) / poolGlobalBlock
	*t = poolGlobalTask{x: x, y: y, N: N, HW: hw, C: C, nb: nb, taps: nnBuf[int](n, 0, 2*min(hw, poolGlobalBlock))}
	if nb > 1 {
		t.sums = nnBuf[float32](n, 1, N*nb*C)
	}
	for p := range len(t.taps) / 2 {
		t.taps[2*p], t.taps[2*p+1] = p*C, 0
	}
	parts := 1
	if threads := n.Pool.Threads(); threads > 1 && N*hw*C >= parMinFlops {
		parts = min(threads, N*nb)
	}
	n.Pool.Run(parts, t)
	if nb > 1 {
		scale := 1 / float32(hw)
		for b := range N {
			yb, sb := y[b*C:(b+1)*C], t.sums[b*nb*C:(b+1)*nb*C]
			copy(yb, sb[:C])
			for k := 1; k < nb; k++ {
				axpy32(yb, sb[k*C:(k+1)*C], 1) // y + 1*s: the sum's rounding
			}
			scale32(yb, scale)
		}
	}
	*t = poolGlobalTask{}
}

// poolGlobalTask is poolGlobalAvg's work: units of one block of one image,
// each summed into sums (or, one block an image, averaged into y).
type poolGlobalTask struct {
	x, y, sums   []float32
	N, HW, C, nb int
	taps         []int
}

func (t *poolGlobalTask) runPart(i, parts int) {
	u0, u1 := parSplit(t.N*t.nb, parts, i, 1)
	C := t.C
	for u := u0; u < u1; u++ {
		b, k := u/t.nb, u%t.nb
		p0 := k * poolGlobalBlock
		cnt := min(poolGlobalBlock, t.HW-p0)
		x := t.x[(b*t.HW+p0)*C : (b*t.HW+p0+cnt)*C]
		if t.nb == 1 {
			nhwcTaps(nhwcModeAvg, t.y[b*C:(b+1)*C], x, t.taps[:2*cnt], nil, nil, C, 1, 0, 1/float32(t.HW), 0, 0)
			continue
		}
		nhwcTaps(nhwcModeAvg, t.sums[u*C:(u+1)*C], x, t.taps[:2*cnt], nil, nil, C, 1, 0, 1, 0, 0)
	}
}
