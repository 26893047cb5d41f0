package templates

import (
	"fmt"
	"math"
	"math/rand"
	"sort"
	"testing"
)

func miscRun(t *testing.T, k Kernel, n *Node) {
	t.Helper()
	if err := k(n); err != nil {
		t.Fatal(err)
	}
}

func miscWantI64(t *testing.T, what string, got *Tensor, want []int64, shape []int) {
	t.Helper()
	w := make([]float64, len(want))
	for i, v := range want {
		w[i] = float64(v)
	}
	miscCheckClose(t, what, got, w, shape, 0)
}

func TestTopK(t *testing.T) {
	shape := []int{3, 7, 4}
	for _, dt := range []DType{F32, F64, F16, I64} {
		for _, axis := range []int{0, 1, -1} {
			for _, largest := range []int64{1, 0} {
				for _, ver := range []int{1, 11} {
					if ver == 1 && largest == 0 {
						continue
					}
					t.Run(fmt.Sprintf("%s_a%d_l%d_v%d", dt, axis, largest, ver), func(t *testing.T) {
						rng := rand.New(rand.NewSource(int64(axis)*3 + largest))
						x := miscRandF64(rng, shape...)
						for i := range x {
							x[i] = math.Round(x[i] * 3) // many ties
						}
						var xt *Tensor
						if dt == I64 {
							v := make([]int64, len(x))
							for i := range x {
								v[i] = int64(x[i])
							}
							xt = miscTensorI64(v, shape...)
						} else {
							xt = miscTensorF(dt, x, shape...)
						}
						ax := (axis + 3) % 3
						k := shape[ax] - 1
						n := &Node{Op: "TopK", Version: ver, Attrs: Attrs{"axis": int64(axis)}, Out: []*Tensor{{}, {}}}
						if ver == 1 {
							n.Attrs["k"] = int64(k)
							n.In = []*Tensor{xt}
						} else {
							n.Attrs["largest"] = largest
							n.In = []*Tensor{xt, miscTensorI64([]int64{int64(k)}, 1)}
						}
						miscRun(t, TopK, n)
						oshape := append([]int{}, shape...)
						oshape[ax] = k
						st := miscStrides(shape, make([]int, 3))
						ost := miscStrides(oshape, make([]int, 3))
						wv := make([]float64, len(x)/shape[ax]*k)
						wi := make([]int64, len(wv))
						for o := range wv {
							// Decompose output index, enumerate the slice.
							c := [3]int{o / ost[0], o / ost[1] % oshape[1], o % oshape[2]}
							j := c[ax]
							idx := make([]int, shape[ax])
							for i := range idx {
								idx[i] = i
							}
							at := func(i int) float64 {
								cc := c
								cc[ax] = i
								return x[cc[0]*st[0]+cc[1]*st[1]+cc[2]*st[2]]
							}
							sort.SliceStable(idx, func(a, b int) bool {
								if largest == 1 {
									return at(idx[a]) > at(idx[b])
								}
								return at(idx[a]) < at(idx[b])
							})
							wv[o], wi[o] = at(idx[j]), int64(idx[j])
						}
						miscCheckClose(t, "values", n.Out[0], wv, oshape, 0)
						miscWantI64(t, "indices", n.Out[1], wi, oshape)
						miscNoAllocs(t, n, TopK)
					})
				}
			}
		}
	}
}

