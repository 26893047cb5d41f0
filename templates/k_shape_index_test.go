package templates

import (
	"math"
	"math/rand"
	"testing"
)

func tewIdx(r *rand.Rand, dt DType, dim int, shape ...int) *Tensor {
	t := &Tensor{}
	t.Resize(dt, shape...)
	for i := 0; i < t.Len(); i++ {
		v := int64(r.Intn(2*dim) - dim) // negative indices too
		switch dt {
		case I32:
			t.I32()[i] = int32(v)
		default:
			t.I64()[i] = v
		}
	}
	return t
}

func tewNorm(v int64, dim int) int {
	if v < 0 {
		v += int64(dim)
	}
	return int(v)
}

func TestGather(t *testing.T) {
	r := rand.New(rand.NewSource(81))
	shape := []int{4, 5, 3}
	for _, dt := range []DType{F32, I8, String, F16} {
		x := tewRand(r, dt, -50, 50, shape...)
		for axis := -3; axis < 3; axis++ {
			a := (axis + 3) % 3
			for _, ish := range [][]int{{}, {6}, {2, 3}} {
				ind := tewIdx(r, I32, shape[a], ish...)
				n := tewNode("Gather", 13, Attrs{"axis": int64(axis)}, x, ind)
				tewRun(t, n)
				want := append(append(append([]int(nil), shape[:a]...), ish...), shape[a+1:]...)
				in := make([]int, 3)
				tewCheckMap(t, "Gather", n.Out[0], x, want, func(idx []int) int {
					copy(in, idx[:a])
					in[a] = tewNorm(tewGetI(ind, tewRavel(idx[a:a+len(ish)], ish)), shape[a])
					copy(in[a+1:], idx[a+len(ish):])
					return tewRavel(in, shape)
				})
			}
		}
	}
	if err := Gather(tewNode("Gather", 13, nil, tewRand(r, F32, 0, 1, 3), tewI64([]int{1}, 3))); err == nil {
		t.Fatal("out-of-range index must fail")
	}
}

func TestGatherScatterElements(t *testing.T) {
	r := rand.New(rand.NewSource(83))
	shape := []int{4, 5, 3}
	for _, dt := range []DType{F32, I64, F16, Bool} {
		x := tewRand(r, dt, -50, 50, shape...)
		for axis := -3; axis < 3; axis++ {
			a := (axis + 3) % 3
			ish := []int{3, 4, 2}
			ind := tewIdx(r, I64, shape[a], ish...)
			n := tewNode("GatherElements", 13, Attrs{"axis": int64(axis)}, x, ind)
			tewRun(t, n)
			in := make([]int, 3)
			tewCheckMap(t, "GatherElements", n.Out[0], x, ish, func(idx []int) int {
				copy(in, idx)
				in[a] = tewNorm(tewGetI(ind, tewRavel(idx, ish)), shape[a])
				return tewRavel(in, shape)
			})
			// ScatterElements with each reduction, applied in index order.
			upd := tewRand(r, dt, -50, 50, ish...)
			reds := []string{"none", "add", "mul", "max", "min"}
			for _, red := range reds {
				if dt == Bool && red != "none" {
					continue
				}
				op, ver := "ScatterElements", 18
				if red == "none" && axis == 0 {
					op, ver = "Scatter", 9
				}
				s := tewNode(op, ver, Attrs{"axis": int64(axis), "reduction": red}, x, ind, upd)
				tewRun(t, s)
				want := make([]float64, x.Len())
				for i := range want {
					if dt != Bool {
						want[i] = tewGet(x, i)
					}
				}
				idx := make([]int, 3)
				for p := 0; p < ind.Len(); p++ {
					tewUnravel(p, ish, idx)
					copy(in, idx)
					in[a] = tewNorm(tewGetI(ind, p), shape[a])
					o := tewRavel(in, shape)
					if dt == Bool {
						continue
					}
					u := tewGet(upd, p)
					switch red {
					case "none":
						want[o] = u
					case "add":
						want[o] = tewRound(dt, want[o]+u)
					case "mul":
						want[o] = tewRound(dt, want[o]*u)
					case "max":
						want[o] = math.Max(want[o], u)
					case "min":
						want[o] = math.Min(want[o], u)
					}
				}
				if dt == Bool {
					continue
				}
				for i, w := range want {
					if g := tewGet(s.Out[0], i); g != w {
						t.Fatalf("%s %s %s axis %d: [%d] = %v want %v", op, red, dt, axis, i, g, w)
					}
				}
			}
		}
	}
}

