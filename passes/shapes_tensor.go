package passes

import (
	"fmt"
	"math"

	"github.com/cuvil/cuvil/ir"
)

func init() {
	reg(inferConstant, "Constant")
	reg(inferConstantOfShape, "ConstantOfShape")
	reg(inferShape, "Shape")
	reg(inferSize, "Size")
	reg(inferReshape, "Reshape")
	reg(inferFlatten, "Flatten")
	reg(inferTranspose, "Transpose")
	reg(inferConcat, "Concat")
	reg(inferSplit, "Split")
	reg(inferSlice, "Slice")
	reg(inferSqueeze, "Squeeze")
	reg(inferUnsqueeze, "Unsqueeze")
	reg(inferGather, "Gather")
	reg(inferGatherElements, "GatherElements")
	reg(inferGatherND, "GatherND")
	reg(inferExpand, "Expand")
	reg(inferTile, "Tile")
	reg(inferPad, "Pad")
	reg(inferRange, "Range")
	reg(inferOneHot, "OneHot")
	reg(inferNonZero, "NonZero")
	reg(inferCompress, "Compress")
	reg(inferUnique, "Unique")
	reg(inferNonMaxSuppression, "NonMaxSuppression")
	reg(inferTopK, "TopK")
	reg(inferEyeLike, "EyeLike")
	reg(inferDepthToSpace, "DepthToSpace")
	reg(inferSpaceToDepth, "SpaceToDepth")
	reg(inferRandom, "RandomNormal", "RandomUniform")
	reg(inferRandomLike, "RandomNormalLike", "RandomUniformLike", "Bernoulli")
	reg(inferMultinomial, "Multinomial")
	reg(inferDet, "Det")
}

// ConstantTensor returns the tensor a Constant node produces, from whichever
// value attribute it carries.
func ConstantTensor(n *ir.Node) (*ir.Tensor, error) {
	for _, a := range n.Attrs {
		switch a.Name {
		case "value":
			if a.T == nil {
				return nil, fmt.Errorf("attribute value holds no tensor")
			}
			return a.T, nil
		case "value_float":
			return ir.NewTensorF32(nil, []float32{a.F}), nil
		case "value_floats":
			return ir.NewTensorF32([]int64{int64(len(a.Floats))}, a.Floats), nil
		case "value_int":
			return ir.NewTensorInt64(nil, []int64{a.I}), nil
		case "value_ints":
			return ir.NewTensorInt64([]int64{int64(len(a.Ints))}, a.Ints), nil
		case "value_string":
			return &ir.Tensor{DType: ir.String, Strings: []string{a.S}}, nil
		case "value_strings":
			return &ir.Tensor{DType: ir.String, Shape: []int64{int64(len(a.Strings))}, Strings: a.Strings}, nil
		case "sparse_value":
			return nil, fmt.Errorf("sparse constants are not supported")
		}
	}
	return nil, fmt.Errorf("no value attribute")
}

func inferConstant(x *inferer, n *ir.Node) error {
	t, err := ConstantTensor(n)
	if err != nil {
		return err
	}
	x.set(n.Outputs[0], t.Type())
	x.trackTensor(n.Outputs[0], t)
	return nil
}

// shapeFromInput reads a 1-D shape tensor input as dims (tracked contents),
// or, when only its length is known, as that many fresh dims.
func (x *inferer) shapeFromInput(n *ir.Node, i int) (ir.Shape, bool, error) {
	t, err := x.inRank(n, i, 1, 1)
	if err != nil {
		return nil, false, err
	}
	if d, ok := x.vals(n.Inputs[i]); ok {
		return append(ir.Shape(nil), d...), true, nil
	}
	if !t.Shape[0].IsConst() {
		return nil, false, nil
	}
	s := make(ir.Shape, t.Shape[0].Size)
	for j := range s {
		s[j] = x.freshDim("")
	}
	return s, true, nil
}