func TestCompressReverseShrink(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	x := miscRandF64(rng, 3, 5, 2)
	xt := miscTensorF(F64, x, 3, 5, 2)
	cond := &Tensor{DType: Bool, Shape: []int{4}, Data: []bool{true, false, true, true}}
	n := &Node{Op: "Compress", Version: 11, Attrs: Attrs{"axis": int64(-2)}, In: []*Tensor{xt, cond}, Out: []*Tensor{{}}}
	miscRun(t, Compress, n)
	var want []float64
	for a := 0; a < 3; a++ {
		for b := 0; b < 5; b++ {
			for c := 0; c < 2; c++ {
				if b < 4 && cond.Bool()[b] {
					want = append(want, x[(a*5+b)*2+c])
				}
			}
		}
	}
	miscCheckClose(t, "compress axis", n.Out[0], want, []int{3, 3, 2}, 0)
	miscNoAllocs(t, n, Compress)
	n = &Node{Op: "Compress", Version: 9, In: []*Tensor{xt, cond}, Out: []*Tensor{{}}}
	miscRun(t, Compress, n)
	miscCheckClose(t, "compress flat", n.Out[0], []float64{x[0], x[2], x[3]}, []int{3}, 0)

	// ReverseSequence, both axis layouts.
	for _, bAx := range []int{0, 1} {
		T, B, in := 5, 3, 2
		lens := []int64{5, 2, 0}
		shape := []int{T, B, in}
		if bAx == 0 {
			shape = []int{B, T, in}
		}
		v := miscRandF64(rng, shape...)
		n := &Node{Op: "ReverseSequence", Version: 10, Attrs: Attrs{"batch_axis": int64(bAx), "time_axis": int64(1 - bAx)},
			In: []*Tensor{miscTensorF(F32, v, shape...), miscTensorI64(lens, B)}, Out: []*Tensor{{}}}
		miscRun(t, ReverseSequence, n)
		want := make([]float64, len(v))
		at := func(tt, b, i int) int {
			if bAx == 0 {
				return (b*T+tt)*in + i
			}
			return (tt*B+b)*in + i
		}
		for b := 0; b < B; b++ {
			for tt := 0; tt < T; tt++ {
				s := tt
				if tt < int(lens[b]) {
					s = int(lens[b]) - 1 - tt
				}
				for i := 0; i < in; i++ {
					want[at(tt, b, i)] = v[at(s, b, i)]
				}
			}
		}
		miscCheckClose(t, "reverse", n.Out[0], miscRepr(F32, want), shape, 0)
		miscNoAllocs(t, n, ReverseSequence)
	}

	// Shrink.
	for _, dt := range []DType{F32, F64, F16} {
		v := miscRepr(dt, miscRandF64(rng, 4, 9))
		n := &Node{Op: "Shrink", Version: 9, Attrs: Attrs{"bias": float32(0.25), "lambd": float32(0.4)}, In: []*Tensor{miscTensorF(dt, v, 4, 9)}, Out: []*Tensor{{}}}
		miscRun(t, Shrink, n)
		want := make([]float64, len(v))
		b, l := float64(float32(0.25)), float64(float32(0.4))
		for i, x := range v {
			if x < -l {
				want[i] = x + b
			} else if x > l {
				want[i] = x - b
			}
		}
		miscCheckClose(t, "shrink", n.Out[0], want, []int{4, 9}, miscTol(dt))
	}
}

func TestUnique(t *testing.T) {
	x := miscTensorF(F32, []float64{2, 1, 1, 3, 4, 3}, 6)
	for _, c := range []struct {
		sorted        int64
		y             []float64
		idx, inv, cnt []int64
	}{
		{0, []float64{2, 1, 3, 4}, []int64{0, 1, 3, 4}, []int64{0, 1, 1, 2, 3, 2}, []int64{1, 2, 2, 1}},
		{1, []float64{1, 2, 3, 4}, []int64{1, 0, 3, 4}, []int64{1, 0, 0, 2, 3, 2}, []int64{2, 1, 2, 1}},
	} {
		n := &Node{Op: "Unique", Version: 11, Attrs: Attrs{"sorted": c.sorted}, In: []*Tensor{x}, Out: []*Tensor{{}, {}, {}, {}}}
		miscRun(t, Unique, n)
		miscCheckClose(t, "Y", n.Out[0], c.y, []int{4}, 0)
		miscWantI64(t, "indices", n.Out[1], c.idx, []int{4})
		miscWantI64(t, "inverse", n.Out[2], c.inv, []int{6})
		miscWantI64(t, "counts", n.Out[3], c.cnt, []int{4})
	}
	// Along an axis, random data with repeated rows: check invariants
	// against a map-based reference.
	rng := rand.New(rand.NewSource(11))
	rows := [][]int64{{1, 0, 0}, {2, 3, 4}, {1, 0, 0}, {0, 5, 1}, {2, 3, 4}, {1, 0, -1}}
	order := rng.Perm(len(rows))
	var flat []int64
	for _, r := range order {
		flat = append(flat, rows[r]...)
	}
	// Transpose to [3, 6] and use axis -1 so the unique slices are columns.
	tr := make([]int64, len(flat))
	for i := 0; i < 6; i++ {
		for j := 0; j < 3; j++ {
			tr[j*6+i] = flat[i*3+j]
		}
	}
	n := &Node{Op: "Unique", Version: 11, Attrs: Attrs{"axis": int64(-1)}, In: []*Tensor{miscTensorI64(tr, 3, 6)}, Out: []*Tensor{{}, {}, {}, {}}}
	miscRun(t, Unique, n)
	keys := map[[3]int64]int{}
	var uniq [][3]int64
	for i := 0; i < 6; i++ {
		k := [3]int64{flat[i*3], flat[i*3+1], flat[i*3+2]}
		if _, ok := keys[k]; !ok {
			keys[k] = i
			uniq = append(uniq, k)
		}
	}
	sort.Slice(uniq, func(a, b int) bool {
		for j := 0; j < 3; j++ {
			if uniq[a][j] != uniq[b][j] {
				return uniq[a][j] < uniq[b][j]
			}
		}
		return false
	})
	ng := len(uniq)
	wy := make([]int64, 3*ng)
	var wIdx, wCnt []int64
	for g, u := range uniq {
		for j := 0; j < 3; j++ {
			wy[j*ng+g] = u[j]
		}
		wIdx = append(wIdx, int64(keys[u]))
		c := 0
		for i := 0; i < 6; i++ {
			if [3]int64{flat[i*3], flat[i*3+1], flat[i*3+2]} == u {
				c++
			}
		}
		wCnt = append(wCnt, int64(c))
	}
	var wInv []int64
	for i := 0; i < 6; i++ {
		k := [3]int64{flat[i*3], flat[i*3+1], flat[i*3+2]}
		for g, u := range uniq {
			if u == k {
				wInv = append(wInv, int64(g))
			}
		}
	}
	miscWantI64(t, "Y axis", n.Out[0], wy, []int{3, ng})
	miscWantI64(t, "indices axis", n.Out[1], wIdx, []int{ng})
	miscWantI64(t, "inverse axis", n.Out[2], wInv, []int{6})
	miscWantI64(t, "counts axis", n.Out[3], wCnt, []int{ng})
}

