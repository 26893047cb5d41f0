package templates

import "math"

// Pooling kernels: MaxPool, AveragePool and LpPool slide an N-D window
// (geometry from nnWindow); the Global* forms reduce each whole plane.

const (
	poolAvg = iota
	poolLp
)

// poolSetup validates X and computes the window geometry and output shape.
func poolSetup(n *Node, X *Tensor, ceil bool) (nnWin, error) {
	r := len(X.Shape)
	if r < 3 {
		return nnWin{}, n.Errorf("X %v must have rank at least 3", X.ShapeString())
	}
	nd := r - 2
	ks := n.Attrs.Ints("kernel_shape")
	if len(ks) != nd {
		return nnWin{}, n.Errorf("kernel_shape %v must have %d entries", ks, nd)
	}
	sc := n.ScratchInts(8*nd + 2)
	kernel := sc[6*nd : 7*nd]
	nnIntsInto(kernel, ks)
	win, err := nnWindow(n, X.Shape[2:], kernel, ceil, sc[:6*nd])
	if err != nil {
		return win, err
	}
	shape := sc[6*nd : 7*nd+2]
	shape[0], shape[1] = X.Shape[0], X.Shape[1]
	copy(shape[2:], win.out)
	for _, o := range n.Out {
		if o != nil {
			dt := X.DType
			if o != n.Out[0] {
				dt = I64
			}
			o.Resize(dt, shape...)
		}
	}
	return win, nil
}

// poolRange returns, for output position o along one dim, the kernel taps
// [lo, hi) that land inside the input, and the number of taps inside the
// padded extent [-pb, in+pe).
func poolRange(o, in, k, s, d, pb, pe int) (start, lo, hi, padded int) {
	start = o*s - pb
	lo, hi = 0, k
	for lo < hi && start+lo*d < 0 {
		lo++
	}
	for hi > lo && start+(hi-1)*d >= in {
		hi--
	}
	for j := 0; j < k; j++ {
		if p := start + j*d; p >= -pb && p < in+pe {
			padded++
		}
	}
	return
}

// poolIter walks the output positions of one plane (next) and, for each,
// the taps of its window that land inside the input (taps/nextTap). It
// is a plain struct driven by loops so nothing escapes to the heap.
type poolIter struct {
	nd                       int
	in                       []int
	win                      nnWin
	start, lo, hi, kidx, oix []int
	o, outSize               int
	padded, valid            int // taps inside the padded extent / the input
	off                      int // current tap's row-major offset in the plane
}

func newPoolIter(in []int, win nnWin, sc []int) poolIter {
	nd := len(in)
	return poolIter{nd: nd, in: in, win: win, start: sc[:nd], lo: sc[nd : 2*nd], hi: sc[2*nd : 3*nd],
		kidx: sc[3*nd : 4*nd], oix: sc[4*nd : 5*nd], outSize: nnProd(win.out)}
}

// reset restarts the walk at output position 0.
func (it *poolIter) reset() {
	clear(it.oix)
	it.o = -1
}

// next moves to the next output position, reporting false past the end.
func (it *poolIter) next() bool {
	if it.o >= 0 {
		nnNext(it.oix, it.win.out)
	}
	it.o++
	if it.o >= it.outSize {
		return false
	}
	it.padded, it.valid = 1, 1
	w := it.win
	for d := 0; d < it.nd; d++ {
		var pad int
		it.start[d], it.lo[d], it.hi[d], pad = poolRange(it.oix[d], it.in[d], w.k[d], w.s[d], w.d[d], w.pb[d], w.pe[d])
		it.padded *= pad
		it.valid *= it.hi[d] - it.lo[d]
	}
	return true
}

// taps positions the tap cursor on the first valid tap; false if none.
func (it *poolIter) taps() bool {
	if it.valid == 0 {
		return false
	}
	copy(it.kidx, it.lo)
	it.setOff()
	return true
}

func (it *poolIter) setOff() {
	off := 0
	for d := 0; d < it.nd; d++ {
		off = off*it.in[d] + it.start[d] + it.kidx[d]*it.win.d[d]
	}
	it.off = off
}