func inferConstantOfShape(x *inferer, n *ir.Node) error {
	dt := ir.F32
	if a := n.Attr("value"); a != nil && a.T != nil {
		dt = a.T.DType
	}
	s, ok, err := x.shapeFromInput(n, 0)
	if err != nil {
		return err
	}
	if !ok {
		x.set(n.Outputs[0], ir.Type{DType: dt, Unranked: true})
		return nil
	}
	for _, d := range s {
		if d.IsConst() && d.Size < 0 {
			return fmt.Errorf("negative dim in shape %v", s)
		}
	}
	x.setOut(n, 0, dt, s)
	return nil
}

func inferShape(x *inferer, n *ir.Node) error {
	t, err := x.in(n, 0)
	if err != nil {
		return err
	}
	r := int64(len(t.Shape))
	start, end := n.AttrInt("start", 0), n.AttrInt("end", r)
	if start < 0 {
		start += r
	}
	if end < 0 {
		end += r
	}
	start, end = clamp(start, 0, r), clamp(end, 0, r)
	var dims []ir.Dim
	if end > start {
		dims = append(dims, t.Shape[start:end]...)
	}
	x.setOut(n, 0, ir.I64, ir.Shape{ir.D(int64(len(dims)))})
	x.track(n.Outputs[0], dims)
	return nil
}

func inferSize(x *inferer, n *ir.Node) error {
	t, err := x.in(n, 0)
	if err != nil {
		return err
	}
	x.setOut(n, 0, ir.I64, ir.Shape{})
	x.track(n.Outputs[0], []ir.Dim{x.prodDim(t.Shape)})
	return nil
}

func inferReshape(x *inferer, n *ir.Node) error {
	t, err := x.in(n, 0)
	if err != nil {
		return err
	}
	var target ir.Shape
	if a := n.Attr("shape"); a != nil && n.Input(1) == nil { // Reshape-1
		target = constDims(a.Ints)
	} else {
		s, ok, err := x.shapeFromInput(n, 1)
		if err != nil {
			return err
		}
		if !ok {
			x.set(n.Outputs[0], ir.Type{DType: t.DType, Unranked: true})
			return nil
		}
		target = s
	}
	allowZero := n.AttrInt("allowzero", 0) != 0
	out := make(ir.Shape, len(target))
	minus := -1
	for i, d := range target {
		switch {
		case !d.IsConst():
			out[i] = d
		case d.Size == 0 && !allowZero:
			if i >= len(t.Shape) {
				return fmt.Errorf("shape %v copies dim %d (0) but the input %v has rank %d", target, i, t.Shape, len(t.Shape))
			}
			out[i] = t.Shape[i]
		case d.Size == -1:
			if minus >= 0 {
				return fmt.Errorf("shape %v has more than one -1", target)
			}
			minus = i
		case d.Size < -1:
			return fmt.Errorf("shape %v has a negative dim", target)
		default:
			out[i] = d
		}
	}
	total := productOf(t.Shape)
	if minus >= 0 {
		rest := append(append(ir.Shape(nil), out[:minus]...), out[minus+1:]...)
		q, ok := total.div(productOf(rest))
		switch {
		case ok:
			out[minus] = x.dim(q)
		case len(total.syms) == 0 && len(productOf(rest).syms) == 0:
			return fmt.Errorf("cannot reshape %v (%d elements) to %v", t.Shape, total.c, target)
		default:
			out[minus] = x.freshDim("reshape(" + total.key() + "/" + productOf(rest).key() + ")")
		}
	} else if p := productOf(out); len(p.syms) == 0 && len(total.syms) == 0 && p.c != total.c {
		return fmt.Errorf("cannot reshape %v (%d elements) to %v (%d elements)", t.Shape, total.c, out, p.c)
	}
	x.setOut(n, 0, t.DType, out)
	if d, ok := x.vals(n.Inputs[0]); ok {
		x.track(n.Outputs[0], d)
	}
	return nil
}

func inferFlatten(x *inferer, n *ir.Node) error {
	t, err := x.in(n, 0)
	if err != nil {
		return err
	}
	r := len(t.Shape)
	axis := n.IntAttr("axis")
	if axis < 0 {
		axis += int64(r)
	}
	if axis < 0 || axis > int64(r) {
		return fmt.Errorf("axis %d is out of range for rank %d", n.AttrInt("axis", 1), r)
	}
	x.setOut(n, 0, t.DType, ir.Shape{x.prodDim(t.Shape[:axis]), x.prodDim(t.Shape[axis:])})
	return nil
}

