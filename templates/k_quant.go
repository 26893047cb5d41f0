package templates

import "math"

// Quantization ops: QuantizeLinear, DequantizeLinear (v10 per-tensor, v13
// per-axis), DynamicQuantizeLinear, MatMulInteger, ConvInteger,
// QLinearMatMul and QLinearConv. Integer products accumulate in int32
// after the zero points are subtracted; requantisation rounds half to even
// and saturates, as the spec requires.

// miscQParam reads a scale or zero point for element i of a tensor of
// shape shape: per tensor when p has one element, per axis when it is 1-D,
// blocked (opset 21) when it has x's rank and block_size > 0: dims equal
// to x's except along axis, where it has ceil(D/block_size) entries.
type miscQParam struct {
	t              *Tensor
	perAxis        bool
	stride, length int // element stride of the axis and its length
	// blocked: x's dims and p's strides, the axis and the block size
	blocked bool
	xShape  []int
	axis    int
	block   int
}

func miscQParamFor(n *Node, p *Tensor, shape []int, axis int64) (miscQParam, error) {
	q := miscQParam{t: p}
	if p == nil || p.Len() == 1 && n.Attrs.Int("block_size", 0) <= 0 {
		return q, nil
	}
	ax, err := miscAxis(n, axis, len(shape))
	if err != nil {
		return q, err
	}
	if bs := n.Attrs.Int("block_size", 0); bs > 0 {
		if len(p.Shape) != len(shape) {
			return q, n.Errorf("blocked parameter has shape %v, want rank %d like x %v", p.Shape, len(shape), shape)
		}
		for d := range shape {
			want := shape[d]
			if d == ax {
				want = (shape[d] + int(bs) - 1) / int(bs)
			}
			if p.Shape[d] != want {
				return q, n.Errorf("blocked parameter has shape %v, want dim %d = %d (x %v, axis %d, block_size %d)", p.Shape, d, want, shape, ax, bs)
			}
		}
		q.blocked, q.xShape, q.axis, q.block = true, shape, ax, int(bs)
		return q, nil
	}
	if len(p.Shape) != 1 || p.Shape[0] != shape[ax] {
		return q, n.Errorf("per-axis parameter has shape %v, want [%d] (axis %d of %v)", p.Shape, shape[ax], ax, shape)
	}
	q.perAxis = true
	q.length = shape[ax]
	q.stride = 1
	for _, d := range shape[ax+1:] {
		q.stride *= d
	}
	return q, nil
}

// index is the parameter's flat index for x's flat element i.
func (q *miscQParam) index(i int) int {
	switch {
	case q.blocked:
		// walk x's dims from the last, building p's index
		j, mul := 0, 1
		for d := len(q.xShape) - 1; d >= 0; d-- {
			c := i % q.xShape[d]
			i /= q.xShape[d]
			pd := q.xShape[d]
			if d == q.axis {
				c /= q.block
				pd = (pd + q.block - 1) / q.block
			}
			j += c * mul
			mul *= pd
		}
		return j
	case q.perAxis:
		return (i / q.stride) % q.length
	}
	return 0
}

// at returns the parameter for flat element i (0 when absent).
func (q *miscQParam) at(i int) float64 {
	if q.t == nil {
		return 0
	}
	return ewF64At(q.t, q.index(i))
}

// miscQRange is the saturation range of a quantized integer dtype.
func miscQRange(dt DType) (float64, float64, bool) {
	switch dt {
	case U8:
		return 0, 255, true
	case I8:
		return -128, 127, true
	case U16:
		return 0, 65535, true
	case I16:
		return -32768, 32767, true
	case I32:
		return math.MinInt32, math.MaxInt32, true
	case U4:
		return 0, 15, true
	case I4:
		return -8, 7, true
	case U2:
		return 0, 3, true
	case I2:
		return -2, 1, true
	}
	return 0, 0, false
}