// nextTap advances the tap cursor, reporting false past the last tap.
func (it *poolIter) nextTap() bool {
	for d := it.nd - 1; d >= 0; d-- {
		it.kidx[d]++
		if it.kidx[d] < it.hi[d] {
			it.setOff()
			return true
		}
		it.kidx[d] = it.lo[d]
	}
	return false
}

// colMajorOff is the current tap's column-major offset in the plane.
func (it *poolIter) colMajorOff() int {
	off, stride := 0, 1
	for d := 0; d < it.nd; d++ {
		off += (it.start[d] + it.kidx[d]*it.win.d[d]) * stride
		stride *= it.in[d]
	}
	return off
}

// MaxPool is ONNX MaxPool (versions 1-12): optional Indices output (v8+,
// row-major or, with storage_order 1, column-major within the plane,
// offset by the plane), ceil_mode and dilations (v10+), int8/uint8 (v12).
func MaxPool(n *Node) error {
	if ok, err := nnViaF32(n, MaxPool); ok {
		return err
	}
	X := n.Input(0)
	if X == nil {
		return n.Errorf("needs input X")
	}
	win, err := poolSetup(n, X, n.Attrs.Int("ceil_mode", 0) != 0)
	if err != nil {
		return err
	}
	var ind []int64
	if len(n.Out) > 1 && n.Out[1] != nil {
		ind = n.Out[1].I64()
	}
	colMajor := n.Attrs.Int("storage_order", 0) != 0
	if len(X.Shape) == 4 && ind == nil {
		W := X.Shape[3]
		planes := X.Shape[0] * X.Shape[1]
		switch x := X.Data.(type) {
		case []float32:
			maxPool2DPar(n, x, n.Out[0].F32(), W, planes, X.Shape[2:], win)
			return nil
		case []float64:
			maxPool2DPar(n, x, n.Out[0].F64(), W, planes, X.Shape[2:], win)
			return nil
		}
	}
	sc := nnBuf[int](n, 1, 5*(len(X.Shape)-2))
	switch x := X.Data.(type) {
	case []float32:
		maxPool(x, n.Out[0].F32(), ind, X.Shape, win, colMajor, sc)
	case []float64:
		maxPool(x, n.Out[0].F64(), ind, X.Shape, win, colMajor, sc)
	case []int8:
		maxPool(x, n.Out[0].I8(), ind, X.Shape, win, colMajor, sc)
	case []uint8:
		maxPool(x, n.Out[0].U8(), ind, X.Shape, win, colMajor, sc)
	default:
		return n.Errorf("unsupported dtype %v", X.DType)
	}
	return nil
}

func maxPool[T nnNum](x, y []T, ind []int64, xs []int, win nnWin, colMajor bool, sc []int) {
	in := xs[2:]
	inSize, outSize := nnProd(in), nnProd(win.out)
	planes := xs[0] * xs[1]
	lowest := nnLowest[T]()
	it := newPoolIter(in, win, sc)
	for pl := 0; pl < planes; pl++ {
		xp := x[pl*inSize : (pl+1)*inSize]
		yp := y[pl*outSize : (pl+1)*outSize]
		for it.reset(); it.next(); {
			best, at := lowest, 0
			for ok, first := it.taps(), true; ok; ok, first = it.nextTap(), false {
				if v := xp[it.off]; first || v > best {
					best, at = v, it.off
					if colMajor {
						at = it.colMajorOff()
					}
				}
			}
			yp[it.o] = best
			if ind != nil {
				ind[pl*outSize+it.o] = int64(pl*inSize + at)
			}
		}
	}
}

// parMinElems is the least number of elements a memory-bound kernel
// (pooling, copies, element-wise) splits over the pool: below it, waking
// the workers costs more than it saves.
const parMinElems = 1 << 14

// maxPool2DTask is maxPool2D split over planes.
type maxPool2DTask[T nnNum] struct {
	x, y, tmp []T
	W, planes int
	in        []int
	win       nnWin
}