func inferTranspose(x *inferer, n *ir.Node) error {
	t, err := x.in(n, 0)
	if err != nil {
		return err
	}
	r := len(t.Shape)
	perm := n.AttrInts("perm", nil)
	if perm == nil {
		for i := r - 1; i >= 0; i-- {
			perm = append(perm, int64(i))
		}
	}
	if len(perm) != r {
		return fmt.Errorf("perm %v has %d entries for rank %d", perm, len(perm), r)
	}
	axes, err := normAxes(perm, r)
	if err != nil {
		return fmt.Errorf("perm: %w", err)
	}
	out := make(ir.Shape, r)
	for i, a := range axes {
		out[i] = t.Shape[a]
	}
	x.setOut(n, 0, t.DType, out)
	return nil
}

func inferConcat(x *inferer, n *ir.Node) error {
	first, err := x.in(n, 0)
	if err != nil {
		return err
	}
	r := len(first.Shape)
	axis, err := normAxis(n.IntAttr("axis"), r)
	if err != nil {
		return err
	}
	out := cloneShape(first.Shape)
	var along []ir.Dim
	var tracked []ir.Dim
	trackOK := r == 1
	for i, v := range n.Inputs {
		if v == nil {
			continue
		}
		t, err := x.inRank(n, i, r, r)
		if err != nil {
			return err
		}
		for j := range out {
			if j == axis {
				continue
			}
			if out[j], err = sameDim(out[j], t.Shape[j]); err != nil {
				return fmt.Errorf("input %d (%s): %w", i, v.Name, err)
			}
		}
		along = append(along, t.Shape[axis])
		if d, ok := x.vals(v); ok && trackOK {
			tracked = append(tracked, d...)
		} else {
			trackOK = false
		}
	}
	out[axis] = x.sumDims(along)
	x.setOut(n, 0, first.DType, out)
	if trackOK {
		x.track(n.Outputs[0], tracked)
	}
	return nil
}

// sumDims adds dims: constants add up; one symbol plus zeros stays the symbol.
func (x *inferer) sumDims(ds []ir.Dim) ir.Dim {
	var c int64
	var syms []string
	for _, d := range ds {
		if d.IsConst() {
			c += d.Size
		} else {
			syms = append(syms, d.Sym)
		}
	}
	switch {
	case len(syms) == 0:
		return ir.D(c)
	case len(syms) == 1 && c == 0:
		return ir.S(syms[0])
	}
	key := fmt.Sprint("sum(", c, syms, ")")
	return x.freshDim(key)
}

func inferSplit(x *inferer, n *ir.Node) error {
	t, err := x.in(n, 0)
	if err != nil {
		return err
	}
	axis, err := normAxis(n.IntAttr("axis"), len(t.Shape))
	if err != nil {
		return err
	}
	nout := len(n.Outputs)
	d := t.Shape[axis]
	sizes := make([]ir.Dim, nout)
	split, present, known := x.intsAttrOrInput(n, "split", 1)
	switch {
	case present && !known:
		for i := range sizes {
			sizes[i] = x.freshDim("")
		}
	case present:
		if len(split) != nout {
			return fmt.Errorf("split %v has %d entries for %d outputs", split, len(split), nout)
		}
		var sum int64
		for i, s := range split {
			if s < 0 {
				return fmt.Errorf("split %v has a negative size", split)
			}
			sizes[i] = ir.D(s)
			sum += s
		}
		if d.IsConst() && sum != d.Size {
			return fmt.Errorf("split %v adds up to %d, the dim along axis %d is %d", split, sum, axis, d.Size)
		}
	case d.IsConst():
		k := int64(nout)
		if a := n.Attr("num_outputs"); a != nil {
			k = a.I
		}
		chunk := (d.Size + k - 1) / k // the last output takes the remainder (Split-18)
		for i := range sizes {
			sizes[i] = ir.D(min(chunk, max(d.Size-int64(i)*chunk, 0)))
		}
	case nout == 1:
		sizes[0] = d
	default:
		s := x.freshDim(fmt.Sprint("split(", d.Sym, ",", nout, ")"))
		for i := range sizes {
			sizes[i] = s
		}
	}
	src, tracked := x.vals(n.Inputs[0])
	var off int64
	for i, o := range n.Outputs {
		s := cloneShape(t.Shape)
		s[axis] = sizes[i]
		if o != nil {
			x.set(o, ir.TensorType(t.DType, s))
		}
		if tracked && sizes[i].IsConst() && off >= 0 {
			if end := off + sizes[i].Size; end <= int64(len(src)) {
				x.track(o, src[off:end])
			}
			off += sizes[i].Size
		} else {
			off = -1
		}
	}
	return nil
}