// miscQStore writes saturate(v) (v already rounded) into element i.
func miscQStore(t *Tensor, i int, v, lo, hi float64) {
	v = math.Max(lo, math.Min(hi, v))
	switch d := t.Data.(type) {
	case []uint8:
		d[i] = uint8(v)
	case []int8:
		d[i] = int8(v)
	case []uint16:
		d[i] = uint16(v)
	case []int16:
		d[i] = int16(v)
	case []int32:
		d[i] = int32(v)
	}
}

// miscRoundTo rounds v to the precision of dtype dt (f16, bf16, f32;
// anything else stays float64), to nearest even.
func miscRoundTo(dt DType, v float64) float64 {
	switch dt {
	case F32:
		return float64(float32(v))
	case F16:
		return float64(F16ToF32(ewF64ToF16(v)))
	case BF16:
		return float64(BF16ToF32(F32ToBF16(float32(v))))
	}
	return v
}

// miscQuantPrecision is the dtype x/scale is computed in: attribute
// precision (opset 23) when set, else the type numpy's division of x by
// the scale has (the ONNX reference): f64 with an f64 or i32 operand, the
// shared type when both are f16 (or both bf16), f32 otherwise.
func miscQuantPrecision(n *Node, x, scale DType) DType {
	if p := DType(n.Attrs.Int("precision", 0)); p != Undefined {
		return p
	}
	switch {
	case x == F64 || scale == F64 || x == I32 || scale == I32:
		return F64
	case x == scale && (x == F16 || x == BF16):
		return x
	}
	return F32
}

// QuantizeLinear is ONNX QuantizeLinear: y = saturate(round(x/scale) + zp)
// for integer outputs (round half to even); for float8 outputs x/scale
// (+ zp) converts with saturate (F64ToF8), for float4e2m1 likewise.
// Scales and zero points are per tensor, per axis or blocked.
func QuantizeLinear(n *Node) error {
	x, scale, zp := n.Input(0), n.Input(1), n.Input(2)
	if x == nil || scale == nil {
		return n.Errorf("needs x and y_scale")
	}
	odt := U8
	if o := DType(n.Attrs.Int("output_dtype", 0)); o != Undefined {
		odt = o
	}
	if zp != nil {
		if o := DType(n.Attrs.Int("output_dtype", 0)); o != Undefined && o != zp.DType {
			return n.Errorf("output_dtype %s differs from y_zero_point's dtype %s", o, zp.DType)
		}
		odt = zp.DType
	}
	lo, hi, isInt := miscQRange(odt)
	if !isInt && f8FormatOf(odt) == nil || odt == I32 {
		return n.Errorf("unsupported output dtype %s", odt)
	}
	axis := n.Attrs.Int("axis", 1)
	sp, err := miscQParamFor(n, scale, x.Shape, axis)
	if err != nil {
		return err
	}
	zq, err := miscQParamFor(n, zp, x.Shape, axis)
	if err != nil {
		return err
	}
	prec := miscQuantPrecision(n, x.DType, scale.DType)
	sat := n.Attrs.Int("saturate", 1) != 0
	y := n.Out[0]
	y.Resize(odt, x.Shape...)
	xf, fast := x.Data.([]float32)
	fast = fast && prec == F32 && isInt
	if yu, ok := y.Data.([]uint8); ok && fast && scale.Len() == 1 && (zp == nil || zp.Len() == 1) {
		// Per tensor f32 -> u8 (the quantize pass's activations): the
		// loop below's arithmetic without its per-element lookups.
		s, z := float32(sp.at(0)), zq.at(0)
		for i := quantizeU8Vec(xf, s, z, yu); i < len(xf); i++ {
			yu[i] = uint8(max(lo, min(hi, math.RoundToEven(float64(xf[i]/s))+z)))
		}
		return nil
	}
	for i := range x.Len() {
		var v float64
		if fast {
			v = float64(xf[i] / float32(sp.at(i)))
		} else {
			v = miscRoundTo(prec, miscRoundTo(prec, ewF64At(x, i))/miscRoundTo(prec, sp.at(i)))
		}
		if isInt {
			miscQStore(y, i, math.RoundToEven(v)+zq.at(i), lo, hi)
			continue
		}
		// The reference adds the zero point for float4e2m1 (so -0 becomes
		// +0) and leaves it out for float8; the two agree unless it is 0.
		if z := zq.at(i); z != 0 || odt == F4E2M1 {
			v += z
		}
		y.U8()[i] = F64ToF8(odt, v, sat)
	}
	return nil
}