func (t *maxPool2DTask[T]) runPart(i, parts int) {
	lo, hi := parSplit(t.planes, parts, i, 1)
	if lo >= hi {
		return
	}
	H, W, OS := t.in[0], t.W, t.win.out[0]*t.win.out[1]
	maxPool2D(t.x[lo*H*W:hi*H*W], t.y[lo*OS:hi*OS], t.tmp[i*W:(i+1)*W], hi-lo, t.in, t.win)
}

// maxPool2DPar runs maxPool2D over n's pool, planes split between parts;
// each output is computed the same way at any thread count.
func maxPool2DPar[T nnNum](n *Node, x, y []T, W, planes int, in []int, win nnWin) {
	parts := 1
	if threads := n.Pool.Threads(); threads > 1 && len(x) >= parMinElems {
		parts = min(threads, planes)
	}
	tmp := nnBuf[T](n, 0, W*parts)
	if parts == 1 {
		maxPool2D(x, y, tmp, planes, in, win)
		return
	}
	t := parTaskOf[maxPool2DTask[T]](n)
	*t = maxPool2DTask[T]{x: x, y: y, tmp: tmp, W: W, planes: planes, in: in, win: win}
	n.Pool.Run(parts, t)
	*t = maxPool2DTask[T]{}
}

// maxPool2D is maxPool for 2-D planes without indices, separated: for each
// output row, tmp takes the maximum over the window's input rows, then each
// output takes the maximum over its columns of tmp. It takes maxima with
// the max builtin rather than a branch (which mispredicts on every new
// maximum), so a NaN tap anywhere makes the output NaN; the order of the
// taps then does not matter. float32 runs both passes through the vector
// kernels (maxRows, maxCols; k_pool_amd64.go). tmp holds one input row.
func maxPool2D[T nnNum](x, y, tmp []T, planes int, in []int, win nnWin) {
	H, W := in[0], in[1]
	OH, OW := win.out[0], win.out[1]
	KH, sh, dh, ph := win.k[0], win.s[0], win.d[0], win.pb[0]
	tmp = tmp[:W]
	for pl := 0; pl < planes; pl++ {
		xp := x[pl*H*W : (pl+1)*H*W]
		yp := y[pl*OH*OW : (pl+1)*OH*OW]
		for oh := 0; oh < OH; oh++ {
			h0 := oh*sh - ph
			lo, hi := 0, KH
			for lo < hi && h0+lo*dh < 0 {
				lo++
			}
			for hi > lo && h0+(hi-1)*dh >= H {
				hi--
			}
			yr := yp[oh*OW : oh*OW+OW]
			if lo == hi {
				lowest := nnLowest[T]()
				for j := range yr {
					yr[j] = lowest
				}
				continue
			}
			row := func(kh int) []T { return xp[(h0+kh*dh)*W : (h0+kh*dh)*W+W] }
			// Up to three rows per pass: tmp is written once per pass.
			switch hi - lo {
			case 1:
				copy(tmp, row(lo))
			case 2:
				maxRowsT(tmp, row(lo), row(lo+1), row(lo+1))
			default:
				maxRowsT(tmp, row(lo), row(lo+1), row(lo+2))
			}
			for kh := lo + 3; kh < hi; kh += 2 {
				maxRowsT(tmp, tmp, row(kh), row(min(kh+1, hi-1)))
			}
			maxPoolCols(tmp, yr, win.k[1], win.s[1], win.d[1], win.pb[1])
		}
	}
}

// maxRowsT is maxRows for any element type: the vector kernels for
// float32, maxRowsGo otherwise.
func maxRowsT[T nnNum](dst, r0, r1, r2 []T) {
	if d, ok := any(dst).([]float32); ok {
		maxRows(d, any(r0).([]float32), any(r1).([]float32), any(r2).([]float32))
		return
	}
	maxRowsGo(dst, r0, r1, r2)
}

// maxRowsGo sets dst[i] = max(r0[i], r1[i], r2[i]); dst may be r0. It is
// the pure-Go twin of the maxPoolRows kernels.
func maxRowsGo[T nnNum](dst, r0, r1, r2 []T) {
	r0, r1, r2 = r0[:len(dst)], r1[:len(dst)], r2[:len(dst)]
	for j := range dst {
		dst[j] = max(r0[j], r1[j], r2[j])
	}
}

