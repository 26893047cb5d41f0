package templates

import (
	"math/rand"
	"testing"
)

// tewElemEq checks out[o] == in[i] whatever the dtype.
func tewElemEq(out *Tensor, o int, in *Tensor, i int) bool {
	switch d := out.Data.(type) {
	case []string:
		return d[o] == in.Str()[i]
	case []bool:
		return d[o] == in.Bool()[i]
	}
	a, b := tewGet(out, o), tewGet(in, i)
	return a == b || (a != a && b != b)
}

// tewCheckMap checks out's shape and that every out element equals the
// input element src(outIdx) gives (ravelled into in).
func tewCheckMap(t *testing.T, what string, out, in *Tensor, shape []int, src func(idx []int) int) {
	t.Helper()
	if out.DType != in.DType || !tewSameShape(out.Shape, shape) {
		t.Fatalf("%s: out %s, want %s%v", what, out, in.DType, shape)
	}
	idx := make([]int, len(shape))
	for o := 0; o < out.Len(); o++ {
		tewUnravel(o, shape, idx)
		if i := src(idx); !tewElemEq(out, o, in, i) {
			t.Fatalf("%s: out%v differs from in[%d]", what, idx, i)
		}
	}
}

func TestReshapeFamily(t *testing.T) {
	r := rand.New(rand.NewSource(51))
	x := tewRand(r, F32, -9, 9, 2, 3, 5)
	same := func(idx []int, shape []int) int { return tewRavel(idx, shape) }
	for _, c := range []struct {
		ver   int
		attrs Attrs
		shape []int64
		want  []int
	}{
		{13, nil, []int64{5, -1}, []int{5, 6}},
		{13, nil, []int64{0, 0, 5}, []int{2, 3, 5}},
		{13, nil, []int64{-1}, []int{30}},
		{14, Attrs{"allowzero": int64(0)}, []int64{0, 15}, []int{2, 15}},
		{1, Attrs{"shape": []int64{5, 0, -1}}, nil, []int{5, 3, 2}},
	} {
		in := []*Tensor{x}
		if c.shape != nil {
			in = append(in, tewI64([]int{len(c.shape)}, c.shape...))
		}
		n := tewNode("Reshape", c.ver, c.attrs, in...)
		tewRun(t, n)
		tewCheckMap(t, "Reshape", n.Out[0], x, c.want, func(idx []int) int { return same(idx, c.want) })
	}
	// allowzero keeps a literal 0 (only valid for an empty tensor).
	empty := tewRand(r, F32, 0, 1, 0, 4)
	n := tewNode("Reshape", 14, Attrs{"allowzero": int64(1)}, empty, tewI64([]int{3}, 4, 0, 1))
	tewRun(t, n)
	if !tewSameShape(n.Out[0].Shape, []int{4, 0, 1}) {
		t.Fatalf("allowzero: %v", n.Out[0].Shape)
	}
	if err := Reshape(tewNode("Reshape", 13, nil, x, tewI64([]int{2}, 7, -1))); err == nil {
		t.Fatal("indivisible -1 must fail")
	}
	for axis, want := range map[int64][]int{0: {1, 30}, 1: {2, 15}, 2: {6, 5}, 3: {30, 1}, -1: {6, 5}, -3: {1, 30}} {
		n := tewNode("Flatten", 13, Attrs{"axis": axis}, x)
		tewRun(t, n)
		tewCheckMap(t, "Flatten", n.Out[0], x, want, func(idx []int) int { return tewRavel(idx, want) })
	}
	y := tewRand(r, I32, -9, 9, 1, 3, 1, 5, 1)
	for _, c := range []struct {
		op   string
		ver  int
		axes []int64
		in   *Tensor
		want []int
	}{
		{"Squeeze", 11, nil, y, []int{3, 5}},
		{"Squeeze", 11, []int64{0, -1}, y, []int{3, 1, 5}},
		{"Squeeze", 13, []int64{2}, y, []int{1, 3, 5, 1}},
		{"Unsqueeze", 11, []int64{0, 3}, x, []int{1, 2, 3, 1, 5}},
		{"Unsqueeze", 13, []int64{-1, 1}, x, []int{2, 1, 3, 5, 1}},
	} {
		var n *Node
		switch {
		case c.ver >= 13:
			n = tewNode(c.op, c.ver, nil, c.in, tewI64([]int{len(c.axes)}, c.axes...))
		case c.axes != nil:
			n = tewNode(c.op, c.ver, Attrs{"axes": c.axes}, c.in)
		default:
			n = tewNode(c.op, c.ver, nil, c.in)
		}
		tewRun(t, n)
		tewCheckMap(t, c.op, n.Out[0], c.in, c.want, func(idx []int) int { return tewRavel(idx, c.want) })
	}
	if err := Squeeze(tewNode("Squeeze", 11, Attrs{"axes": []int64{1}}, y)); err == nil {
		t.Fatal("squeezing a non-unit dim must fail")
	}
}

