package templates

// Winograd F(4x4, 3x3) for float32 2-D convolutions with a 3x3 kernel,
// unit strides and dilations, group 1 and any pads. Each 4x4 block of
// output (a tile) comes from a 6x6 window of input: per tile and channel
// the input transform V = B^T d B gives 36 values, one per transform
// point xi; then for every xi one GEMM Mo[xi] = U[xi] * V[xi] over the
// channels (U[xi] is [M x C], V[xi] [C x tiles]), 36 in all with 4x fewer
// multiplies than the 3x3 direct product; the output transform
// Y = A^T Mo A gives the tile's 4x4 outputs, finished by the conv path's
// epilogue (bias, residual, activation) while they are in cache.
//
// The filters U = G g G^T are computed at compile time (gen sets
// convWinogradAttr, W's data is convWinogradPack's result: 36 matrices
// [M x C], each packed as sgemmPackA's A panels). The input transform
// writes V straight in the packed driver's B-panel layout, so the GEMMs
// pack nothing. Tiles are processed in blocks; blocks are split over the
// session pool, each part with its own V and Mo buffers. Every output is
// computed by one part in an order that does not depend on the blocking,
// so results do not depend on the thread count.

// convWinogradAttr is the attribute (ints: W's ONNX shape [M, C, 3, 3])
// gen sets on a Conv or FusedConv whose W it replaced by
// convWinogradPack's result.
const convWinogradAttr = "winograd_w_shape"

// wgPoints is the number of transform points of F(4x4, 3x3): 6x6.
const wgPoints = 36

// convWinogradLen is the length of convWinogradPack's result.
func convWinogradLen(M, C int) int { return wgPoints * sgemmPackedASize(M, C) }

// wgG is F(4, 3)'s filter transform (6x3), interpolation points
// 0, 1, -1, 2, -2 and infinity.
var wgG = [6][3]float64{
	{1.0 / 4, 0, 0},
	{-1.0 / 6, -1.0 / 6, -1.0 / 6},
	{-1.0 / 6, 1.0 / 6, -1.0 / 6},
	{1.0 / 24, 1.0 / 12, 1.0 / 6},
	{1.0 / 24, -1.0 / 12, 1.0 / 6},
	{0, 0, 1},
}

// convWinogradPack transforms W (ONNX shape [M, C, 3, 3], row-major) into
// U[xi] = (G g G^T)[xi] for each of the 36 points, computed in float64,
// each [M x C] matrix packed by sgemmPackA, one after another.
func convWinogradPack(w []float32, M, C int) []float32 {
	u := make([]float32, M*C)
	out := make([]float32, 0, convWinogradLen(M, C))
	var all [][wgPoints]float32
	all = make([][wgPoints]float32, M*C)
	for mc := range all {
		all[mc] = wgFilter(w[mc*9 : mc*9+9]) // k_conv_winograd_nhwc.go
	}
	for xi := 0; xi < wgPoints; xi++ {
		for mc := range all {
			u[mc] = all[mc][xi]
		}
		out = append(out, sgemmPackA(false, M, C, u, C)...)
	}
	return out
}

// convWinogradWeightShape is convWeightShape for a node with
// convWinogradAttr: it checks the attribute, W's length and that the
// convolution is one Winograd computes.
func convWinogradWeightShape(n *Node, W *Tensor, sc []int) ([]int, bool, error) {
	ps := n.Attrs.Ints(convWinogradAttr)
	if W.DType != F32 || len(ps) != 4 || len(sc) < 4 || ps[2] != 3 || ps[3] != 3 {
		return nil, false, n.Errorf("Winograd W must be float32 of a 3x3 kernel, have %v %v", W.DType, ps)
	}
	ws := sc[:4]
	for i, d := range ps {
		ws[i] = int(d)
	}
	if W.Len() != convWinogradLen(ws[0], ws[1]) {
		return nil, false, n.Errorf("Winograd W has %d values, shape %v wants %d", W.Len(), ws, convWinogradLen(ws[0], ws[1]))
	}
	ok := n.Attrs.Int("group", 1) == 1
	for _, a := range [...]string{"strides", "dilations"} {
		for _, v := range n.Attrs.Ints(a) {
			ok = ok && v == 1
		}
	}
	if !ok {
		return nil, false, n.Errorf("Winograd W needs group 1 and unit strides and dilations")
	}
	return ws, true, nil
}