// miscRefDet is the Laplace expansion along the first row.
func miscRefDet(a []float64, m int) float64 {
	if m == 1 {
		return a[0]
	}
	d := 0.0
	for j := 0; j < m; j++ {
		sub := make([]float64, 0, (m-1)*(m-1))
		for r := 1; r < m; r++ {
			for c := 0; c < m; c++ {
				if c != j {
					sub = append(sub, a[r*m+c])
				}
			}
		}
		s := 1.0
		if j%2 == 1 {
			s = -1
		}
		d += s * a[j] * miscRefDet(sub, m-1)
	}
	return d
}

func TestDet(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	for _, m := range []int{1, 2, 3, 5} {
		for _, dt := range []DType{F32, F64} {
			x := miscRepr(dt, miscRandF64(rng, 2, 3, m, m))
			n := &Node{Op: "Det", Version: 11, In: []*Tensor{miscTensorF(dt, x, 2, 3, m, m)}, Out: []*Tensor{{}}}
			miscRun(t, Det, n)
			want := make([]float64, 6)
			for b := range want {
				want[b] = miscRefDet(x[b*m*m:(b+1)*m*m], m)
			}
			miscCheckClose(t, fmt.Sprintf("det%d", m), n.Out[0], want, []int{2, 3}, miscTol(dt)*10)
			miscNoAllocs(t, n, Det)
		}
	}
	// Singular matrix.
	n := &Node{Op: "Det", Version: 11, In: []*Tensor{miscTensorF(F64, []float64{1, 2, 2, 4}, 2, 2)}, Out: []*Tensor{{}}}
	miscRun(t, Det, n)
	miscCheckClose(t, "singular", n.Out[0], []float64{0}, []int{}, 0)
}

