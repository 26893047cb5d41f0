package templates

// 3-D convolutions channels last: the layout pass (passes/layout.go) runs
// chains of 5-D convolutions (video networks: torchvision's r3d/mc3/r2plus1d)
// as cuvil::FusedConv with layout=NHWC on X [N,T,H,W,C] (NDHWC), writing
// Y [N,T',H',W',M]. Each frame is an NHWC map, so the 2-D NHWC paths run
// on them: a kernel with one tap in time, unit stride and no time padding
// (kT = 1: a (1,kh,kw) conv, a pointwise one) is the 2-D convolution of
// N*T frames, as it is; otherwise the GEMM's rows are the output pixels
// of every output frame and its K runs over the kt taps' frames (the
// im2col gathers tap after tap, zeros for frames in the padding; W' is
// packed [(kt, kh, kw, c), m]), and 3x3 spatial kernels with unit spatial
// strides run Winograd with the kt frames' transformed windows side by
// side in V (convWinogradNHWCT): one GEMM per point with K = kt*C, the
// epilogue (bias, residual, activation) after the sum over all taps.
// Grouped convolutions (not depthwise) run nhwcConvTask.runGroups's
// per-group GEMMs on the same gathered rows.

// nhwcSpatial returns window w3 (time, height, width) without its time
// axis.
func nhwcSpatial(w3 nnWin) nnWin {
	return nnWin{k: w3.k[1:3], s: w3.s[1:3], d: w3.d[1:3], pb: w3.pb[1:3], pe: w3.pe[1:3], out: w3.out[1:3]}
}

// nhwcFlatTime reports whether window w3's time axis maps frame t to
// frame t (one tap, stride 1, no padding): the convolution is then the
// 2-D one of every frame.
func nhwcFlatTime(w3 nnWin) bool {
	return w3.k[0] == 1 && w3.s[0] == 1 && w3.pb[0] == 0 && w3.pe[0] == 0
}

// fusedConvNHWC3D is fusedConvNHWC for X [N,T,H,W,C] and W of ONNX shape
// ws [M, C/group, kT, kH, kW] (packed by nhwcPackWeights when packed); sc
// holds 24 ints. Any group but depthwise (the grouped GEMMs of
// nhwcConvTask.runGroups on the gathered frames' windows).
func fusedConvNHWC3D(n *Node, X, W, B, Z *Tensor, act fusedAct, ws []int, packed bool, sc []int) error {
	N, T, H, Wd, C := X.Shape[0], X.Shape[1], X.Shape[2], X.Shape[3], X.Shape[4]
	M := ws[0]
	group := int(n.Attrs.Int("group", 1))
	dw := group == C && M == C && ws[1] == 1 && group > 1
	if W.DType != F32 || dw || group < 1 || C%group != 0 || M%group != 0 || ws[1]*group != C {
		return n.Errorf("3-D NHWC convolutions take float32 W and any group but depthwise: X %v, W %v, group %d", X.ShapeString(), ws, group)
	}
	if n.Attrs.String("in_layout", "NHWC") != "NHWC" || n.Input(5) != nil || n.Attrs.Int("out_channels", 0) != 0 {
		return n.Errorf("in_layout, input Scale and out_channels need a 2-D convolution")
	}
	if packed && W.Len() != nhwcPackedLen(ws, group) {
		return n.Errorf("prepacked W has %d values, want %d for shape %v", W.Len(), nhwcPackedLen(ws, group), ws)
	}
	if B != nil && B.Len() != M {
		return n.Errorf("B %v must have %d values", B.ShapeString(), M)
	}
	w3, err := nnWindow(n, X.Shape[1:4], ws[2:5], false, sc[:18])
	if err != nil {
		return err
	}
	shape := sc[18:23]
	shape[0], shape[1], shape[2], shape[3], shape[4] = N, w3.out[0], w3.out[1], w3.out[2], M
	y, z, bias, ldy, err := nhwcOutput(n, Z, B, shape)
	if err != nil {
		return err
	}
	wp := W.F32()
	if !packed {
		c := nnCacheOf(n)
		dst, _ := c.slots[1].([]float32)
		tmp, _ := c.slots[4].([]float32)
		wp, tmp, _ = nhwcPackWeights(dst, wp, ws, group, tmp)
		c.slots[1], c.slots[4] = wp, tmp
	}
	g := nhwcGeomOf(N*T, H, Wd, C, nhwcSpatial(w3))
	if !nhwcFlatTime(w3) {
		g.N = N * w3.out[0]
		g.kt, g.st, g.dt, g.pt, g.T, g.OT = w3.k[0], w3.s[0], w3.d[0], w3.pb[0], T, w3.out[0]
	}
	after := n.Attrs.Int("residual_after_activation", 0) != 0
	nhwcConvGemm(n, g, X.F32(), wp, nil, bias, z, y, ldy, M, group, group > 1, false, after, act, nil, false)
	return nil
}