// DequantizeLinear is ONNX DequantizeLinear: y = (x - zp) * scale, x any
// quantized integer or float8/float4 dtype, per tensor, per axis or
// blocked; y has attribute output_dtype (opset 23) or the scale's dtype.
func DequantizeLinear(n *Node) error {
	x, scale, zp := n.Input(0), n.Input(1), n.Input(2)
	if x == nil || scale == nil {
		return n.Errorf("needs x and x_scale")
	}
	axis := n.Attrs.Int("axis", 1)
	sp, err := miscQParamFor(n, scale, x.Shape, axis)
	if err != nil {
		return err
	}
	zq, err := miscQParamFor(n, zp, x.Shape, axis)
	if err != nil {
		return err
	}
	odt := F32
	if scale.DType == F16 || scale.DType == BF16 || scale.DType == F64 {
		odt = scale.DType
	}
	if o := DType(n.Attrs.Int("output_dtype", 0)); o != Undefined {
		odt = o
	}
	y := n.Out[0]
	y.Resize(odt, x.Shape...)
	for i := range x.Len() {
		d := ewF64At(x, i) - zq.at(i)
		switch o := y.Data.(type) {
		case []float32:
			o[i] = float32(d) * float32(sp.at(i))
		case []float64:
			o[i] = d * sp.at(i)
		case []uint16:
			v := d * sp.at(i)
			if odt == F16 {
				o[i] = ewF64ToF16(v)
			} else {
				o[i] = F32ToBF16(float32(v))
			}
		default:
			return n.Errorf("unsupported output dtype %s", odt)
		}
	}
	return nil
}

// DynamicQuantizeLinear is ONNX DynamicQuantizeLinear (uint8, range
// widened to include 0).
func DynamicQuantizeLinear(n *Node) error {
	x := n.Input(0)
	if x == nil || x.DType != F32 {
		return n.Errorf("needs a float32 input")
	}
	xd := x.F32()
	var mn, mx float32
	for _, v := range xd {
		mn = min(mn, v)
		mx = max(mx, v)
	}
	scale := (mx - mn) / 255
	var zp float64
	if scale != 0 {
		zp = math.Max(0, math.Min(255, math.RoundToEven(float64(0-mn/scale))))
	}
	if y := n.Out[0]; y != nil {
		y.Resize(U8, x.Shape...)
		yd := y.U8()
		for i, v := range xd {
			q := zp
			if scale != 0 {
				q += math.RoundToEven(float64(v / scale))
			}
			yd[i] = uint8(math.Max(0, math.Min(255, q)))
		}
	}
	if len(n.Out) > 1 && n.Out[1] != nil {
		n.Out[1].Resize(F32)
		n.Out[1].F32()[0] = scale
	}
	if len(n.Out) > 2 && n.Out[2] != nil {
		n.Out[2].Resize(U8)
		n.Out[2].U8()[0] = uint8(zp)
	}
	return nil
}

// miscToI32 copies an 8-bit (or wider integer) tensor into dst as int32.
func miscToI32(t *Tensor, dst []int32) {
	switch d := t.Data.(type) {
	case []uint8:
		for i, v := range d {
			dst[i] = int32(v)
		}
	case []int8:
		for i, v := range d {
			dst[i] = int32(v)
		}
	case []int32:
		copy(dst, d)
	default:
		for i := range dst {
			dst[i] = int32(ewI64At(t, i))
		}
	}
}

// miscMatMulShape works out numpy matmul broadcasting for a (.., M, K)
// and b (.., K, N), writing the output shape into out (returned) and the
// batch strides (in elements, 0 when broadcast) of a and b per output
// batch dimension into as, bs.
type miscMM struct {
	m, k, n    int
	batch      int
	out        []int
	outBatch   []int // output batch dims
	aStr, bStr []int // per output batch dim
	aVec, bVec bool  // a was 1-D (no M), b was 1-D (no N)
}