func TestNonMaxSuppression(t *testing.T) {
	scores := miscTensorF(F32, []float64{0.9, 0.75, 0.6, 0.95, 0.5, 0.3}, 1, 1, 6)
	corner := miscTensorF(F32, []float64{0, 0, 1, 1, 0, 0.1, 1, 1.1, 0, -0.1, 1, 0.9, 0, 10, 1, 11, 0, 10.1, 1, 11.1, 0, 100, 1, 101}, 1, 6, 4)
	center := miscTensorF(F32, []float64{0.5, 0.5, 1, 1, 0.5, 0.6, 1, 1, 0.5, 0.4, 1, 1, 0.5, 10.5, 1, 1, 0.5, 10.6, 1, 1, 0.5, 100.5, 1, 1}, 1, 6, 4)
	flipped := miscTensorF(F32, []float64{1, 1, 0, 0, 0, 0.1, 1, 1.1, 0, 0.9, 1, -0.1, 0, 10, 1, 11, 1, 10.1, 0, 11.1, 1, 101, 0, 100}, 1, 6, 4)
	mo := miscTensorI64([]int64{3}, 1)
	iou := miscTensorF(F32, []float64{0.5}, 1)
	st := miscTensorF(F32, []float64{0}, 1)
	for _, c := range []struct {
		name   string
		boxes  *Tensor
		center int64
		in     []*Tensor
		want   []int64
	}{
		{"iou", corner, 0, []*Tensor{corner, scores, mo, iou, st}, []int64{0, 0, 3, 0, 0, 0, 0, 0, 5}},
		{"center", center, 1, []*Tensor{center, scores, mo, iou, st}, []int64{0, 0, 3, 0, 0, 0, 0, 0, 5}},
		{"flipped", flipped, 0, []*Tensor{flipped, scores, mo, iou, st}, []int64{0, 0, 3, 0, 0, 0, 0, 0, 5}},
		{"limit", corner, 0, []*Tensor{corner, scores, miscTensorI64([]int64{2}, 1), iou, st}, []int64{0, 0, 3, 0, 0, 0}},
		{"score", corner, 0, []*Tensor{corner, scores, mo, iou, miscTensorF(F32, []float64{0.4}, 1)}, []int64{0, 0, 3, 0, 0, 0}},
		{"nomax", corner, 0, []*Tensor{corner, scores}, nil},
	} {
		n := &Node{Op: "NonMaxSuppression", Version: 11, Attrs: Attrs{"center_point_box": c.center}, In: c.in, Out: []*Tensor{{}}}
		miscRun(t, NonMaxSuppression, n)
		miscWantI64(t, c.name, n.Out[0], c.want, []int{len(c.want) / 3, 3})
	}
	// Random boxes, two batches and three classes, against a plain greedy
	// reference.
	rng := rand.New(rand.NewSource(4))
	B, C, N := 2, 3, 9
	bx := make([]float64, B*N*4)
	for i := 0; i < B*N; i++ {
		y, x := rng.Float64()*4, rng.Float64()*4
		bx[i*4], bx[i*4+1], bx[i*4+2], bx[i*4+3] = y, x, y+0.5+rng.Float64()*2, x+0.5+rng.Float64()*2
	}
	bx = miscRepr(F32, bx)
	sc := miscRepr(F32, miscRandF64(rng, B, C, N))
	var want []int64
	ref := func(a, b []float64) float64 {
		ih := math.Min(a[2], b[2]) - math.Max(a[0], b[0])
		iw := math.Min(a[3], b[3]) - math.Max(a[1], b[1])
		if ih <= 0 || iw <= 0 {
			return 0
		}
		in := ih * iw
		return in / ((a[2]-a[0])*(a[3]-a[1]) + (b[2]-b[0])*(b[3]-b[1]) - in)
	}
	thr := float64(float32(0.3))
	for b := 0; b < B; b++ {
		for c := 0; c < C; c++ {
			var cand []int
			for i := 0; i < N; i++ {
				if sc[(b*C+c)*N+i] > 0 {
					cand = append(cand, i)
				}
			}
			sort.SliceStable(cand, func(p, q int) bool { return sc[(b*C+c)*N+cand[p]] > sc[(b*C+c)*N+cand[q]] })
			var kept []int
			for _, i := range cand {
				if len(kept) == 4 {
					break
				}
				ok := true
				for _, j := range kept {
					if ref(bx[(b*N+i)*4:], bx[(b*N+j)*4:]) > thr {
						ok = false
					}
				}
				if ok {
					kept = append(kept, i)
					want = append(want, int64(b), int64(c), int64(i))
				}
			}
		}
	}
	n := &Node{Op: "NonMaxSuppression", Version: 11, In: []*Tensor{miscTensorF(F32, bx, B, N, 4), miscTensorF(F32, sc, B, C, N),
		miscTensorI64([]int64{4}), miscTensorF(F32, []float64{0.3}), miscTensorF(F32, []float64{0})}, Out: []*Tensor{{}}}
	miscRun(t, NonMaxSuppression, n)
	miscWantI64(t, "random", n.Out[0], want, []int{len(want) / 3, 3})
	miscNoAllocs(t, n, NonMaxSuppression)
}