func TestGatherScatterND(t *testing.T) {
	r := rand.New(rand.NewSource(89))
	// GatherND with batch_dims 0 and 1.
	x := tewRand(r, F32, -50, 50, 3, 4, 5)
	for _, c := range []struct {
		b, k int
		ish  []int
	}{{0, 1, []int{2, 1}}, {0, 2, []int{3, 2}}, {0, 3, []int{2, 2, 3}}, {1, 1, []int{3, 2, 1}}, {1, 2, []int{3, 2}}} {
		ind := &Tensor{}
		ind.Resize(I64, c.ish...)
		q := len(c.ish)
		for i := range ind.I64() {
			j := i % c.k
			d := x.Shape[c.b+j]
			ind.I64()[i] = int64(r.Intn(2*d) - d)
		}
		n := tewNode("GatherND", 13, Attrs{"batch_dims": int64(c.b)}, x, ind)
		tewRun(t, n)
		want := append(append([]int(nil), c.ish[:q-1]...), x.Shape[c.b+c.k:]...)
		in := make([]int, 3)
		tewCheckMap(t, "GatherND", n.Out[0], x, want, func(idx []int) int {
			copy(in, idx[:c.b])
			tup := tewRavel(idx[:q-1], c.ish[:q-1]) * c.k
			for j := 0; j < c.k; j++ {
				in[c.b+j] = tewNorm(ind.I64()[tup+j], x.Shape[c.b+j])
			}
			copy(in[c.b+c.k:], idx[q-1:])
			return tewRavel(in, x.Shape)
		})
	}
	// ScatterND: slices of rank 1 (k=2) with duplicates under reductions.
	ind := tewI64([]int{3, 2}, 0, 1, 2, -1, 0, 1)
	upd := tewRand(r, F32, -5, 5, 3, 5)
	for _, red := range []string{"none", "add", "mul", "max", "min"} {
		n := tewNode("ScatterND", 18, Attrs{"reduction": red}, x, ind, upd)
		if red == "none" {
			n = tewNode("ScatterND", 11, nil, x, tewI64([]int{2, 2}, 0, 1, 2, -1), tewRand(r, F32, -5, 5, 2, 5))
		}
		tewRun(t, n)
		want := append([]float32(nil), x.F32()...)
		ni, nu := n.In[1], n.In[2]
		for tup := 0; tup < ni.Shape[0]; tup++ {
			i0, i1 := tewNorm(ni.I64()[2*tup], 3), tewNorm(ni.I64()[2*tup+1], 4)
			for e := 0; e < 5; e++ {
				o, u := (i0*4+i1)*5+e, nu.F32()[tup*5+e]
				switch red {
				case "none":
					want[o] = u
				case "add":
					want[o] += u
				case "mul":
					want[o] *= u
				case "max":
					want[o] = max(want[o], u)
				case "min":
					want[o] = min(want[o], u)
				}
			}
		}
		for i, w := range want {
			if g := n.Out[0].F32()[i]; g != w {
				t.Fatalf("ScatterND %s: [%d] = %v want %v", red, i, g, w)
			}
		}
	}
}

