package templates

// Shape kernels: views and copies that move elements without computing on
// them. Most are one strided walk (shapeCopy: ewCopyWalkAny, or tiled
// block transposes where the inner two dims swap; split between threads
// over 64K elements): Transpose permutes source strides, Slice steps
// them, Expand and Tile repeat with stride 0, Concat and Split place each
// piece at an offset of the larger tensor. Reshape, Flatten, Squeeze and
// Unsqueeze copy nothing when the memory plan put them over their input.

// ewIntList reads an integer list from attribute attr before opset
// inputSince and from input in from then on, into scratch slot.
func ewIntList(n *Node, attr string, in, inputSince, slot int) ([]int, bool) {
	s := ewScr(n)
	if n.Version < inputSince {
		v, ok := n.Attrs[attr].([]int64)
		if !ok {
			return nil, false
		}
		d := s.Ints(slot, len(v))
		for i, x := range v {
			d[i] = int(x)
		}
		return d, true
	}
	t := n.Input(in)
	if t == nil {
		return nil, false
	}
	return ewInts(t, s.Ints(slot, t.Len())), true
}

func ewShapeCopy(s *ewShape) []int { return append([]int(nil), s.s()...) }

// ewReshaped makes out a copy of x with another shape of the same size.
func ewReshaped(n *Node, x *Tensor, shape []int) error {
	if ewSize(shape) != x.Len() {
		return n.Errorf("cannot view %v (%d elements) as %v", x.Shape, x.Len(), append([]int(nil), shape...))
	}
	out := n.Out[0]
	if out == x {
		out.SetShape(shape)
		return nil
	}
	out.Resize(x.DType, shape...)
	if !ewSameStart(out.Data, x.Data) {
		// The memory plan puts a view over its input where the input
		// dies here (passes.inPlaceInputs): then there is nothing to copy.
		ewCopyData(out.Data, x.Data)
	}
	return nil
}

// ewSameStart reports whether slices a and b (of one element type) start
// at the same element.
func ewSameStart(a, b any) bool {
	switch a := a.(type) {
	case []float32:
		return sameStart(a, b)
	case []float64:
		return sameStart(a, b)
	case []uint16:
		return sameStart(a, b)
	case []int8:
		return sameStart(a, b)
	case []uint8:
		return sameStart(a, b)
	case []int16:
		return sameStart(a, b)
	case []int32:
		return sameStart(a, b)
	case []int64:
		return sameStart(a, b)
	case []uint32:
		return sameStart(a, b)
	case []uint64:
		return sameStart(a, b)
	case []bool:
		return sameStart(a, b)
	case []string:
		return sameStart(a, b)
	}
	return false
}

func sameStart[T any](a []T, b any) bool {
	c, ok := b.([]T)
	return ok && len(a) > 0 && len(c) > 0 && &a[0] == &c[0]
}

func ewIn0(n *Node) (*Tensor, error) {
	if len(n.In) < 1 || n.In[0] == nil || len(n.Out) < 1 || n.Out[0] == nil {
		return nil, n.Errorf("want an input and an output")
	}
	return n.In[0], nil
}

// Reshape: shape attribute before opset 5, input after; 0 copies the input
// dim (unless allowzero, opset 14) and one -1 is inferred.
func Reshape(n *Node) error {
	x, err := ewIn0(n)
	if err != nil {
		return err
	}
	shp, ok := ewIntList(n, "shape", 1, 5, 0)
	if !ok {
		return n.Errorf("missing shape")
	}
	if len(shp) > ewMaxRank {
		return n.Errorf("rank %d above %d", len(shp), ewMaxRank)
	}
	allowzero := n.Attrs.Int("allowzero", 0) == 1
	var os ewShape
	os.n = len(shp)
	infer, known := -1, 1
	for i, d := range shp {
		switch {
		case d == 0 && !allowzero:
			if i >= len(x.Shape) {
				return n.Errorf("shape[%d] = 0 but the input has rank %d", i, len(x.Shape))
			}
			d = x.Shape[i]
		case d == -1:
			if infer >= 0 {
				return n.Errorf("more than one -1 in shape")
			}
			infer = i
			continue
		case d < 0:
			return n.Errorf("shape[%d] = %d", i, d)
		}
		os.d[i] = d
		known *= d
	}
	if infer >= 0 {
		if known == 0 || x.Len()%known != 0 {
			return n.Errorf("cannot infer -1: %d elements over %d", x.Len(), known)
		}
		os.d[infer] = x.Len() / known
	}
	return ewReshaped(n, x, os.s())
}