func TestMaxUnpool(t *testing.T) {
	x := miscTensorF(F32, []float64{1, 2, 3, 4}, 1, 1, 2, 2)
	ind := miscTensorI64([]int64{5, 7, 13, 15}, 1, 1, 2, 2)
	n := &Node{Op: "MaxUnpool", Version: 11, Attrs: Attrs{"kernel_shape": []int64{2, 2}, "strides": []int64{2, 2}}, In: []*Tensor{x, ind}, Out: []*Tensor{{}}}
	miscRun(t, MaxUnpool, n)
	want := make([]float64, 16)
	want[5], want[7], want[13], want[15] = 1, 2, 3, 4
	miscCheckClose(t, "unpool", n.Out[0], want, []int{1, 1, 4, 4}, 0)
	n.In = append(n.In, miscTensorI64([]int64{1, 1, 5, 5}, 4))
	miscRun(t, MaxUnpool, n)
	// output_shape pads the 4x4 unpooled plane at the end: the indices keep
	// their (row, col) in it (the ONNX test test_maxunpool_export_with_output_shape).
	want = make([]float64, 25)
	want[6], want[8], want[16], want[18] = 1, 2, 3, 4
	miscCheckClose(t, "unpool shape", n.Out[0], want, []int{1, 1, 5, 5}, 0)
	miscNoAllocs(t, n, MaxUnpool)
}

func TestMaxRoiPool(t *testing.T) {
	rng := rand.New(rand.NewSource(8))
	N, C, H, W := 2, 3, 9, 11
	x := miscRandF64(rng, N, C, H, W)
	rois := []float64{0, 1, 2, 7, 6, 1, 0.4, 0.6, 10.2, 8.9, 1, 3, 3, 3, 3}
	n := &Node{Op: "MaxRoiPool", Version: 1, Attrs: Attrs{"pooled_shape": []int64{2, 3}, "spatial_scale": float32(1)},
		In: []*Tensor{miscTensorF(F64, x, N, C, H, W), miscTensorF(F64, rois, 3, 5)}, Out: []*Tensor{{}}}
	miscRun(t, MaxRoiPool, n)
	var want []float64
	for r := 0; r < 3; r++ {
		b := int(rois[r*5])
		x1, y1 := int(math.Round(rois[r*5+1])), int(math.Round(rois[r*5+2]))
		x2, y2 := int(math.Round(rois[r*5+3])), int(math.Round(rois[r*5+4]))
		rh, rw := max(y2-y1+1, 1), max(x2-x1+1, 1)
		for c := 0; c < C; c++ {
			for ph := 0; ph < 2; ph++ {
				for pw := 0; pw < 3; pw++ {
					h0 := min(max(y1+int(math.Floor(float64(ph*rh)/2)), 0), H)
					h1 := min(max(y1+int(math.Ceil(float64((ph+1)*rh)/2)), 0), H)
					w0 := min(max(x1+int(math.Floor(float64(pw*rw)/3)), 0), W)
					w1 := min(max(x1+int(math.Ceil(float64((pw+1)*rw)/3)), 0), W)
					m := math.Inf(-1)
					for h := h0; h < h1; h++ {
						for w := w0; w < w1; w++ {
							m = math.Max(m, x[((b*C+c)*H+h)*W+w])
						}
					}
					if h1 <= h0 || w1 <= w0 {
						m = 0
					}
					want = append(want, m)
				}
			}
		}
	}
	miscCheckClose(t, "maxroipool", n.Out[0], want, []int{3, C, 2, 3}, 0)
}

// miscRefBilinear samples plane (H x W) at (y, x) the way RoiAlign does.
func miscRefBilinear(p []float64, H, W int, y, x float64) [4]float64 {
	if y < -1 || y > float64(H) || x < -1 || x > float64(W) {
		return [4]float64{}
	}
	y, x = math.Max(y, 0), math.Max(x, 0)
	y0, x0 := int(math.Floor(y)), int(math.Floor(x))
	y1, x1 := y0+1, x0+1
	if y0 >= H-1 {
		y0, y1, y = H-1, H-1, float64(H-1)
	}
	if x0 >= W-1 {
		x0, x1, x = W-1, W-1, float64(W-1)
	}
	ly, lx := y-float64(y0), x-float64(x0)
	return [4]float64{(1 - ly) * (1 - lx) * p[y0*W+x0], (1 - ly) * lx * p[y0*W+x1], ly * (1 - lx) * p[y1*W+x0], ly * lx * p[y1*W+x1]}
}

