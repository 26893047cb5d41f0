package templates

// cuvil::FusedConvChain (passes/fuse_convchain.go) is an NHWC inverted
// bottleneck in one node: [expand 1x1] -> depthwise kxk -> [project 1x1],
// at least two of the three, so the expanded tensors (6x the channels in
// mobilenet_v2) never go to memory. Each part (thread) takes a run of
// output rows and walks it in bands: it computes the expanded input rows a
// band's depthwise windows need into its own buffer (a few rows, sized to
// stay in L2; rows the previous band already computed are moved to the
// front, not recomputed; the first band of a part recomputes the rows it
// shares with the part before), runs the depthwise row kernel over them
// (into a band buffer when a projection follows), then the projection's
// pointwise tiles over the band. Every value is computed in the same order
// as by the three FusedConv nodes it replaces, so results do not depend on
// the bands or the thread count. On small maps at 2+ threads (few rows per
// part, weights that outweigh the intermediates: convChainStaged) it runs
// split by channels instead, one pool section per stage (runStages), with
// the same values again.

// convChainPackedAttr is the attribute gen sets on a FusedConvChain whose
// weights it replaced by nhwcPackWeights's results: the ONNX shapes of We
// (when present), Wd and Wp (when present), four ints each, in input order.
const convChainPackedAttr = "packed_w_shapes"

// convChainBandFloats is the expanded-row buffer a band aims for (floats,
// per part): with the depthwise band it stays in L2. Measured on
// mobilenet_v2's blocks at 1 thread (BenchmarkConvChain): 16K floats
// streams the weights once per band too often on 14x14 maps (1.15x the
// split time), 64K and more are equal there; on 112x112 and 56x56 maps
// 64K gains 0.72-0.89x, a whole image per band 1.0-1.14x.
const convChainBandFloats = 64 << 10

