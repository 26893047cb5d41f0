package templates

import (
	"math"
	"slices"
)

// Indexing and generator kernels: Gather/Scatter families, OneHot, Trilu,
// CumSum, Range, EyeLike, NonZero, Constant, ConstantOfShape, Shape, Size.

// ewIndex reads index i of an integer tensor and wraps a negative value
// once by dim; ok is false when it stays outside [0, dim).
func ewIndex(t *Tensor, i, dim int) (int, bool) {
	v := int(ewI64At(t, i))
	if v < 0 {
		v += dim
	}
	return v, v >= 0 && v < dim
}

// Gather takes slices of input 0 along axis at the positions in input 1.
func Gather(n *Node) error {
	x, err := ewIn0(n)
	if err != nil {
		return err
	}
	ind := n.Input(1)
	if ind == nil {
		return n.Errorf("missing indices")
	}
	r := len(x.Shape)
	ax, ok := ewAxis(n.Attrs.Int("axis", 0), r)
	if !ok {
		return n.Errorf("axis %d out of range for rank %d", n.Attrs.Int("axis", 0), r)
	}
	if r-1+len(ind.Shape) > ewMaxRank {
		return n.Errorf("output rank above %d", ewMaxRank)
	}
	var os ewShape
	os.n = copy(os.d[:], x.Shape[:ax])
	os.n += copy(os.d[os.n:], ind.Shape)
	os.n += copy(os.d[os.n:], x.Shape[ax+1:])
	out := n.Out[0]
	out.Resize(x.DType, os.s()...)
	outer, dim, inner, k := ewSize(x.Shape[:ax]), x.Shape[ax], ewSize(x.Shape[ax+1:]), ind.Len()
	for o := 0; o < outer; o++ {
		for i := 0; i < k; i++ {
			j, ok := ewIndex(ind, i, dim)
			if !ok {
				return n.Errorf("index %d out of range [%d, %d)", ewI64At(ind, i), -dim, dim)
			}
			ewMove(out.Data, (o*k+i)*inner, x.Data, (o*dim+j)*inner, inner)
		}
	}
	return nil
}

// GatherElements picks, at every position of the indices, the input
// element with that position's coordinate along axis replaced.
func GatherElements(n *Node) error {
	x, err := ewIn0(n)
	if err != nil {
		return err
	}
	ind := n.Input(1)
	if ind == nil || len(ind.Shape) != len(x.Shape) {
		return n.Errorf("indices must have the data's rank")
	}
	out := n.Out[0]
	out.Resize(x.DType, ind.Shape...)
	return ewElements(n, x, ind, func(p, src int) { ewMove(out.Data, p, x.Data, src, 1) })
}

// ewElements calls f(p, q) for each position p of ind, which has x's
// rank; q is the offset in x of p's coordinates with the one along the
// node's axis replaced by the index at p.
func ewElements(n *Node, x, ind *Tensor, f func(p, q int)) error {
	r := len(x.Shape)
	if r > ewMaxRank {
		return n.Errorf("rank above %d", ewMaxRank)
	}
	ax, ok := ewAxis(n.Attrs.Int("axis", 0), r)
	if !ok {
		return n.Errorf("axis out of range")
	}
	var xst [ewMaxRank]int
	ewContig(&xst, x.Shape)
	var idx [ewMaxRank]int
	for p := 0; p < ind.Len(); p++ {
		j, ok := ewIndex(ind, p, x.Shape[ax])
		if !ok {
			return n.Errorf("index %d out of range on axis %d", ewI64At(ind, p), ax)
		}
		q := 0
		for d := 0; d < r; d++ {
			c := idx[d]
			if d == ax {
				c = j
			} else if c >= x.Shape[d] {
				return n.Errorf("indices shape %v exceeds data %v", ind.Shape, x.Shape)
			}
			q += c * xst[d]
		}
		f(p, q)
		for d := r - 1; d >= 0; d-- {
			if idx[d]++; idx[d] < ind.Shape[d] {
				break
			}
			idx[d] = 0
		}
	}
	return nil
}

