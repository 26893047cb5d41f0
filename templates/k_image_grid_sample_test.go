package templates

import (
	"fmt"
	"math"
	"math/rand"
	"testing"
)

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