// convWinogradTry runs the convolution through Winograd when n has
// convWinogradAttr (wp is then the transformed W) and reports whether it
// did. Only float32 reaches it with wp set.
func convWinogradTry[T nnFloat](n *Node, x []T, wp []float32, bias, z []T, after bool, act fusedAct, y []T, xs []int, M int, win nnWin) bool {
	if wp == nil || len(xs) != 4 || n.Attrs.Ints(convWinogradAttr) == nil {
		return false
	}
	var b32, z32 []float32
	if bias != nil {
		b32 = any(bias).([]float32)
	}
	if z != nil {
		z32 = any(z).([]float32)
	}
	convWinograd(n, any(x).([]float32), wp, b32, z32, after, act, any(y).([]float32), xs, M, win)
	return true
}

// wgTileFloats is the V plus Mo floats one block of tiles aims to keep in
// L2 (1 MiB).
const wgTileFloats = 256 << 10

// wgTask is one Winograd convolution in two sections: first the input is
// copied into zero-padded planes (part i pads planes of its share), so
// every tile's 6x8 window lies inside its plane; then the convolution is
// split over blocks of tiles: part i runs blocks i, i+parts, ...
type wgTask struct {
	x, u, bias, z, y []float32
	pad              []float32 // padded input planes, Hp x Wp each
	geo              []int     // per part: wgTask.output's tile offsets
	buf              []float32
	after            bool
	act              fusedAct
	padding          bool // the section pads the input
	N, C, H, W, M    int
	OH, OW, ph, pw   int
	Hp, Wp           int
	tilesW, tilesH   int
	tiles, tb        int
	perPart          int
	byRows           bool
}

func convWinograd(n *Node, x, u, bias, z []float32, after bool, act fusedAct, y []float32, xs []int, M int, win nnWin) {
	N, C, H, W := xs[0], xs[1], xs[2], xs[3]
	OH, OW := win.out[0], win.out[1]
	tilesH, tilesW := (OH+3)/4, (OW+3)/4
	tiles := N * tilesH * tilesW
	if tiles == 0 || M == 0 {
		return
	}
	threads := n.Pool.Threads()
	// Each part takes an even share of the tiles (in multiples of 8, the
	// transforms' width) and runs it in blocks of at most tb tiles: a
	// multiple of 32 where the GEMM runs 6x32 AVX-512 tiles (else 16), at
	// least two of those, else as many as keep V and Mo near L2's size.
	al := wgAlign()
	tb := max(2*al, wgTileFloats/(wgPoints*(C+M))/al*al)
	parts := min(threads, (tiles+al-1)/al)
	// Too few tiles to share: split the output channels instead, each
	// part transforming all the input (cheap next to its GEMMs).
	byRows := parts < threads && M >= 12*threads
	if byRows {
		parts = min(threads, (M+5)/6)
	}
	if !byRows {
		tb = min(tb, sgemmRoundUp((tiles+parts-1)/parts+8, al))
	}
	tb = min(tb, sgemmRoundUp(tiles, al))
	// A tile's window is 6 rows of 6 (the kernels read 8) from row 4*tr
	// and column 4*tc of its padded plane.
	Hp, Wp := tilesH*4+2, tilesW*4+4
	padLen := N * C * Hp * Wp
	// Per part: V, Mo and 8 tiles' worth of rows for partial output
	// tiles; the output offsets of a block's tiles.
	perPart := wgPoints*(C+M)*tb + 8*(3*OW+4)
	buf := nnBuf[float32](n, 2, padLen+parts*perPart)
	geo := nnBuf[int](n, 4, parts*tb)
	t := parTaskOf[wgTask](n)
	*t = wgTask{geo: geo, x: x, u: u, bias: bias, z: z, y: y, pad: buf[:padLen], buf: buf[padLen:], after: after, act: act,
		N: N, C: C, H: H, W: W, M: M, OH: OH, OW: OW, ph: win.pb[0], pw: win.pb[1], Hp: Hp, Wp: Wp,
		tilesW: tilesW, tilesH: tilesH, tiles: tiles, tb: tb, perPart: perPart, byRows: byRows}
	t.padding = true
	n.Pool.Run(min(threads, N*C), t)
	t.padding = false
	n.Pool.Run(parts, t)
	*t = wgTask{}
}

