package passes

import (
	"fmt"
	"math"
	"strings"

	"github.com/cuvil/cuvil/ir"
)

func init() {
	reg(inferConv, "Conv", "ConvInteger", "QLinearConv")
	reg(inferConvTranspose, "ConvTranspose")
	reg(inferPool, "MaxPool", "AveragePool", "LpPool")
	reg(inferGlobalPool, "GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool")
	reg(inferMaxUnpool, "MaxUnpool")
	reg(inferGemm, "Gemm")
	reg(inferMatMul, "MatMul", "MatMulInteger", "QLinearMatMul")
	reg(inferReduce, "ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
		"ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare")
	reg(inferArgReduce, "ArgMax", "ArgMin")
	reg(inferRNN, "RNN", "GRU", "LSTM")
	reg(inferResize, "Resize", "Upsample")
	reg(inferEinsum, "Einsum")
	reg(inferGridSample, "GridSample")
	reg(inferRoiAlign, "RoiAlign")
	reg(inferMaxRoiPool, "MaxRoiPool")
}

// windowAttrs reads the attributes shared by Conv and the pools, filled in
// with their defaults for k spatial dims.
type windowAttrs struct {
	kernel, strides, dilations, pads []int64
	autoPad                          string
	ceil                             bool
}

func readWindow(n *ir.Node, kernel []int64) (windowAttrs, error) {
	k := len(kernel)
	w := windowAttrs{kernel: kernel, autoPad: n.AttrString("auto_pad", "NOTSET"), ceil: n.AttrInt("ceil_mode", 0) != 0}
	ones := func() []int64 {
		s := make([]int64, k)
		for i := range s {
			s[i] = 1
		}
		return s
	}
	w.strides = n.AttrInts("strides", ones())
	w.dilations = n.AttrInts("dilations", ones())
	w.pads = n.AttrInts("pads", make([]int64, 2*k))
	switch {
	case len(w.strides) != k:
		return w, fmt.Errorf("strides %v has %d entries for %d spatial dims", w.strides, len(w.strides), k)
	case len(w.dilations) != k:
		return w, fmt.Errorf("dilations %v has %d entries for %d spatial dims", w.dilations, len(w.dilations), k)
	case len(w.pads) != 2*k:
		return w, fmt.Errorf("pads %v has %d entries, want %d", w.pads, len(w.pads), 2*k)
	}
	for i := 0; i < k; i++ {
		if w.strides[i] <= 0 || w.dilations[i] <= 0 || w.kernel[i] <= 0 {
			return w, fmt.Errorf("kernel %v, strides %v and dilations %v must be positive", w.kernel, w.strides, w.dilations)
		}
	}
	switch w.autoPad {
	case "NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER":
	default:
		return w, fmt.Errorf("auto_pad %q is not one of NOTSET, VALID, SAME_UPPER, SAME_LOWER", w.autoPad)
	}
	return w, nil
}

// outDim is the output size of a sliding window over one spatial dim.
func (x *inferer) windowDim(w windowAttrs, i int, in ir.Dim) (ir.Dim, error) {
	ek := (w.kernel[i]-1)*w.dilations[i] + 1 // effective kernel
	s := w.strides[i]
	if w.autoPad == "SAME_UPPER" || w.autoPad == "SAME_LOWER" {
		if in.IsConst() {
			return ir.D((in.Size + s - 1) / s), nil
		}
		if s == 1 {
			return in, nil
		}
		return x.freshDim(fmt.Sprint("ceildiv(", in.Sym, ",", s, ")")), nil
	}
	pad := w.pads[i] + w.pads[i+len(w.kernel)]
	if w.autoPad == "VALID" {
		pad = 0
	}
	if !in.IsConst() {
		if s == 1 && pad == ek-1 {
			return in, nil
		}
		return x.freshDim(fmt.Sprint("window(", in.Sym, ",", ek, ",", s, ",", pad, ",", w.ceil, ")")), nil
	}
	span := in.Size + pad - ek
	if span < 0 {
		return ir.Dim{}, fmt.Errorf("kernel %d (dilated %d) is larger than padded input %d on spatial dim %d", w.kernel[i], ek, in.Size+pad, i)
	}
	out := span/s + 1
	if w.ceil && span%s != 0 {
		out++
		// A window may not start in the end padding (PyTorch and ONNX
		// reference behaviour).
		if (out-1)*s >= in.Size+w.pads[i] {
			out--
		}
	}
	return ir.D(out), nil
}