func TestOneHotTriluCumSum(t *testing.T) {
	r := rand.New(rand.NewSource(97))
	ind := tewRand(r, F32, -6, 6, 2, 3) // negative and out-of-range ones too
	depth := tewI64(nil, 5)
	vals := tewF32T([]int{2}, -1, 7)
	for axis := -3; axis < 3; axis++ {
		a := (axis + 3) % 3
		n := tewNode("OneHot", 11, Attrs{"axis": int64(axis)}, ind, depth, vals)
		tewRun(t, n)
		want := append([]int(nil), ind.Shape...)
		want = append(want[:a], append([]int{5}, want[a:]...)...)
		out := n.Out[0]
		if !tewSameShape(out.Shape, want) {
			t.Fatalf("OneHot shape %v want %v", out.Shape, want)
		}
		idx := make([]int, 3)
		for o := 0; o < out.Len(); o++ {
			tewUnravel(o, want, idx)
			src := append(append([]int(nil), idx[:a]...), idx[a+1:]...)
			v := int(tewGet(ind, tewRavel(src, ind.Shape)))
			if v < 0 {
				v += 5
			}
			w := float32(-1)
			if v == idx[a] {
				w = 7
			}
			if out.F32()[o] != w {
				t.Fatalf("OneHot axis %d out%v = %v want %v", axis, idx, out.F32()[o], w)
			}
		}
	}
	x := tewRand(r, I32, -9, 9, 2, 4, 6)
	for _, upper := range []int64{0, 1} {
		for k := -5; k <= 7; k++ {
			in := []*Tensor{x, tewI64(nil, int64(k))}
			if k == 0 {
				in = in[:1]
			}
			n := tewNode("Trilu", 14, Attrs{"upper": upper}, in...)
			tewRun(t, n)
			idx := make([]int, 3)
			for o := 0; o < x.Len(); o++ {
				tewUnravel(o, x.Shape, idx)
				keep := idx[2]-idx[1] <= k
				if upper == 1 {
					keep = idx[2]-idx[1] >= k
				}
				w := int32(0)
				if keep {
					w = x.I32()[o]
				}
				if g := n.Out[0].I32()[o]; g != w {
					t.Fatalf("Trilu upper=%d k=%d at %v: %d want %d", upper, k, idx, g, w)
				}
			}
		}
	}
	for _, dt := range []DType{F32, F64, I32, I64, U32, F16} {
		x := tewRand(r, dt, 0, 9, 3, 4, 5)
		for axis := -3; axis < 3; axis++ {
			a := (axis + 3) % 3
			for _, ex := range []int64{0, 1} {
				for _, rev := range []int64{0, 1} {
					at := tewI64(nil, int64(axis))
					n := tewNode("CumSum", 14, Attrs{"exclusive": ex, "reverse": rev}, x, at)
					tewRun(t, n)
					idx := make([]int, 3)
					for o := 0; o < x.Len(); o++ {
						tewUnravel(o, x.Shape, idx)
						sum := 0.0
						for j := 0; j < x.Shape[a]; j++ {
							in := append([]int(nil), idx...)
							in[a] = j
							take := j <= idx[a]
							if rev == 1 {
								take = j >= idx[a]
							}
							if ex == 1 && j == idx[a] {
								take = false
							}
							if take {
								sum += tewGet(x, tewRavel(in, x.Shape))
							}
						}
						if g := tewGet(n.Out[0], o); !tewClose(dt, g, sum) {
							t.Fatalf("CumSum %s axis %d ex %d rev %d at %v: %v want %v", dt, axis, ex, rev, idx, g, sum)
						}
					}
				}
			}
		}
	}
}

