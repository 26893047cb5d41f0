package templates

import (
	"fmt"
	"math"
	"math/rand"
	"testing"
)

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