// FusedConvChain is cuvil::FusedConvChain: inputs X [N,H,W,C], expand We
// [Ce,C,1,1] and Be (optional), depthwise Wd [Ce,1,kh,kw] and Bd, project
// Wp [M,Ce,1,1] and Bp (optional), residual Z; output Y [N,OH,OW,M] (M =
// Ce without a projection). The expand and (before a projection) depthwise
// stages clamp (expand_activation, dw_activation: none, Relu or Clip); the
// last stage has FusedConv's epilogue (activation, Z,
// residual_after_activation).
func FusedConvChain(n *Node) error {
	X, We, Be, Wd, Bd, Wp, Bp, Z := n.Input(0), n.Input(1), n.Input(2), n.Input(3), n.Input(4), n.Input(5), n.Input(6), n.Input(7)
	if X == nil || Wd == nil {
		return n.Errorf("needs inputs X and Wd")
	}
	if We == nil && Wp == nil {
		return n.Errorf("needs We or Wp (an expand or a project stage)")
	}
	for _, t := range []*Tensor{X, We, Be, Wd, Bd, Wp, Bp} {
		if t != nil && t.DType != F32 {
			return n.Errorf("needs float32 inputs, have %v", t.DType)
		}
	}
	if len(X.Shape) != 4 {
		return n.Errorf("X %v must have rank 4 (NHWC)", X.ShapeString())
	}
	act, err := fusedActOf(n)
	if err != nil {
		return err
	}
	eAct, err := fusedActNamed(n, "expand_activation")
	if err != nil {
		return err
	}
	dAct, err := fusedActNamed(n, "dw_activation")
	if err != nil {
		return err
	}
	// A clamp runs inside the stage's kernel; any other activation as a
	// row pass over the stage's band while it is in cache.
	eLo, eHi, eClamp := fusedClampOf(eAct)
	dLo, dHi, dClamp := fusedClampOf(dAct)
	eRow, dRow := eAct, dAct
	if eClamp {
		eRow = fusedAct{}
	}
	if dClamp {
		dRow = fusedAct{}
	}
	sc := n.ScratchInts(32)
	// Weight shapes: the inputs' or, prepacked, the attribute's.
	wse, wsd, wsp := sc[12:16], sc[16:20], sc[20:24]
	ps := n.Attrs.Ints(convChainPackedAttr)
	packed := ps != nil
	k := 0
	for _, w := range []struct {
		t  *Tensor
		ws []int
	}{{We, wse}, {Wd, wsd}, {Wp, wsp}} {
		switch {
		case w.t == nil:
			clear(w.ws)
		case packed:
			if len(ps) < k+4 {
				return n.Errorf("%s %v must hold 4 ints per weight", convChainPackedAttr, ps)
			}
			nnIntsInto(w.ws, ps[k:k+4])
			k += 4
		case len(w.t.Shape) != 4:
			return n.Errorf("weight %v must have rank 4", w.t.ShapeString())
		default:
			copy(w.ws, w.t.Shape)
		}
	}
	if packed && k != len(ps) {
		return n.Errorf("%s %v must hold 4 ints per weight", convChainPackedAttr, ps)
	}
	N, H, W, C := X.Shape[0], X.Shape[1], X.Shape[2], X.Shape[3]
	Ce := C
	if We != nil {
		if wse[1] != C || wse[2] != 1 || wse[3] != 1 {
			return n.Errorf("We %v must be [Ce, %d, 1, 1]", wse, C)
		}
		Ce = wse[0]
	}
	if wsd[0] != Ce || wsd[1] != 1 {
		return n.Errorf("Wd %v must be [%d, 1, kh, kw] (depthwise)", wsd, Ce)
	}
	M := Ce
	if Wp != nil {
		if wsp[1] != Ce || wsp[2] != 1 || wsp[3] != 1 {
			return n.Errorf("Wp %v must be [M, %d, 1, 1]", wsp, Ce)
		}
		M = wsp[0]
	}
	for _, b := range []struct {
		t *Tensor
		n int
	}{{Be, Ce}, {Bd, Ce}, {Bp, M}} {
		if b.t != nil && b.t.Len() != b.n {
			return n.Errorf("bias %v must have %d values", b.t.ShapeString(), b.n)
		}
	}
	if Ce < 2 || M <= 0 || C <= 0 {
		return n.Errorf("needs channels > 0 and a depthwise of at least 2: X %v, Wd %v", X.ShapeString(), wsd)
	}
	win, err := nnWindow(n, X.Shape[1:3], wsd[2:], false, sc[:12])
	if err != nil {
		return err
	}
	shape := sc[24:28]
	shape[0], shape[1], shape[2], shape[3] = N, win.out[0], win.out[1], M
	last := Bd
	if Wp != nil {
		last = Bp
	}
	y, z, _, _, err := nhwcOutput(n, Z, last, shape)
	if err != nil {
		return err
	}
	if len(y) == 0 {
		return nil
	}
	// The packed weights (We, Wd, Wp): the inputs as they are, or packed
	// now into the node's cache (one buffer for all three).
	var wp [3][]float32
	ws := [3][]int{wse, wsd, wsp}
	grp := [3]int{1, Ce, 1}
	var buf, tmp []float32
	if !packed {
		size := 0
		for k, w := range [3]*Tensor{We, Wd, Wp} {
			if w != nil {
				size += nhwcPackedLen(ws[k], grp[k])
			}
		}
		buf = nnBuf[float32](n, 1, size)
		tmp, _ = nnCacheOf(n).slots[4].([]float32)
	}
	off := 0
	for k, w := range [3]*Tensor{We, Wd, Wp} {
		if w == nil {
			continue
		}
		l := nhwcPackedLen(ws[k], grp[k])
		if packed {
			if w.Len() != l {
				return n.Errorf("prepacked weight has %d values, want %d for shape %v", w.Len(), l, ws[k])
			}
			wp[k] = w.F32()
			continue
		}
		wp[k], tmp, _ = nhwcPackWeights(buf[off:off+l:off+l], w.F32(), ws[k], grp[k], tmp)
		off += l
	}
	if !packed {
		nnCacheOf(n).slots[4] = tmp
	}
	g := nhwcGeomOf(N, H, W, Ce, win)
	t := parTaskOf[convChainTask](n)
	*t = convChainTask{g: g, C: C, M: M, x: X.F32(), wpe: wp[0], wpd: wp[1], wpp: wp[2], y: y, z: z,
		after: n.Attrs.Int("residual_after_activation", 0) != 0, act: act, dLo: dLo, dHi: dHi, eAct: eRow, dAct: dRow}
	if Be != nil {
		t.be = Be.F32()
	}
	if Bd != nil {
		t.bd = Bd.F32()
	}
	if Bp != nil {
		t.bp = Bp.F32()
	}
	t.ee, _ = nhwcPWEpiOf(t.be, nil, false, eAct)
	t.ee.lo, t.ee.hi = eLo, eHi
	// Band rows: the expanded rows of a band ((R-1)*sh + the window's
	// height) fill about convChainBandFloats.
	span := (g.kh-1)*g.dh + 1
	t.band = max(1, min(g.OH, (convChainBandFloats/max(1, W*Ce)-span)/g.sh+1))
	t.erows = (t.band-1)*g.sh + span
	if We != nil {
		t.esize = t.erows * W * Ce
	}
	if Wp != nil {
		t.dsize = t.band * g.OW * Ce
	}
	rows := N * g.OH
	parts := 1
	flops := rows * g.OW * Ce * (g.kh*g.kw + C + M)
	threads := n.Pool.Threads()
	if threads > 1 && flops >= parMinFlops {
		parts = min(threads, rows)
	}
	t.pool = n.Pool
	if t.bd == nil {
		t.bd = nnBuf[float32](n, 0, Ce)
		clear(t.bd)
	}
	// The channel split writes the expanded input and depthwise output
	// out whole; row bands stream the weights once per part.
	wts, written := 0, 0
	if We != nil {
		wts, written = C*Ce, N*H*W*Ce
	}
	if Wp != nil {
		wts, written = wts+Ce*M, written+N*g.OH*g.OW*Ce
	}
	if parts > 1 && convChainStaged(N*g.OH, threads, wts, written) {
		t.runStages(n, threads)
		*t = convChainTask{}
		return nil
	}
	// Each part's expanded rows and depthwise band live in its pool
	// scratch (in the node's cache without a pool).
	if n.Pool == nil {
		t.buf = nnBuf[float32](n, 3, parts*(t.esize+t.dsize))
	}
	t.taps = nnBuf[int](n, 2, parts*2*g.kh*g.kw)
	n.Pool.Run(parts, t)
	*t = convChainTask{}
	return nil
}

