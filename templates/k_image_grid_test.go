package templates

import (
	"fmt"
	"math"
	"math/rand"
	"testing"
)

// gridRefSample is a float64 N-D GridSample reference written per
// element: it walks every tap of the whole 2^r or 4^r neighbourhood with
// its own index arithmetic.
func gridRefSample(x []float64, sp []int, coords []float64, mode, pad string, align bool) float64 {
	r := len(sp)
	lo, hi := make([]float64, r), make([]float64, r)
	c := make([]float64, r)
	for a := 0; a < r; a++ {
		l := float64(sp[a])
		if align {
			lo[a], hi[a] = 0, l-1
			c[a] = (coords[a] + 1) / 2 * (l - 1)
		} else {
			lo[a], hi[a] = -0.5, l-0.5
			c[a] = ((coords[a]+1)*l - 1) / 2
		}
	}
	refl := func(v float64, a int) float64 {
		for v < lo[a] || v > hi[a] {
			if v < lo[a] {
				v = 2*lo[a] - v
			} else {
				v = 2*hi[a] - v
			}
		}
		return v
	}
	if mode != "cubic" {
		for a := range c {
			if c[a] < lo[a] || c[a] > hi[a] {
				switch pad {
				case "border":
					c[a] = math.Min(math.Max(c[a], 0), float64(sp[a]-1))
				case "reflection":
					c[a] = refl(c[a], a)
				}
			}
		}
	}
	at := func(q []int) float64 {
		off := 0
		for a := 0; a < r; a++ {
			i := q[a]
			switch pad {
			case "zeros":
				if i < 0 || i >= sp[a] {
					return 0
				}
			case "border":
				i = min(max(i, 0), sp[a]-1)
			case "reflection":
				i = min(max(int(refl(float64(i), a)), 0), sp[a]-1)
			}
			off = off*sp[a] + i
		}
		return x[off]
	}
	q := make([]int, r)
	if mode == "nearest" {
		for a := range q {
			q[a] = int(math.RoundToEven(c[a]))
		}
		return at(q)
	}
	k := 2
	if mode == "cubic" {
		k = 4
	}
	total := 1
	for range r {
		total *= k
	}
	sum := 0.0
	for t := 0; t < total; t++ {
		w, rem := 1.0, t
		for a := r - 1; a >= 0; a-- {
			j := rem % k
			rem /= k
			f := math.Floor(c[a])
			if k == 2 {
				q[a] = int(f) + j
				w *= 1 - math.Abs(c[a]-float64(q[a]))
			} else {
				q[a] = int(f) - 1 + j
				w *= miscCubicW(c[a]-float64(q[a]), -0.75)
			}
		}
		sum += w * at(q)
	}
	return sum
}

func TestGridSampleND(t *testing.T) {
	for _, sp := range [][]int{{5, 6}, {3, 4, 5}, {7}} {
		for _, mode := range []string{"linear", "nearest", "cubic"} {
			for _, pad := range []string{"zeros", "border", "reflection"} {
				for _, align := range []int64{0, 1} {
					t.Run(fmt.Sprintf("%v_%s_%s_%d", sp, mode, pad, align), func(t *testing.T) {
						rng := rand.New(rand.NewSource(int64(len(sp)*100 + len(mode) + len(pad))))
						N, C, r := 2, 3, len(sp)
						xs := append([]int{N, C}, sp...)
						x := miscRandF64(rng, xs...)
						os := []int{3, 2, 4}[:r]
						gs := append(append([]int{N}, os...), r)
						g := miscRandF64(rng, gs...)
						for i := range g {
							g[i] *= 1.4
						}
						g = miscRepr(F32, g)
						n := &Node{Op: "GridSample", Version: 22, Attrs: Attrs{"mode": mode, "padding_mode": pad, "align_corners": align},
							In: []*Tensor{miscTensorF(F64, x, xs...), miscTensorF(F32, g, gs...)}, Out: []*Tensor{{}}}
						miscRun(t, GridSample, n)
						opts := 1
						for _, o := range os {
							opts *= o
						}
						spatial := len(x) / (N * C)
						want := make([]float64, 0, N*C*opts)
						co := make([]float64, r)
						for b := 0; b < N; b++ {
							for c := 0; c < C; c++ {
								for o := 0; o < opts; o++ {
									for a := 0; a < r; a++ {
										co[a] = g[(b*opts+o)*r+r-1-a]
									}
									want = append(want, gridRefSample(x[(b*C+c)*spatial:(b*C+c+1)*spatial], sp, co, mode, pad, align == 1))
								}
							}
						}
						miscCheckClose(t, "Y", n.Out[0], want, append([]int{N, C}, os...), 1e-9)
					})
				}
			}
		}
	}
}

func TestAffineGrid(t *testing.T) {
	for _, size := range [][]int64{{2, 3, 5, 7}, {3, 1, 4, 3, 6}, {1, 2, 1, 1}} {
		for _, align := range []int64{0, 1} {
			t.Run(fmt.Sprintf("%v_%d", size, align), func(t *testing.T) {
				rng := rand.New(rand.NewSource(int64(len(size)) + align))
				r := len(size) - 2
				N := int(size[0])
				th := miscRandF64(rng, N, r, r+1)
				n := &Node{Op: "AffineGrid", Version: 20, Attrs: Attrs{"align_corners": align},
					In: []*Tensor{miscTensorF(F64, th, N, r, r+1), miscTensorI64(size, len(size))}, Out: []*Tensor{{}}}
				miscRun(t, AffineGrid, n)
				shape := []int{N}
				pts := 1
				for _, d := range size[2:] {
					shape = append(shape, int(d))
					pts *= int(d)
				}
				shape = append(shape, r)
				base := func(i, l int) float64 {
					if align == 1 {
						if l == 1 {
							return -1
						}
						return -1 + float64(2*i)/float64(l-1)
					}
					return (2*float64(i)+1)/float64(l) - 1
				}
				var want []float64
				for b := 0; b < N; b++ {
					for p := 0; p < pts; p++ {
						// p's coordinates, last axis (W, the x of the grid) fastest.
						h := make([]float64, r+1)
						rem := p
						for a := r - 1; a >= 0; a-- {
							l := int(size[2+a])
							h[r-1-a] = base(rem%l, l)
							rem /= l
						}
						h[r] = 1
						for j := 0; j < r; j++ {
							s := 0.0
							for k := 0; k <= r; k++ {
								s += th[(b*r+j)*(r+1)+k] * h[k]
							}
							want = append(want, s)
						}
					}
				}
				miscCheckClose(t, "grid", n.Out[0], want, shape, 1e-12)
			})
		}
	}
}