// Flatten makes a 2-D tensor [prod(dims before axis), prod(rest)].
func Flatten(n *Node) error {
	x, err := ewIn0(n)
	if err != nil {
		return err
	}
	a := int(n.Attrs.Int("axis", 1))
	if a < 0 {
		a += len(x.Shape)
	}
	if a < 0 || a > len(x.Shape) {
		return n.Errorf("axis %d out of range for rank %d", n.Attrs.Int("axis", 1), len(x.Shape))
	}
	var shp [2]int
	shp[0], shp[1] = ewSize(x.Shape[:a]), ewSize(x.Shape[a:])
	return ewReshaped(n, x, shp[:])
}

// Squeeze removes the listed unit dims (all unit dims when none are
// listed); axes is an attribute before opset 13, an input after.
func Squeeze(n *Node) error {
	x, err := ewIn0(n)
	if err != nil {
		return err
	}
	axes, _ := ewIntList(n, "axes", 1, 13, 0)
	r := len(x.Shape)
	var drop [ewMaxRank]bool
	if r > ewMaxRank {
		return n.Errorf("rank %d above %d", r, ewMaxRank)
	}
	if len(axes) == 0 {
		for i, d := range x.Shape {
			drop[i] = d == 1
		}
	}
	for _, a := range axes {
		ax, ok := ewAxis(int64(a), r)
		if !ok || x.Shape[ax] != 1 {
			return n.Errorf("cannot squeeze axis %d of %v", a, x.Shape)
		}
		drop[ax] = true
	}
	var os ewShape
	for i, d := range x.Shape {
		if !drop[i] {
			os.d[os.n] = d
			os.n++
		}
	}
	return ewReshaped(n, x, os.s())
}

// Unsqueeze inserts unit dims at the listed output positions.
func Unsqueeze(n *Node) error {
	x, err := ewIn0(n)
	if err != nil {
		return err
	}
	axes, ok := ewIntList(n, "axes", 1, 13, 0)
	if !ok {
		return n.Errorf("missing axes")
	}
	r := len(x.Shape) + len(axes)
	if r > ewMaxRank {
		return n.Errorf("rank %d above %d", r, ewMaxRank)
	}
	var ins [ewMaxRank]bool
	for _, a := range axes {
		ax, ok := ewAxis(int64(a), r)
		if !ok || ins[ax] {
			return n.Errorf("bad or repeated axis %d for output rank %d", a, r)
		}
		ins[ax] = true
	}
	var os ewShape
	os.n = r
	j := 0
	for i := 0; i < r; i++ {
		if ins[i] {
			os.d[i] = 1
		} else {
			os.d[i] = x.Shape[j]
			j++
		}
	}
	return ewReshaped(n, x, os.s())
}

// Transpose permutes dims by perm (default: reversed).
func Transpose(n *Node) error {
	x, err := ewIn0(n)
	if err != nil {
		return err
	}
	r := len(x.Shape)
	if r > ewMaxRank {
		return n.Errorf("rank %d above %d", r, ewMaxRank)
	}
	perm := n.Attrs.Ints("perm")
	if perm != nil && len(perm) != r {
		return n.Errorf("perm has %d entries for rank %d", len(perm), r)
	}
	var in [ewMaxRank]int
	ewContig(&in, x.Shape)
	var w ewWalk
	var os ewShape
	os.n = r
	var seen [ewMaxRank]bool
	for i := 0; i < r; i++ {
		p := r - 1 - i
		if perm != nil {
			p = int(perm[i])
		}
		if p < 0 || p >= r || seen[p] {
			return n.Errorf("perm %v is not a permutation", perm)
		}
		seen[p] = true
		os.d[i] = x.Shape[p]
		w.st[1][i] = in[p]
	}
	out := n.Out[0]
	out.Resize(x.DType, os.s()...)
	w.rank, w.nops = r, 2
	copy(w.dims[:], os.s())
	ewContig(&w.st[0], os.s())
	w.coalesce()
	shapeCopy(n, &w, out.Data, x.Data, out.Len())
	return nil
}