func TestRoiAlign(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	N, C, H, W := 2, 2, 7, 9
	x := miscRandF64(rng, N, C, H, W)
	rois := []float64{0.5, 1.2, 6.3, 5.1, 2, 2, 2.5, 2.6, 0, 0, 8.9, 6.9, -1, -0.5, 3, 2}
	bi := []int64{0, 1, 1, 0}
	for _, c := range []struct {
		ver   int
		mode  string
		half  bool
		ratio int64
		scale float32
	}{{10, "avg", false, 2, 1}, {16, "avg", true, 0, 0.8}, {16, "max", true, 2, 1}, {16, "avg", false, 3, 1.1}, {10, "max", false, 0, 1}} {
		for _, dt := range []DType{F32, F64} {
			t.Run(fmt.Sprintf("v%d_%s_%v_%s", c.ver, c.mode, c.half, dt), func(t *testing.T) {
				xs := miscRepr(dt, x)
				rs := miscRepr(dt, rois)
				attrs := Attrs{"output_height": int64(3), "output_width": int64(2), "sampling_ratio": c.ratio, "spatial_scale": c.scale, "mode": c.mode}
				if c.ver >= 16 && !c.half {
					attrs["coordinate_transformation_mode"] = "output_half_pixel"
				}
				n := &Node{Op: "RoiAlign", Version: c.ver, Attrs: attrs, In: []*Tensor{miscTensorF(dt, xs, N, C, H, W), miscTensorF(dt, rs, 4, 4), miscTensorI64(bi, 4)}, Out: []*Tensor{{}}}
				miscRun(t, RoiAlign, n)
				sc := float64(c.scale)
				off := 0.0
				if c.half {
					off = 0.5
				}
				var want []float64
				for r := 0; r < 4; r++ {
					x1, y1, x2, y2 := rs[r*4]*sc-off, rs[r*4+1]*sc-off, rs[r*4+2]*sc-off, rs[r*4+3]*sc-off
					rw, rh := x2-x1, y2-y1
					if !c.half {
						rw, rh = math.Max(rw, 1), math.Max(rh, 1)
					}
					gh, gw := int(c.ratio), int(c.ratio)
					if c.ratio == 0 {
						gh, gw = int(math.Ceil(rh/3)), int(math.Ceil(rw/2))
					}
					for ch := 0; ch < C; ch++ {
						p := xs[(int(bi[r])*C+ch)*H*W:]
						for ph := 0; ph < 3; ph++ {
							for pw := 0; pw < 2; pw++ {
								sum, mx := 0.0, math.Inf(-1)
								for iy := 0; iy < gh; iy++ {
									for ix := 0; ix < gw; ix++ {
										yy := y1 + float64(ph)*rh/3 + (float64(iy)+0.5)*rh/3/float64(gh)
										xx := x1 + float64(pw)*rw/2 + (float64(ix)+0.5)*rw/2/float64(gw)
										w := miscRefBilinear(p, H, W, yy, xx)
										sum += w[0] + w[1] + w[2] + w[3]
										mx = math.Max(mx, math.Max(math.Max(w[0], w[1]), math.Max(w[2], w[3])))
									}
								}
								if c.mode == "max" {
									want = append(want, mx)
								} else {
									want = append(want, sum/float64(max(gh*gw, 1)))
								}
							}
						}
					}
				}
				miscCheckClose(t, "roialign", n.Out[0], want, []int{4, C, 3, 2}, miscTol(dt))
			})
		}
	}
}