func TestTranspose(t *testing.T) {
	r := rand.New(rand.NewSource(53))
	for _, dt := range tewAll {
		for rank := 1; rank <= 5; rank++ {
			shape := make([]int, rank)
			for i := range shape {
				shape[i] = 1 + r.Intn(4)
			}
			x := tewRand(r, dt, -50, 50, shape...)
			perm := r.Perm(rank)
			var attrs Attrs
			if rank != 3 { // rank 3 checks the default (reversed) perm
				p := make([]int64, rank)
				for i, v := range perm {
					p[i] = int64(v)
				}
				attrs = Attrs{"perm": p}
			} else {
				perm = []int{2, 1, 0}
			}
			n := tewNode("Transpose", 13, attrs, x)
			tewRun(t, n)
			want := make([]int, rank)
			for i, p := range perm {
				want[i] = shape[p]
			}
			in := make([]int, rank)
			tewCheckMap(t, "Transpose", n.Out[0], x, want, func(idx []int) int {
				for i, p := range perm {
					in[p] = idx[i]
				}
				return tewRavel(in, shape)
			})
		}
	}
}

func TestConcatSplit(t *testing.T) {
	r := rand.New(rand.NewSource(57))
	base := []int{3, 2, 5}
	for _, dt := range tewAll {
		for axis := -3; axis < 3; axis++ {
			a := (axis + 3) % 3
			var ins []*Tensor
			sizes := []int{2, 1, 4}
			for _, s := range sizes {
				sh := append([]int(nil), base...)
				sh[a] = s
				ins = append(ins, tewRand(r, dt, -50, 50, sh...))
			}
			n := tewNode("Concat", 13, Attrs{"axis": int64(axis)}, ins...)
			tewRun(t, n)
			want := append([]int(nil), base...)
			want[a] = 7
			out := n.Out[0]
			if !tewSameShape(out.Shape, want) {
				t.Fatalf("Concat shape %v", out.Shape)
			}
			idx := make([]int, 3)
			for o := 0; o < out.Len(); o++ {
				tewUnravel(o, want, idx)
				k, at := 0, idx[a]
				for at >= sizes[k] {
					at -= sizes[k]
					k++
				}
				in := append([]int(nil), idx...)
				in[a] = at
				if !tewElemEq(out, o, ins[k], tewRavel(in, ins[k].Shape)) {
					t.Fatalf("Concat %s axis %d: out%v", dt, axis, idx)
				}
			}
			// Split the result back with each way of giving sizes.
			for _, sc := range []struct {
				ver   int
				attrs Attrs
				input bool
			}{
				{11, Attrs{"axis": int64(axis), "split": []int64{2, 1, 4}}, false},
				{13, Attrs{"axis": int64(axis)}, true},
				{1, Attrs{"axis": int64(axis)}, true},
			} {
				in := []*Tensor{out}
				if sc.input {
					in = append(in, tewI64([]int{3}, 2, 1, 4))
				}
				s := tewNode("Split", sc.ver, sc.attrs, in...)
				s.Out = []*Tensor{{}, {}, {}}
				tewRun(t, s)
				for k := range ins {
					tewEqual(t, "Split", s.Out[k], ins[k])
				}
			}
		}
	}
	// Equal parts, and num_outputs (opset 18) with a short last part.
	x := tewRand(r, F32, -5, 5, 4, 7)
	s := tewNode("Split", 13, Attrs{"axis": int64(1)}, x)
	s.Out = []*Tensor{{}, {}, {}}
	if err := Split(s); err == nil {
		t.Fatal("7 into 3 equal parts must fail")
	}
	s = tewNode("Split", 18, Attrs{"axis": int64(1), "num_outputs": int64(3)}, x)
	s.Out = []*Tensor{{}, {}, {}}
	tewRun(t, s)
	for k, w := range []int{3, 3, 1} {
		o := s.Out[k]
		if !tewSameShape(o.Shape, []int{4, w}) {
			t.Fatalf("num_outputs part %d: %v", k, o.Shape)
		}
		tewCheckMap(t, "Split num_outputs", o, x, o.Shape, func(idx []int) int { return idx[0]*7 + 3*k + idx[1] })
	}
	s = tewNode("Split", 2, nil, tewRand(r, F32, -5, 5, 6))
	s.Out = []*Tensor{{}, {}}
	tewRun(t, s)
	if !tewSameShape(s.Out[1].Shape, []int{3}) {
		t.Fatalf("equal split: %v", s.Out[1].Shape)
	}
}

