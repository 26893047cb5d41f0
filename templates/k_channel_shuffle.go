package templates

// CuvilChannelShuffle is cuvil::ChannelShuffle (passes/shuffle.go): its
// inputs concatenated along axis (one input: itself), then axis's C
// channels viewed as [groups, C/groups] and transposed, so output channel
// c*groups + j is channel j*(C/groups) + c of the concatenation. As a
// walk: output [outer, C/g, g, inner] (contiguous) reads input strides
// [C*inner, inner, (C/g)*inner, 1]. float32 runs its own loops: NCHW
// (inner = H*W) copies runs of inner floats, NHWC (inner = 1) gathers
// each pixel's channels; two NHWC inputs of C/2 channels each and groups 2
// (ShuffleNet's Concat and shuffle) interleave with no concatenation.
func CuvilChannelShuffle(n *Node) error {
	x, err := ewIn0(n)
	if err != nil {
		return err
	}
	if len(n.In) > 1 {
		return shuffleConcat(n, x)
	}
	r := len(x.Shape)
	axis := int(n.Attrs.Int("axis", 1))
	if axis < 0 {
		axis += r
	}
	if axis < 0 || axis >= r {
		return n.Errorf("axis %d outside rank %d", n.Attrs.Int("axis", 1), r)
	}
	g := int(n.Attrs.Int("groups", 0))
	C := x.Shape[axis]
	if g <= 0 || C%g != 0 {
		return n.Errorf("groups %d does not divide %d channels", g, C)
	}
	outer, inner := 1, 1
	for _, d := range x.Shape[:axis] {
		outer *= d
	}
	for _, d := range x.Shape[axis+1:] {
		inner *= d
	}
	out := n.Out[0]
	out.Resize(x.DType, x.Shape...)
	cg := C / g
	if xf, ok := x.Data.([]float32); ok {
		if inner == 1 && g == 2 {
			shuffle2Run(n, out.F32(), xf, nil, C, cg)
			return nil
		}
		shuffleF32(out.F32(), xf, outer, g, cg, inner)
		return nil
	}
	var w ewWalk
	w.rank, w.nops = 4, 2
	w.dims = [ewMaxRank]int{outer, cg, g, inner}
	ewContig(&w.st[0], w.dims[:4])
	w.st[1][0], w.st[1][1], w.st[1][2], w.st[1][3] = C*inner, inner, cg*inner, 1
	w.coalesce()
	ewCopyWalkAny(&w, out.Data, x.Data)
	return nil
}

// shuffleF32 is the float32 shuffle of [outer, g, cg, inner] into
// [outer, cg, g, inner].
func shuffleF32(dst, src []float32, outer, g, cg, inner int) {
	C := g * cg
	for o := 0; o < outer; o++ {
		s, d := src[o*C*inner:(o+1)*C*inner], dst[o*C*inner:(o+1)*C*inner]
		if inner == 1 {
			for j := 0; j < g; j++ {
				for c := 0; c < cg; c++ {
					d[c*g+j] = s[j*cg+c]
				}
			}
			continue
		}
		for c := 0; c < cg; c++ {
			for j := 0; j < g; j++ {
				copy(d[(c*g+j)*inner:(c*g+j+1)*inner], s[(j*cg+c)*inner:(j*cg+c+1)*inner])
			}
		}
	}
}

// shuffle2F32 interleaves each pixel's two channel halves (NHWC, groups 2)
// for all pixels of src (len a multiple of C = 2*cg), with interleave2.
func shuffle2F32(dst, src []float32, C, cg int) {
	for p := 0; p+C <= len(src) && p+C <= len(dst); p += C {
		interleave2(dst[p:p+C], src[p:p+cg], src[p+cg:p+C])
	}
}

// shuffle2Run runs the groups-2 NHWC interleave over the session pool,
// split by pixels: of src's halves (shuffle2F32, C channels, cg = C/2) or,
// with b set, of the two maps src and b (shuffle2F32From). Each output
// float is a copy, so the split cannot change any bits.
func shuffle2Run(n *Node, dst, src, b []float32, C, cg int) {
	pixels := len(src)
	if b == nil {
		pixels = len(dst) / C
	}
	parts := 1
	if threads := n.Pool.Threads(); threads > 1 && len(dst) >= shuffleParMin && pixels >= 2 {
		parts = threads
	}
	if parts == 1 {
		if b != nil {
			shuffle2F32From(dst, src, b)
		} else {
			shuffle2F32(dst, src, C, cg)
		}
		return
	}
	t := parTaskOf[shuffle2Task](n)
	*t = shuffle2Task{dst: dst, src: src, b: b, C: C, cg: cg, pixels: pixels}
	n.Pool.Run(parts, t)
	*t = shuffle2Task{}
}

// shuffleParMin is the least output floats worth splitting a shuffle for.
const shuffleParMin = 1 << 14

// shuffle2Task is shuffle2Run's work: pixels units (pixels of C floats,
// or with b set single floats of src and b, in runs of 8).
type shuffle2Task struct {
	dst, src, b   []float32
	C, cg, pixels int
}

func (t *shuffle2Task) runPart(i, parts int) {
	lo, hi := parSplit(t.pixels, parts, i, 8)
	if lo >= hi {
		return
	}
	if t.b != nil {
		shuffle2F32From(t.dst[2*lo:2*hi], t.src[lo:hi], t.b[lo:hi])
		return
	}
	shuffle2F32(t.dst[lo*t.C:hi*t.C], t.src[lo*t.C:hi*t.C], t.C, t.cg)
}

// shuffleConcat is ChannelShuffle of several inputs: two float32 NHWC
// halves with groups 2 interleave directly; anything else is concatenated
// (the Concat kernel) and shuffled.
func shuffleConcat(n *Node, x *Tensor) error {
	r := len(x.Shape)
	axis := int(n.Attrs.Int("axis", 1))
	if axis < 0 {
		axis += r
	}
	if y := n.In[len(n.In)-1]; len(n.In) == 2 && axis == r-1 && n.Attrs.Int("groups", 0) == 2 && y != nil &&
		x.DType == F32 && y.DType == F32 && len(y.Shape) == r && shuffleSameShape(x.Shape, y.Shape) {
		out := n.Out[0]
		shape := append([]int(nil), x.Shape...)
		shape[axis] *= 2
		out.Resize(F32, shape...)
		if dst := out.F32(); len(dst) == 2*x.Len() {
			shuffle2Run(n, dst, x.F32(), y.F32(), 0, 0)
		}
		return nil
	}
	cat := &Node{Name: n.Name, Op: "Concat", Version: 13, Attrs: Attrs{"axis": int64(axis)}, In: n.In, Out: []*Tensor{{}}}
	if err := Concat(cat); err != nil {
		return err
	}
	one := &Node{Name: n.Name, Op: n.Op, Version: n.Version, Attrs: n.Attrs, In: cat.Out, Out: n.Out}
	return CuvilChannelShuffle(one)
}

func shuffleSameShape(a, b []int) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return len(a) == len(b)
}

// shuffle2F32From interleaves two NHWC maps of C/2 channels each, pixel by
// pixel: dst's pixel p is a[p,0], b[p,0], a[p,1], b[p,1], ... (Concat of
// a and b along the channels, then the groups-2 shuffle), with
// interleave2.
func shuffle2F32From(dst, a, b []float32) {
	if len(dst) == 0 || len(a) != len(b) || len(dst) != 2*len(a) {
		return
	}
	interleave2(dst, a, b)
}