// transposeBlocks32 runs a coalesced float32 walk whose two inner dims
// (m, n) swap, x's [n, m] (row stride ldx) into y's [m, n] (row stride
// ldy), as a tiled 2-D transpose per block: NHWC <-> NCHW conversions,
// attention's K^T, batched matrix transposes, and the column ranges of
// them that shapeCopy's parts take. It reports false for other walks.
func transposeBlocks32(w *ewWalk, y, x []float32) bool {
	j := w.rank - 1
	if j < 1 || w.st[0][j] != 1 || w.st[1][j-1] != 1 {
		return false
	}
	n, m := w.dims[j], w.dims[j-1]
	ldy, ldx := w.st[0][j-1], w.st[1][j]
	if ldy < n || ldx < m {
		return false
	}
	ow := *w
	ow.rank--
	for it := ow.iter(); it.next(); {
		o, i := it.off[0], it.off[1]
		transpose2D32(y[o:o+(m-1)*ldy+n], x[i:i+(n-1)*ldx+m], n, m, ldx, ldy)
	}
	return true
}

// copyParMin is the least number of elements a copy walk splits between
// threads for: below it waking a thread costs more than the copy.
const copyParMin = 1 << 16

// shapeCopy runs a coalesced walk of dst = src moves (transposeBlocks32
// where it applies, else ewCopyWalkAny), split between the pool's threads
// along the walk's outermost dim when it moves elems >= copyParMin
// elements.
func shapeCopy(n *Node, w *ewWalk, dst, src any, elems int) {
	threads := n.Pool.Threads()
	if threads < 2 || elems < copyParMin || w.dims[0] < 2 {
		shapeCopyRange(w, dst, src)
		return
	}
	t := parTaskOf[shapeCopyTask](n)
	*t = shapeCopyTask{w: *w, dst: dst, src: src}
	n.Pool.Run(min(threads, w.dims[0]), t)
	*t = shapeCopyTask{}
}

func shapeCopyRange(w *ewWalk, dst, src any) {
	if xf, ok := src.([]float32); ok && transposeBlocks32(w, dst.([]float32), xf) {
		return
	}
	ewCopyWalkAny(w, dst, src)
}

// shapeCopyTask is shapeCopy's walk with its outermost dim split.
type shapeCopyTask struct {
	w        ewWalk // by value: a pointer would move the caller's walk to the heap
	dst, src any
}

func (t *shapeCopyTask) runPart(i, parts int) {
	lo, hi := parSplit(t.w.dims[0], parts, i, 1)
	if lo >= hi {
		return
	}
	sub := t.w
	sub.dims[0] = hi - lo
	for k := 0; k < sub.nops; k++ {
		sub.base[k] += lo * sub.st[k][0]
	}
	shapeCopyRange(&sub, t.dst, t.src)
}