func inferSlice(x *inferer, n *ir.Node) error {
	t, err := x.in(n, 0)
	if err != nil {
		return err
	}
	r := len(t.Shape)
	var starts, ends []ir.Dim
	var axes, steps []int64
	axesKnown, stepsKnown := true, true
	if n.Input(1) == nil && n.Attr("starts") != nil { // Slice-1
		starts = constDims(n.AttrInts("starts", nil))
		ends = constDims(n.AttrInts("ends", nil))
		axes = n.AttrInts("axes", nil)
	} else {
		var ok1, ok2 bool
		starts, ok1 = x.vals(n.Input(1))
		ends, ok2 = x.vals(n.Input(2))
		if !ok1 || !ok2 {
			// Unknown bounds: the rank is known, the sliced sizes are not.
			st, err := x.inRank(n, 1, 1, 1)
			if err != nil {
				return err
			}
			k := st.Shape[0]
			if !k.IsConst() {
				return x.freshAll(n, t)
			}
			starts, ends = make([]ir.Dim, k.Size), make([]ir.Dim, k.Size)
			for i := range starts {
				starts[i], ends[i] = x.freshDim(""), x.freshDim("")
			}
		}
		if v := n.Input(3); v != nil {
			axes, axesKnown = x.ints(v)
		}
		if v := n.Input(4); v != nil {
			steps, stepsKnown = x.ints(v)
		}
	}
	if !axesKnown || !stepsKnown {
		return x.freshAll(n, t)
	}
	if len(ends) != len(starts) {
		return fmt.Errorf("starts has %d entries, ends %d", len(starts), len(ends))
	}
	if axes == nil {
		for i := range starts {
			axes = append(axes, int64(i))
		}
	}
	if steps == nil {
		steps = make([]int64, len(starts))
		for i := range steps {
			steps[i] = 1
		}
	}
	if len(axes) != len(starts) || len(steps) != len(starts) {
		return fmt.Errorf("starts, ends, axes and steps have %d, %d, %d and %d entries", len(starts), len(ends), len(axes), len(steps))
	}
	ax, err := normAxes(axes, r)
	if err != nil {
		return err
	}
	out := cloneShape(t.Shape)
	for i, a := range ax {
		if steps[i] == 0 {
			return fmt.Errorf("step %d is 0", i)
		}
		out[a] = x.sliceDim(t.Shape[a], starts[i], ends[i], steps[i])
	}
	x.setOut(n, 0, t.DType, out)
	// Slicing a tracked 1-D tensor with constant bounds.
	if src, ok := x.vals(n.Inputs[0]); ok && r == 1 && out[0].IsConst() && starts[0].IsConst() && ends[0].IsConst() {
		d := int64(len(src))
		s, _, step := sliceBounds(d, starts[0].Size, ends[0].Size, steps[0])
		var res []ir.Dim
		for i := int64(0); i < out[0].Size; i++ {
			res = append(res, src[s+i*step])
		}
		x.track(n.Outputs[0], res)
	}
	return nil
}

// freshAll gives output 0 the input's dtype and rank with every dim unknown.
func (x *inferer) freshAll(n *ir.Node, t ir.Type) error {
	s := make(ir.Shape, len(t.Shape))
	for i := range s {
		s[i] = x.freshDim("")
	}
	x.setOut(n, 0, t.DType, s)
	return nil
}