// maxColsGo sets y[o] = max(x[s*o+kw] for kw in [0, k)): the pure-Go twin
// of the maxPoolCols kernels.
func maxColsGo[T nnNum](y, x []T, k, s int) {
	for o := range y {
		r := x[o*s : o*s+k]
		best := r[0]
		for _, v := range r[1:] {
			best = max(best, v)
		}
		y[o] = best
	}
}

// maxPoolCols sets each yr[o] to the maximum of the taps of its window
// (kernel k, stride s, dilation d, begin padding pb) in row. Windows wholly
// inside the row skip the bounds search (float32 with stride 1 or 2 and no
// dilation runs them through maxCols, 3-tap ones are unrolled); max is
// order-independent, so the result is the same either way.
func maxPoolCols[T nnNum](row, yr []T, k, s, d, pb int) {
	W := len(row)
	// Outputs [lo, hi) have every tap inside the row.
	lo := min((pb+s-1)/s, len(yr))
	hi := lo
	if last := W - 1 - (k-1)*d + pb; last >= 0 {
		hi = max(lo, min(len(yr), last/s+1))
	}
	maxPoolColsEdge(row, yr, k, s, d, pb, 0, lo)
	maxPoolColsEdge(row, yr, k, s, d, pb, hi, len(yr))
	if y32, ok := any(yr).([]float32); ok && d == 1 && s <= 2 && lo < hi {
		lo += maxCols(y32[lo:hi], any(row).([]float32)[lo*s-pb:], k, s)
	}
	if k == 3 {
		for o := lo; o < hi; o++ {
			w0 := o*s - pb
			r := row[w0 : w0+2*d+1]
			yr[o] = max(r[0], r[d], r[2*d])
		}
		return
	}
	for o := lo; o < hi; o++ {
		w0 := o*s - pb
		best := row[w0]
		for kw := 1; kw < k; kw++ {
			best = max(best, row[w0+kw*d])
		}
		yr[o] = best
	}
}

// maxPoolColsEdge is maxPoolCols for outputs [o0, o1), windows that may
// cross the row's ends.
func maxPoolColsEdge[T nnNum](row, yr []T, k, s, d, pb, o0, o1 int) {
	W := len(row)
	for o := o0; o < o1; o++ {
		w0 := o*s - pb
		lo, hi := 0, k
		for lo < hi && w0+lo*d < 0 {
			lo++
		}
		for hi > lo && w0+(hi-1)*d >= W {
			hi--
		}
		if lo == hi {
			yr[o] = nnLowest[T]()
			continue
		}
		best := row[w0+lo*d]
		for kw := lo + 1; kw < hi; kw++ {
			best = max(best, row[w0+kw*d])
		}
		yr[o] = best
	}
}

// AveragePool is ONNX AveragePool (versions 1-11, and dilations as in
// v19): count_include_pad (v7+) divides by the taps inside the padded
// extent, otherwise by the taps inside the input; ceil_mode (v10+).
func AveragePool(n *Node) error {
	return windowPool(n, AveragePool, poolAvg)
}

// LpPool is ONNX LpPool (versions 1-11): p is a float attribute in v1 and
// an int (default 2) from v2; padding contributes zeros.
func LpPool(n *Node) error {
	return windowPool(n, LpPool, poolLp)
}

func windowPool(n *Node, self Kernel, kind int) error {
	if ok, err := nnViaF32(n, self); ok {
		return err
	}
	X := n.Input(0)
	if X == nil {
		return n.Errorf("needs input X")
	}
	win, err := poolSetup(n, X, n.Attrs.Int("ceil_mode", 0) != 0)
	if err != nil {
		return err
	}
	p := poolP(n)
	inclPad := n.Attrs.Int("count_include_pad", 0) != 0
	sc := nnBuf[int](n, 1, 5*(len(X.Shape)-2))
	switch x := X.Data.(type) {
	case []float32:
		avgLpPool(x, n.Out[0].F32(), X.Shape, win, kind, p, inclPad, sc)
	case []float64:
		avgLpPool(x, n.Out[0].F64(), X.Shape, win, kind, p, inclPad, sc)
	default:
		return n.Errorf("unsupported dtype %v", X.DType)
	}
	return nil
}