// tewSliceIndices is CPython's PySlice_AdjustIndices: the numpy semantics
// ONNX Slice follows.
func tewSliceIndices(start, stop, step, length int) []int {
	if start < 0 {
		start += length
		if start < 0 {
			start = -1
			if step >= 0 {
				start = 0
			}
		}
	} else if start >= length {
		start = length
		if step < 0 {
			start = length - 1
		}
	}
	if stop < 0 {
		stop += length
		if stop < 0 {
			stop = -1
			if step >= 0 {
				stop = 0
			}
		}
	} else if stop >= length {
		stop = length
		if step < 0 {
			stop = length - 1
		}
	}
	var out []int
	for i := start; (step > 0 && i < stop) || (step < 0 && i > stop); i += step {
		out = append(out, i)
	}
	return out
}

func TestSlice(t *testing.T) {
	r := rand.New(rand.NewSource(59))
	shape := []int{6, 5, 7}
	big := int64(1) << 62
	for _, dt := range []DType{F32, I64, String, Bool, F16} {
		x := tewRand(r, dt, -50, 50, shape...)
		for trial := 0; trial < 60; trial++ {
			var starts, ends, axes, steps []int64
			for _, a := range r.Perm(3)[:1+r.Intn(3)] {
				d := int64(shape[a])
				pick := func() int64 {
					switch r.Intn(6) {
					case 0:
						return big
					case 1:
						return -big
					}
					return int64(r.Intn(int(3*d))) - 3*d/2
				}
				st := int64(1 + r.Intn(3))
				if r.Intn(2) == 0 {
					st = -st
				}
				starts, ends, axes, steps = append(starts, pick()), append(ends, pick()), append(axes, int64(a)), append(steps, st)
			}
			if trial%2 == 1 {
				for i := range axes {
					axes[i] -= 3 // negative axes
				}
			}
			k := int64(len(starts))
			n := tewNode("Slice", 13, nil, x, tewI64([]int{int(k)}, starts...), tewI64([]int{int(k)}, ends...),
				tewI64([]int{int(k)}, axes...), tewI64([]int{int(k)}, steps...))
			tewRun(t, n)
			what := "Slice " + dt.String()
			if testing.Verbose() {
				what += " " + n.In[1].ShapeString()
				t.Logf("%v %v %v %v -> %v", starts, ends, axes, steps, n.Out[0].Shape)
			}
			lists := make([][]int, 3)
			for a := range lists {
				for i := 0; i < shape[a]; i++ {
					lists[a] = append(lists[a], i)
				}
			}
			for i := range axes {
				a := (int(axes[i]) + 3) % 3
				lists[a] = tewSliceIndices(int(starts[i]), int(ends[i]), int(steps[i]), shape[a])
			}
			want := []int{len(lists[0]), len(lists[1]), len(lists[2])}
			in := make([]int, 3)
			tewCheckMap(t, what, n.Out[0], x, want, func(idx []int) int {
				for d := range idx {
					in[d] = lists[d][idx[d]]
				}
				return tewRavel(in, shape)
			})
		}
	}
	// Opset 1: attributes, no steps; axes optional.
	x := tewRand(r, F32, -5, 5, 4, 6)
	n := tewNode("Slice", 1, Attrs{"starts": []int64{1, -4}, "ends": []int64{1000, -1}}, x)
	tewRun(t, n)
	tewCheckMap(t, "Slice-1", n.Out[0], x, []int{3, 3}, func(idx []int) int { return (idx[0]+1)*6 + idx[1] + 2 })
	// The ONNX test_slice_neg_steps case.
	y := tewRand(r, F32, -5, 5, 20, 10, 5)
	n = tewNode("Slice", 13, nil, y, tewI64([]int{3}, 20, 10, 4), tewI64([]int{3}, 0, 0, 1),
		tewI64([]int{3}, 0, 1, 2), tewI64([]int{3}, -1, -3, -2))
	tewRun(t, n)
	if !tewSameShape(n.Out[0].Shape, []int{19, 3, 2}) {
		t.Fatalf("neg steps shape %v", n.Out[0].Shape)
	}
}