// sliceBounds normalises start and end for a dim of size d, the way ONNX
// Slice does, and returns the element count.
func sliceBounds(d, start, end, step int64) (s, count, st int64) {
	if start < 0 {
		start += d
	}
	if end < 0 {
		end += d
	}
	if step > 0 {
		start, end = clamp(start, 0, d), clamp(end, 0, d)
		if end <= start {
			return start, 0, step
		}
		return start, (end - start + step - 1) / step, step
	}
	start, end = clamp(start, 0, d-1), clamp(end, -1, d-1)
	if start <= end {
		return start, 0, step
	}
	return start, (start - end - step - 1) / -step, step
}

func (x *inferer) sliceDim(d, start, end ir.Dim, step int64) ir.Dim {
	if d.IsConst() && start.IsConst() && end.IsConst() {
		_, c, _ := sliceBounds(d.Size, start.Size, end.Size, step)
		return ir.D(c)
	}
	if step == 1 && start == ir.D(0) {
		switch {
		case end == d:
			return d
		case !d.IsConst() && end.IsConst() && end.Size >= bigIndex:
			return d // x[0:] of a symbolic dim
		case !end.IsConst():
			// x[:n] where n is itself a run-time size (position ids cut to the
			// sequence length): the model is only valid when n <= d.
			return end
		}
	}
	return x.freshDim(fmt.Sprint("slice(", d, ",", start, ",", end, ",", step, ")"))
}

func inferSqueeze(x *inferer, n *ir.Node) error {
	t, err := x.in(n, 0)
	if err != nil {
		return err
	}
	axes, present, known := x.intsAttrOrInput(n, "axes", 1)
	if !known {
		x.set(n.Outputs[0], ir.Type{DType: t.DType, Unranked: true})
		return nil
	}
	drop := map[int]bool{}
	if present {
		ax, err := normAxes(axes, len(t.Shape))
		if err != nil {
			return err
		}
		for _, a := range ax {
			if d := t.Shape[a]; d.IsConst() && d.Size != 1 {
				return fmt.Errorf("cannot squeeze axis %d of size %d", a, d.Size)
			}
			drop[a] = true
		}
	} else {
		// Without axes every size-1 dim goes; a symbol is assumed not to be 1.
		for i, d := range t.Shape {
			if d == ir.D(1) {
				drop[i] = true
			}
		}
	}
	out := ir.Shape{}
	for i, d := range t.Shape {
		if !drop[i] {
			out = append(out, d)
		}
	}
	x.setOut(n, 0, t.DType, out)
	if d, ok := x.vals(n.Inputs[0]); ok {
		x.track(n.Outputs[0], d)
	}
	return nil
}

func inferUnsqueeze(x *inferer, n *ir.Node) error {
	t, err := x.in(n, 0)
	if err != nil {
		return err
	}
	axes, present, known := x.intsAttrOrInput(n, "axes", 1)
	if !present {
		return fmt.Errorf("axes are missing")
	}
	if !known {
		x.set(n.Outputs[0], ir.Type{DType: t.DType, Unranked: true})
		return nil
	}
	r := len(t.Shape) + len(axes)
	ax, err := normAxes(axes, r)
	if err != nil {
		return err
	}
	ones := map[int]bool{}
	for _, a := range ax {
		ones[a] = true
	}
	out := make(ir.Shape, r)
	j := 0
	for i := range out {
		if ones[i] {
			out[i] = ir.D(1)
		} else {
			out[i] = t.Shape[j]
			j++
		}
	}
	x.setOut(n, 0, t.DType, out)
	if d, ok := x.vals(n.Inputs[0]); ok {
		x.track(n.Outputs[0], d)
	}
	return nil
}

func inferGather(x *inferer, n *ir.Node) error {
	data, err := x.inRank(n, 0, 1, -1)
	if err != nil {
		return err
	}
	idx, err := x.in(n, 1)
	if err != nil {
		return err
	}
	axis, err := normAxis(n.IntAttr("axis"), len(data.Shape))
	if err != nil {
		return err
	}
	if d := data.Shape[axis]; d.IsConst() {
		if is, ok := x.ints(n.Inputs[1]); ok {
			for _, k := range is {
				if k < -d.Size || k >= d.Size {
					return fmt.Errorf("index %d is out of range for axis %d of size %d", k, axis, d.Size)
				}
			}
		}
	}
	out := append(append(append(ir.Shape{}, data.Shape[:axis]...), idx.Shape...), data.Shape[axis+1:]...)
	x.setOut(n, 0, data.DType, out)
	if src, ok := x.vals(n.Inputs[0]); ok && len(data.Shape) == 1 {
		if is, ok := x.ints(n.Inputs[1]); ok {
			res := make([]ir.Dim, len(is))
			for i, k := range is {
				if k < 0 {
					k += int64(len(src))
				}
				if k < 0 || k >= int64(len(src)) {
					return fmt.Errorf("index %d is out of range for %d elements", is[i], len(src))
				}
				res[i] = src[k]
			}
			x.track(n.Outputs[0], res)
		}
	}
	return nil
}