// poolP reads LpPool's p: a float in version 1, an int (default 2) later.
func poolP(n *Node) float64 {
	if v, ok := n.Attrs["p"].(float32); ok {
		return float64(v)
	}
	return float64(n.Attrs.Int("p", 2))
}

func avgLpPool[T nnFloat](x, y []T, xs []int, win nnWin, kind int, p float64, inclPad bool, sc []int) {
	in := xs[2:]
	inSize, outSize := nnProd(in), nnProd(win.out)
	planes := xs[0] * xs[1]
	it := newPoolIter(in, win, sc)
	for pl := 0; pl < planes; pl++ {
		xp := x[pl*inSize : (pl+1)*inSize]
		yp := y[pl*outSize : (pl+1)*outSize]
		for it.reset(); it.next(); {
			var sum T
			for ok := it.taps(); ok; ok = it.nextTap() {
				v := xp[it.off]
				switch {
				case kind == poolAvg:
					sum += v
				case p == 1:
					sum += T(math.Abs(float64(v)))
				case p == 2:
					sum += v * v
				default:
					sum += T(math.Pow(math.Abs(float64(v)), p))
				}
			}
			switch {
			case kind == poolAvg:
				div := it.valid
				if inclPad {
					div = it.padded
				}
				if div == 0 {
					yp[it.o] = T(math.NaN())
				} else {
					yp[it.o] = sum / T(div)
				}
			case p == 1:
				yp[it.o] = sum
			case p == 2:
				yp[it.o] = nnSqrt(sum)
			default:
				yp[it.o] = T(math.Pow(float64(sum), 1/p))
			}
		}
	}
}

// globalPool reduces each [N, C] plane to one value: kind is poolAvg,
// poolLp or -1 for max.
func globalPool(n *Node, self Kernel, kind int) error {
	if ok, err := nnViaF32(n, self); ok {
		return err
	}
	X := n.Input(0)
	if X == nil {
		return n.Errorf("needs input X")
	}
	r := len(X.Shape)
	if r < 2 {
		return n.Errorf("X %v must have rank at least 2", X.ShapeString())
	}
	shape := n.ScratchInts(r)
	for i := range shape {
		shape[i] = 1
	}
	shape[0], shape[1] = X.Shape[0], X.Shape[1]
	n.Out[0].Resize(X.DType, shape...)
	planes, size := X.Shape[0]*X.Shape[1], nnProd(X.Shape[2:])
	p := poolP(n)
	switch x := X.Data.(type) {
	case []float32:
		globalPoolT(x, n.Out[0].F32(), planes, size, kind, p)
	case []float64:
		globalPoolT(x, n.Out[0].F64(), planes, size, kind, p)
	default:
		return n.Errorf("unsupported dtype %v", X.DType)
	}
	return nil
}

func globalPoolT[T nnFloat](x, y []T, planes, size, kind int, p float64) {
	for pl := range planes {
		xp := x[pl*size : (pl+1)*size]
		switch kind {
		case poolAvg:
			var s T
			for _, v := range xp {
				s += v
			}
			y[pl] = s / T(size)
		case poolLp:
			var s float64
			for _, v := range xp {
				s += math.Pow(math.Abs(float64(v)), p)
			}
			y[pl] = T(math.Pow(s, 1/p))
		default:
			m := nnLowest[T]()
			for _, v := range xp {
				if v > m || v != v {
					m = v
				}
			}
			y[pl] = m
		}
	}
}

// GlobalAveragePool is ONNX GlobalAveragePool (version 1).
func GlobalAveragePool(n *Node) error { return globalPool(n, GlobalAveragePool, poolAvg) }

// GlobalMaxPool is ONNX GlobalMaxPool (version 1).
func GlobalMaxPool(n *Node) error { return globalPool(n, GlobalMaxPool, -1) }

// GlobalLpPool is ONNX GlobalLpPool (p a float in v1, an int from v2).
func GlobalLpPool(n *Node) error { return globalPool(n, GlobalLpPool, poolLp) }