// GatherND gathers slices addressed by the last dim of the indices, after
// batch_dims leading dims shared by data and indices.
func GatherND(n *Node) error {
	x, err := ewIn0(n)
	if err != nil {
		return err
	}
	ind := n.Input(1)
	if ind == nil || len(ind.Shape) == 0 {
		return n.Errorf("missing indices")
	}
	b := int(n.Attrs.Int("batch_dims", 0))
	q, r := len(ind.Shape), len(x.Shape)
	k := ind.Shape[q-1]
	if b < 0 || b >= q || b+k > r {
		return n.Errorf("batch_dims %d and index length %d do not fit data rank %d", b, k, r)
	}
	for d := 0; d < b; d++ {
		if ind.Shape[d] != x.Shape[d] {
			return n.Errorf("batch dims differ: %v, %v", ind.Shape, x.Shape)
		}
	}
	var os ewShape
	if q-1+r-b-k > ewMaxRank {
		return n.Errorf("output rank above %d", ewMaxRank)
	}
	os.n = copy(os.d[:], ind.Shape[:q-1])
	os.n += copy(os.d[os.n:], x.Shape[b+k:])
	out := n.Out[0]
	out.Resize(x.DType, os.s()...)
	var xst [ewMaxRank]int
	ewContig(&xst, x.Shape)
	batches, per, block := ewSize(ind.Shape[:b]), ewSize(ind.Shape[b:q-1]), ewSize(x.Shape[b+k:])
	bstride := ewSize(x.Shape[b:])
	for bi := 0; bi < batches; bi++ {
		for t := 0; t < per; t++ {
			tuple := (bi*per + t) * k
			src := bi * bstride
			for j := 0; j < k; j++ {
				c, ok := ewIndex(ind, tuple+j, x.Shape[b+j])
				if !ok {
					return n.Errorf("index %d out of range on axis %d", ewI64At(ind, tuple+j), b+j)
				}
				src += c * xst[b+j]
			}
			ewMove(out.Data, (bi*per+t)*block, x.Data, src, block)
		}
	}
	return nil
}

// ewReduction parses a scatter reduction attribute (opset 16/18).
func ewReduction(n *Node) (byte, error) {
	switch s := n.Attrs.String("reduction", "none"); s {
	case "none":
		return 0, nil
	case "add":
		return '+', nil
	case "mul":
		return '*', nil
	case "max":
		return 'M', nil
	case "min":
		return 'm', nil
	default:
		return 0, n.Errorf("unknown reduction %q", s)
	}
}

func ewRedT[T ewNum](d []T, di int, s []T, si int, red byte) {
	a, b := d[di], s[si]
	switch red {
	case '+':
		d[di] = a + b
	case '*':
		d[di] = a * b
	case 'M':
		d[di] = max(a, b)
	case 'm':
		d[di] = min(a, b)
	}
}

// ewAccum combines src[si] into dst[di] under a reduction (0: assign).
func ewAccum(dst *Tensor, di int, src *Tensor, si int, red byte) {
	if red == 0 {
		ewMove(dst.Data, di, src.Data, si, 1)
		return
	}
	switch d := dst.Data.(type) {
	case []float32:
		ewRedT(d, di, src.F32(), si, red)
	case []float64:
		ewRedT(d, di, src.F64(), si, red)
	case []int8:
		ewRedT(d, di, src.I8(), si, red)
	case []uint8:
		ewRedT(d, di, src.U8(), si, red)
	case []int16:
		ewRedT(d, di, src.Data.([]int16), si, red)
	case []int32:
		ewRedT(d, di, src.I32(), si, red)
	case []int64:
		ewRedT(d, di, src.I64(), si, red)
	case []uint32:
		ewRedT(d, di, src.Data.([]uint32), si, red)
	case []uint64:
		ewRedT(d, di, src.Data.([]uint64), si, red)
	case []uint16:
		if !ewIsHalf(dst.DType) {
			ewRedT(d, di, src.U16(), si, red)
			return
		}
		var v [1]float64
		a, b := ewF64At(dst, di), ewF64At(src, si)
		v[0] = a
		ewRedT(v[:], 0, []float64{b}, 0, red)
		ewSetF64(dst, di, v[0])
	case []bool:
		s := src.Bool()[si]
		switch red {
		case '+', 'M':
			d[di] = d[di] || s
		case '*', 'm':
			d[di] = d[di] && s
		}
	}
}