func TestEinsum(t *testing.T) {
	rng := rand.New(rand.NewSource(12))
	type tc struct {
		eq     string
		shapes [][]int
		out    []int
		ref    func(in [][]float64, o []int) float64 // value at output index o
		sum    []int                                 // extra summed dims enumerated by ref itself
	}
	cases := []tc{
		{"ij,jk->ik", [][]int{{3, 5}, {5, 4}}, []int{3, 4}, func(in [][]float64, o []int) float64 {
			s := 0.0
			for j := 0; j < 5; j++ {
				s += in[0][o[0]*5+j] * in[1][j*4+o[1]]
			}
			return s
		}, nil},
		{"bij,bjk->bik", [][]int{{2, 3, 5}, {2, 5, 4}}, []int{2, 3, 4}, func(in [][]float64, o []int) float64 {
			s := 0.0
			for j := 0; j < 5; j++ {
				s += in[0][(o[0]*3+o[1])*5+j] * in[1][(o[0]*5+j)*4+o[2]]
			}
			return s
		}, nil},
		{"ij->ji", [][]int{{3, 5}}, []int{5, 3}, func(in [][]float64, o []int) float64 { return in[0][o[1]*5+o[0]] }, nil},
		{"ii->i", [][]int{{4, 4}}, []int{4}, func(in [][]float64, o []int) float64 { return in[0][o[0]*4+o[0]] }, nil},
		{"ii", [][]int{{5, 5}}, []int{}, func(in [][]float64, o []int) float64 {
			s := 0.0
			for i := 0; i < 5; i++ {
				s += in[0][i*5+i]
			}
			return s
		}, nil},
		{"i,i", [][]int{{7}, {7}}, []int{}, func(in [][]float64, o []int) float64 {
			s := 0.0
			for i := 0; i < 7; i++ {
				s += in[0][i] * in[1][i]
			}
			return s
		}, nil},
		{"ij,kj", [][]int{{3, 4}, {5, 4}}, []int{3, 5}, func(in [][]float64, o []int) float64 {
			s := 0.0
			for j := 0; j < 4; j++ {
				s += in[0][o[0]*4+j] * in[1][o[1]*4+j]
			}
			return s
		}, nil},
		{"...ij,...jk->...ik", [][]int{{2, 1, 3, 4}, {3, 4, 2}}, []int{2, 3, 3, 2}, func(in [][]float64, o []int) float64 {
			s := 0.0
			for j := 0; j < 4; j++ {
				s += in[0][(o[0]*3+o[2])*4+j] * in[1][(o[1]*4+j)*2+o[3]]
			}
			return s
		}, nil},
		{"bii->bi", [][]int{{3, 4, 4}}, []int{3, 4}, func(in [][]float64, o []int) float64 { return in[0][(o[0]*4+o[1])*4+o[1]] }, nil},
		{"i,j,k->ikj", [][]int{{2}, {3}, {4}}, []int{2, 4, 3}, func(in [][]float64, o []int) float64 { return in[0][o[0]] * in[1][o[2]] * in[2][o[1]] }, nil},
		{"b...c->b", [][]int{{2, 3, 2, 4}}, []int{2}, func(in [][]float64, o []int) float64 {
			s := 0.0
			for i := 0; i < 24; i++ {
				s += in[0][o[0]*24+i]
			}
			return s
		}, nil},
		{"Ab,bA", [][]int{{3, 4}, {4, 3}}, []int{}, func(in [][]float64, o []int) float64 {
			s := 0.0
			for a := 0; a < 3; a++ {
				for b := 0; b < 4; b++ {
					s += in[0][a*4+b] * in[1][b*3+a]
				}
			}
			return s
		}, nil},
	}
	for ci, c := range cases {
		for _, dt := range []DType{F32, F64, I64} {
			t.Run(fmt.Sprintf("%d_%s_%s", ci, c.eq, dt), func(t *testing.T) {
				var ins [][]float64
				var ts []*Tensor
				for _, s := range c.shapes {
					v := miscRandF64(rng, s...)
					if dt == I64 {
						iv := make([]int64, len(v))
						for i := range v {
							iv[i] = int64(math.Round(v[i] * 5))
							v[i] = float64(iv[i])
						}
						ts = append(ts, miscTensorI64(iv, s...))
					} else {
						v = miscRepr(dt, v)
						ts = append(ts, miscTensorF(dt, v, s...))
					}
					ins = append(ins, v)
				}
				n := &Node{Op: "Einsum", Version: 12, Attrs: Attrs{"equation": c.eq}, In: ts, Out: []*Tensor{{}}}
				miscRun(t, Einsum, n)
				total := 1
				for _, d := range c.out {
					total *= d
				}
				want := make([]float64, total)
				o := make([]int, len(c.out))
				for i := range want {
					rem := i
					for d := len(c.out) - 1; d >= 0; d-- {
						o[d] = rem % c.out[d]
						rem /= c.out[d]
					}
					want[i] = c.ref(ins, o)
				}
				miscCheckClose(t, "einsum", n.Out[0], want, c.out, miscTol(dt))
				miscNoAllocs(t, n, Einsum)
			})
		}
	}
}