func miscMatMulGeom(n *Node, st *miscScratch[int32], a, b []int) (miscMM, error) {
	var g miscMM
	if len(a) == 0 || len(b) == 0 {
		return g, n.Errorf("matmul inputs must have rank >= 1")
	}
	ash, bsh := a, b
	g.aVec, g.bVec = len(a) == 1, len(b) == 1
	if g.aVec {
		g.m, g.k = 1, a[0]
		ash = nil
	} else {
		g.m, g.k = a[len(a)-2], a[len(a)-1]
		ash = a[:len(a)-2]
	}
	kb := b[0]
	if g.bVec {
		g.n = 1
		bsh = nil
	} else {
		kb, g.n = b[len(b)-2], b[len(b)-1]
		bsh = b[:len(b)-2]
	}
	if kb != g.k {
		return g, n.Errorf("matmul inner dimensions differ: %v x %v", a, b)
	}
	nb := max(len(ash), len(bsh))
	g.outBatch = st.getInts(10, nb)
	g.aStr = st.getInts(11, nb)
	g.bStr = st.getInts(12, nb)
	sa, sb := g.m*g.k, g.k*g.n
	g.batch = 1
	for i := nb - 1; i >= 0; i-- {
		da, db := 1, 1
		if j := i - (nb - len(ash)); j >= 0 {
			da = ash[j]
		}
		if j := i - (nb - len(bsh)); j >= 0 {
			db = bsh[j]
		}
		if da != db && da != 1 && db != 1 {
			return g, n.Errorf("matmul batch dims do not broadcast: %v x %v", a, b)
		}
		g.outBatch[i] = max(da, db)
		g.aStr[i], g.bStr[i] = 0, 0
		if da != 1 {
			g.aStr[i] = sa
		}
		if db != 1 {
			g.bStr[i] = sb
		}
		sa *= da
		sb *= db
		g.batch *= g.outBatch[i]
	}
	g.out = st.getInts(13, nb+2)[:0]
	g.out = append(g.out, g.outBatch...)
	if !g.aVec {
		g.out = append(g.out, g.m)
	}
	if !g.bVec {
		g.out = append(g.out, g.n)
	}
	return g, nil
}

// offsets returns the element offsets of a and b for output batch bi.
func (g *miscMM) offsets(bi int) (int, int) {
	ao, bo := 0, 0
	for i := len(g.outBatch) - 1; i >= 0; i-- {
		c := bi % g.outBatch[i]
		bi /= g.outBatch[i]
		ao += c * g.aStr[i]
		bo += c * g.bStr[i]
	}
	return ao, bo
}

// miscZP describes an integer zero point: scalar, per row of A (M or
// batch*M values) or per column of B (N or batch*N values).
func miscZPAt(zp *Tensor, batchIdx, i, per int) int32 {
	if zp == nil {
		return 0
	}
	l := zp.Len()
	switch {
	case l == 1:
		return int32(ewI64At(zp, 0))
	case l == per:
		return int32(ewI64At(zp, i))
	}
	return int32(ewI64At(zp, (batchIdx*per+i)%l))
}