// ScatterElements writes updates into a copy of the data at the positions
// given, per element, by the indices along axis, optionally reducing.
func ScatterElements(n *Node) error {
	x, err := ewIn0(n)
	if err != nil {
		return err
	}
	ind, upd := n.Input(1), n.Input(2)
	if ind == nil || upd == nil || !slices.Equal(ind.Shape, upd.Shape) || len(ind.Shape) != len(x.Shape) || upd.DType != x.DType {
		return n.Errorf("indices and updates must share a shape of the data's rank and dtype")
	}
	red, err := ewReduction(n)
	if err != nil {
		return err
	}
	out := n.Out[0]
	ewCopyTensor(out, x)
	return ewElements(n, x, ind, func(p, dst int) { ewAccum(out, dst, upd, p, red) })
}

// ScatterND writes update slices into a copy of the data at the positions
// addressed by the last dim of the indices, optionally reducing.
func ScatterND(n *Node) error {
	x, err := ewIn0(n)
	if err != nil {
		return err
	}
	ind, upd := n.Input(1), n.Input(2)
	if ind == nil || upd == nil || len(ind.Shape) == 0 || upd.DType != x.DType {
		return n.Errorf("want indices and updates of the data's dtype")
	}
	red, err := ewReduction(n)
	if err != nil {
		return err
	}
	q, r := len(ind.Shape), len(x.Shape)
	k := ind.Shape[q-1]
	if k > r {
		return n.Errorf("index length %d above rank %d", k, r)
	}
	per, block := ewSize(ind.Shape[:q-1]), ewSize(x.Shape[k:])
	if upd.Len() != per*block || len(upd.Shape) != q-1+r-k {
		return n.Errorf("updates %v do not match indices %v and data %v", upd.Shape, ind.Shape, x.Shape)
	}
	out := n.Out[0]
	ewCopyTensor(out, x)
	var xst [ewMaxRank]int
	ewContig(&xst, x.Shape)
	for t := 0; t < per; t++ {
		dst := 0
		for j := 0; j < k; j++ {
			c, ok := ewIndex(ind, t*k+j, x.Shape[j])
			if !ok {
				return n.Errorf("index %d out of range on axis %d", ewI64At(ind, t*k+j), j)
			}
			dst += c * xst[j]
		}
		if red == 0 {
			ewMove(out.Data, dst, upd.Data, t*block, block)
			continue
		}
		for e := 0; e < block; e++ {
			ewAccum(out, dst+e, upd, t*block+e, red)
		}
	}
	return nil
}

// Scatter is ScatterElements' opset 9 name.
func Scatter(n *Node) error { return ScatterElements(n) }

// OneHot writes values[1] at each index's position along a new axis of
// length depth and values[0] elsewhere. Negative indices count from depth.
func OneHot(n *Node) error {
	ind, err := ewIn0(n)
	if err != nil {
		return err
	}
	dep, vals := n.Input(1), n.Input(2)
	if dep == nil || vals == nil || dep.Len() != 1 || vals.Len() != 2 {
		return n.Errorf("want depth scalar and 2 values")
	}
	depth := int(ewF64At(dep, 0))
	if depth < 1 {
		return n.Errorf("depth %d", depth)
	}
	r := len(ind.Shape)
	if r+1 > ewMaxRank {
		return n.Errorf("rank above %d", ewMaxRank)
	}
	ax, ok := ewAxis(n.Attrs.Int("axis", -1), r+1)
	if !ok {
		return n.Errorf("axis out of range")
	}
	var os ewShape
	os.n = copy(os.d[:], ind.Shape[:ax])
	os.d[os.n] = depth
	os.n++
	os.n += copy(os.d[os.n:], ind.Shape[ax:])
	out := n.Out[0]
	out.Resize(vals.DType, os.s()...)
	ewFill(out.Data, 0, out.Len(), vals.Data, 0)
	inner := ewSize(ind.Shape[ax:])
	for i := 0; i < ind.Len(); i++ {
		v := ewF64At(ind, i)
		j := int(v)
		if j < 0 {
			j += depth
		}
		if j < 0 || j >= depth || v != v {
			continue
		}
		o, in := i/inner, i%inner
		ewMove(out.Data, (o*depth+j)*inner+in, vals.Data, 1, 1)
	}
	return nil
}

