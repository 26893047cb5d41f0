package templates

import "sync/atomic"

// Winograd F(4x4, 3x3) and F(2x2, 3x3) for cuvil::FusedConv with
// layout=NHWC: a 3x3 kernel, unit strides and dilations, group 1, any
// pads, float32. Channels lie in the vector lanes, so the transforms need
// no transposes. Per 4x4 (2x2) block of output (a tile), the input
// transform V = B^T d B of its 6x6 (4x4) input window gives 36 (16) points
// xi, each a row of C channels: V[xi] is a [tiles, C] matrix. Then one
// GEMM per point, Mo[xi] = V[xi] x U[xi], U[xi] [C, M]
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
//
// F(2x2) does 1.78x the multiplies of F(4x4) per output but stores
// U in 16/9 of the 3x3 weights instead of 4x: it is for small maps with
// many channels, where streaming U from memory is what costs (gen picks).

// wnPoints is the number of transform points of F(f x f, 3x3).
func wnPoints(f int) int { return (f + 2) * (f + 2) }

// wnPackedLen is the length of wnPack's result: one packed [C, M] B
// matrix per point.
func wnPackedLen(M, C, f int) int { return wnPoints(f) * sgemmPackedBSize(C, M) }

// wgG2 is F(2, 3)'s filter transform (4x3), points 0, 1, -1 and infinity.
var wgG2 = [4][3]float64{
	{1, 0, 0},
	{0.5, 0.5, 0.5},
	{0.5, -0.5, 0.5},
	{0, 0, 1},
}