// convChainTask is a FusedConvChain split over output rows (N*OH of
// them). Depthwise geometry g has the expanded channels; C is X's.
type convChainTask struct {
	g             nhwcGeom
	C, M          int
	x, y, z       []float32
	wpe, wpd, wpp []float32
	be, bd, bp    []float32
	ee            nhwcPWEpi
	dLo, dHi      float32
	after         bool
	act           fusedAct
	eAct, dAct    fusedAct // the stages' activations that are not clamps
	band, erows   int
	esize, dsize  int
	buf           []float32 // band buffers without a pool
	taps          []int
	pool          *WorkPool
	// The channel split (runStages): the stage a section runs (0: the
	// row bands), the whole expanded input and depthwise output.
	stage      int
	eall, dall []float32
}

// convChainPartHook, when set (BenchmarkConvChainSplit), is called at
// the start and the end of every part, on the goroutine that runs it.
var convChainPartHook func(stage, i int, end bool)

func (t *convChainTask) runPart(i, parts int) {
	if h := convChainPartHook; h != nil {
		h(t.stage, i, false)
		t.runPart1(i, parts)
		h(t.stage, i, true)
		return
	}
	t.runPart1(i, parts)
}

func (t *convChainTask) runPart1(i, parts int) {
	if t.stage != 0 {
		t.runStagePart(i, parts)
		return
	}
	g := &t.g
	Ce := g.C
	nt := 2 * g.kh * g.kw
	taps := t.taps[i*nt : (i+1)*nt]
	var buf []float32
	if s := scratchFor(t.pool, i); s != nil {
		buf = s.bandBuf(t.esize + t.dsize)
	} else {
		buf = t.buf[i*(t.esize+t.dsize) : (i+1)*(t.esize+t.dsize)]
	}
	ebuf, dbuf := buf[:t.esize], buf[t.esize:]
	rowE := g.W * Ce // one expanded row
	// The expanded rows [eLo, eHi) of image eImg are in ebuf.
	eImg, eLo, eHi := -1, 0, 0
	r0, r1 := parSplit(g.N*g.OH, parts, i, 1)
	for r := r0; r < r1; {
		b, oh0 := r/g.OH, r%g.OH
		oh1 := min(oh0+t.band, g.OH, oh0+r1-r)
		// The input rows the band's windows touch (none when they all
		// lie in the padding: then an empty image at row 0).
		lo := max(0, oh0*g.sh-g.ph)
		hi := min(g.H, (oh1-1)*g.sh-g.ph+(g.kh-1)*g.dh+1)
		if hi <= lo {
			lo, hi = 0, 0
		}
		src := t.x[b*g.H*g.W*t.C:]
		if t.wpe != nil {
			from := lo
			if eImg == b && lo >= eLo && lo < eHi {
				copy(ebuf, ebuf[(lo-eLo)*rowE:(eHi-eLo)*rowE])
				from = eHi
			}
			if from < hi {
				nhwcPWGemm((hi-from)*g.W, Ce, t.C, t.x[((b*g.H+from)*g.W)*t.C:], t.C, nil, t.wpe, ebuf[(from-lo)*rowE:], Ce, &t.ee)
				if t.eAct.kind != fusedActNone {
					fusedActRow(t.eAct, ebuf[(from-lo)*rowE:(hi-lo)*rowE])
				}
			}
			eImg, eLo, eHi = b, lo, hi
			src = ebuf
		} else {
			src = src[lo*rowE:]
		}
		// The band's depthwise over rows [lo, hi) only: a geometry whose
		// image starts at row lo and whose output starts at row oh0.
		gl := *g
		gl.N, gl.H, gl.OH, gl.ph = 1, hi-lo, oh1-oh0, g.ph-oh0*g.sh+lo
		rl := g.OW * Ce
		if t.wpp != nil {
			for oh := 0; oh < oh1-oh0; oh++ {
				gl.row(nhwcModeDW, src, t.wpd, t.bd, dbuf, 0, oh, taps, false, t.dLo, t.dHi)
			}
			m := (oh1 - oh0) * g.OW
			if t.dAct.kind != fusedActNone {
				fusedActRow(t.dAct, dbuf[:m*Ce])
			}
			o := (b*g.OH + oh0) * g.OW * t.M
			blk := t.y[o : o+m*t.M]
			var z []float32
			if t.z != nil {
				z = t.z[o : o+m*t.M]
			}
			e, all := nhwcPWEpiOf(t.bp, z, t.after, t.act)
			nhwcPWGemm(m, t.M, Ce, dbuf, Ce, nil, t.wpp, blk, t.M, &e)
			if !all {
				fusedEpilogue32(blk, 0, nil, 0, z, t.after, t.act)
			}
		} else {
			// The depthwise is the last stage: its epilogue.
			clo, chi, clamp := fusedClampOf(t.act)
			epi := !clamp || t.z != nil
			if epi {
				clo, chi, _ = fusedClampOf(fusedAct{})
			}
			o := (b*g.OH + oh0) * rl
			for oh := 0; oh < oh1-oh0; oh++ {
				gl.row(nhwcModeDW, src, t.wpd, t.bd, t.y[o:], 0, oh, taps, false, clo, chi)
				if epi {
					yr := t.y[o+oh*rl : o+(oh+1)*rl]
					var z []float32
					if t.z != nil {
						z = t.z[o+oh*rl : o+(oh+1)*rl]
					}
					fusedEpilogue32(yr, 0, nil, 0, z, t.after, t.act)
				}
			}
		}
		r += oh1 - oh0
	}
}

