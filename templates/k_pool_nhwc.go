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
		y := Y.F32()
		scale := 1 / float32(H*W)
		for b := 0; b < N; b++ {
			yb := y[b*C : (b+1)*C]
			clear(yb)
			for p := 0; p < H*W; p++ {
				off := (b*H*W + p) * C
				axpy32(yb, x[off:off+C], 1)
			}
			for j := range yb {
				yb[j] *= scale
			}
		}
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