// Trilu keeps the upper (j-i >= k) or lower (j-i <= k) triangle of each
// matrix in the last two dims and zeroes the rest.
func Trilu(n *Node) error {
	x, err := ewIn0(n)
	if err != nil {
		return err
	}
	r := len(x.Shape)
	if r < 2 {
		return n.Errorf("rank %d below 2", r)
	}
	k := 0
	if kt := n.Input(1); kt != nil {
		k = int(ewI64At(kt, 0))
	}
	upper := n.Attrs.Int("upper", 1) != 0
	out := n.Out[0]
	ewCopyTensor(out, x)
	N, M := x.Shape[r-2], x.Shape[r-1]
	for b := 0; b < ewSize(x.Shape[:r-2]); b++ {
		for i := 0; i < N; i++ {
			row := (b*N + i) * M
			if upper {
				if e := min(max(i+k, 0), M); e > 0 {
					ewZero(out.Data, row, e)
				}
			} else if s := max(i+k+1, 0); s < M {
				ewZero(out.Data, row+s, M-s)
			}
		}
	}
	return nil
}

// Range: start, start+delta, ... up to (not including) limit.
func Range(n *Node) error {
	if len(n.In) < 3 || n.In[0] == nil || n.In[1] == nil || n.In[2] == nil {
		return n.Errorf("want start, limit, delta")
	}
	s, l, d := n.In[0], n.In[1], n.In[2]
	if s.DType != l.DType || s.DType != d.DType || s.Len() != 1 || l.Len() != 1 || d.Len() != 1 {
		return n.Errorf("want three scalars of one dtype")
	}
	out := n.Out[0]
	var shp [1]int
	if ewIsFloat(s.DType) {
		a, b, c := ewF64At(s, 0), ewF64At(l, 0), ewF64At(d, 0)
		if c == 0 {
			return n.Errorf("delta is 0")
		}
		shp[0] = max(int(math.Ceil((b-a)/c)), 0)
		out.Resize(s.DType, shp[:]...)
		for i := 0; i < shp[0]; i++ {
			ewSetF64(out, i, a+float64(i)*c)
		}
		return nil
	}
	if !ewIsSigned(s.DType) && !ewIsUnsigned(s.DType) {
		return n.Errorf("dtype %s not supported", s.DType)
	}
	a, b, c := ewI64At(s, 0), ewI64At(l, 0), ewI64At(d, 0)
	switch {
	case c > 0 && b > a:
		shp[0] = int((b - a + c - 1) / c)
	case c < 0 && b < a:
		shp[0] = int((a - b - c - 1) / -c)
	case c == 0:
		return n.Errorf("delta is 0")
	}
	out.Resize(s.DType, shp[:]...)
	for i := 0; i < shp[0]; i++ {
		v := a + int64(i)*c
		switch o := out.Data.(type) {
		case []int64:
			o[i] = v
		case []int32:
			o[i] = int32(v)
		case []int16:
			o[i] = int16(v)
		case []int8:
			o[i] = int8(v)
		default:
			ewSetF64(out, i, float64(v))
		}
	}
	return nil
}

// EyeLike: a 2-D tensor like the input (dtype attribute, default the
// input's) with ones on diagonal k.
func EyeLike(n *Node) error {
	x, err := ewIn0(n)
	if err != nil {
		return err
	}
	if len(x.Shape) != 2 {
		return n.Errorf("want a 2-D input, have %v", x.Shape)
	}
	dt := x.DType
	if n.Attrs.Has("dtype") {
		dt = DType(n.Attrs.Int("dtype", 0))
	}
	if !ewIsNumeric(dt) && dt != Bool {
		return n.Errorf("dtype %s not supported", dt)
	}
	out := n.Out[0]
	out.Resize(dt, x.Shape...)
	ewZero(out.Data, 0, out.Len())
	k := int(n.Attrs.Int("k", 0))
	for i := 0; i < x.Shape[0]; i++ {
		if j := i + k; j >= 0 && j < x.Shape[1] {
			ewSetF64(out, i*x.Shape[1]+j, 1)
		}
	}
	return nil
}

func ewNonZeroAt(t *Tensor, i int) bool {
	if s, ok := t.Data.([]string); ok {
		return s[i] != ""
	}
	return ewF64At(t, i) != 0
}