// convChainForce overrides convChainStaged in tests and benchmarks: 0
// lets it choose, 1 forces the row bands, 2 the channel split.
var convChainForce int

// convChainStaged reports whether a FusedConvChain of rows output rows
// (N*OH) at threads threads (more than one), with wts weight floats (the
// 1x1 stages') and written floats of intermediates that the channel split
// writes out, runs as the channel split (runStages) rather than in row
// bands. Row bands keep the intermediates in L2 but each part streams all
// the weights and recomputes the expanded rows its windows share with the
// part before, and few rows split unevenly (7 as 4+3); the channel split
// pays a trip through L2/L3 for the intermediates instead. Both compute
// every value alike, so the choice does not change results.
//
// Measured with BenchmarkConvChainSplit at 2 threads (thread CPU time of
// each section's longest part, summed: the loaded machine's wall times
// swung 2x; 3 runs): the split over the bands 0.79-0.86 on 7x7 outputs with
// 960-1152 channels, 0.87-0.93 on 14x14 -> 7x7 (stride 2), 0.97-1.03 on
// 14x14 (wts/written 0.3-0.7), 1.02-1.31 on 28x28 -> 14x14 (wts/written
// 0.1), 1.0-1.5 on larger maps.
func convChainStaged(rows, threads, wts, written int) bool {
	switch convChainForce {
	case 1:
		return false
	case 2:
		return true
	}
	return rows < convChainStagedRows*threads && 2*wts >= written
}