// Concat joins its inputs along axis (default 1 in opset 1).
func Concat(n *Node) error {
	if len(n.In) == 0 || n.In[0] == nil {
		return n.Errorf("want inputs")
	}
	first := n.In[0]
	r := len(first.Shape)
	if r > ewMaxRank || r == 0 {
		return n.Errorf("rank %d not supported", r)
	}
	def := int64(0)
	if n.Version < 4 {
		def = 1
	}
	ax, ok := ewAxis(n.Attrs.Int("axis", def), r)
	if !ok {
		return n.Errorf("axis %d out of range for rank %d", n.Attrs.Int("axis", def), r)
	}
	var os ewShape
	os.set(first.Shape)
	os.d[ax] = 0
	for _, t := range n.In {
		if t == nil {
			continue
		}
		if len(t.Shape) != r || t.DType != first.DType {
			return n.Errorf("input %s does not match %s", t, first)
		}
		for d := 0; d < r; d++ {
			if d != ax && t.Shape[d] != first.Shape[d] {
				return n.Errorf("input %s does not match %s off axis %d", t, first, ax)
			}
		}
		os.d[ax] += t.Shape[ax]
	}
	out := n.Out[0]
	out.Resize(first.DType, os.s()...)
	var ost [ewMaxRank]int
	ewContig(&ost, os.s())
	if threads := n.Pool.Threads(); threads > 1 && len(n.In) > 1 && out.Len() >= parMinElems {
		// Inputs split between parts: each lands where it does serially.
		t := parTaskOf[concatTask](n)
		*t = concatTask{n: n, out: out, ost: ost, ax: ax}
		n.Pool.Run(min(threads, len(n.In)), t)
		*t = concatTask{}
		return nil
	}
	concatRange(n.In, 0, len(n.In), out, &ost, ax)
	return nil
}

// concatTask is Concat with its inputs split between parts.
type concatTask struct {
	n   *Node
	out *Tensor
	ost [ewMaxRank]int
	ax  int
}

func (t *concatTask) runPart(i, parts int) {
	lo, hi := parSplit(len(t.n.In), parts, i, 1)
	if lo < hi {
		concatRange(t.n.In, lo, hi, t.out, &t.ost, t.ax)
	}
}

// concatRange copies inputs [lo, hi) of a Concat along axis ax into out
// (contiguous strides ost).
func concatRange(in []*Tensor, lo, hi int, out *Tensor, ost *[ewMaxRank]int, ax int) {
	at := 0
	for _, t := range in[:lo] {
		if t != nil {
			at += t.Shape[ax]
		}
	}
	for _, t := range in[lo:hi] {
		if t == nil {
			continue
		}
		var w ewWalk
		w.rank, w.nops = len(t.Shape), 2
		copy(w.dims[:], t.Shape)
		w.st[0] = *ost
		ewContig(&w.st[1], t.Shape)
		w.base[0] = at * ost[ax]
		at += t.Shape[ax]
		w.coalesce()
		ewCopyWalkAny(&w, out.Data, t.Data)
	}
}

// Split cuts input 0 along axis into the outputs: sizes from the split
// attribute (opset < 13; opset 1 also takes them as input 1), the split
// input (13+), or equal parts (num_outputs, opset 18, rounds up).
func Split(n *Node) error {
	x, err := ewIn0(n)
	if err != nil {
		return err
	}
	r := len(x.Shape)
	if r > ewMaxRank || r == 0 {
		return n.Errorf("rank %d not supported", r)
	}
	ax, ok := ewAxis(n.Attrs.Int("axis", 0), r)
	if !ok {
		return n.Errorf("axis %d out of range for rank %d", n.Attrs.Int("axis", 0), r)
	}
	var split []int
	if n.Version >= 13 || (n.Version < 2 && n.Input(1) != nil) {
		if t := n.Input(1); t != nil {
			split = ewInts(t, ewScr(n).Ints(0, t.Len()))
		}
	} else {
		split, _ = ewIntList(n, "split", 1, 1<<30, 0)
	}
	dim := x.Shape[ax]
	k := len(n.Out)
	if split == nil {
		split = ewScr(n).Ints(0, k)
		chunk := 0
		if n.Attrs.Has("num_outputs") {
			chunk = (dim + k - 1) / k
		} else {
			if dim%k != 0 {
				return n.Errorf("dim %d does not split into %d equal parts", dim, k)
			}
			chunk = dim / k
		}
		left := dim
		for i := range split {
			split[i] = min(chunk, left)
			left -= split[i]
		}
	}
	if len(split) != k {
		return n.Errorf("%d split sizes for %d outputs", len(split), k)
	}
	total := 0
	for _, s := range split {
		if s < 0 {
			return n.Errorf("negative split size %d", s)
		}
		total += s
	}
	if total != dim {
		return n.Errorf("split sizes sum to %d, dim is %d", total, dim)
	}
	var ist [ewMaxRank]int
	ewContig(&ist, x.Shape)
	at := 0
	for i, out := range n.Out {
		if out == nil {
			at += split[i]
			continue
		}
		var os ewShape
		os.set(x.Shape)
		os.d[ax] = split[i]
		out.Resize(x.DType, os.s()...)
		var w ewWalk
		w.rank, w.nops = r, 2
		copy(w.dims[:], os.s())
		ewContig(&w.st[0], os.s())
		w.st[1] = ist
		w.base[1] = at * ist[ax]
		at += split[i]
		w.coalesce()
		shapeCopy(n, &w, out.Data, x.Data, out.Len())
	}
	return nil
}