func inferGatherElements(x *inferer, n *ir.Node) error {
	data, err := x.in(n, 0)
	if err != nil {
		return err
	}
	idx, err := x.inRank(n, 1, len(data.Shape), len(data.Shape))
	if err != nil {
		return err
	}
	if _, err := normAxis(n.IntAttr("axis"), len(data.Shape)); err != nil {
		return err
	}
	x.setOut(n, 0, data.DType, cloneShape(idx.Shape))
	return nil
}

func inferGatherND(x *inferer, n *ir.Node) error {
	data, err := x.in(n, 0)
	if err != nil {
		return err
	}
	idx, err := x.inRank(n, 1, 1, -1)
	if err != nil {
		return err
	}
	b := int(n.IntAttr("batch_dims"))
	last := idx.Shape[len(idx.Shape)-1]
	if !last.IsConst() {
		x.set(n.Outputs[0], ir.Type{DType: data.DType, Unranked: true})
		return nil
	}
	if k := b + int(last.Size); k > len(data.Shape) {
		return fmt.Errorf("indices address %d dims of a rank-%d input", k, len(data.Shape))
	}
	out := append(cloneShape(idx.Shape[:len(idx.Shape)-1]), data.Shape[b+int(last.Size):]...)
	x.setOut(n, 0, data.DType, out)
	return nil
}

func inferExpand(x *inferer, n *ir.Node) error {
	t, err := x.in(n, 0)
	if err != nil {
		return err
	}
	s, ok, err := x.shapeFromInput(n, 1)
	if err != nil {
		return err
	}
	if !ok {
		x.set(n.Outputs[0], ir.Type{DType: t.DType, Unranked: true})
		return nil
	}
	out, err := x.broadcast(t.Shape, s)
	if err != nil {
		return err
	}
	x.setOut(n, 0, t.DType, out)
	return nil
}

func inferTile(x *inferer, n *ir.Node) error {
	t, err := x.in(n, 0)
	if err != nil {
		return err
	}
	reps, ok := x.ints(n.Input(1))
	if !ok {
		return x.freshAll(n, t)
	}
	if len(reps) != len(t.Shape) {
		return fmt.Errorf("repeats %v has %d entries for rank %d", reps, len(reps), len(t.Shape))
	}
	out := make(ir.Shape, len(reps))
	for i, r := range reps {
		if r < 0 {
			return fmt.Errorf("repeats %v has a negative entry", reps)
		}
		out[i] = x.mulDim(t.Shape[i], r)
	}
	x.setOut(n, 0, t.DType, out)
	return nil
}

func inferPad(x *inferer, n *ir.Node) error {
	t, err := x.in(n, 0)
	if err != nil {
		return err
	}
	r := len(t.Shape)
	pads, present, known := x.intsAttrOrInput(n, "pads", 1)
	if !present {
		return fmt.Errorf("pads are missing")
	}
	if !known {
		return x.freshAll(n, t)
	}
	axes := make([]int, r)
	for i := range axes {
		axes[i] = i
	}
	if v := n.Input(3); v != nil { // Pad-18 axes
		as, ok := x.ints(v)
		if !ok {
			return x.freshAll(n, t)
		}
		if axes, err = normAxes(as, r); err != nil {
			return err
		}
	}
	if len(pads) != 2*len(axes) {
		return fmt.Errorf("pads %v has %d entries, want %d", pads, len(pads), 2*len(axes))
	}
	out := cloneShape(t.Shape)
	for i, a := range axes {
		out[a] = x.addDim(out[a], pads[i]+pads[i+len(axes)])
		if out[a].IsConst() && out[a].Size < 0 {
			return fmt.Errorf("pads %v make dim %d negative", pads, a)
		}
	}
	x.setOut(n, 0, t.DType, out)
	return nil
}