func (t *wgTask) runPart(i, parts int) {
	if t.padding {
		p0, p1 := parSplit(t.N*t.C, parts, i, 1)
		for pl := p0; pl < p1; pl++ {
			t.padPlane(pl)
		}
		return
	}
	buf := t.buf[i*t.perPart : (i+1)*t.perPart]
	nv, nm := wgPoints*t.C*t.tb, wgPoints*t.M*t.tb
	v, mo, edge := buf[:nv], buf[nv:nv+nm], buf[nv+nm:]
	geo := t.geo[i*t.tb : (i+1)*t.tb]
	lo, hi := wgShare(t.tiles, parts, i, t.byRows)
	m0, m1 := 0, t.M
	if t.byRows {
		m0, m1 = parSplit(t.M, parts, i, sgemmPkMR)
		if m0 >= m1 {
			return
		}
	}
	asz := sgemmPackedASize(t.M, t.C)
	mpad := sgemmRoundUp(t.M, sgemmPkMR)
	vsz := t.C * t.tb
	msz := t.M * t.tb
	// Blocks of about equal size up to tb, whole GEMM column tiles but
	// the last.
	blocks := (hi - lo + t.tb - 1) / t.tb
	for t0 := lo; t0 < hi; {
		nt := min(t.tb, sgemmRoundUp((hi-lo+blocks-1)/blocks, wgAlign()), hi-t0)
		t.input(v, t0, nt)
		for xi := 0; xi < wgPoints; xi++ {
			sgemmDrive(nil, m1-m0, nt, t.C, 1,
				sgemmOperand{data: t.u[xi*asz : (xi+1)*asz], packed: true, ld: mpad, off: m0},
				sgemmOperand{data: v[xi*vsz : (xi+1)*vsz], packed: true},
				0, mo[xi*msz+m0*t.tb:(xi+1)*msz], t.tb)
		}
		t.output(mo, edge, geo, t0, nt, m0, m1)
		t0 += nt
	}
}

// wgAlign is the GEMM's column tile: 32 where the packed driver runs 6x32
// AVX-512 tiles, else 16.
func wgAlign() int {
	if sgemmWide {
		return 2 * sgemmPkNR
	}
	return sgemmPkNR
}

// wgShare returns part i's share of the tiles: even shares in multiples
// of 8 (the transforms' width), or all tiles for every part when the parts
// split the output channels instead.
func wgShare(tiles, parts, i int, byRows bool) (lo, hi int) {
	if byRows {
		return 0, tiles
	}
	at := func(i int) int {
		if i >= parts {
			return tiles
		}
		return i * tiles / parts / 8 * 8
	}
	return at(i), at(i + 1)
}

// padPlane copies input plane pl (image pl/C, channel pl%C) into its
// padded plane: row ih of the input at row ih+ph, column pw, zeros around.
func (t *wgTask) padPlane(pl int) {
	dst := t.pad[pl*t.Hp*t.Wp : (pl+1)*t.Hp*t.Wp]
	src := t.x[pl*t.H*t.W : (pl+1)*t.H*t.W]
	for r := 0; r < t.Hp; r++ {
		row := dst[r*t.Wp : (r+1)*t.Wp]
		ih := r - t.ph
		if ih < 0 || ih >= t.H {
			clear(row)
			continue
		}
		clear(row[:t.pw])
		copy(row[t.pw:], src[ih*t.W:(ih+1)*t.W])
		clear(row[t.pw+t.W:])
	}
}

// tileOrigin returns where tile g's window starts in the padded planes of
// channel 0 of its image.
func (t *wgTask) tileOrigin(g int) int {
	per := t.tilesH * t.tilesW
	b, r := g/per, g%per
	return b*t.C*t.Hp*t.Wp + r/t.tilesW*4*t.Wp + r%t.tilesW*4
}