// Slice: starts/ends/axes attributes before opset 10; starts, ends, axes,
// steps inputs after. Negative indices count from the end; out-of-range
// bounds clamp as in numpy.
func Slice(n *Node) error {
	x, err := ewIn0(n)
	if err != nil {
		return err
	}
	r := len(x.Shape)
	if r > ewMaxRank {
		return n.Errorf("rank %d above %d", r, ewMaxRank)
	}
	starts, ok1 := ewIntList(n, "starts", 1, 10, 0)
	ends, ok2 := ewIntList(n, "ends", 2, 10, 1)
	if !ok1 || !ok2 || len(starts) != len(ends) {
		return n.Errorf("want starts and ends of equal length")
	}
	axes, hasAxes := ewIntList(n, "axes", 3, 10, 2)
	var steps []int
	if n.Version >= 10 {
		steps, _ = ewIntList(n, "steps", 4, 10, 3)
	}
	if (hasAxes && len(axes) != len(starts)) || (steps != nil && len(steps) != len(starts)) {
		return n.Errorf("axes/steps lengths differ from starts")
	}
	var st, step [ewMaxRank]int
	var os ewShape
	os.set(x.Shape)
	var done [ewMaxRank]bool
	for i := 0; i < r; i++ {
		step[i] = 1
	}
	for i := range starts {
		a := i
		if hasAxes {
			var ok bool
			if a, ok = ewAxis(int64(axes[i]), r); !ok || done[a] {
				return n.Errorf("bad or repeated axis %d", axes[i])
			}
		}
		done[a] = true
		s, e, k, d := starts[i], ends[i], 1, x.Shape[a]
		if steps != nil {
			k = steps[i]
		}
		if k == 0 {
			return n.Errorf("step 0 on axis %d", a)
		}
		if s < 0 {
			s += d
		}
		if e < 0 {
			e += d
		}
		cnt := 0
		if k > 0 {
			s, e = min(max(s, 0), d), min(max(e, 0), d)
			if e > s {
				cnt = (e - s + k - 1) / k
			}
		} else {
			// numpy (the ONNX reference): a start still below 0 selects
			// nothing, where the spec text would clamp it to 0.
			s, e = min(max(s, -1), d-1), min(max(e, -1), d-1)
			if s > e {
				cnt = (s - e - k - 1) / -k
			}
		}
		st[a], step[a], os.d[a] = s, k, cnt
	}
	out := n.Out[0]
	out.Resize(x.DType, os.s()...)
	if out.Len() == 0 {
		return nil
	}
	var w ewWalk
	w.rank, w.nops = r, 2
	copy(w.dims[:], os.s())
	ewContig(&w.st[0], os.s())
	var ist [ewMaxRank]int
	ewContig(&ist, x.Shape)
	for i := 0; i < r; i++ {
		w.st[1][i] = ist[i] * step[i]
		w.base[1] += st[i] * ist[i]
	}
	w.coalesce()
	shapeCopy(n, &w, out.Data, x.Data, out.Len())
	return nil
}