func inferConv(x *inferer, n *ir.Node) error {
	wi, outType := 1, ir.DType(0)
	t, err := x.inRank(n, 0, 3, -1)
	if err != nil {
		return err
	}
	switch n.Op {
	case "Conv", "DeformConv":
		outType = t.DType
	case "ConvInteger":
		outType = ir.I32
	case "QLinearConv":
		wi = 3
		zp, err := x.in(n, 7)
		if err != nil {
			return fmt.Errorf("y_zero_point: %w", err)
		}
		outType = zp.DType
	}
	r := len(t.Shape)
	w, err := x.inRank(n, wi, r, r)
	if err != nil {
		return err
	}
	kernel := n.AttrInts("kernel_shape", nil)
	if kernel == nil {
		ks, ok := w.Shape[2:].Consts()
		if !ok {
			return fmt.Errorf("weight shape %v has symbolic spatial dims and kernel_shape is not given", w.Shape)
		}
		kernel = ks
	}
	if len(kernel) != r-2 {
		return fmt.Errorf("kernel_shape %v has %d dims, input has %d spatial dims", kernel, len(kernel), r-2)
	}
	group := n.IntAttr("group")
	if c, wc := t.Shape[1], w.Shape[1]; c.IsConst() && wc.IsConst() && c.Size != wc.Size*group {
		return fmt.Errorf("input has %d channels, weight %v with group %d wants %d", c.Size, w.Shape, group, wc.Size*group)
	}
	win, err := readWindow(n, kernel)
	if err != nil {
		return err
	}
	out := ir.Shape{t.Shape[0], w.Shape[0]}
	for i := 0; i < r-2; i++ {
		d, err := x.windowDim(win, i, t.Shape[2+i])
		if err != nil {
			return err
		}
		out = append(out, d)
	}
	x.setOut(n, 0, outType, out)
	return nil
}

func inferConvTranspose(x *inferer, n *ir.Node) error {
	t, err := x.inRank(n, 0, 3, -1)
	if err != nil {
		return err
	}
	r := len(t.Shape)
	w, err := x.inRank(n, 1, r, r)
	if err != nil {
		return err
	}
	k := r - 2
	kernel := n.AttrInts("kernel_shape", nil)
	if kernel == nil {
		ks, ok := w.Shape[2:].Consts()
		if !ok {
			return fmt.Errorf("weight shape %v has symbolic spatial dims and kernel_shape is not given", w.Shape)
		}
		kernel = ks
	}
	win, err := readWindow(n, kernel)
	if err != nil {
		return err
	}
	group := n.IntAttr("group")
	out := ir.Shape{t.Shape[0], x.mulDim(w.Shape[1], group)}
	if os := n.AttrInts("output_shape", nil); os != nil {
		if len(os) == r { // some exporters give the full shape
			os = os[2:]
		}
		if len(os) != k {
			return fmt.Errorf("output_shape %v has %d entries for %d spatial dims", os, len(os), k)
		}
		x.setOut(n, 0, t.DType, append(out, constDims(os)...))
		return nil
	}
	opad := n.AttrInts("output_padding", make([]int64, k))
	if len(opad) != k {
		return fmt.Errorf("output_padding %v has %d entries for %d spatial dims", opad, len(opad), k)
	}
	for i := 0; i < k; i++ {
		in := t.Shape[2+i]
		s := win.strides[i]
		if win.autoPad == "SAME_UPPER" || win.autoPad == "SAME_LOWER" {
			out = append(out, x.mulDim(in, s))
			continue
		}
		pad := win.pads[i] + win.pads[i+k]
		if win.autoPad == "VALID" {
			pad = 0
		}
		ek := (kernel[i]-1)*win.dilations[i] + 1
		extra := opad[i] + ek - pad - s // out = s*in + extra
		if in.IsConst() {
			o := s*in.Size + extra
			if o <= 0 {
				return fmt.Errorf("output spatial dim %d would be %d", i, o)
			}
			out = append(out, ir.D(o))
		} else {
			out = append(out, x.addDim(x.mulDim(in, s), extra))
		}
	}
	x.setOut(n, 0, t.DType, out)
	return nil
}