// input writes V for tiles [t0, t0+nt) in B-panel layout: matrix xi at
// v[xi*C*tb:], [C x nt] packed by k blocks of sgemmKBlock(C), panels of
// 16 columns. Columns past nt repeat the last tile (finite values the
// output transform never reads).
func (t *wgTask) input(v []float32, t0, nt int) {
	C := t.C
	npad := sgemmRoundUp(nt, sgemmPkNR)
	kb := sgemmKBlock(C)
	vsz := C * t.tb
	ps := t.Hp * t.Wp
	var org [sgemmPkNR]int
	for p0 := 0; p0 < nt; p0 += sgemmPkNR {
		pn := min(sgemmPkNR, nt-p0)
		for j := range org {
			org[j] = t.tileOrigin(t0 + p0 + min(j, pn-1))
		}
		for pc := 0; pc < C; pc += kb {
			kc := min(kb, C-pc)
			base := pc*npad + p0*kc
			for h := 0; h < sgemmPkNR; h += 8 {
				var offs [8]int
				for j := range offs {
					offs[j] = org[h+j] + pc*ps
				}
				wgInput8(v[base+h:], vsz, sgemmPkNR, t.pad, &offs, t.Wp, kc, ps)
			}
		}
	}
}

// wgInput8Go is wgInputAVX2's twin: V = B^T d B for the 8 tiles whose
// windows (rows lds apart) start at p[offs[j] + c*cs], channels c in
// [0, nc); point xi of channel c of tile j goes to v[xi*ldd + c*ldc + j].
func wgInput8Go(v []float32, ldd, ldc int, p []float32, offs *[8]int, lds, nc, cs int) {
	for c := 0; c < nc; c++ {
		for j, o := range offs {
			var d [wgPoints]float32
			for r := 0; r < 6; r++ {
				copy(d[r*6:r*6+6], p[o+c*cs+r*lds:])
			}
			wgInputTile(&d)
			for xi, e := range d {
				v[xi*ldd+c*ldc+j] = e
			}
		}
	}
}

// wgInputTile sets d (6x6, row-major) to B^T d B.
func wgInputTile(d *[wgPoints]float32) {
	// Columns: d = B^T d.
	for q := 0; q < 6; q++ {
		d0, d1, d2, d3, d4, d5 := d[q], d[6+q], d[12+q], d[18+q], d[24+q], d[30+q]
		t0, t1 := d4-4*d2, d3-4*d1
		t2, t3 := d4-d2, 2*(d3-d1)
		d[q] = 4*d0 - 5*d2 + d4
		d[6+q] = t0 + t1
		d[12+q] = t0 - t1
		d[18+q] = t2 + t3
		d[24+q] = t2 - t3
		d[30+q] = 4*d1 - 5*d3 + d5
	}
	// Rows: d = d B.
	for r := 0; r < 6; r++ {
		s := (*[6]float32)(d[r*6:])
		d0, d1, d2, d3, d4, d5 := s[0], s[1], s[2], s[3], s[4], s[5]
		t0, t1 := d4-4*d2, d3-4*d1
		t2, t3 := d4-d2, 2*(d3-d1)
		s[0] = 4*d0 - 5*d2 + d4
		s[1] = t0 + t1
		s[2] = t0 - t1
		s[3] = t2 + t3
		s[4] = t2 - t3
		s[5] = 4*d1 - 5*d3 + d5
	}
}

