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
		if N*H*W*C == 0 {
			clear(Y.F32())
			return nil
		}
		t := parTaskOf[poolGlobalTask](n)
		*t = poolGlobalTask{x: x, y: Y.F32(), N: N, HW: H * W, C: C, taps: nnBuf[int](n, 0, 2*H*W)}
		for p := range H * W {
			t.taps[2*p], t.taps[2*p+1] = p*C, 0
		}
		parts := 1
		if threads := n.Pool.Threads(); threads > 1 && N*H*W*C >= parMinFlops {
			parts = min(threads, (C+15)/16)
		}
		n.Pool.Run(parts, t)
		*t = poolGlobalTask{}
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

// poolGlobalTask is GlobalAveragePool of N images of HW pixels of C
// channels (NHWC): the average kernel of nhwcTaps with one output pixel
// and every input pixel a tap (taps: (p*C, 0) pairs), so each channel
// block's sums stay in registers over all pixels. Parts split the channels
// at multiples of 16, so every channel takes the same kernel (ZMM, YMM or
// Go) at any thread count, and each channel's sum runs over the pixels in
// order: results do not depend on the split.
type poolGlobalTask struct {
	x, y     []float32
	N, HW, C int
	taps     []int
}

func (t *poolGlobalTask) runPart(i, parts int) {
	c0, c1 := parSplit(t.C, parts, i, 16)
	if c0 >= c1 {
		return
	}
	scale := 1 / float32(t.HW)
	for b := range t.N {
		x := t.x[b*t.HW*t.C+c0 : (b+1)*t.HW*t.C]
		nhwcTaps(nhwcModeAvg, t.y[b*t.C+c0:b*t.C+c1], x, t.taps, nil, nil, c1-c0, 1, 0, scale, 0, 0)
	}
}