func inferPool(x *inferer, n *ir.Node) error {
	t, err := x.inRank(n, 0, 3, -1)
	if err != nil {
		return err
	}
	kernel := n.AttrInts("kernel_shape", nil)
	if len(kernel) != len(t.Shape)-2 {
		return fmt.Errorf("kernel_shape %v has %d dims, input has %d spatial dims", kernel, len(kernel), len(t.Shape)-2)
	}
	win, err := readWindow(n, kernel)
	if err != nil {
		return err
	}
	out := ir.Shape{t.Shape[0], t.Shape[1]}
	for i := range kernel {
		d, err := x.windowDim(win, i, t.Shape[2+i])
		if err != nil {
			return err
		}
		out = append(out, d)
	}
	x.setOut(n, 0, t.DType, out)
	x.setOut(n, 1, ir.I64, cloneShape(out)) // MaxPool indices
	return nil
}

func inferGlobalPool(x *inferer, n *ir.Node) error {
	t, err := x.inRank(n, 0, 2, -1)
	if err != nil {
		return err
	}
	out := ir.Shape{t.Shape[0], t.Shape[1]}
	for range t.Shape[2:] {
		out = append(out, ir.D(1))
	}
	x.setOut(n, 0, t.DType, out)
	return nil
}

func inferMaxUnpool(x *inferer, n *ir.Node) error {
	t, err := x.inRank(n, 0, 3, -1)
	if err != nil {
		return err
	}
	if v := n.Input(2); v != nil {
		s, ok, err := x.shapeFromInput(n, 2)
		if err != nil {
			return err
		}
		if !ok {
			return x.freshAll(n, t)
		}
		x.setOut(n, 0, t.DType, s)
		return nil
	}
	kernel := n.AttrInts("kernel_shape", nil)
	k := len(t.Shape) - 2
	if len(kernel) != k {
		return fmt.Errorf("kernel_shape %v has %d dims, input has %d spatial dims", kernel, len(kernel), k)
	}
	win, err := readWindow(n, kernel)
	if err != nil {
		return err
	}
	out := ir.Shape{t.Shape[0], t.Shape[1]}
	for i := 0; i < k; i++ {
		extra := kernel[i] - win.pads[i] - win.pads[i+k] - win.strides[i]
		out = append(out, x.addDim(x.mulDim(t.Shape[2+i], win.strides[i]), extra))
	}
	x.setOut(n, 0, t.DType, out)
	return nil
}

func inferGemm(x *inferer, n *ir.Node) error {
	a, err := x.inRank(n, 0, 2, 2)
	if err != nil {
		return err
	}
	b, err := x.inRank(n, 1, 2, 2)
	if err != nil {
		return err
	}
	m, ka := a.Shape[0], a.Shape[1]
	if n.IntAttr("transA") != 0 {
		m, ka = ka, m
	}
	kb, nn := b.Shape[0], b.Shape[1]
	if n.IntAttr("transB") != 0 {
		kb, nn = nn, kb
	}
	if _, err := sameDim(ka, kb); err != nil {
		return fmt.Errorf("inner dims differ: A %v, B %v (transA %d, transB %d)", a.Shape, b.Shape, n.AttrInt("transA", 0), n.AttrInt("transB", 0))
	}
	out := ir.Shape{m, nn}
	if v := n.Input(2); v != nil {
		c, err := x.inRank(n, 2, 0, 2)
		if err != nil {
			return err
		}
		// C broadcasts to [M,N] (unidirectionally).
		bs, err := x.broadcast(out, c.Shape)
		if err != nil {
			return fmt.Errorf("bias: %w", err)
		}
		for i := range out {
			if out[i].IsConst() && bs[i] != out[i] {
				return fmt.Errorf("bias shape %v does not broadcast to %v", c.Shape, out)
			}
		}
		out = ir.Shape{bs[0], bs[1]}
	}
	x.setOut(n, 0, a.DType, out)
	return nil
}