func inferRange(x *inferer, n *ir.Node) error {
	t, err := x.in(n, 0)
	if err != nil {
		return err
	}
	for i := 0; i < 3; i++ {
		// Scalars by the spec; ONNX's own function bodies (AffineGrid's)
		// pass one-element 1-D tensors, which its runtimes accept.
		ti, err := x.inRank(n, i, 0, 1)
		if err != nil {
			return err
		}
		if len(ti.Shape) == 1 && ti.Shape[0].IsConst() && ti.Shape[0].Size != 1 {
			return fmt.Errorf("input %d (%s) has shape %v, want a scalar", i, n.Inputs[i].Name, ti.Shape)
		}
	}
	start, ok1 := x.floats(n.Inputs[0])
	limit, ok2 := x.floats(n.Inputs[1])
	delta, ok3 := x.floats(n.Inputs[2])
	var d ir.Dim
	switch {
	case ok1 && ok2 && ok3:
		if delta[0] == 0 {
			return fmt.Errorf("delta is 0")
		}
		d = ir.D(int64(max(math.Ceil((limit[0]-start[0])/delta[0]), 0)))
	case ok1 && ok3 && start[0] == 0 && delta[0] == 1:
		// arange(n): n elements, n possibly a run-time size.
		if l, ok := x.vals(n.Inputs[1]); ok {
			d = l[0]
			break
		}
		fallthrough
	default:
		d = x.freshDim("")
	}
	x.setOut(n, 0, t.DType, ir.Shape{d})
	return nil
}

func inferOneHot(x *inferer, n *ir.Node) error {
	idx, err := x.in(n, 0)
	if err != nil {
		return err
	}
	vals, err := x.in(n, 2)
	if err != nil {
		return err
	}
	r := len(idx.Shape) + 1
	axis, err := normAxis(n.IntAttr("axis"), r)
	if err != nil {
		return err
	}
	depth := x.freshDim("")
	if f, ok := x.floats(n.Input(1)); ok && len(f) == 1 {
		depth = ir.D(int64(f[0]))
	}
	out := append(append(append(ir.Shape{}, idx.Shape[:axis]...), depth), idx.Shape[axis:]...)
	x.setOut(n, 0, vals.DType, out)
	return nil
}

func inferNonZero(x *inferer, n *ir.Node) error {
	t, err := x.in(n, 0)
	if err != nil {
		return err
	}
	x.setOut(n, 0, ir.I64, ir.Shape{ir.D(int64(len(t.Shape))), x.freshDim("")})
	return nil
}

func inferCompress(x *inferer, n *ir.Node) error {
	t, err := x.in(n, 0)
	if err != nil {
		return err
	}
	if n.Attr("axis") == nil {
		x.setOut(n, 0, t.DType, ir.Shape{x.freshDim("")})
		return nil
	}
	axis, err := normAxis(n.IntAttr("axis"), len(t.Shape))
	if err != nil {
		return err
	}
	out := cloneShape(t.Shape)
	out[axis] = x.freshDim("")
	x.setOut(n, 0, t.DType, out)
	return nil
}

func inferUnique(x *inferer, n *ir.Node) error {
	t, err := x.in(n, 0)
	if err != nil {
		return err
	}
	count := x.freshDim("")
	y := ir.Shape{count}
	inverse := x.prodDim(t.Shape)
	if n.Attr("axis") != nil {
		axis, err := normAxis(n.IntAttr("axis"), len(t.Shape))
		if err != nil {
			return err
		}
		y = cloneShape(t.Shape)
		y[axis] = count
		inverse = t.Shape[axis]
	}
	x.setOut(n, 0, t.DType, y)
	x.setOut(n, 1, ir.I64, ir.Shape{count})
	x.setOut(n, 2, ir.I64, ir.Shape{inverse})
	x.setOut(n, 3, ir.I64, ir.Shape{count})
	return nil
}