// miscIntMatMul computes acc[batch][m][n] = sum_k (a-azp)(b-bzp) in int32.
func miscIntMatMul(n *Node, st *miscScratch[int32], a, b, azp, bzp *Tensor) (miscMM, []int32, error) {
	g, err := miscMatMulGeom(n, st, a.Shape, b.Shape)
	if err != nil {
		return g, nil, err
	}
	ai := st.get(0, a.Len())
	bi := st.get(1, b.Len())
	miscToI32(a, ai)
	miscToI32(b, bi)
	// Subtract zero points in place: A per row, B per column.
	if azp != nil {
		for r := 0; r < len(ai)/g.k; r++ {
			z := miscZPAt(azp, r/g.m, r%g.m, g.m)
			row := ai[r*g.k : (r+1)*g.k]
			for j := range row {
				row[j] -= z
			}
		}
	}
	if bzp != nil {
		for r := 0; r < len(bi)/g.n; r++ {
			row := bi[r*g.n : (r+1)*g.n]
			mat := r / g.k
			for j := range row {
				row[j] -= miscZPAt(bzp, mat, j, g.n)
			}
		}
	}
	acc := st.get(2, g.batch*g.m*g.n)
	for bt := 0; bt < g.batch; bt++ {
		ao, bo := g.offsets(bt)
		c := acc[bt*g.m*g.n : (bt+1)*g.m*g.n]
		clear(c)
		for i := 0; i < g.m; i++ {
			cr := c[i*g.n : (i+1)*g.n]
			for kk := 0; kk < g.k; kk++ {
				av := ai[ao+i*g.k+kk]
				if av == 0 {
					continue
				}
				br := bi[bo+kk*g.n : bo+(kk+1)*g.n]
				for j, bv := range br {
					cr[j] += av * bv
				}
			}
		}
	}
	return g, acc, nil
}

// MatMulInteger is ONNX MatMulInteger: int32 products of zero-point
// shifted 8-bit matrices, with numpy batch broadcasting.
func MatMulInteger(n *Node) error {
	a, b := n.Input(0), n.Input(1)
	if a == nil || b == nil {
		return n.Errorf("needs A and B")
	}
	st := miscScr[int32](n)
	g, acc, err := miscIntMatMul(n, st, a, b, n.Input(2), n.Input(3))
	if err != nil {
		return err
	}
	y := n.Out[0]
	y.Resize(I32, g.out...)
	copy(y.I32(), acc)
	return nil
}

// QLinearMatMul is ONNX QLinearMatMul: a quantized matmul requantised to
// y's scale and zero point.
func QLinearMatMul(n *Node) error {
	if len(n.In) < 8 {
		return n.Errorf("needs 8 inputs")
	}
	a, as, azp, b, bs, bzp, ys, yzp := n.In[0], n.In[1], n.In[2], n.In[3], n.In[4], n.In[5], n.In[6], n.In[7]
	if a == nil || b == nil || as == nil || bs == nil || ys == nil {
		return n.Errorf("missing a required input")
	}
	st := miscScr[int32](n)
	g, acc, err := miscIntMatMul(n, st, a, b, azp, bzp)
	if err != nil {
		return err
	}
	odt := a.DType
	if yzp != nil {
		odt = yzp.DType
	}
	lo, hi, ok := miscQRange(odt)
	if !ok {
		return n.Errorf("unsupported output dtype %s", odt)
	}
	y := n.Out[0]
	y.Resize(odt, g.out...)
	yScale := ewF64At(ys, 0)
	var yz float64
	if yzp != nil {
		yz = ewF64At(yzp, 0)
	}
	for bt := 0; bt < g.batch; bt++ {
		for i := 0; i < g.m; i++ {
			sa := ewF64At(as, 0)
			if as.Len() > 1 {
				sa = ewF64At(as, (bt*g.m+i)%as.Len())
			}
			for j := 0; j < g.n; j++ {
				sb := ewF64At(bs, 0)
				if bs.Len() > 1 {
					sb = ewF64At(bs, (bt*g.n+j)%bs.Len())
				}
				o := (bt*g.m+i)*g.n + j
				// the scale factor in the scales' precision, step by
				// step, as the reference's numpy arithmetic does
				p := as.DType
				f := miscRoundTo(p, miscRoundTo(p, sa*sb)/yScale)
				v := float64(acc[o]) * f
				miscQStore(y, o, math.RoundToEven(v)+yz, lo, hi)
			}
		}
	}
	return nil
}

// miscConvGeom holds an N-D convolution's geometry.
type miscConvGeom struct {
	batch, cin, cout, group int
	in, k, out              []int // spatial sizes
	stride, dil, padB       []int
}