func inferMatMul(x *inferer, n *ir.Node) error {
	bi, outType := 1, ir.DType(0)
	a, err := x.inRank(n, 0, 1, -1)
	if err != nil {
		return err
	}
	switch n.Op {
	case "MatMul":
		outType = a.DType
	case "MatMulInteger":
		outType = ir.I32
	case "QLinearMatMul":
		bi = 3
		zp, err := x.in(n, 7)
		if err != nil {
			return fmt.Errorf("y_zero_point: %w", err)
		}
		outType = zp.DType
	}
	b, err := x.inRank(n, bi, 1, -1)
	if err != nil {
		return err
	}
	as, bs := a.Shape, b.Shape
	if len(as) == 1 {
		as = ir.Shape{ir.D(1), as[0]}
	}
	if len(bs) == 1 {
		bs = ir.Shape{bs[0], ir.D(1)}
	}
	if _, err := sameDim(as[len(as)-1], bs[len(bs)-2]); err != nil {
		return fmt.Errorf("inner dims differ: %v x %v", a.Shape, b.Shape)
	}
	batch, err := x.broadcast(as[:len(as)-2], bs[:len(bs)-2])
	if err != nil {
		return err
	}
	out := batch
	if len(a.Shape) > 1 {
		out = append(out, as[len(as)-2])
	}
	if len(b.Shape) > 1 {
		out = append(out, bs[len(bs)-1])
	}
	x.setOut(n, 0, outType, out)
	return nil
}

func inferReduce(x *inferer, n *ir.Node) error {
	t, err := x.in(n, 0)
	if err != nil {
		return err
	}
	r := len(t.Shape)
	axes, _, known := x.intsAttrOrInput(n, "axes", 1)
	keep := n.IntAttr("keepdims") != 0
	if !known {
		if keep {
			return x.freshAll(n, t)
		}
		x.set(n.Outputs[0], ir.Type{DType: t.DType, Unranked: true})
		return nil
	}
	reduce := map[int]bool{}
	if len(axes) == 0 {
		if n.AttrInt("noop_with_empty_axes", 0) != 0 {
			x.setOut(n, 0, t.DType, cloneShape(t.Shape))
			return nil
		}
		for i := 0; i < r; i++ {
			reduce[i] = true
		}
	} else {
		ax, err := normAxes(axes, r)
		if err != nil {
			return err
		}
		for _, a := range ax {
			reduce[a] = true
		}
	}
	out := ir.Shape{}
	for i, d := range t.Shape {
		switch {
		case !reduce[i]:
			out = append(out, d)
		case keep:
			out = append(out, ir.D(1))
		}
	}
	x.setOut(n, 0, t.DType, out)
	return nil
}

func inferArgReduce(x *inferer, n *ir.Node) error {
	t, err := x.in(n, 0)
	if err != nil {
		return err
	}
	axis, err := normAxis(n.IntAttr("axis"), len(t.Shape))
	if err != nil {
		return err
	}
	out := ir.Shape{}
	for i, d := range t.Shape {
		switch {
		case i != axis:
			out = append(out, d)
		case n.IntAttr("keepdims") != 0:
			out = append(out, ir.D(1))
		}
	}
	x.setOut(n, 0, ir.I64, out)
	return nil
}

func inferRNN(x *inferer, n *ir.Node) error {
	t, err := x.inRank(n, 0, 3, 3)
	if err != nil {
		return err
	}
	w, err := x.inRank(n, 1, 3, 3)
	if err != nil {
		return err
	}
	gates := map[string]int64{"RNN": 1, "GRU": 3, "LSTM": 4}[n.Op]
	dirs := int64(1)
	switch d := n.StringAttr("direction"); d {
	case "forward", "reverse":
	case "bidirectional":
		dirs = 2
	default:
		return fmt.Errorf("direction %q is not forward, reverse or bidirectional", d)
	}
	if w.Shape[0].IsConst() && w.Shape[0].Size != dirs {
		return fmt.Errorf("W has %v directions, direction attribute says %d", w.Shape[0], dirs)
	}
	var hidden ir.Dim
	if a := n.Attr("hidden_size"); a != nil {
		hidden = ir.D(a.I)
	} else if hidden, err = x.divDim(w.Shape[1], gates); err != nil {
		return fmt.Errorf("W shape %v: %w", w.Shape, err)
	}
	seq, batch := t.Shape[0], t.Shape[1]
	batchFirst := n.IntAttr("layout") != 0
	if batchFirst {
		seq, batch = batch, seq
	}
	y := ir.Shape{seq, ir.D(dirs), batch, hidden}
	h := ir.Shape{ir.D(dirs), batch, hidden}
	if batchFirst {
		y = ir.Shape{batch, seq, ir.D(dirs), hidden}
		h = ir.Shape{batch, ir.D(dirs), hidden}
	}
	x.setOut(n, 0, t.DType, y)
	x.setOut(n, 1, t.DType, h)
	x.setOut(n, 2, t.DType, cloneShape(h)) // LSTM's Y_c
	return nil
}

