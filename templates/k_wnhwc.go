package templates

// Winograd F(4x4, 3x3) for cuvil::FusedConv with layout=NHWC: a 3x3
// kernel, unit strides and dilations, group 1, any pads, float32. Channels
// lie in the vector lanes, so the transforms need no transposes. Per 4x4
// block of output (a tile), the input transform V = B^T d B of its 6x6
// input window gives 36 points xi, each a row of C channels: V[xi] is a
// [tiles, C] matrix. Then 36 GEMMs Mo[xi] = V[xi] x U[xi], U[xi] [C, M]
// prepacked at compile time as the SGEMM's B panels (so V is read in place
// where the AVX-512 direct kernels run and nothing is packed), and the
// output transform A^T Mo A writes each tile's 4x4 pixels straight into Y
// with FusedConv's epilogue (bias, residual, activation).
//
// Tiles are processed in blocks whose V and Mo stay near L2's size; each
// block runs three sections on the session pool: input transforms split
// by tiles, the 36 GEMMs split by points (each thread streams its own
// share of U), output transforms split by tiles. Every value is computed
// by one part in an order that does not depend on the split, so results
// are the same at any thread count.

// wnPackedLen is the length of wnPack's result: 36 packed [C, M] B
// matrices.
func wnPackedLen(M, C int) int { return wgPoints * sgemmPackedBSize(C, M) }

// wgFilter returns the 36 points of G g G^T for one 3x3 filter g
// (row-major), computed in float64.
func wgFilter(g []float32) [wgPoints]float32 {
	var t [6][3]float64 // G g
	for i := 0; i < 6; i++ {
		for j := 0; j < 3; j++ {
			t[i][j] = wgG[i][0]*float64(g[j]) + wgG[i][1]*float64(g[3+j]) + wgG[i][2]*float64(g[6+j])
		}
	}
	var u [wgPoints]float32
	for i := 0; i < 6; i++ {
		for j := 0; j < 6; j++ {
			u[i*6+j] = float32(t[i][0]*wgG[j][0] + t[i][1]*wgG[j][1] + t[i][2]*wgG[j][2])
		}
	}
	return u
}

// wnPack transforms W (ONNX shape [M, C, 3, 3]) into U[xi][c][m] =
// (G g G^T)[xi] of filter (m, c), each [C, M] matrix packed by sgemmPackB,
// one after another.
func wnPack(w []float32, M, C int) []float32 {
	all := make([][wgPoints]float32, M*C)
	for mc := range all {
		all[mc] = wgFilter(w[mc*9 : mc*9+9])
	}
	out := make([]float32, 0, wnPackedLen(M, C))
	u := make([]float32, C*M)
	for xi := 0; xi < wgPoints; xi++ {
		for m := 0; m < M; m++ {
			for c := 0; c < C; c++ {
				u[c*M+m] = all[m*C+c][xi]
			}
		}
		out = append(out, sgemmPackB(false, C, M, u, M)...)
	}
	return out
}

// wnBlockFloats is the V plus Mo floats one block of tiles aims to keep
// in L2 (1 MiB).
const wnBlockFloats = 256 << 10

// Sections of a wnTask.
const (
	wnInputs = iota
	wnGEMMs
	wnOutputs
)

// wnTask is one NHWC Winograd convolution; t0 and nt are the block of
// tiles the current section works on.
type wnTask struct {
	x, u, bias, z, y []float32
	v, mo            []float32 // V[xi] at v[xi*tb*C:], Mo[xi] at mo[xi*tb*M:]
	zeros, dummy     []float32 // read for pads (and z past the map); written past the map, per part
	N, H, W, C, M    int
	OH, OW, ph, pw   int
	tilesH, tilesW   int
	tb, t0, nt       int
	section          int
	zmode            int
	lo, hi           float32
	clamp, after     bool
	act              fusedAct
	pool             *WorkPool
}