func miscConvSetup(n *Node, st *miscScratch[int32], x, w []int) (miscConvGeom, error) {
	var g miscConvGeom
	if len(x) < 3 || len(w) != len(x) {
		return g, n.Errorf("conv input %v and weight %v ranks do not fit", x, w)
	}
	sp := len(x) - 2
	g.batch, g.cin, g.cout = x[0], x[1], w[0]
	g.group = int(n.Attrs.Int("group", 1))
	if g.group < 1 || g.cin%g.group != 0 || g.cout%g.group != 0 || w[1] != g.cin/g.group {
		return g, n.Errorf("weight %v does not fit input %v with group %d", w, x, g.group)
	}
	g.in, g.k = x[2:], w[2:]
	if ks := n.Attrs.Ints("kernel_shape"); ks != nil {
		for i, v := range ks {
			if i < sp && int(v) != g.k[i] {
				return g, n.Errorf("kernel_shape %v disagrees with weight %v", ks, w)
			}
		}
	}
	g.out = st.getInts(20, sp)
	g.stride = st.getInts(21, sp)
	g.dil = st.getInts(22, sp)
	g.padB = st.getInts(23, sp)
	strides, dils, pads := n.Attrs.Ints("strides"), n.Attrs.Ints("dilations"), n.Attrs.Ints("pads")
	autoPad := n.Attrs.String("auto_pad", "NOTSET")
	for i := 0; i < sp; i++ {
		g.stride[i], g.dil[i] = 1, 1
		if i < len(strides) {
			g.stride[i] = int(strides[i])
		}
		if i < len(dils) {
			g.dil[i] = int(dils[i])
		}
		ek := (g.k[i]-1)*g.dil[i] + 1
		switch autoPad {
		case "SAME_UPPER", "SAME_LOWER":
			o := (g.in[i] + g.stride[i] - 1) / g.stride[i]
			total := max(0, (o-1)*g.stride[i]+ek-g.in[i])
			g.padB[i] = total / 2
			if autoPad == "SAME_LOWER" {
				g.padB[i] = total - total/2
			}
			g.out[i] = o
		case "VALID":
			g.padB[i] = 0
			g.out[i] = (g.in[i]-ek)/g.stride[i] + 1
		default:
			pb, pe := 0, 0
			if len(pads) == 2*sp {
				pb, pe = int(pads[i]), int(pads[sp+i])
			}
			g.padB[i] = pb
			g.out[i] = (g.in[i]+pb+pe-ek)/g.stride[i] + 1
		}
		if g.out[i] < 1 {
			return g, n.Errorf("conv output would be empty on spatial axis %d", i)
		}
	}
	return g, nil
}

// miscIntConv computes the int32 convolution of zero-point shifted x and
// w into the returned accumulator [batch, cout, out...].
func miscIntConv(n *Node, st *miscScratch[int32], x, w, xzp, wzp *Tensor) (miscConvGeom, []int32, error) {
	g, err := miscConvSetup(n, st, x.Shape, w.Shape)
	if err != nil {
		return g, nil, err
	}
	xi := st.get(0, x.Len())
	wi := st.get(1, w.Len())
	miscToI32(x, xi)
	miscToI32(w, wi)
	if xzp != nil {
		z := int32(ewI64At(xzp, 0))
		for i := range xi {
			xi[i] -= z
		}
	}
	kvol := w.Len() / g.cout
	if wzp != nil {
		for m := 0; m < g.cout; m++ {
			z := int32(ewI64At(wzp, m%wzp.Len()))
			row := wi[m*kvol : (m+1)*kvol]
			for j := range row {
				row[j] -= z
			}
		}
	}
	sp := len(g.in)
	inVol, outVol, kSp := 1, 1, 1
	for i := 0; i < sp; i++ {
		inVol *= g.in[i]
		outVol *= g.out[i]
		kSp *= g.k[i]
	}
	acc := st.get(2, g.batch*g.cout*outVol)
	oc := st.getInts(24, sp)
	kc := st.getInts(25, sp)
	cpg, mpg := g.cin/g.group, g.cout/g.group
	for b := 0; b < g.batch; b++ {
		for m := 0; m < g.cout; m++ {
			grp := m / mpg
			wm := wi[m*kvol : (m+1)*kvol]
			out := acc[(b*g.cout+m)*outVol : (b*g.cout+m+1)*outVol]
			clear(oc)
			for o := range out {
				var s int32
				clear(kc)
				for kk := 0; kk < kSp; kk++ {
					off, inside := 0, true
					for d := 0; d < sp; d++ {
						p := oc[d]*g.stride[d] - g.padB[d] + kc[d]*g.dil[d]
						if p < 0 || p >= g.in[d] {
							inside = false
							break
						}
						off = off*g.in[d] + p
					}
					if inside {
						for c := 0; c < cpg; c++ {
							s += xi[(b*g.cin+grp*cpg+c)*inVol+off] * wm[c*kSp+kk]
						}
					}
					for d := sp - 1; d >= 0; d-- {
						kc[d]++
						if kc[d] < g.k[d] {
							break
						}
						kc[d] = 0
					}
				}
				out[o] = s
				for d := sp - 1; d >= 0; d-- {
					oc[d]++
					if oc[d] < g.out[d] {
						break
					}
					oc[d] = 0
				}
			}
		}
	}
	return g, acc, nil
}