func inferResize(x *inferer, n *ir.Node) error {
	t, err := x.in(n, 0)
	if err != nil {
		return err
	}
	r := len(t.Shape)
	// Where the scales come from: Upsample-7 attribute, Upsample-9 and
	// Resize-10 input 1, Resize-11+ input 2 (input 1 is roi) or sizes in 3.
	var scales []float64
	var sizes ir.Shape
	known := true
	switch {
	case n.Op == "Upsample" && n.Attr("scales") != nil:
		for _, f := range n.Attr("scales").Floats {
			scales = append(scales, float64(f))
		}
	case n.Op == "Upsample" || n.Version == 10 || n.Version == 0 && len(n.Inputs) == 2:
		scales, known = x.floats(n.Input(1))
	default:
		if v := n.Input(3); v != nil {
			s, ok, err := x.shapeFromInput(n, 3)
			if err != nil {
				return err
			}
			sizes, known = s, ok
		} else if v := n.Input(2); v != nil {
			scales, known = x.floats(v)
		} else {
			return fmt.Errorf("neither scales nor sizes is given")
		}
	}
	if !known {
		return x.freshAll(n, t)
	}
	axes := make([]int, r)
	for i := range axes {
		axes[i] = i
	}
	if a := n.Attr("axes"); a != nil { // Resize-18
		if axes, err = normAxes(a.Ints, r); err != nil {
			return err
		}
	}
	out := cloneShape(t.Shape)
	if sizes != nil {
		if len(sizes) != len(axes) {
			return fmt.Errorf("sizes %v has %d entries for %d axes", sizes, len(sizes), len(axes))
		}
		for i, a := range axes {
			out[a] = sizes[i]
		}
		if p := n.AttrString("keep_aspect_ratio_policy", "stretch"); p != "stretch" && n.Version >= 18 {
			// One scale for all axes (the smallest or largest of
			// sizes/in), each size rounded half up from scale*in.
			s := 0.0
			for i, a := range axes {
				if !sizes[i].IsConst() || !t.Shape[a].IsConst() {
					return x.freshAll(n, t)
				}
				si := float64(sizes[i].Size) / float64(t.Shape[a].Size)
				if i == 0 || p == "not_larger" && si < s || p == "not_smaller" && si > s {
					s = si
				}
			}
			for _, a := range axes {
				out[a] = ir.D(int64(s*float64(t.Shape[a].Size) + 0.5))
			}
		}
		x.setOut(n, 0, t.DType, out)
		return nil
	}
	if len(scales) != len(axes) {
		return fmt.Errorf("scales %v has %d entries for %d axes", scales, len(scales), len(axes))
	}
	for i, a := range axes {
		s := scales[i]
		if s <= 0 {
			return fmt.Errorf("scale %v is not positive", s)
		}
		d := t.Shape[a]
		switch {
		case s == 1:
		case d.IsConst():
			out[a] = ir.D(int64(math.Floor(float64(d.Size) * s)))
		case s == math.Trunc(s):
			out[a] = x.mulDim(d, int64(s))
		default:
			out[a] = x.freshDim(fmt.Sprint("scale(", d.Sym, ",", s, ")"))
		}
	}
	x.setOut(n, 0, t.DType, out)
	return nil
}