// NonZero lists the coordinates of non-zero elements: int64 [rank, count],
// in row-major order.
func NonZero(n *Node) error {
	x, err := ewIn0(n)
	if err != nil {
		return err
	}
	r := len(x.Shape)
	if r > ewMaxRank {
		return n.Errorf("rank above %d", ewMaxRank)
	}
	cnt := 0
	for i := 0; i < x.Len(); i++ {
		if ewNonZeroAt(x, i) {
			cnt++
		}
	}
	out := n.Out[0]
	var shp [2]int
	shp[0], shp[1] = r, cnt
	out.Resize(I64, shp[:]...)
	o := out.I64()
	var idx [ewMaxRank]int
	c := 0
	for i := 0; i < x.Len(); i++ {
		if ewNonZeroAt(x, i) {
			for d := 0; d < r; d++ {
				o[d*cnt+c] = int64(idx[d])
			}
			c++
		}
		for d := r - 1; d >= 0; d-- {
			if idx[d]++; idx[d] < x.Shape[d] {
				break
			}
			idx[d] = 0
		}
	}
	return nil
}

// Constant outputs its attribute: value (a tensor), or value_float(s),
// value_int(s), value_string(s) (opset 12).
func Constant(n *Node) error {
	out := n.Out[0]
	a := n.Attrs
	var one [1]int
	switch {
	case a.Tensor("value") != nil:
		ewCopyTensor(out, a.Tensor("value"))
	case a.Has("value_float"):
		out.Resize(F32)
		out.F32()[0] = a.Float("value_float", 0)
	case a.Has("value_floats"):
		v := a.Floats("value_floats")
		one[0] = len(v)
		out.Resize(F32, one[:]...)
		copy(out.F32(), v)
	case a.Has("value_int"):
		out.Resize(I64)
		out.I64()[0] = a.Int("value_int", 0)
	case a.Has("value_ints"):
		v := a.Ints("value_ints")
		one[0] = len(v)
		out.Resize(I64, one[:]...)
		copy(out.I64(), v)
	case a.Has("value_string"):
		out.Resize(String)
		out.Str()[0] = a.String("value_string", "")
	case a.Has("value_strings"):
		v := a.Strings("value_strings")
		one[0] = len(v)
		out.Resize(String, one[:]...)
		copy(out.Str(), v)
	default:
		return n.Errorf("no value attribute (sparse_value is not supported)")
	}
	return nil
}

// ConstantOfShape fills the shape in input 0 with the one-element value
// attribute (default float32 0).
func ConstantOfShape(n *Node) error {
	st, err := ewIn0(n)
	if err != nil {
		return err
	}
	shp := ewInts(st, ewScr(n).Ints(0, st.Len()))
	for _, d := range shp {
		if d < 0 {
			return n.Errorf("negative dim in shape")
		}
	}
	out := n.Out[0]
	v := n.Attrs.Tensor("value")
	if v == nil {
		out.Resize(F32, shp...)
		clear(out.F32())
		return nil
	}
	if v.Len() != 1 {
		return n.Errorf("value must have one element")
	}
	out.Resize(v.DType, shp...)
	ewFill(out.Data, 0, out.Len(), v.Data, 0)
	return nil
}

// Shape outputs the input's dims [start:end] (opset 15 bounds, clamped).
func Shape(n *Node) error {
	x, err := ewIn0(n)
	if err != nil {
		return err
	}
	r := len(x.Shape)
	s, e := int(n.Attrs.Int("start", 0)), int(n.Attrs.Int("end", int64(r)))
	if s < 0 {
		s += r
	}
	if e < 0 {
		e += r
	}
	s, e = min(max(s, 0), r), min(max(e, 0), r)
	var shp [1]int
	shp[0] = max(e-s, 0)
	out := n.Out[0]
	out.Resize(I64, shp[:]...)
	for i := range out.I64() {
		out.I64()[i] = int64(x.Shape[s+i])
	}
	return nil
}

// Size outputs the input's element count as an int64 scalar.
func Size(n *Node) error {
	x, err := ewIn0(n)
	if err != nil {
		return err
	}
	n.Out[0].Resize(I64)
	n.Out[0].I64()[0] = int64(x.Len())
	return nil
}