// Expand broadcasts input 0 against the shape in input 1 (both ways).
func Expand(n *Node) error {
	x, err := ewIn0(n)
	if err != nil {
		return err
	}
	if n.Input(1) == nil {
		return n.Errorf("missing shape")
	}
	shp := ewInts(n.In[1], ewScr(n).Ints(0, n.In[1].Len()))
	var os ewShape
	if !ewBroadcastShape(&os, x.Shape, shp) {
		return n.Errorf("cannot expand %v to %v", x.Shape, append([]int(nil), shp...))
	}
	out := n.Out[0]
	out.Resize(x.DType, os.s()...)
	var w ewWalk
	w.initBroadcast(os.s(), x.Shape)
	shapeCopy(n, &w, out.Data, x.Data, out.Len())
	return nil
}

// Tile repeats the input repeats[i] times along each axis (opset 1: one
// axis given by inputs tiles and axis).
func Tile(n *Node) error {
	x, err := ewIn0(n)
	if err != nil {
		return err
	}
	r := len(x.Shape)
	if 2*r > ewMaxRank {
		return n.Errorf("rank %d above %d", r, ewMaxRank/2)
	}
	var rep [ewMaxRank]int
	for i := 0; i < r; i++ {
		rep[i] = 1
	}
	if n.Version < 6 {
		if n.Input(1) == nil || n.Input(2) == nil {
			return n.Errorf("want tiles and axis inputs")
		}
		ax, ok := ewAxis(ewI64At(n.In[2], 0), r)
		if !ok {
			return n.Errorf("axis out of range")
		}
		rep[ax] = int(ewI64At(n.In[1], 0))
	} else {
		if n.Input(1) == nil || n.In[1].Len() != r {
			return n.Errorf("want %d repeats", r)
		}
		for i := 0; i < r; i++ {
			rep[i] = int(ewI64At(n.In[1], i))
		}
	}
	var os ewShape
	os.n = r
	var w ewWalk
	w.rank, w.nops = 2*r, 2
	var ist [ewMaxRank]int
	ewContig(&ist, x.Shape)
	for i := 0; i < r; i++ {
		if rep[i] < 0 {
			return n.Errorf("negative repeat %d", rep[i])
		}
		os.d[i] = rep[i] * x.Shape[i]
		w.dims[2*i], w.dims[2*i+1] = rep[i], x.Shape[i]
		w.st[1][2*i], w.st[1][2*i+1] = 0, ist[i]
	}
	out := n.Out[0]
	out.Resize(x.DType, os.s()...)
	if out.Len() == 0 {
		return nil
	}
	ewContig(&w.st[0], w.dims[:2*r])
	w.coalesce()
	shapeCopy(n, &w, out.Data, x.Data, out.Len())
	return nil
}

// DepthToSpace moves channel blocks into b x b spatial blocks (DCR: depth
// major, the only mode before opset 11; CRD: channel major).
func DepthToSpace(n *Node) error {
	x, err := ewIn0(n)
	if err != nil {
		return err
	}
	b := int(n.Attrs.Int("blocksize", 0))
	if len(x.Shape) != 4 || b <= 0 || x.Shape[1]%(b*b) != 0 {
		return n.Errorf("want NCHW input with C divisible by blocksize^2, have %v, blocksize %d", x.Shape, b)
	}
	N, C, H, W := x.Shape[0], x.Shape[1], x.Shape[2], x.Shape[3]
	c := C / (b * b)
	out := n.Out[0]
	out.Resize(x.DType, N, c, H*b, W*b)
	var w ewWalk
	w.rank, w.nops = 6, 2
	w.dims = [ewMaxRank]int{N, c, H, b, W, b}
	ewContig(&w.st[0], w.dims[:6])
	hw := H * W
	if n.Attrs.String("mode", "DCR") == "CRD" {
		w.st[1] = [ewMaxRank]int{C * hw, b * b * hw, W, b * hw, 1, hw}
	} else {
		w.st[1] = [ewMaxRank]int{C * hw, hw, W, b * c * hw, 1, c * hw}
	}
	w.coalesce()
	shapeCopy(n, &w, out.Data, x.Data, out.Len())
	return nil
}