// convChainStagedRows: row bands when each part has at least this many
// output rows.
const convChainStagedRows = 8

// The channel split's stages, one pool section each.
const (
	convChainExpand = 1 + iota
	convChainDW
	convChainProject
)

// runStages runs the chain as three sections split by channels: the
// expand over its output columns into the whole expanded tensor, the
// depthwise over channels, the projection over its output columns. No
// part recomputes rows or streams another part's weights.
func (t *convChainTask) runStages(n *Node, threads int) {
	g := &t.g
	Ce := g.C
	esize, dsize := 0, 0
	if t.wpe != nil {
		esize = g.N * g.H * g.W * Ce
	}
	if t.wpp != nil {
		dsize = g.N * g.OH * g.OW * Ce
	}
	buf := nnBuf[float32](n, 3, esize+dsize)
	t.eall, t.dall = buf[:esize], buf[esize:]
	// Each stage's channels go out in units of whole panels, up to
	// convChainUnits a thread, which the pool's goroutines take as they
	// come free (a 2-thread trace of mobilenet_v3_large had the worker's
	// equal half of an expand take 1.3-1.7x the caller's, section after
	// section). Every column is computed alike whatever the units.
	panels := func(c int) int { return min(convChainUnits*threads, (c+sgemmPkNR-1)/sgemmPkNR) }
	t.taps = nnBuf[int](n, 2, convChainUnits*threads*2*g.kh*g.kw)
	if t.wpe != nil {
		t.stage = convChainExpand
		n.Pool.Run(panels(Ce), t)
	}
	t.stage = convChainDW
	n.Pool.Run(panels(Ce), t)
	if t.wpp != nil {
		t.stage = convChainProject
		n.Pool.Run(panels(t.M), t)
	}
}

// convChainUnits is how many units of channels a thread's share of a
// channel-split stage is cut into (see runStages).
const convChainUnits = 4