func miscConvOutShape(st *miscScratch[int32], g *miscConvGeom) []int {
	s := st.getInts(26, 2+len(g.out))
	s[0], s[1] = g.batch, g.cout
	copy(s[2:], g.out)
	return s
}

// ConvInteger is ONNX ConvInteger: int32 convolution of zero-point
// shifted 8-bit data and weights.
func ConvInteger(n *Node) error {
	x, w := n.Input(0), n.Input(1)
	if x == nil || w == nil {
		return n.Errorf("needs x and w")
	}
	st := miscScr[int32](n)
	g, acc, err := miscIntConv(n, st, x, w, n.Input(2), n.Input(3))
	if err != nil {
		return err
	}
	y := n.Out[0]
	y.Resize(I32, miscConvOutShape(st, &g)...)
	copy(y.I32(), acc)
	return nil
}

// QLinearConv is ONNX QLinearConv: a quantized convolution (per-tensor or
// per-output-channel weight scales) with optional int32 bias, requantised
// to y's scale and zero point.
func QLinearConv(n *Node) error {
	if len(n.In) < 8 {
		return n.Errorf("needs at least 8 inputs")
	}
	x, xs, xzp, w, ws, wzp, ys, yzp := n.In[0], n.In[1], n.In[2], n.In[3], n.In[4], n.In[5], n.In[6], n.In[7]
	bias := n.Input(8)
	if x == nil || w == nil || xs == nil || ws == nil || ys == nil {
		return n.Errorf("missing a required input")
	}
	st := miscScr[int32](n)
	g, acc, err := miscIntConv(n, st, x, w, xzp, wzp)
	if err != nil {
		return err
	}
	odt := x.DType
	if yzp != nil {
		odt = yzp.DType
	}
	lo, hi, ok := miscQRange(odt)
	if !ok {
		return n.Errorf("unsupported output dtype %s", odt)
	}
	y := n.Out[0]
	y.Resize(odt, miscConvOutShape(st, &g)...)
	outVol := len(acc) / (g.batch * g.cout)
	xScale, yScale := ewF64At(xs, 0), ewF64At(ys, 0)
	var yz float64
	if yzp != nil {
		yz = ewF64At(yzp, 0)
	}
	for b := 0; b < g.batch; b++ {
		for m := 0; m < g.cout; m++ {
			mult := xScale * ewF64At(ws, m%ws.Len()) / yScale
			var bv int32
			if bias != nil {
				bv = int32(ewI64At(bias, m))
			}
			base := (b*g.cout + m) * outVol
			for o := 0; o < outVol; o++ {
				v := float64(acc[base+o]+bv) * mult
				miscQStore(y, base+o, math.RoundToEven(v)+yz, lo, hi)
			}
		}
	}
	return nil
}