// SpaceToDepth is DepthToSpace's inverse (DCR order).
func SpaceToDepth(n *Node) error {
	x, err := ewIn0(n)
	if err != nil {
		return err
	}
	b := int(n.Attrs.Int("blocksize", 0))
	if len(x.Shape) != 4 || b <= 0 || x.Shape[2]%b != 0 || x.Shape[3]%b != 0 {
		return n.Errorf("want NCHW input with H, W divisible by blocksize, have %v, blocksize %d", x.Shape, b)
	}
	N, C, H, W := x.Shape[0], x.Shape[1], x.Shape[2], x.Shape[3]
	out := n.Out[0]
	out.Resize(x.DType, N, C*b*b, H/b, W/b)
	var w ewWalk
	w.rank, w.nops = 6, 2
	w.dims = [ewMaxRank]int{N, b, b, C, H / b, W / b}
	ewContig(&w.st[0], w.dims[:6])
	w.st[1] = [ewMaxRank]int{C * H * W, W, 1, H * W, b * W, b}
	w.coalesce()
	shapeCopy(n, &w, out.Data, x.Data, out.Len())
	return nil
}

// Pad pads (or, with negative pads, crops) each axis: pads attribute
// ("paddings" in opset 1) before opset 11, input after, optionally for the
// listed axes (opset 18). Modes: constant, reflect, edge, wrap.
func Pad(n *Node) error {
	x, err := ewIn0(n)
	if err != nil {
		return err
	}
	r := len(x.Shape)
	if r > ewMaxRank {
		return n.Errorf("rank %d above %d", r, ewMaxRank)
	}
	s := ewScr(n)
	name := "pads"
	if n.Version < 2 {
		name = "paddings"
	}
	pads, ok := ewIntList(n, name, 1, 11, 0)
	if !ok {
		return n.Errorf("missing pads")
	}
	var pb, pe [ewMaxRank]int
	if axes, hasAxes := ewIntList(n, "", 3, 18, 1); hasAxes && n.Version >= 18 {
		if len(pads) != 2*len(axes) {
			return n.Errorf("%d pads for %d axes", len(pads), len(axes))
		}
		for i, a := range axes {
			ax, ok := ewAxis(int64(a), r)
			if !ok {
				return n.Errorf("axis %d out of range", a)
			}
			pb[ax], pe[ax] = pads[i], pads[len(axes)+i]
		}
	} else {
		if len(pads) != 2*r {
			return n.Errorf("%d pads for rank %d", len(pads), r)
		}
		copy(pb[:], pads[:r])
		copy(pe[:], pads[r:])
	}
	mode := n.Attrs.String("mode", "constant")
	// The input region kept (after cropping) and the output shape.
	var lo, ln [ewMaxRank]int
	var os ewShape
	os.n = r
	for i := 0; i < r; i++ {
		lo[i], ln[i] = max(-pb[i], 0), x.Shape[i]-max(-pb[i], 0)-max(-pe[i], 0)
		if ln[i] < 0 {
			return n.Errorf("pads crop axis %d below zero", i)
		}
		pb[i], pe[i] = max(pb[i], 0), max(pe[i], 0)
		os.d[i] = ln[i] + pb[i] + pe[i]
		if mode != "constant" && ln[i] == 0 && os.d[i] > 0 {
			return n.Errorf("cannot %s-pad an empty axis", mode)
		}
	}
	out := n.Out[0]
	out.Resize(x.DType, os.s()...)
	var ist, ost [ewMaxRank]int
	ewContig(&ist, x.Shape)
	ewContig(&ost, os.s())
	switch mode {
	case "constant":
		// Fill with the value, then copy the kept region inside.
		if v := n.Input(2); n.Version >= 11 && v != nil {
			if v.DType != x.DType || v.Len() != 1 {
				return n.Errorf("constant_value must be a %s scalar", x.DType)
			}
			ewFill(out.Data, 0, out.Len(), v.Data, 0)
		} else {
			val := 0.0
			if n.Version < 11 {
				val = float64(n.Attrs.Float("value", 0))
			}
			if x.DType == String || val == 0 {
				ewZero(out.Data, 0, out.Len())
			} else {
				s.val.Resize(x.DType)
				ewSetF64(&s.val, 0, val)
				ewFill(out.Data, 0, out.Len(), s.val.Data, 0)
			}
		}
		if ewSize(ln[:r]) == 0 {
			return nil
		}
		var w ewWalk
		w.rank, w.nops = r, 2
		copy(w.dims[:], ln[:r])
		w.st[0], w.st[1] = ost, ist
		for i := 0; i < r; i++ {
			w.base[0] += pb[i] * ost[i]
			w.base[1] += lo[i] * ist[i]
		}
		w.coalesce()
		shapeCopy(n, &w, out.Data, x.Data, ewSize(ln[:r]))
		return nil
	case "reflect", "edge", "wrap":
	default:
		return n.Errorf("unknown mode %q", mode)
	}
	if out.Len() == 0 {
		return nil
	}
	if r == 0 {
		ewMove(out.Data, 0, x.Data, 0, 1)
		return nil
	}
	var idx [ewMaxRank]int
	last := r - 1
	W := os.d[last]
	for o := 0; o < out.Len(); o += W {
		src := 0
		for d := 0; d < last; d++ {
			src += (lo[d] + ewPadMap(idx[d]-pb[d], ln[d], mode)) * ist[d]
		}
		src += lo[last]
		// Interior in one block, the padded edges element by element.
		ewMove(out.Data, o+pb[last], x.Data, src, ln[last])
		for j := 0; j < pb[last]; j++ {
			ewMove(out.Data, o+j, x.Data, src+ewPadMap(j-pb[last], ln[last], mode), 1)
		}
		for j := pb[last] + ln[last]; j < W; j++ {
			ewMove(out.Data, o+j, x.Data, src+ewPadMap(j-pb[last], ln[last], mode), 1)
		}
		for d := last - 1; d >= 0; d-- {
			if idx[d]++; idx[d] < os.d[d] {
				break
			}
			idx[d] = 0
		}
	}
	return nil
}