// convWinogradNHWC runs the convolution of X [N,H,W,C] (window win) with
// wnPack's weights u into Y [N,OH,OW,M], with FusedConv's epilogue.
func convWinogradNHWC(n *Node, x, u, bias, z, y []float32, N, H, W, C, M int, win nnWin, after bool, act fusedAct) {
	OH, OW := win.out[0], win.out[1]
	tilesH, tilesW := (OH+3)/4, (OW+3)/4
	tiles := N * tilesH * tilesW
	if tiles == 0 || M == 0 {
		return
	}
	// Blocks: whole 6-row GEMM tiles, as many as keep V and Mo near L2's
	// size, at least 48 (so each U[xi] streamed serves enough rows).
	tb := max(48, wnBlockFloats/(wgPoints*(C+M))/sgemmPkMR*sgemmPkMR)
	tb = min(tb, tiles)
	threads := n.Pool.Threads()
	t := parTaskOf[wnTask](n)
	*t = wnTask{x: x, u: u, bias: bias, z: z, y: y, N: N, H: H, W: W, C: C, M: M, OH: OH, OW: OW,
		ph: win.pb[0], pw: win.pb[1], tilesH: tilesH, tilesW: tilesW, tb: tb, after: after, act: act, pool: n.Pool}
	buf := nnBuf[float32](n, 2, wgPoints*tb*(C+M)+max(C, M)+threads*M)
	t.v, t.mo = buf[:wgPoints*tb*C], buf[wgPoints*tb*C:wgPoints*tb*(C+M)]
	rest := buf[wgPoints*tb*(C+M):]
	t.zeros, t.dummy = rest[:max(C, M)], rest[max(C, M):]
	clear(t.zeros)
	if t.bias == nil {
		t.bias = t.zeros
	}
	// The assembly's epilogue: bias, a clamp (none, Relu, Clip) and the
	// residual; other activations run after it in Go (wnTask.tile).
	var ok bool
	t.lo, t.hi, ok = fusedClampOf(act)
	t.clamp = ok
	switch {
	case z == nil:
	case !after:
		t.zmode = 1
	case ok:
		t.zmode = 2
	}
	// Sections are worth splitting when a tile's transforms (about 36*C
	// and 36*M floats) or the GEMMs are; the work per section scales with
	// the block, so one test per block.
	for t0 := 0; t0 < tiles; t0 += tb {
		t.t0, t.nt = t0, min(tb, tiles-t0)
		parts := 1
		if t.nt*wgPoints*(C+M) >= parMinFlops/4 {
			parts = min(threads, t.nt)
		}
		t.section = wnInputs
		n.Pool.Run(parts, t)
		parts = 1
		if t.nt*wgPoints*C*M >= parMinFlops {
			parts = min(threads, wgPoints)
		}
		t.section = wnGEMMs
		n.Pool.Run(parts, t)
		parts = 1
		if t.nt*wgPoints*(C+M) >= parMinFlops/4 {
			parts = min(threads, t.nt)
		}
		t.section = wnOutputs
		n.Pool.Run(parts, t)
	}
	*t = wnTask{}
}

func (t *wnTask) runPart(i, parts int) {
	C, M, tb := t.C, t.M, t.tb
	switch t.section {
	case wnInputs:
		lo, hi := parSplit(t.nt, parts, i, 1)
		var src [wgPoints][]float32
		for j := lo; j < hi; j++ {
			b, ih0, iw0 := t.origin(t.t0 + j)
			for r := 0; r < 6; r++ {
				ih := ih0 + r
				for c := 0; c < 6; c++ {
					iw := iw0 + c
					if ih < 0 || ih >= t.H || iw < 0 || iw >= t.W {
						src[r*6+c] = t.zeros
						continue
					}
					o := ((b*t.H+ih)*t.W + iw) * C
					src[r*6+c] = t.x[o : o+C]
				}
			}
			wnInput(t.v[j*C:], tb*C, &src, C)
		}
	case wnGEMMs:
		lo, hi := parSplit(wgPoints, parts, i, 1)
		bufs := t.pool.scratchFor(i).pkBufs()
		usz := sgemmPackedBSize(C, M)
		for xi := lo; xi < hi; xi++ {
			sgemmPrepackedBPart(bufs, M, 0, t.nt, M, C, 1, false, t.v[xi*tb*C:], C,
				t.u[xi*usz:(xi+1)*usz], 0, t.mo[xi*tb*M:(xi+1)*tb*M], M)
		}
	case wnOutputs:
		lo, hi := parSplit(t.nt, parts, i, 1)
		dummy := t.dummy[i*M : (i+1)*M]
		for j := lo; j < hi; j++ {
			t.tile(t.t0+j, t.mo[j*M:], dummy)
		}
	}
}

// origin returns tile g's image and the input row and column its window
// starts at (in the padding when negative).
func (t *wnTask) origin(g int) (b, ih0, iw0 int) {
	per := t.tilesH * t.tilesW
	b, r := g/per, g%per
	return b, r/t.tilesW*4 - t.ph, r%t.tilesW*4 - t.pw
}