func inferNonMaxSuppression(x *inferer, n *ir.Node) error {
	x.setOut(n, 0, ir.I64, ir.Shape{x.freshDim(""), ir.D(3)})
	return nil
}

func inferTopK(x *inferer, n *ir.Node) error {
	t, err := x.in(n, 0)
	if err != nil {
		return err
	}
	axis, err := normAxis(n.IntAttr("axis"), len(t.Shape))
	if err != nil {
		return err
	}
	var k ir.Dim
	if v := n.Input(1); v != nil {
		if d, ok := x.vals(v); ok && len(d) == 1 {
			k = d[0]
		} else {
			k = x.freshDim("")
		}
	} else if a := n.Attr("k"); a != nil {
		k = ir.D(a.I)
	} else {
		return fmt.Errorf("k is missing")
	}
	if k.IsConst() && t.Shape[axis].IsConst() && k.Size > t.Shape[axis].Size {
		return fmt.Errorf("k %d is larger than dim %d (%d)", k.Size, axis, t.Shape[axis].Size)
	}
	out := cloneShape(t.Shape)
	out[axis] = k
	x.setOut(n, 0, t.DType, out)
	x.setOut(n, 1, ir.I64, cloneShape(out))
	return nil
}

func inferEyeLike(x *inferer, n *ir.Node) error {
	t, err := x.inRank(n, 0, 2, 2)
	if err != nil {
		return err
	}
	dt, err := attrDType(n, "dtype", t.DType)
	if err != nil {
		return err
	}
	x.setOut(n, 0, dt, cloneShape(t.Shape))
	return nil
}

func inferDepthToSpace(x *inferer, n *ir.Node) error {
	t, err := x.inRank(n, 0, 4, 4)
	if err != nil {
		return err
	}
	b := n.IntAttr("blocksize")
	if b <= 0 {
		return fmt.Errorf("blocksize %d, want > 0", b)
	}
	c, err := x.divDim(t.Shape[1], b*b)
	if err != nil {
		return err
	}
	x.setOut(n, 0, t.DType, ir.Shape{t.Shape[0], c, x.mulDim(t.Shape[2], b), x.mulDim(t.Shape[3], b)})
	return nil
}

func inferSpaceToDepth(x *inferer, n *ir.Node) error {
	t, err := x.inRank(n, 0, 4, 4)
	if err != nil {
		return err
	}
	b := n.IntAttr("blocksize")
	if b <= 0 {
		return fmt.Errorf("blocksize %d, want > 0", b)
	}
	h, err := x.divDim(t.Shape[2], b)
	if err != nil {
		return err
	}
	w, err := x.divDim(t.Shape[3], b)
	if err != nil {
		return err
	}
	x.setOut(n, 0, t.DType, ir.Shape{t.Shape[0], x.mulDim(t.Shape[1], b*b), h, w})
	return nil
}

func inferRandom(x *inferer, n *ir.Node) error {
	dt, err := attrDType(n, "dtype", ir.F32)
	if err != nil {
		return err
	}
	a := n.Attr("shape")
	if a == nil {
		return fmt.Errorf("attribute shape is missing")
	}
	x.setOut(n, 0, dt, constDims(a.Ints))
	return nil
}

func inferRandomLike(x *inferer, n *ir.Node) error {
	t, err := x.in(n, 0)
	if err != nil {
		return err
	}
	dt, err := attrDType(n, "dtype", t.DType)
	if err != nil {
		return err
	}
	x.setOut(n, 0, dt, cloneShape(t.Shape))
	return nil
}

func inferMultinomial(x *inferer, n *ir.Node) error {
	t, err := x.inRank(n, 0, 2, 2)
	if err != nil {
		return err
	}
	dt, err := attrDType(n, "dtype", ir.I32)
	if err != nil {
		return err
	}
	x.setOut(n, 0, dt, ir.Shape{t.Shape[0], ir.D(n.AttrInt("sample_size", 1))})
	return nil
}

func inferDet(x *inferer, n *ir.Node) error {
	t, err := x.inRank(n, 0, 2, -1)
	if err != nil {
		return err
	}
	x.setOut(n, 0, t.DType, cloneShape(t.Shape[:len(t.Shape)-2]))
	return nil
}
