package templates

import (
	"fmt"
	"math"
	"math/rand"
	"sort"
	"testing"
)

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