func TestGenerators(t *testing.T) {
	// Range.
	for _, c := range []struct {
		dt      DType
		s, l, d float64
		want    []float64
	}{
		{I64, 10, 4, -3, []float64{10, 7}},
		{I32, 1, 11, 3, []float64{1, 4, 7, 10}},
		{I16, 5, 5, 1, nil},
		{F32, 1, 2.5, 0.5, []float64{1, 1.5, 2}},
		{F64, 3, 1, 1, nil},
		{F64, 0.5, -1, -0.4, []float64{0.5, 0.1, -0.3, -0.7}},
	} {
		mk := func(v float64) *Tensor {
			x := &Tensor{}
			x.Resize(c.dt)
			tewSet(x, 0, v)
			return x
		}
		n := tewNode("Range", 11, nil, mk(c.s), mk(c.l), mk(c.d))
		tewRun(t, n)
		out := n.Out[0]
		if out.DType != c.dt || !tewSameShape(out.Shape, []int{len(c.want)}) {
			t.Fatalf("Range %v: %s", c, out)
		}
		for i, w := range c.want {
			if g := tewGet(out, i); !tewClose(c.dt, g, w) {
				t.Fatalf("Range %v: [%d] %v want %v", c, i, g, w)
			}
		}
	}
	// EyeLike.
	x := tewRand(rand.New(rand.NewSource(1)), F32, 0, 1, 3, 5)
	for _, k := range []int64{-4, -1, 0, 2, 5} {
		for _, at := range []Attrs{{"k": k}, {"k": k, "dtype": int64(I32)}} {
			n := tewNode("EyeLike", 9, at, x)
			tewRun(t, n)
			for i := 0; i < 3; i++ {
				for j := 0; j < 5; j++ {
					w := 0.0
					if int64(j-i) == k {
						w = 1
					}
					if g := tewGet(n.Out[0], i*5+j); g != w {
						t.Fatalf("EyeLike k=%d (%d,%d) = %v", k, i, j, g)
					}
				}
			}
			if at.Has("dtype") && n.Out[0].DType != I32 {
				t.Fatal("EyeLike dtype")
			}
		}
	}
	// NonZero.
	nz := tewF32T([]int{2, 3}, 0, 1.5, 0, -2, 0, 3)
	n := tewNode("NonZero", 13, nil, nz)
	tewRun(t, n)
	tewEqual(t, "NonZero", n.Out[0], tewI64([]int{2, 3}, 0, 1, 1, 1, 0, 2))
	// Constant, every attribute form.
	val := tewF32T([]int{2, 2}, 1, 2, 3, 4)
	for _, c := range []struct {
		attrs Attrs
		want  *Tensor
	}{
		{Attrs{"value": val}, val},
		{Attrs{"value_float": float32(2.5)}, tewF32T(nil, 2.5)},
		{Attrs{"value_floats": []float32{1, 2, 3}}, tewF32T([]int{3}, 1, 2, 3)},
		{Attrs{"value_int": int64(-7)}, tewI64(nil, -7)},
		{Attrs{"value_ints": []int64{4, 5}}, tewI64([]int{2}, 4, 5)},
		{Attrs{"value_strings": []string{"a", "bc"}}, &Tensor{DType: String, Shape: []int{2}, Data: []string{"a", "bc"}}},
		{Attrs{"value_string": "hi"}, &Tensor{DType: String, Shape: []int{}, Data: []string{"hi"}}},
	} {
		n := tewNode("Constant", 13, c.attrs, nil)
		n.In = nil
		tewRun(t, n)
		tewEqual(t, "Constant", n.Out[0], c.want)
	}
	// ConstantOfShape.
	n = tewNode("ConstantOfShape", 9, nil, tewI64([]int{2}, 2, 3))
	tewRun(t, n)
	tewEqual(t, "ConstantOfShape default", n.Out[0], tewF32T([]int{2, 3}, 0, 0, 0, 0, 0, 0))
	n = tewNode("ConstantOfShape", 9, Attrs{"value": tewI64([]int{1}, 9)}, tewI64([]int{3}, 1, 2, 1))
	tewRun(t, n)
	tewEqual(t, "ConstantOfShape int", n.Out[0], tewI64([]int{1, 2, 1}, 9, 9))
	n = tewNode("ConstantOfShape", 9, Attrs{"value": tewI64([]int{1}, 9)}, tewI64([]int{0}))
	tewRun(t, n)
	tewEqual(t, "ConstantOfShape scalar", n.Out[0], tewI64(nil, 9))
	// Shape with start/end, Size.
	y := tewRand(rand.New(rand.NewSource(2)), I8, 0, 1, 2, 3, 4, 5)
	for _, c := range []struct {
		attrs Attrs
		want  []int64
	}{
		{nil, []int64{2, 3, 4, 5}},
		{Attrs{"start": int64(1)}, []int64{3, 4, 5}},
		{Attrs{"start": int64(-3), "end": int64(-1)}, []int64{3, 4}},
		{Attrs{"start": int64(-10), "end": int64(10)}, []int64{2, 3, 4, 5}},
		{Attrs{"start": int64(3), "end": int64(1)}, []int64{}},
	} {
		n := tewNode("Shape", 15, c.attrs, y)
		tewRun(t, n)
		tewEqual(t, "Shape", n.Out[0], tewI64([]int{len(c.want)}, c.want...))
	}
	n = tewNode("Size", 13, nil, y)
	tewRun(t, n)
	tewEqual(t, "Size", n.Out[0], tewI64(nil, 120))
}