func inferEinsum(x *inferer, n *ir.Node) error {
	eq := strings.ReplaceAll(n.StringAttr("equation"), " ", "")
	lhs, rhs, explicit := strings.Cut(eq, "->")
	terms := strings.Split(lhs, ",")
	if len(terms) != len(n.Inputs) {
		return fmt.Errorf("equation %q has %d operands, node has %d inputs", eq, len(terms), len(n.Inputs))
	}
	sizes := map[byte]ir.Dim{}
	counts := map[byte]int{}
	var ellipsis ir.Shape
	var dt ir.DType
	for i, term := range terms {
		t, err := x.in(n, i)
		if err != nil {
			return err
		}
		dt = t.DType
		pre, post, hasDots := strings.Cut(term, "...")
		nell := len(t.Shape) - len(pre) - len(post)
		if !hasDots {
			nell = 0
			if len(term) != len(t.Shape) {
				return fmt.Errorf("operand %d: term %q has %d labels, input has rank %d", i, term, len(term), len(t.Shape))
			}
		} else if nell < 0 {
			return fmt.Errorf("operand %d: term %q does not fit rank %d", i, term, len(t.Shape))
		}
		dims := t.Shape
		if hasDots {
			e := dims[len(pre) : len(pre)+nell]
			if ellipsis, err = x.broadcast(ellipsis, e); err != nil {
				return err
			}
			dims = append(append(ir.Shape{}, dims[:len(pre)]...), dims[len(pre)+nell:]...)
		}
		labels := pre + post
		for j := 0; j < len(labels); j++ {
			c := labels[j]
			counts[c]++
			if old, ok := sizes[c]; ok && old != ir.D(1) && dims[j] != ir.D(1) {
				if sizes[c], err = sameDim(old, dims[j]); err != nil {
					return fmt.Errorf("label %c: %w", c, err)
				}
			} else if !ok || old == ir.D(1) {
				sizes[c] = dims[j]
			}
		}
	}
	if !explicit {
		// Implicit output: the ellipsis, then labels used once, sorted.
		rhs = "..."
		for c := byte('A'); c <= 'z'; c++ {
			if counts[c] == 1 {
				rhs += string(c)
			}
		}
	}
	out := ir.Shape{}
	pre, post, hasDots := strings.Cut(rhs, "...")
	for _, c := range []byte(pre) {
		d, ok := sizes[c]
		if !ok {
			return fmt.Errorf("output label %c is not in any input", c)
		}
		out = append(out, d)
	}
	if hasDots {
		out = append(out, ellipsis...)
	}
	for _, c := range []byte(post) {
		d, ok := sizes[c]
		if !ok {
			return fmt.Errorf("output label %c is not in any input", c)
		}
		out = append(out, d)
	}
	x.setOut(n, 0, dt, out)
	return nil
}

func inferGridSample(x *inferer, n *ir.Node) error {
	lo, hi := 4, 4
	if n.Version >= 20 || n.Version == 0 {
		lo, hi = 3, 16 // N-D from v20
	}
	t, err := x.inRank(n, 0, lo, hi)
	if err != nil {
		return err
	}
	g, err := x.inRank(n, 1, len(t.Shape), len(t.Shape))
	if err != nil {
		return err
	}
	out := ir.Shape{t.Shape[0], t.Shape[1]}
	out = append(out, g.Shape[1:len(g.Shape)-1]...)
	x.setOut(n, 0, t.DType, out)
	return nil
}

func inferRoiAlign(x *inferer, n *ir.Node) error {
	t, err := x.inRank(n, 0, 4, 4)
	if err != nil {
		return err
	}
	rois, err := x.inRank(n, 1, 2, 2)
	if err != nil {
		return err
	}
	x.setOut(n, 0, t.DType, ir.Shape{rois.Shape[0], t.Shape[1], ir.D(n.IntAttr("output_height")), ir.D(n.IntAttr("output_width"))})
	return nil
}

func inferMaxRoiPool(x *inferer, n *ir.Node) error {
	t, err := x.inRank(n, 0, 4, 4)
	if err != nil {
		return err
	}
	rois, err := x.inRank(n, 1, 2, 2)
	if err != nil {
		return err
	}
	ps := n.AttrInts("pooled_shape", nil)
	if len(ps) != 2 {
		return fmt.Errorf("pooled_shape %v, want 2 entries", ps)
	}
	x.setOut(n, 0, t.DType, ir.Shape{rois.Shape[0], t.Shape[1], ir.D(ps[0]), ir.D(ps[1])})
	return nil
}