// output transforms Mo (matrix xi at mo[xi*M*tb:], [M x nt], row stride
// tb) of tiles [t0, t0+nt), channels [m0, m1), into y, 8 tiles at a time,
// and runs the epilogue on what it wrote, channel by channel. Tiles that
// stick out of the map (and the lanes past nt) are written to edge first.
func (t *wgTask) output(mo, edge []float32, geo []int, t0, nt, m0, m1 int) {
	M, tb, OH, OW := t.M, t.tb, t.OH, t.OW
	msz := M * tb
	per := t.tilesH * t.tilesW
	esz := 3*OW + 4
	// geo[j]: where tile t0+j starts in channel 0 of y, -1 past nt, or
	// -2-start for a tile that sticks out (written to edge, then copied).
	geo = geo[:sgemmRoundUp(nt, 8)]
	for j := range geo {
		g := t0 + j
		b, r := g/per, g%per
		oh0, ow0 := r/t.tilesW*4, r%t.tilesW*4
		o := b*M*OH*OW + oh0*OW + ow0
		switch {
		case j >= nt:
			geo[j] = -1
		case oh0+4 <= OH && ow0+4 <= OW:
			geo[j] = o
		default:
			geo[j] = -2 - o
		}
	}
	for m := m0; m < m1; m++ {
		yo := m * OH * OW
		for j0 := 0; j0 < nt; j0 += 8 {
			var dst [8][]float32
			for j, o := range geo[j0 : j0+8] {
				if o >= 0 {
					dst[j] = t.y[o+yo:]
				} else {
					dst[j] = edge[j*esz : (j+1)*esz]
				}
			}
			wgOutput8(&dst, OW, mo[m*tb+j0:], msz)
			for j, o := range geo[j0 : j0+8] {
				if o >= -1 {
					continue
				}
				o = -2 - o
				r := o % (OH * OW)
				rows, cols := min(4, OH-r/OW), min(4, OW-r%OW)
				for i := 0; i < rows; i++ {
					copy(t.y[o+yo+i*OW:o+yo+i*OW+cols], dst[j][i*OW:])
				}
			}
		}
		// Epilogue over the rows of each tile row the block touched.
		var bv float32
		if t.bias != nil {
			bv = t.bias[m]
		}
		for g := t0; g < t0+nt; {
			b, r := g/per, g%per
			tr, tc := r/t.tilesW, r%t.tilesW
			tcEnd := min(t.tilesW, tc+t0+nt-g)
			oh0 := tr * 4
			c0, c1 := tc*4, min(tcEnd*4, OW)
			base := (b*M + m) * OH * OW
			for oh := oh0; oh < min(oh0+4, OH); oh++ {
				off := base + oh*OW
				var zs []float32
				if t.z != nil {
					zs = t.z[off+c0 : off+c1]
				}
				fusedEpilogue(t.y[off+c0:off+c1], bv, nil, 0, zs, t.after, t.act)
			}
			g += tcEnd - tc
		}
	}
}

// wgOutput8Go is wgOutputAVX2's twin: Y = A^T m A for 8 tiles, point xi
// of tile j at mo[xi*lds + j], Y's row r to dst[j][r*ldy : r*ldy+4].
func wgOutput8Go(dst *[8][]float32, ldy int, mo []float32, lds int) {
	for j := range dst {
		var s [wgPoints]float32
		for xi := range s {
			s[xi] = mo[xi*lds+j]
		}
		var o [16]float32
		wgOutputTile(&s, &o)
		for r := 0; r < 4; r++ {
			copy(dst[j][r*ldy:r*ldy+4], o[r*4:])
		}
	}
}

// wgOutputTile sets o (4x4, row-major) to A^T s A.
func wgOutputTile(s *[wgPoints]float32, o *[16]float32) {
	var t [24]float32 // A^T s: 4x6
	for q := 0; q < 6; q++ {
		m0, m1, m2, m3, m4, m5 := s[q], s[6+q], s[12+q], s[18+q], s[24+q], s[30+q]
		a, b := m1+m2, m1-m2
		c, d := m3+m4, m3-m4
		t[q] = m0 + a + c
		t[6+q] = b + 2*d
		t[12+q] = a + 4*c
		t[18+q] = b + 8*d + m5
	}
	for r := 0; r < 4; r++ {
		m := (*[6]float32)(t[r*6:])
		a, b := m[1]+m[2], m[1]-m[2]
		c, d := m[3]+m[4], m[3]-m[4]
		p := (*[4]float32)(o[r*4:])
		p[0] = m[0] + a + c
		p[1] = b + 2*d
		p[2] = a + 4*c
		p[3] = b + 8*d + m[5]
	}
}