// wgFilter2 returns the 16 points of G g G^T for F(2x2, 3x3).
func wgFilter2(g []float32) [16]float32 {
	var t [4][3]float64 // G g
	for i := 0; i < 4; i++ {
		for j := 0; j < 3; j++ {
			t[i][j] = wgG2[i][0]*float64(g[j]) + wgG2[i][1]*float64(g[3+j]) + wgG2[i][2]*float64(g[6+j])
		}
	}
	var u [16]float32
	for i := 0; i < 4; i++ {
		for j := 0; j < 4; j++ {
			u[i*4+j] = float32(t[i][0]*wgG2[j][0] + t[i][1]*wgG2[j][1] + t[i][2]*wgG2[j][2])
		}
	}
	return u
}

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
// (G g G^T)[xi] of filter (m, c) for F(f x f, 3x3), each [C, M] matrix
// packed by sgemmPackB, one after another.
func wnPack(w []float32, M, C, f int) []float32 {
	all := make([][wgPoints]float32, M*C)
	for mc := range all {
		if f == 2 {
			u := wgFilter2(w[mc*9 : mc*9+9])
			copy(all[mc][:], u[:])
		} else {
			all[mc] = wgFilter(w[mc*9 : mc*9+9])
		}
	}
	out := make([]float32, 0, wnPackedLen(M, C, f))
	u := make([]float32, C*M)
	for xi := 0; xi < wnPoints(f); xi++ {
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

// Sections of a wnTask: a block's input transforms, GEMMs and output
// transforms split between the parts (three sections a block), or whole
// blocks a part (wnBlocks: each part all three steps of its blocks).
const (
	wnInputs = iota
	wnGEMMs
	wnOutputs
	wnBlocks
)

// wnTask is one NHWC Winograd convolution; t0 and nt are the block of
// tiles the current section works on.
type wnTask struct {
	x, u, bias, z, y []float32
	v, mo            []float32 // V[xi] at v[xi*tb*kc:], Mo[xi] at mo[xi*tb*M:]
	zeros, dummy     []float32 // read for pads (and z past the map); written past the map, per part
	N, H, W, C, M    int
	ldy              int // Y's row stride (a pixel's M channels)
	OH, OW, ph, pw   int
	tilesH, tilesW   int
	f, pts           int // F(f x f, 3x3): pts = (f+2)^2 points
	tb, t0, nt       int
	section          int
	tiles, sz        int // wnBlocks: all tiles, in blocks of sz (<= tb) handed out by next
	next             atomic.Int64
	bufs             []float32 // wnBlocks: each part's V and Mo, per floats apart
	per              int
	zmode            int
	// A 3-D convolution's time axis (k_conv_nhwc_3d.go): N counts
	// images times OT output frames, an image has T input frames (2-D: kt
	// 1, T and OT 1), and the GEMMs' K is kc = kt*C, a tile's row of V[xi]
	// holding the points of its kt input frames' windows, C values each.
	tm           wnTime
	kc           int
	lo, hi       float32
	clamp, after bool
	act          fusedAct
	pool         *WorkPool
}

// convWinogradNHWC runs the convolution of X [N,H,W,C] (window win) with
// wnPack's weights u for F(f x f, 3x3) into Y [N,OH,OW,M] (row stride
// ldy >= M, see nhwcOutput), with FusedConv's epilogue.
func convWinogradNHWC(n *Node, x, u, bias, z, y []float32, ldy, N, H, W, C, M, f int, win nnWin, after bool, act fusedAct) {
	convWinogradNHWCT(n, x, u, bias, z, y, ldy, N, H, W, C, M, f, win, after, act, wnTime{kt: 1, st: 1, dt: 1, T: 1, OT: 1})
}

// wnTime is the time axis of a 3-D Winograd convolution: kt taps, stride
// st, dilation dt, pt frames of padding before, T input and OT output
// frames; {1, 1, 1, 0, 1, 1} for a 2-D one.
type wnTime struct{ kt, st, dt, pt, T, OT int }

// convWinogradNHWCT is convWinogradNHWC over N images of tm.T frames
// (X [N,T,H,W,C], Y [N,OT,OH,OW,M]) with u wnPack's weights for
// [M, kt*C, 3, 3], the input channels of tap i being rows i*C.. of each
// U[xi] (wnPack3D): Mo[xi] = sum over taps of V_tap[xi] x U_tap[xi] is one
// GEMM with K = kt*C. A tap in the time padding reads zeros.
func convWinogradNHWCT(n *Node, x, u, bias, z, y []float32, ldy, N, H, W, C, M, f int, win nnWin, after bool, act fusedAct, tm wnTime) {
	OH, OW := win.out[0], win.out[1]
	N *= tm.OT
	kc := tm.kt * C
	tilesH, tilesW := (OH+f-1)/f, (OW+f-1)/f
	pts := wnPoints(f)
	tiles := N * tilesH * tilesW
	if tiles == 0 || M == 0 {
		return
	}
	// Blocks of about equal size: as many tiles as keep V and Mo near L2's
	// size, at least 48 (so each U[xi] streamed serves enough rows), one
	// block up to 5/4 of that (a tail of a few tiles would stream all of U
	// again for them), whole 6-row GEMM tiles but the last.
	tb := max(48, wnBlockFloats/(pts*(kc+M)))
	blocks := 1
	if tiles > tb*5/4 {
		blocks = (tiles + tb - 1) / tb
	}
	tb = min(sgemmRoundUp((tiles+blocks-1)/blocks, sgemmPkMR), tiles)
	threads := n.Pool.Threads()
	// Maps of at least two blocks a thread: each part takes whole blocks,
	// in its own V and Mo, so a block's data stays in its core's caches
	// (the three split sections pass V and Mo between the cores each
	// block: unet's 128x128 F(2x2) layers ran no faster on 2 threads).
	byBlocks := threads > 1 && blocks >= 2*threads
	nbuf := 1
	if byBlocks {
		nbuf = threads
	}
	t := parTaskOf[wnTask](n)
	*t = wnTask{x: x, u: u, bias: bias, z: z, y: y, ldy: ldy, N: N, H: H, W: W, C: C, M: M, OH: OH, OW: OW,
		ph: win.pb[0], pw: win.pb[1], tilesH: tilesH, tilesW: tilesW, f: f, pts: pts, tb: tb, after: after, act: act, pool: n.Pool,
		tm: tm, kc: kc}
	per := pts * tb * (kc + M)
	buf := nnBuf[float32](n, 2, nbuf*per+max(C, M)+threads*M)
	t.v, t.mo = buf[:pts*tb*kc], buf[pts*tb*kc:per]
	t.bufs, t.per = buf[:nbuf*per], per
	rest := buf[nbuf*per:]
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
	if byBlocks {
		// Blocks of about equal size (the GEMM balances its row tiles
		// itself), a whole number a part, so equal cores finish
		// together: whole blocks of tb split between parts gave 196
		// tiles in blocks of 54 as 108 + 88 (resnet50's 56x56 layers,
		// the first part 1.3x the second's time). Each is at most tb.
		nb := (blocks + threads - 1) / threads * threads
		t.tiles, t.sz, t.section = tiles, (tiles+nb-1)/nb, wnBlocks
		t.next.Store(0)
		n.Pool.Run(threads, t)
		*t = wnTask{}
		return
	}
	// Sections are worth splitting when a tile's transforms (about 36*C
	// and 36*M floats) or the GEMMs are; the work per section scales with
	// the block, so one test per block.
	for t0 := 0; t0 < tiles; t0 += tb {
		t.t0, t.nt = t0, min(tb, tiles-t0)
		parts := 1
		if t.nt*pts*(kc+M) >= parMinFlops/4 {
			parts = min(threads, t.nt)
		}
		t.section = wnInputs
		n.Pool.Run(parts, t)
		parts = 1
		if t.nt*pts*kc*M >= parMinFlops {
			parts = min(threads, pts)
		}
		t.section = wnGEMMs
		n.Pool.Run(parts, t)
		parts = 1
		if t.nt*pts*(C+M) >= parMinFlops/4 {
			parts = min(threads, t.nt)
		}
		t.section = wnOutputs
		n.Pool.Run(parts, t)
	}
	*t = wnTask{}
}

func (t *wnTask) runPart(i, parts int) {
	switch t.section {
	case wnInputs:
		lo, hi := parSplit(t.nt, parts, i, 1)
		t.inputs(t.t0, lo, hi, t.v)
	case wnGEMMs:
		lo, hi := parSplit(t.pts, parts, i, 1)
		t.gemms(t.nt, lo, hi, t.v, t.mo, i)
	case wnOutputs:
		lo, hi := parSplit(t.nt, parts, i, 1)
		t.outputs(t.t0, lo, hi, t.mo, t.dummy[i*t.M:(i+1)*t.M])
	case wnBlocks:
		// Blocks of sz tiles, the next one to whoever is free (t.next):
		// a part whose core runs faster takes more.
		buf := t.bufs[i*t.per : (i+1)*t.per]
		v, mo := buf[:t.pts*t.tb*t.kc], buf[t.pts*t.tb*t.kc:]
		dummy := t.dummy[i*t.M : (i+1)*t.M]
		for {
			t0 := (int(t.next.Add(1)) - 1) * t.sz
			if t0 >= t.tiles {
				return
			}
			nt := min(t.sz, t.tiles-t0)
			t.inputs(t0, 0, nt, v)
			t.gemms(nt, 0, t.pts, v, mo, i)
			t.outputs(t0, 0, nt, mo, dummy)
		}
	}
}

// inputs transforms tiles t0+lo..t0+hi-1 of the block starting at tile t0
// into V (v, tile j's points at v[xi*tb*kc + j*kc:]).
func (t *wnTask) inputs(t0, lo, hi int, v []float32) {
	C, tb, w := t.C, t.tb, t.f+2
	var src [wgPoints][]float32
	kc, tm := t.kc, &t.tm
	for j := lo; j < hi; j++ {
		b, ih0, iw0 := t.origin(t0 + j)
		img, ot := b/tm.OT, b%tm.OT
		for q := 0; q < tm.kt; q++ {
			it := ot*tm.st - tm.pt + q*tm.dt
			for r := 0; r < w; r++ {
				ih := ih0 + r
				for c := 0; c < w; c++ {
					iw := iw0 + c
					if it < 0 || it >= tm.T || ih < 0 || ih >= t.H || iw < 0 || iw >= t.W {
						src[r*w+c] = t.zeros
						continue
					}
					o := (((img*tm.T+it)*t.H+ih)*t.W + iw) * C
					src[r*w+c] = t.x[o : o+C]
				}
			}
			wnInput(v[j*kc+q*C:], tb*kc, &src, C, t.f)
		}
	}
}

// gemms runs the GEMMs of points lo..hi-1 over a block's nt tiles:
// Mo[xi] = V[xi] x U[xi], on part i's pack buffers.
func (t *wnTask) gemms(nt, lo, hi int, v, mo []float32, i int) {
	M, tb, kc := t.M, t.tb, t.kc
	bufs := scratchFor(t.pool, i).pkBufs()
	usz := sgemmPackedBSize(kc, M)
	for xi := lo; xi < hi; xi++ {
		if nhwcPWFast {
			// The pw tiles (k_conv_nhwc_pw.go), no epilogue; U runs on
			// to the next points' so the tiles prefetch across them.
			nhwcPWGemm(nt, M, kc, v[xi*tb*kc:], kc, nil, t.u[xi*usz:], mo[xi*tb*M:(xi+1)*tb*M], M, &nhwcPWEpi{})
			continue
		}
		sgemmPrepackedBPart(bufs, M, 0, nt, M, kc, 1, false, v[xi*tb*kc:], kc,
			t.u[xi*usz:(xi+1)*usz], 0, mo[xi*tb*M:(xi+1)*tb*M], M)
	}
}

// outputs writes output tiles t0+lo..t0+hi-1 from Mo, pixels past the
// map to dummy.
func (t *wnTask) outputs(t0, lo, hi int, mo, dummy []float32) {
	for j := lo; j < hi; j++ {
		t.tile(t0+j, mo[j*t.M:], dummy)
	}
}

// origin returns tile g's image and the input row and column its window
// starts at (in the padding when negative).
func (t *wnTask) origin(g int) (b, ih0, iw0 int) {
	per := t.tilesH * t.tilesW
	b, r := g/per, g%per
	return b, r/t.tilesW*t.f - t.ph, r%t.tilesW*t.f - t.pw
}

// tile writes output tile g from its points mo[xi*tb*M:] (M channels
// each), pixels past the map to dummy.
func (t *wnTask) tile(g int, mo, dummy []float32) {
	M, f := t.M, t.f
	b, ih0, iw0 := t.origin(g)
	oh0, ow0 := ih0+t.ph, iw0+t.pw
	var dst, zs [16][]float32
	for r := 0; r < f; r++ {
		for c := 0; c < f; c++ {
			oh, ow := oh0+r, ow0+c
			if oh >= t.OH || ow >= t.OW {
				dst[r*f+c], zs[r*f+c] = dummy, t.zeros
				continue
			}
			o := (b*t.OH+oh)*t.OW + ow
			dst[r*f+c] = t.y[o*t.ldy : o*t.ldy+M]
			if t.z != nil {
				zs[r*f+c] = t.z[o*M : o*M+M]
			}
		}
	}
	wnOutput(&dst, mo, t.tb*M, t.bias, &zs, M, t.zmode, t.lo, t.hi, f)
	if t.clamp {
		return
	}
	// Another activation, then the residual added after it.
	for p, d := range dst[:f*f] {
		if &d[0] == &dummy[0] {
			continue
		}
		fusedActRow(t.act, d)
		if t.z != nil && t.after {
			axpy32(d, zs[p], 1)
		}
	}
}

// wnInputGo is the twin of wnInput{4,2}AVX2/AVX512 for channels [j0,
// j1): V = B^T d B with d[k] = src[k][j] for the (f+2)^2 pixels k of the
// window, point xi to v[xi*ldv+j].
func wnInputGo(v []float32, ldv int, src *[wgPoints][]float32, j0, j1, f int) {
	pts := wnPoints(f)
	for j := j0; j < j1; j++ {
		var d [wgPoints]float32
		for k := range pts {
			d[k] = src[k][j]
		}
		if f == 2 {
			wgInputTile2((*[16]float32)(d[:16]))
		} else {
			wgInputTile(&d)
		}
		for xi, e := range d[:pts] {
			v[xi*ldv+j] = e
		}
	}
}

// wgInputTile2 sets d (4x4, row-major) to B^T d B for F(2x2, 3x3).
func wgInputTile2(d *[16]float32) {
	for q := 0; q < 4; q++ { // columns: d = B^T d
		d0, d1, d2, d3 := d[q], d[4+q], d[8+q], d[12+q]
		d[q], d[4+q], d[8+q], d[12+q] = d0-d2, d1+d2, d2-d1, d1-d3
	}
	for r := 0; r < 4; r++ { // rows: d = d B
		s := (*[4]float32)(d[r*4:])
		d0, d1, d2, d3 := s[0], s[1], s[2], s[3]
		s[0], s[1], s[2], s[3] = d0-d2, d1+d2, d2-d1, d1-d3
	}
}

// wgOutputTile2 sets o (2x2, row-major) to A^T s A for F(2x2, 3x3).
func wgOutputTile2(s *[16]float32, o *[4]float32) {
	var t [8]float32 // A^T s: 2x4
	for q := 0; q < 4; q++ {
		m0, m1, m2, m3 := s[q], s[4+q], s[8+q], s[12+q]
		t[q], t[4+q] = m1+m0+m2, m1-m2-m3
	}
	for r := 0; r < 2; r++ {
		m0, m1, m2, m3 := t[r*4], t[r*4+1], t[r*4+2], t[r*4+3]
		o[r*2], o[r*2+1] = m1+m0+m2, m1-m2-m3
	}
}

// wnOutputGo is the twin of wnOutput{4,2}AVX2/AVX512 for channels [j0,
// j1): o = A^T s A (f x f) with s[xi] = mo[xi*ldm+j], then pixel p gets
// clamp(o[p] + bias[j] (+ z[p][j] if zmode is 1)) (+ z[p][j] if zmode is
// 2) in dst[p][j]; clamp is min(max(., lo), hi).
func wnOutputGo(dst *[16][]float32, mo []float32, ldm int, bias []float32, z *[16][]float32, j0, j1, zmode int, lo, hi float32, f int) {
	for j := j0; j < j1; j++ {
		var s [wgPoints]float32
		for xi := range wnPoints(f) {
			s[xi] = mo[xi*ldm+j]
		}
		var o [16]float32
		if f == 2 {
			wgOutputTile2((*[16]float32)(s[:16]), (*[4]float32)(o[:4]))
		} else {
			wgOutputTile(&s, &o)
		}
		for p, v := range o[:f*f] {
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
	if len(X.Shape) == 5 {
		return fusedConvWinogradNHWC3D(n, X, W, B, Z, act, ps) // k_conv_nhwc_3d.go
	}
	if len(ps) != 4 || ps[2] != 3 || ps[3] != 3 {
		return n.Errorf("Winograd W shape %v must be [M, C, 3, 3]", ps)
	}
	M, C := int(ps[0]), int(ps[1])
	if X.Shape[3] != C {
		return n.Errorf("X %v has %d channels, Winograd W shape %v wants %d", X.ShapeString(), X.Shape[3], ps, C)
	}
	// The length tells F(4x4) (36 points) from F(2x2) (16).
	f := 4
	if M >= 1 && W.Len() == wnPackedLen(M, C, 2) {
		f = 2
	}
	if M < 1 || W.Len() != wnPackedLen(M, C, f) {
		return n.Errorf("Winograd W has %d values, shape %v wants %d (F(4x4)) or %d (F(2x2))", W.Len(), ps, wnPackedLen(max(M, 0), C, 4), wnPackedLen(max(M, 0), C, 2))
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
	y, z, bias, ldy, err := nhwcOutput(n, Z, B, shape)
	if err != nil {
		return err
	}
	after := n.Attrs.Int("residual_after_activation", 0) != 0
	convWinogradNHWC(n, X.F32(), W.F32(), bias, z, y, ldy, N, X.Shape[1], X.Shape[2], C, M, f, win, after, act)
	return nil
}