func TestExpandTile(t *testing.T) {
	r := rand.New(rand.NewSource(61))
	for _, c := range [][2][]int{{{3, 1}, {2, 1, 6}}, {{1}, {4}}, {{2, 3}, {3}}, {{}, {2, 2}}, {{4, 1, 2}, {1, 3, 1}}} {
		for _, dt := range []DType{F64, I8, Bool, String} {
			x := tewRand(r, dt, -9, 9, c[0]...)
			sh := make([]int64, len(c[1]))
			for i, d := range c[1] {
				sh[i] = int64(d)
			}
			n := tewNode("Expand", 13, nil, x, tewI64([]int{len(sh)}, sh...))
			tewRun(t, n)
			want := tewBcastShape(c[0], c[1])
			tewCheckMap(t, "Expand", n.Out[0], x, want, func(idx []int) int { return tewBcastIndex(idx, c[0]) })
		}
	}
	for _, dt := range []DType{F32, U16, String} {
		x := tewRand(r, dt, -9, 9, 2, 3, 1)
		n := tewNode("Tile", 13, nil, x, tewI64([]int{3}, 3, 1, 4))
		tewRun(t, n)
		tewCheckMap(t, "Tile", n.Out[0], x, []int{6, 3, 4}, func(idx []int) int {
			return tewRavel([]int{idx[0] % 2, idx[1] % 3, 0}, x.Shape)
		})
	}
	x := tewRand(r, F32, -9, 9, 2, 3)
	n := tewNode("Tile", 1, nil, x, tewI64(nil, 3), tewI64(nil, 1))
	tewRun(t, n)
	tewCheckMap(t, "Tile-1", n.Out[0], x, []int{2, 9}, func(idx []int) int { return idx[0]*3 + idx[1]%3 })
}

// tewPadSrc maps an output coordinate to the input one for non-constant
// modes the slow way (reflecting step by step).
func tewPadSrc(k, n int, mode string) int {
	switch mode {
	case "edge":
		if k < 0 {
			return 0
		}
		if k >= n {
			return n - 1
		}
		return k
	case "wrap":
		for k < 0 {
			k += n
		}
		for k >= n {
			k -= n
		}
		return k
	}
	if n == 1 {
		return 0
	}
	for k < 0 || k >= n {
		if k < 0 {
			k = -k
		}
		if k >= n {
			k = 2*(n-1) - k
		}
	}
	return k
}

func TestPad(t *testing.T) {
	r := rand.New(rand.NewSource(67))
	shape := []int{3, 4, 5}
	pads := []int64{1, 0, 7, 2, -1, 3} // begin x3, end x3; a crop on axis 1
	for _, dt := range []DType{F32, F16, I32, Bool, String} {
		x := tewRand(r, dt, -9, 9, shape...)
		for _, mode := range []string{"constant", "reflect", "edge", "wrap"} {
			for _, ver := range []int{2, 11, 18} {
				if ver == 2 && !ewIsFloat(dt) { // Pad-2 is float-only
					continue
				}
				var n *Node
				attrs := Attrs{"mode": mode}
				switch ver {
				case 2:
					attrs["pads"] = pads
					attrs["value"] = float32(2.5)
					n = tewNode("Pad", 2, attrs, x)
				case 11:
					var cv *Tensor
					if mode == "constant" && dt != Bool && dt != String {
						cv = tewRand(r, dt, 1, 9)
					}
					n = tewNode("Pad", 11, attrs, x, tewI64([]int{6}, pads...), cv)
				case 18:
					// Axes 2 and 0 only, in that order.
					n = tewNode("Pad", 18, attrs, x, tewI64([]int{4}, 7, 1, 3, 2), nil, tewI64([]int{2}, 2, 0))
				}
				tewRun(t, n)
				pb, pe := pads[:3], pads[3:]
				if ver == 18 {
					pb, pe = []int64{1, 0, 7}, []int64{2, 0, 3}
				}
				want := make([]int, 3)
				for d := range want {
					want[d] = shape[d] + int(pb[d]+pe[d])
				}
				out := n.Out[0]
				if !tewSameShape(out.Shape, want) {
					t.Fatalf("Pad %s %s-%d: shape %v want %v", dt, mode, ver, out.Shape, want)
				}
				idx, in := make([]int, 3), make([]int, 3)
				for o := 0; o < out.Len(); o++ {
					tewUnravel(o, want, idx)
					inside := true
					for d := range idx {
						k := idx[d] - int(pb[d])
						if k < 0 || k >= shape[d] {
							inside = false
						}
						in[d] = k
					}
					if mode != "constant" {
						// Cropped axes shrink the region the mode reflects.
						for d := range idx {
							lo := max(-int(pb[d]), 0)
							ln := shape[d] - lo - max(-int(pe[d]), 0)
							in[d] = lo + tewPadSrc(idx[d]-max(int(pb[d]), 0), ln, mode)
						}
						inside = true
					}
					if inside {
						if !tewElemEq(out, o, x, tewRavel(in, shape)) {
							t.Fatalf("Pad %s %s-%d: out%v != in%v", dt, mode, ver, idx, in)
						}
						continue
					}
					var w float64
					switch {
					case ver == 2:
						w = tewRound(dt, 2.5)
						if dt == Bool {
							w = 1
						}
					case ver == 11 && n.In[2] != nil:
						w = tewGet(n.In[2], 0)
					}
					if dt == String {
						if out.Str()[o] != "" {
							t.Fatalf("Pad string pad = %q", out.Str()[o])
						}
					} else if g := tewGet(out, o); g != w {
						t.Fatalf("Pad %s %s-%d: pad at %v = %v want %v", dt, mode, ver, idx, g, w)
					}
				}
			}
		}
	}
}

