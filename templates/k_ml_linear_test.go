package templates

import (
	"math"
	"math/rand"
	"testing"
)

func TestMLLinear(t *testing.T) {
	r := rand.New(rand.NewSource(31))
	rows, cols, e := 6, 5, 3
	x := mlRandF32(r, rows, cols)
	w := make([]float32, e*cols)
	b := make([]float32, e)
	for i := range w {
		w[i] = float32(r.NormFloat64())
	}
	for i := range b {
		b[i] = float32(r.NormFloat64())
	}
	score := func(i, j int) float64 {
		s := float64(b[j])
		for k := 0; k < cols; k++ {
			s += float64(x.F32()[i*cols+k]) * float64(w[j*cols+k])
		}
		return s
	}
	n := &Node{Op: "LinearRegressor", Attrs: Attrs{"coefficients": w, "intercepts": b, "targets": int64(e)}, In: []*Tensor{x}, Out: []*Tensor{{}}}
	miscRun(t, MLLinearRegressor, n)
	var want []float64
	for i := 0; i < rows; i++ {
		for j := 0; j < e; j++ {
			want = append(want, score(i, j))
		}
	}
	mlClose(t, "LinearRegressor", n.Out[0].F32(), want, 1e-6)

	for _, post := range []string{"NONE", "LOGISTIC", "SOFTMAX"} {
		n := &Node{Op: "LinearClassifier", Attrs: Attrs{"coefficients": w, "intercepts": b, "classlabels_strings": []string{"x", "y", "z"}, "post_transform": post}, In: []*Tensor{x}, Out: []*Tensor{{}, {}}}
		miscRun(t, MLLinearClassifier, n)
		want = want[:0]
		for i := 0; i < rows; i++ {
			s := []float64{score(i, 0), score(i, 1), score(i, 2)}
			switch post {
			case "LOGISTIC":
				for j := range s {
					s[j] = 1 / (1 + math.Exp(-s[j]))
				}
			case "SOFTMAX":
				m := math.Max(s[0], math.Max(s[1], s[2]))
				sum := 0.0
				for j := range s {
					s[j] = math.Exp(s[j] - m)
					sum += s[j]
				}
				for j := range s {
					s[j] /= sum
				}
			}
			best := 0
			for j := range s {
				if s[j] > s[best] {
					best = j
				}
			}
			if got := n.Out[0].Str()[i]; got != []string{"x", "y", "z"}[best] {
				t.Fatalf("%s row %d: label %q, want index %d", post, i, got, best)
			}
			want = append(want, s...)
		}
		mlClose(t, "LinearClassifier "+post, n.Out[1].F32(), want, 1e-6)
	}

	// Binary: one coefficient row, two labels: scores [-s, s].
	n = &Node{Op: "LinearClassifier", Attrs: Attrs{"coefficients": w[:cols], "intercepts": b[:1], "classlabels_ints": []int64{0, 1}}, In: []*Tensor{x}, Out: []*Tensor{{}, {}}}
	miscRun(t, MLLinearClassifier, n)
	for i := 0; i < rows; i++ {
		s := score(i, 0)
		mlClose(t, "binary scores", n.Out[1].F32()[2*i:2*i+2], []float64{-s, s}, 1e-6)
		if l := n.Out[0].I64()[i]; (l == 1) != (s > 0) {
			t.Fatalf("binary row %d: label %d for score %g", i, l, s)
		}
	}
}

func TestMLSVM(t *testing.T) {
	r := rand.New(rand.NewSource(32))
	rows, cols := 5, 3
	x := mlRandF32(r, rows, cols)
	vpc := []int64{2, 1, 2} // 3 classes, 5 vectors
	nv, k := 5, 3
	sv := make([]float32, nv*cols)
	coef := make([]float32, (k-1)*nv)
	rho := []float32{0.1, -0.2, 0.3}
	for i := range sv {
		sv[i] = float32(r.NormFloat64())
	}
	for i := range coef {
		coef[i] = float32(r.NormFloat64())
	}
	gamma := 0.7
	rbf := func(i, v int) float64 {
		s := 0.0
		for j := 0; j < cols; j++ {
			d := float64(x.F32()[i*cols+j]) - float64(sv[v*cols+j])
			s += d * d
		}
		return math.Exp(-gamma * s)
	}
	n := &Node{Op: "SVMClassifier", Attrs: Attrs{"classlabels_ints": []int64{4, 5, 6}, "coefficients": coef, "support_vectors": sv,
		"vectors_per_class": vpc, "rho": rho, "kernel_type": "RBF", "kernel_params": []float32{float32(gamma), 0, 3}}, In: []*Tensor{x}, Out: []*Tensor{{}, {}}}
	miscRun(t, MLSVMClassifier, n)
	start := []int{0, 2, 3}
	for i := 0; i < rows; i++ {
		votes := make([]int, k)
		var dec []float64
		e := 0
		for a := 0; a < k; a++ {
			for b := a + 1; b < k; b++ {
				s := float64(rho[e])
				for v := 0; v < int(vpc[a]); v++ {
					s += float64(coef[(b-1)*nv+start[a]+v]) * rbf(i, start[a]+v)
				}
				for v := 0; v < int(vpc[b]); v++ {
					s += float64(coef[a*nv+start[b]+v]) * rbf(i, start[b]+v)
				}
				dec = append(dec, s)
				if s > 0 {
					votes[a]++
				} else {
					votes[b]++
				}
				e++
			}
		}
		best := 0
		for c := range votes {
			if votes[c] > votes[best] {
				best = c
			}
		}
		if l := n.Out[0].I64()[i]; l != int64(4+best) {
			t.Fatalf("row %d: label %d, want %d", i, l, 4+best)
		}
		mlClose(t, "SVC scores", n.Out[1].F32()[3*i:3*i+3], dec, 1e-5)
	}

	// Regressor, linear kernel with support vectors, and one-class.
	n = &Node{Op: "SVMRegressor", Attrs: Attrs{"coefficients": coef[:nv], "support_vectors": sv, "n_supports": int64(nv), "rho": rho[:1]}, In: []*Tensor{x}, Out: []*Tensor{{}}}
	miscRun(t, MLSVMRegressor, n)
	var want []float64
	for i := 0; i < rows; i++ {
		s := float64(rho[0])
		for v := 0; v < nv; v++ {
			d := 0.0
			for j := 0; j < cols; j++ {
				d += float64(x.F32()[i*cols+j]) * float64(sv[v*cols+j])
			}
			s += float64(coef[v]) * d
		}
		want = append(want, s)
	}
	mlClose(t, "SVMRegressor", n.Out[0].F32(), want, 1e-5)
	n.Attrs["one_class"] = int64(1)
	miscRun(t, MLSVMRegressor, n)
	for i := range want {
		if want[i] > 0 {
			want[i] = 1
		} else {
			want[i] = -1
		}
	}
	mlClose(t, "SVMRegressor one_class", n.Out[0].F32(), want, 0)
}