// convChainCols is part i's columns of c: whole 16-column panels.
func convChainCols(c, parts, i int) (int, int) {
	const NR = sgemmPkNR
	lo, hi := parSplit((c+NR-1)/NR, parts, i, 1)
	return lo * NR, min(hi*NR, c)
}

func (t *convChainTask) runStagePart(i, parts int) {
	g := &t.g
	Ce := g.C
	switch t.stage {
	case convChainExpand:
		j0, j1 := convChainCols(Ce, parts, i)
		if j0 >= j1 {
			return
		}
		m := g.N * g.H * g.W
		nhwcPWGemmCols(m, Ce, j0, j1, t.C, t.x, t.C, nil, t.wpe, t.eall, Ce, &t.ee)
		if t.eAct.kind != fusedActNone {
			for r := 0; r < m; r++ {
				fusedActRow(t.eAct, t.eall[r*Ce+j0:r*Ce+j1])
			}
		}
	case convChainDW:
		j0, j1 := convChainCols(Ce, parts, i)
		if j0 >= j1 {
			return
		}
		nt := 2 * g.kh * g.kw
		taps := t.taps[i*nt : (i+1)*nt]
		src := t.x
		if t.wpe != nil {
			src = t.eall
		}
		dst, lo, hi := t.dall, t.dLo, t.dHi
		epi := false
		if t.wpp == nil {
			// The depthwise is the last stage: its epilogue.
			var clamp bool
			lo, hi, clamp = fusedClampOf(t.act)
			epi = !clamp || t.z != nil
			if epi {
				lo, hi, _ = fusedClampOf(fusedAct{})
			}
			dst = t.y
		}
		for r := 0; r < g.N*g.OH; r++ {
			convChainDWRow(g, src, t.wpd, t.bd, dst, r/g.OH, r%g.OH, taps, j0, j1, lo, hi)
			for p := r * g.OW; p < (r+1)*g.OW; p++ {
				px := dst[p*Ce+j0 : p*Ce+j1]
				switch {
				case t.wpp != nil && t.dAct.kind != fusedActNone:
					fusedActRow(t.dAct, px)
				case epi:
					var z []float32
					if t.z != nil {
						z = t.z[p*Ce+j0 : p*Ce+j1]
					}
					fusedEpilogue32(px, 0, nil, 0, z, t.after, t.act)
				}
			}
		}
	case convChainProject:
		j0, j1 := convChainCols(t.M, parts, i)
		if j0 >= j1 {
			return
		}
		m := g.N * g.OH * g.OW
		e, all := nhwcPWEpiOf(t.bp, t.z, t.after, t.act)
		nhwcPWGemmCols(m, t.M, j0, j1, Ce, t.dall, Ce, nil, t.wpp, t.y, t.M, &e)
		if !all {
			for r := 0; r < m; r++ {
				var z []float32
				if t.z != nil {
					z = t.z[r*t.M+j0 : r*t.M+j1]
				}
				fusedEpilogue32(t.y[r*t.M+j0:r*t.M+j1], 0, nil, 0, z, t.after, t.act)
			}
		}
	}
}

// convChainDWRow is g.row's depthwise mode for channels [j0, j1) only
// (a function, not a method: gen copies a file with methods of nhwcGeom
// wherever nhwcGeom goes).
func convChainDWRow(g *nhwcGeom, x, w, bias, y []float32, b, oh int, taps []int, j0, j1 int, lo, hi float32) {
	C := g.C
	ybase := (b*g.OH + oh) * g.OW * C
	for ow := 0; ow < g.OW; {
		np := 1
		if ow == g.lo && g.hi > g.lo {
			np = g.hi - g.lo
		}
		nt := g.pixelTaps(b, oh, ow, taps)
		nhwcDWCols(y[ybase+ow*C:ybase+(ow+np)*C], x, taps[:2*nt], w, bias, j0, j1, C, np, g.sw*C, lo, hi)
		ow += np
	}
}