func TestDepthSpace(t *testing.T) {
	r := rand.New(rand.NewSource(71))
	b := 2
	x := tewRand(r, F32, -9, 9, 2, 12, 3, 5)
	C := 12 / (b * b)
	for _, mode := range []string{"DCR", "CRD"} {
		ver := 13
		attrs := Attrs{"blocksize": int64(b), "mode": mode}
		n := tewNode("DepthToSpace", ver, attrs, x)
		tewRun(t, n)
		tewCheckMap(t, "DepthToSpace "+mode, n.Out[0], x, []int{2, C, 6, 10}, func(idx []int) int {
			c, h, w := idx[1], idx[2], idx[3]
			i, j := h%b, w%b
			ch := (i*b+j)*C + c
			if mode == "CRD" {
				ch = c*b*b + i*b + j
			}
			return tewRavel([]int{idx[0], ch, h / b, w / b}, x.Shape)
		})
	}
	y := tewRand(r, I64, -9, 9, 2, 3, 4, 6)
	n := tewNode("SpaceToDepth", 13, Attrs{"blocksize": int64(b)}, y)
	tewRun(t, n)
	tewCheckMap(t, "SpaceToDepth", n.Out[0], y, []int{2, 12, 2, 3}, func(idx []int) int {
		ch := idx[1]
		c, blk := ch%3, ch/3
		i, j := blk/b, blk%b
		return tewRavel([]int{idx[0], c, idx[2]*b + i, idx[3]*b + j}, y.Shape)
	})
	// Round trip.
	m := tewNode("DepthToSpace", 1, Attrs{"blocksize": int64(b)}, n.Out[0])
	tewRun(t, m)
	tewEqual(t, "SpaceToDepth/DepthToSpace round trip", m.Out[0], y)
}

func TestShapeNoAllocs(t *testing.T) {
	r := rand.New(rand.NewSource(73))
	x := tewRand(r, F32, -5, 5, 3, 4, 5)
	nodes := []*Node{
		tewNode("Transpose", 13, Attrs{"perm": []int64{2, 0, 1}}, x),
		tewNode("Concat", 13, Attrs{"axis": int64(1)}, x, x, x),
		tewNode("Slice", 13, nil, x, tewI64([]int{2}, 1, -1), tewI64([]int{2}, 3, 0), tewI64([]int{2}, 0, 2), tewI64([]int{2}, 1, -2)),
		tewNode("Gather", 13, Attrs{"axis": int64(1)}, x, tewI64([]int{2, 2}, 0, -1, 2, 1)),
		tewNode("Reshape", 14, nil, x, tewI64([]int{2}, -1, 10)),
		tewNode("Expand", 13, nil, x, tewI64([]int{4}, 2, 1, 1, 5)),
		tewNode("Pad", 13, Attrs{"mode": "reflect"}, x, tewI64([]int{6}, 1, 2, 0, 1, 0, 3)),
		tewNode("Tile", 13, nil, x, tewI64([]int{3}, 2, 1, 2)),
		tewNode("GatherElements", 13, Attrs{"axis": int64(2)}, x, tewI64([]int{1, 1, 2}, 4, 0)),
		tewNode("Unsqueeze", 13, nil, x, tewI64([]int{1}, 0)),
		tewNode("Shape", 15, nil, x),
	}
	split := tewNode("Split", 13, Attrs{"axis": int64(2)}, x, tewI64([]int{2}, 2, 3))
	split.Out = []*Tensor{{}, {}}
	nodes = append(nodes, split)
	for _, n := range nodes {
		tewRun(t, n)
		if allocs := testing.AllocsPerRun(20, func() { Kernels[n.Op](n) }); allocs != 0 {
			t.Errorf("%s: %v allocs per run", n.Op, allocs)
		}
	}
}