// im2col3D is im2col for a geometry with a time axis (g.kt > 0): row r
// of output frame f = image*OT + ot gathers, for each tap i, the window
// of input frame ot*st - pt + i*dt (zeros when that frame is padding).
func (t *nhwcConvTask) im2col3D(col []float32, a, b int) {
	g := &t.g
	kk := g.kh * g.kw * g.C
	for r := a; r < b; r++ {
		ow := r % g.OW
		oh := r / g.OW % g.OH
		f := r / (g.OW * g.OH)
		img, ot := f/g.OT, f%g.OT
		dst := col[(r-a)*t.K : (r-a+1)*t.K]
		for i := 0; i < g.kt; i++ {
			d := dst[i*kk : (i+1)*kk]
			it := ot*g.st - g.pt + i*g.dt
			if it < 0 || it >= g.T {
				clear(d)
				continue
			}
			t.gather(d, img*g.T+it, oh, ow)
		}
	}
}

// wnPack3D is wnPack for 3-D weights w [M, C, kt, 3, 3]: the filters of
// [M, kt*C, 3, 3] whose input channel i*C + c is channel c of tap i, so
// that each U[xi] stacks the taps' [C, M] matrices (convWinogradNHWCT).
func wnPack3D(w []float32, M, C, kt, f int) []float32 {
	w2 := make([]float32, len(w))
	for m := 0; m < M; m++ {
		for c := 0; c < C; c++ {
			for i := 0; i < kt; i++ {
				copy(w2[((m*kt+i)*C+c)*9:][:9], w[((m*C+c)*kt+i)*9:][:9])
			}
		}
	}
	return wnPack(w2, M, kt*C, f)
}

// fusedConvWinogradNHWC3D is fusedConvWinogradNHWC for X [N,T,H,W,C] and
// the Winograd shape ps [M, C, kT, 3, 3] (W: wnPack3D's result): unit
// strides and dilations in H and W, any in time.
func fusedConvWinogradNHWC3D(n *Node, X, W, B, Z *Tensor, act fusedAct, ps []int64) error {
	if len(X.Shape) != 5 || len(ps) != 5 || ps[3] != 3 || ps[4] != 3 {
		return n.Errorf("3-D Winograd needs X of rank 5 and W shape [M, C, kT, 3, 3], have %v and %v", X.ShapeString(), ps)
	}
	M, C, kt := int(ps[0]), int(ps[1]), int(ps[2])
	if X.Shape[4] != C || M < 1 || kt < 1 {
		return n.Errorf("X %v has %d channels, Winograd W shape %v wants %d", X.ShapeString(), X.Shape[4], ps, C)
	}
	f := 4
	if W.Len() == wnPackedLen(M, kt*C, 2) {
		f = 2
	}
	if W.Len() != wnPackedLen(M, kt*C, f) {
		return n.Errorf("Winograd W has %d values, shape %v wants %d (F(4x4)) or %d (F(2x2))", W.Len(), ps, wnPackedLen(M, kt*C, 4), wnPackedLen(M, kt*C, 2))
	}
	ok := n.Attrs.Int("group", 1) == 1
	for _, a := range [...]string{"strides", "dilations"} {
		if v := n.Attrs.Ints(a); v != nil {
			ok = ok && len(v) == 3 && v[1] == 1 && v[2] == 1
		}
	}
	if !ok {
		return n.Errorf("Winograd W needs group 1 and unit strides and dilations in H and W")
	}
	if B != nil && B.Len() != M {
		return n.Errorf("B %v must have %d values", B.ShapeString(), M)
	}
	sc := n.ScratchInts(48)
	k := sc[24:27]
	k[0], k[1], k[2] = kt, 3, 3
	w3, err := nnWindow(n, X.Shape[1:4], k, false, sc[:18])
	if err != nil {
		return err
	}
	N, T := X.Shape[0], X.Shape[1]
	shape := sc[18:23]
	shape[0], shape[1], shape[2], shape[3], shape[4] = N, w3.out[0], w3.out[1], w3.out[2], M
	y, z, bias, ldy, err := nhwcOutput(n, Z, B, shape)
	if err != nil {
		return err
	}
	after := n.Attrs.Int("residual_after_activation", 0) != 0
	tm := wnTime{kt: kt, st: w3.s[0], dt: w3.d[0], pt: w3.pb[0], T: T, OT: w3.out[0]}
	if nhwcFlatTime(w3) {
		N, tm = N*T, wnTime{kt: 1, st: 1, dt: 1, T: 1, OT: 1}
	}
	convWinogradNHWCT(n, X.F32(), W.F32(), bias, z, y, ldy, N, X.Shape[2], X.Shape[3], C, M, f, nhwcSpatial(w3), after, act, tm)
	return nil
}