// tile writes output tile g from its points mo[xi*tb*M:] (M channels
// each), pixels past the map to dummy.
func (t *wnTask) tile(g int, mo, dummy []float32) {
	M := t.M
	b, ih0, iw0 := t.origin(g)
	oh0, ow0 := ih0+t.ph, iw0+t.pw
	var dst, zs [16][]float32
	for r := 0; r < 4; r++ {
		for c := 0; c < 4; c++ {
			oh, ow := oh0+r, ow0+c
			if oh >= t.OH || ow >= t.OW {
				dst[r*4+c], zs[r*4+c] = dummy, t.zeros
				continue
			}
			o := ((b*t.OH+oh)*t.OW + ow) * M
			dst[r*4+c] = t.y[o : o+M]
			if t.z != nil {
				zs[r*4+c] = t.z[o : o+M]
			}
		}
	}
	wnOutput(&dst, mo, t.tb*M, t.bias, &zs, M, t.zmode, t.lo, t.hi)
	if t.clamp {
		return
	}
	// Another activation, then the residual added after it.
	for p, d := range dst {
		if len(d) == 0 || &d[0] == &dummy[0] {
			continue
		}
		fusedActRow(t.act, d)
		if t.z != nil && t.after {
			axpy32(d, zs[p], 1)
		}
	}
}

// wnInputGo is the twin of wnInputAVX2/AVX512 for channels [j0, j1): V =
// B^T d B with d[k] = src[k][j] for the 36 pixels k of a 6x6 window, point
// xi to v[xi*ldv+j].
func wnInputGo(v []float32, ldv int, src *[wgPoints][]float32, j0, j1 int) {
	for j := j0; j < j1; j++ {
		var d [wgPoints]float32
		for k := range d {
			d[k] = src[k][j]
		}
		wgInputTile(&d)
		for xi, e := range d {
			v[xi*ldv+j] = e
		}
	}
}

// wnOutputGo is the twin of wnOutputAVX2/AVX512 for channels [j0, j1):
// o = A^T s A with s[xi] = mo[xi*ldm+j], then pixel p gets
// clamp(o[p] + bias[j] (+ z[p][j] if zmode is 1)) (+ z[p][j] if zmode is
// 2) in dst[p][j]; clamp is min(max(., lo), hi).
func wnOutputGo(dst *[16][]float32, mo []float32, ldm int, bias []float32, z *[16][]float32, j0, j1, zmode int, lo, hi float32) {
	for j := j0; j < j1; j++ {
		var s [wgPoints]float32
		for xi := range s {
			s[xi] = mo[xi*ldm+j]
		}
		var o [16]float32
		wgOutputTile(&s, &o)
		for p, v := range o {
			v += bias[j]
			if zmode == 1 {
				v += z[p][j]
			}
			v = min(max(v, lo), hi)
			if zmode == 2 {
				v += z[p][j]
			}
			dst[p][j] = v
		}
	}
}

// fusedConvWinogradNHWC is fusedConvNHWC for a node with convWinogradAttr:
// W holds wnPack's result for the ONNX shape the attribute gives.
func fusedConvWinogradNHWC(n *Node, X, W, B, Z *Tensor, act fusedAct) error {
	ps := n.Attrs.Ints(convWinogradAttr)
	if len(ps) != 4 || ps[2] != 3 || ps[3] != 3 {
		return n.Errorf("Winograd W shape %v must be [M, C, 3, 3]", ps)
	}
	M, C := int(ps[0]), int(ps[1])
	if X.Shape[3] != C {
		return n.Errorf("X %v has %d channels, Winograd W shape %v wants %d", X.ShapeString(), X.Shape[3], ps, C)
	}
	if M < 1 || W.Len() != wnPackedLen(M, C) {
		return n.Errorf("Winograd W has %d values, shape %v wants %d", W.Len(), ps, wnPackedLen(max(M, 0), C))
	}
	ok := n.Attrs.Int("group", 1) == 1
	for _, a := range [...]string{"strides", "dilations"} {
		for _, v := range n.Attrs.Ints(a) {
			ok = ok && v == 1
		}
	}
	if !ok {
		return n.Errorf("Winograd W needs group 1 and unit strides and dilations")
	}
	if B != nil && B.Len() != M {
		return n.Errorf("B %v must have %d values", B.ShapeString(), M)
	}
	sc := n.ScratchInts(24)
	k := sc[16:18]
	k[0], k[1] = 3, 3
	win, err := nnWindow(n, X.Shape[1:3], k, false, sc[:12])
	if err != nil {
		return err
	}
	N := X.Shape[0]
	shape := sc[12:16]
	shape[0], shape[1], shape[2], shape[3] = N, win.out[0], win.out[1], M
	if err := fusedCheckZ(n, Z, F32, shape); err != nil {
		return err
	}
	Y := n.Out[0]
	nnResize(Y, F32, shape...)
	var z, bias []float32
	if Z != nil {
		z = Z.F32()
	}
	if B != nil {
		bias = B.F32()
	}
	after := n.Attrs.Int("residual_after_activation", 0) != 0
	convWinogradNHWC(n, X.F32(), W.F32(), bias, z, Y.F32(), N, X.Shape[1], X.Shape[2], C, M, win, after, act)
	return nil
}