func TestGridSample(t *testing.T) {
	rng := rand.New(rand.NewSource(13))
	N, C, H, W, OH, OW := 2, 2, 5, 6, 3, 4
	x := miscRandF64(rng, N, C, H, W)
	g := miscRandF64(rng, N, OH, OW, 2)
	for i := range g {
		g[i] *= 1.3
	}
	g = miscRepr(F32, g)
	for _, mode := range []string{"bilinear", "nearest", "bicubic"} {
		for _, pad := range []string{"zeros", "border", "reflection"} {
			for _, align := range []int64{0, 1} {
				t.Run(fmt.Sprintf("%s_%s_%d", mode, pad, align), func(t *testing.T) {
					n := &Node{Op: "GridSample", Version: 16, Attrs: Attrs{"mode": mode, "padding_mode": pad, "align_corners": align},
						In: []*Tensor{miscTensorF(F64, x, N, C, H, W), miscTensorF(F64, g, N, OH, OW, 2)}, Out: []*Tensor{{}}}
					miscRun(t, GridSample, n)
					lo := [2]float64{-0.5, -0.5}
					hi := [2]float64{float64(W) - 0.5, float64(H) - 0.5}
					if align == 1 {
						lo, hi = [2]float64{0, 0}, [2]float64{float64(W - 1), float64(H - 1)}
					}
					size := [2]int{W, H}
					reflect := func(v float64, a int) float64 {
						r := hi[a] - lo[a]
						for v < lo[a] || v > hi[a] { // fold step by step
							if v < lo[a] {
								v = 2*lo[a] - v
							} else {
								v = 2*hi[a] - v
							}
						}
						_ = r
						return v
					}
					var want []float64
					for b := 0; b < N; b++ {
						for c := 0; c < C; c++ {
							p := x[(b*C+c)*H*W:]
							pix := func(r, q int) float64 {
								switch pad {
								case "zeros":
									if r < 0 || r >= H || q < 0 || q >= W {
										return 0
									}
								case "border":
									r, q = min(max(r, 0), H-1), min(max(q, 0), W-1)
								case "reflection":
									r, q = int(reflect(float64(r), 1)), int(reflect(float64(q), 0))
									r, q = min(max(r, 0), H-1), min(max(q, 0), W-1)
								}
								return p[r*W+q]
							}
							for i := 0; i < OH*OW; i++ {
								var co [2]float64
								for a := 0; a < 2; a++ {
									v := g[(b*OH*OW+i)*2+a]
									if align == 1 {
										co[a] = (v + 1) / 2 * float64(size[a]-1)
									} else {
										co[a] = ((v+1)*float64(size[a]) - 1) / 2
									}
									if mode != "bicubic" && (co[a] < lo[a] || co[a] > hi[a]) {
										if pad == "border" {
											co[a] = math.Min(math.Max(co[a], 0), float64(size[a]-1))
										} else if pad == "reflection" {
											co[a] = reflect(co[a], a)
										}
									}
								}
								xx, yy := co[0], co[1]
								var v float64
								switch mode {
								case "nearest":
									v = pix(int(math.RoundToEven(yy)), int(math.RoundToEven(xx)))
								case "bilinear":
									x0, y0 := math.Floor(xx), math.Floor(yy)
									fx, fy := xx-x0, yy-y0
									v = (1-fy)*(1-fx)*pix(int(y0), int(x0)) + (1-fy)*fx*pix(int(y0), int(x0)+1) +
										fy*(1-fx)*pix(int(y0)+1, int(x0)) + fy*fx*pix(int(y0)+1, int(x0)+1)
								case "bicubic":
									cub := func(d float64) float64 {
										A := -0.75
										d = math.Abs(d)
										if d <= 1 {
											return (A+2)*d*d*d - (A+3)*d*d + 1
										}
										if d < 2 {
											return A*d*d*d - 5*A*d*d + 8*A*d - 4*A
										}
										return 0
									}
									x0, y0 := math.Floor(xx), math.Floor(yy)
									for r := -1; r <= 2; r++ {
										for q := -1; q <= 2; q++ {
											v += cub(yy-(y0+float64(r))) * cub(xx-(x0+float64(q))) * pix(int(y0)+r, int(x0)+q)
										}
									}
								}
								want = append(want, v)
							}
						}
					}
					miscCheckClose(t, "gridsample", n.Out[0], want, []int{N, C, OH, OW}, 1e-9)
				})
			}
		}
	}
}