// ewPadMap maps a position k (relative to the kept region of length n) to
// the source position it copies.
func ewPadMap(k, n int, mode string) int {
	if k >= 0 && k < n {
		return k
	}
	switch mode {
	case "edge":
		return min(max(k, 0), n-1)
	case "wrap":
		return ((k % n) + n) % n
	}
	if n == 1 {
		return 0
	}
	p := 2 * (n - 1)
	k = ((k % p) + p) % p
	if k >= n {
		k = p - k
	}
	return k
}

// transpose2D32 sets y = x^T for a float32 matrix x [rows, cols] (row
// stride ldx) into y [cols, rows] (row stride ldy), in 32x32 tiles so
// both sides are read and written in cache lines.
func transpose2D32(y, x []float32, rows, cols, ldx, ldy int) {
	const tile = 32
	for i0 := 0; i0 < rows; i0 += tile {
		i1 := min(i0+tile, rows)
		for j0 := 0; j0 < cols; j0 += tile {
			j1 := min(j0+tile, cols)
			i := i0
			for ; i+4 <= i1; i += 4 {
				// Four source rows at a time: four adjacent stores.
				x0 := x[i*ldx+j0 : i*ldx+j1]
				x1 := x[(i+1)*ldx+j0 : (i+1)*ldx+j1][:len(x0)]
				x2 := x[(i+2)*ldx+j0 : (i+2)*ldx+j1][:len(x0)]
				x3 := x[(i+3)*ldx+j0 : (i+3)*ldx+j1][:len(x0)]
				for j, v := range x0 {
					d := y[(j0+j)*ldy+i : (j0+j)*ldy+i+4]
					d[0], d[1], d[2], d[3] = v, x1[j], x2[j], x3[j]
				}
			}
			for ; i < i1; i++ {
				xr := x[i*ldx+j0 : i*ldx+j1]
				for j, v := range xr {
					y[(j0+j)*ldy+i] = v
				}
			}
		}
	}
}
