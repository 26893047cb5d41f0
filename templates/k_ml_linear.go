package templates

import "math"

// Linear and SVM models of ai.onnx.ml (opset 1): LinearClassifier,
// LinearRegressor, SVMClassifier, SVMRegressor. Scores are computed in
// float64 and returned as float32, the way the ONNX reference and ORT
// define them (including their conventions for binary models).

// mlDot is x·w over the first len(x) elements.
func mlDot(x []float64, w []float32) float64 {
	s := 0.0
	for i, v := range x {
		s += v * float64(w[i])
	}
	return s
}

// mlReadRow reads row r of X ([rows, cols]) into dst.
func mlReadRow(X *Tensor, r, cols int, dst []float64) {
	for j := range dst[:cols] {
		dst[j] = ewF64At(X, r*cols+j)
	}
}

// MLLinearRegressor is ai.onnx.ml LinearRegressor: Y = X W^T + b, W of
// [targets, C].
func MLLinearRegressor(n *Node) error {
	X := n.Input(0)
	rows, cols, err := mlRowsOf(n, X)
	if err != nil {
		return err
	}
	t := int(n.Attrs.Int("targets", 1))
	w, b := n.Attrs.Floats("coefficients"), n.Attrs.Floats("intercepts")
	if len(w) != t*cols || len(b) != 0 && len(b) != t {
		return n.Errorf("%d coefficients and %d intercepts for %d targets of %d features", len(w), len(b), t, cols)
	}
	post := n.Attrs.String("post_transform", "NONE")
	if err := mlCheckPost(n, post); err != nil {
		return err
	}
	out := n.Out[0]
	out.Resize(F32, rows, t)
	x := miscScr[float32](n).getF64(0, cols)
	acc := miscScr[float32](n).getF64(1, t)
	for r := 0; r < rows; r++ {
		mlReadRow(X, r, cols, x)
		for j := 0; j < t; j++ {
			acc[j] = mlDot(x, w[j*cols:])
			if len(b) > 0 {
				acc[j] += float64(b[j])
			}
		}
		mlPostTransform(acc, post)
		for j, v := range acc {
			out.F32()[r*t+j] = float32(v)
		}
	}
	return nil
}

// mlLabels writes label index (or raw int label) into labels[r].
type mlLabels struct {
	strs []string
	ints []int64
	out  *Tensor
}

func (l *mlLabels) resize(rows int) {
	if len(l.strs) > 0 {
		l.out.Resize(String, rows)
	} else {
		l.out.Resize(I64, rows)
	}
}

// setIndex stores the label of class index i.
func (l *mlLabels) setIndex(r, i int) {
	switch {
	case len(l.strs) > 0:
		l.out.Str()[r] = l.strs[i]
	case len(l.ints) > 0:
		l.out.I64()[r] = l.ints[i]
	default:
		l.out.I64()[r] = int64(i)
	}
}

// MLLinearClassifier is ai.onnx.ml LinearClassifier: scores X W^T + b
// (W of [E, C]); with one score column and two classes the scores are
// [-s, s]. Labels: argmax with several columns, else the first label when
// the score reaches 0 (0.5 after a post_transform).
func MLLinearClassifier(n *Node) error {
	X := n.Input(0)
	rows, cols, err := mlRowsOf(n, X)
	if err != nil {
		return err
	}
	w, b := n.Attrs.Floats("coefficients"), n.Attrs.Floats("intercepts")
	if cols == 0 || len(w)%cols != 0 {
		return n.Errorf("%d coefficients are not a multiple of the %d features", len(w), cols)
	}
	e := len(w) / cols
	if len(b) != 0 && len(b) != e {
		return n.Errorf("%d intercepts for %d score columns", len(b), e)
	}
	lb := mlLabels{strs: n.Attrs.Strings("classlabels_strings"), ints: n.Attrs.Ints("classlabels_ints"), out: n.Out[0]}
	k := max(len(lb.strs), len(lb.ints))
	post := n.Attrs.String("post_transform", "NONE")
	if err := mlCheckPost(n, post); err != nil {
		return err
	}
	width := e
	if e == 1 && k == 2 {
		width = 2
	}
	if width > 1 && k > 0 && k < width {
		return n.Errorf("%d score columns but %d class labels", width, k)
	}
	lb.resize(rows)
	scores := mlOutput(n, 1)
	if scores != nil {
		scores.Resize(F32, rows, width)
	}
	x := miscScr[float32](n).getF64(0, cols)
	acc := miscScr[float32](n).getF64(1, width)
	for r := 0; r < rows; r++ {
		mlReadRow(X, r, cols, x)
		for j := 0; j < e; j++ {
			acc[j] = mlDot(x, w[j*cols:])
			if len(b) > 0 {
				acc[j] += float64(b[j])
			}
		}
		if width == 2 && e == 1 {
			acc[1], acc[0] = acc[0], -acc[0]
		}
		mlPostTransform(acc, post)
		if width > 1 {
			best := 0
			for j, v := range acc {
				if v > acc[best] {
					best = j
				}
			}
			lb.setIndex(r, best)
		} else {
			th := 0.0
			if post != "NONE" {
				th = 0.5
			}
			hit := acc[0] >= th
			switch {
			case len(lb.strs) > 0:
				lb.out.Str()[r] = ""
				if hit {
					lb.out.Str()[r] = lb.strs[0]
				}
			case len(lb.ints) > 0:
				lb.out.I64()[r] = 0
				if hit {
					lb.out.I64()[r] = lb.ints[0]
				}
			default:
				lb.out.I64()[r] = 0
				if hit {
					lb.out.I64()[r] = 1
				}
			}
		}
		if scores != nil {
			for j, v := range acc {
				scores.F32()[r*width+j] = float32(v)
			}
		}
	}
	return nil
}

// mlOutput returns output i of n or nil when it is absent.
func mlOutput(n *Node, i int) *Tensor {
	if i < len(n.Out) {
		return n.Out[i]
	}
	return nil
}

// mlSVMKernel is an SVM kernel with its parameters.
type mlSVMKernel struct {
	kind         string
	gamma, coef0 float64
	degree       int
}

func mlSVMKernelOf(n *Node) (mlSVMKernel, error) {
	k := mlSVMKernel{kind: n.Attrs.String("kernel_type", "LINEAR")}
	if p := n.Attrs.Floats("kernel_params"); len(p) > 0 {
		if len(p) < 3 {
			return k, n.Errorf("kernel_params has %d values: want gamma, coef0, degree", len(p))
		}
		k.gamma, k.coef0, k.degree = float64(p[0]), float64(p[1]), int(p[2])
	}
	switch k.kind {
	case "LINEAR", "POLY", "RBF", "SIGMOID":
		return k, nil
	}
	return k, n.Errorf("kernel_type %q: want LINEAR, POLY, RBF or SIGMOID", k.kind)
}

func (k mlSVMKernel) dot(x []float64, sv []float32) float64 {
	switch k.kind {
	case "POLY":
		return math.Pow(mlDot(x, sv)*k.gamma+k.coef0, float64(k.degree))
	case "SIGMOID":
		return math.Tanh(mlDot(x, sv)*k.gamma + k.coef0)
	case "RBF":
		s := 0.0
		for i, v := range x {
			d := v - float64(sv[i])
			s += d * d
		}
		return math.Exp(-k.gamma * s)
	}
	return mlDot(x, sv)
}

// MLSVMRegressor is ai.onnx.ml SVMRegressor: sum_j coef_j K(x, sv_j) + rho
// (or, without support vectors, x·coef + rho); one_class gives +-1.
func MLSVMRegressor(n *Node) error {
	X := n.Input(0)
	rows, cols, err := mlRowsOf(n, X)
	if err != nil {
		return err
	}
	kern, err := mlSVMKernelOf(n)
	if err != nil {
		return err
	}
	ns := int(n.Attrs.Int("n_supports", 0))
	coef, sv, rho := n.Attrs.Floats("coefficients"), n.Attrs.Floats("support_vectors"), n.Attrs.Floats("rho")
	if len(rho) < 1 {
		return n.Errorf("rho is empty")
	}
	if ns > 0 && (len(coef) < ns || len(sv) != ns*cols) || ns == 0 && len(coef) != cols {
		return n.Errorf("%d coefficients and %d support vector values for %d supports of %d features", len(coef), len(sv), ns, cols)
	}
	oneClass := n.Attrs.Int("one_class", 0) != 0
	post := n.Attrs.String("post_transform", "NONE")
	if err := mlCheckPost(n, post); err != nil {
		return err
	}
	out := n.Out[0]
	out.Resize(F32, rows, 1)
	x := miscScr[float32](n).getF64(0, cols)
	for r := 0; r < rows; r++ {
		mlReadRow(X, r, cols, x)
		s := 0.0
		if ns > 0 {
			for j := 0; j < ns; j++ {
				s += float64(coef[j]) * kern.dot(x, sv[j*cols:])
			}
		} else {
			s = mlDot(x, coef)
		}
		s += float64(rho[0])
		if oneClass {
			if s > 0 {
				s = 1
			} else {
				s = -1
			}
		}
		v := []float64{s}
		mlPostTransform(v, post)
		out.F32()[r] = float32(v[0])
	}
	return nil
}

// mlSVMScoreWidth is the width of SVMClassifier's score output.
func mlSVMScoreWidth(k, vectors int, proba bool, rhos int, post string, labels int) int {
	m := k
	if vectors > 0 && !proba {
		m = k * (k - 1) / 2
	}
	if m >= 2 {
		return m
	}
	if post == "PROBIT" {
		return 1
	}
	if rhos == 1 && labels == 2 {
		return 2
	}
	return 1
}

// MLSVMClassifier is ai.onnx.ml SVMClassifier: one-vs-one SVC with
// support vectors (votes decide the label; with prob_a/prob_b Platt
// probabilities coupled by libsvm's multiclass method) or, without
// support vectors, a linear model per class.
func MLSVMClassifier(n *Node) error {
	X := n.Input(0)
	rows, cols, err := mlRowsOf(n, X)
	if err != nil {
		return err
	}
	kern, err := mlSVMKernelOf(n)
	if err != nil {
		return err
	}
	lb := mlLabels{strs: n.Attrs.Strings("classlabels_strings"), ints: n.Attrs.Ints("classlabels_ints"), out: n.Out[0]}
	nl := max(len(lb.strs), len(lb.ints))
	k := max(nl, 1)
	coef, svs, rho := n.Attrs.Floats("coefficients"), n.Attrs.Floats("support_vectors"), n.Attrs.Floats("rho")
	pa, pb := n.Attrs.Floats("prob_a"), n.Attrs.Floats("prob_b")
	vpc := n.Attrs.Ints("vectors_per_class")
	post := n.Attrs.String("post_transform", "NONE")
	if err := mlCheckPost(n, post); err != nil {
		return err
	}
	vectors := 0
	start := make([]int, len(vpc))
	for i, c := range vpc {
		start[i] = vectors
		vectors += int(c)
	}
	pairs := k * (k - 1) / 2
	if vectors > 0 {
		if len(vpc) != k || len(svs) != vectors*cols || len(coef) != (k-1)*vectors || len(rho) < pairs {
			return n.Errorf("inconsistent SVC attributes: %d classes, %d vectors of %d features, %d coefficients, %d rho", k, vectors, cols, len(coef), len(rho))
		}
	} else {
		kern = mlSVMKernel{kind: "LINEAR"}
		if len(coef) != k*cols || len(rho) < 1 {
			return n.Errorf("linear SVM: %d coefficients for %d classes of %d features, %d rho", len(coef), k, cols, len(rho))
		}
	}
	proba := vectors > 0 && len(pa) > 0
	if proba && (len(pa) < pairs || len(pb) < pairs) {
		return n.Errorf("prob_a/prob_b have %d/%d values: want %d", len(pa), len(pb), pairs)
	}
	allPos := true
	for _, c := range coef {
		if c < 0 {
			allPos = false
		}
	}
	width := mlSVMScoreWidth(k, vectors, proba, len(rho), post, nl)
	lb.resize(rows)
	scores := mlOutput(n, 1)
	if scores != nil {
		scores.Resize(F32, rows, width)
	}
	s := miscScr[float32](n)
	x := s.getF64(0, cols)
	kv := s.getF64(1, vectors)
	raw := s.getF64(2, max(pairs, k))
	votes := s.getF64(3, k)
	fin := s.getF64(4, max(width, k, 2))
	for r := 0; r < rows; r++ {
		mlReadRow(X, r, cols, x)
		var sc []float64
		maxClass, maxWeight := 0, 0.0
		if vectors > 0 {
			for j := 0; j < vectors; j++ {
				kv[j] = kern.dot(x, svs[j*cols:])
			}
			clear(votes)
			e := 0
			for i := 0; i < k; i++ {
				for j := i + 1; j < k; j++ {
					v := float64(rho[e])
					for t := 0; t < int(vpc[i]); t++ {
						v += float64(coef[(j-1)*vectors+start[i]+t]) * kv[start[i]+t]
					}
					for t := 0; t < int(vpc[j]); t++ {
						v += float64(coef[i*vectors+start[j]+t]) * kv[start[j]+t]
					}
					raw[e] = v
					if v > 0 {
						votes[i]++
					} else {
						votes[j]++
					}
					e++
				}
			}
			sc = raw[:pairs]
			if proba {
				sc = mlSVMProbabilities(raw[:pairs], pa, pb, k, fin[:k])
				copy(raw[:k], sc)
				sc = raw[:k]
			}
			for i, v := range votes {
				if v > votes[maxClass] {
					maxClass = i
				}
			}
			maxWeight = votes[maxClass]
		} else {
			for j := 0; j < k; j++ {
				raw[j] = float64(rho[0]) + mlDot(x, coef[j*cols:])
			}
			sc = raw[:k]
			for i, v := range sc {
				if v > sc[maxClass] {
					maxClass = i
				}
			}
			maxWeight = sc[maxClass]
		}
		// Label.
		label, raw1 := maxClass, int64(-1)
		if len(rho) == 1 {
			if nl == 2 {
				if !proba && allPos && maxWeight >= 0.5 {
					label = 1
				}
			} else if maxWeight > 0 {
				raw1 = 1
			} else {
				raw1 = 0
			}
		}
		switch {
		case raw1 >= 0 && len(lb.strs) == 0:
			lb.out.I64()[r] = raw1
		case raw1 >= 0:
			lb.out.Str()[r] = lb.strs[min(int(raw1), len(lb.strs)-1)]
		default:
			lb.setIndex(r, label)
		}
		// Scores.
		o := fin[:width]
		switch {
		case len(sc) >= 2:
			copy(o, sc)
			mlPostTransform(o, post)
		case post == "PROBIT":
			o[0] = sc[0]
			mlPostTransform(o, post)
		case width == 2:
			o[0], o[1] = -sc[0], sc[0]
			mlPostTransform(o, post)
		default:
			o[0] = sc[0]
		}
		if scores != nil {
			for j, v := range o {
				scores.F32()[r*width+j] = float32(v)
			}
		}
	}
	return nil
}

// mlSVMProbabilities turns the pairwise decision values into class
// probabilities: Platt's sigmoid per pair, then libsvm's pairwise coupling
// (multiclass_probability).
func mlSVMProbabilities(dec []float64, pa, pb []float32, k int, p []float64) []float64 {
	R := make([]float64, k*k)
	e := 0
	for i := 0; i < k; i++ {
		for j := i + 1; j < k; j++ {
			v := dec[e]*float64(pa[e]) + float64(pb[e])
			// 1 - logistic(v), computed without overflow.
			var pr float64
			if v >= 0 {
				pr = math.Exp(-v) / (1 + math.Exp(-v))
			} else {
				pr = 1 / (1 + math.Exp(v))
			}
			pr = min(max(pr, 1e-7), 1-1e-7)
			R[i*k+j], R[j*k+i] = pr, 1-pr
			e++
		}
	}
	Q := make([]float64, k*k)
	Qp := make([]float64, k)
	for t := 0; t < k; t++ {
		p[t] = 1 / float64(k)
		for j := 0; j < k; j++ {
			if j != t {
				Q[t*k+t] += R[j*k+t] * R[j*k+t]
				Q[t*k+j] = -R[j*k+t] * R[t*k+j]
			}
		}
	}
	eps := 0.005 / float64(k)
	for it := 0; it < max(100, k); it++ {
		pQp := 0.0
		for t := 0; t < k; t++ {
			Qp[t] = 0
			for j := 0; j < k; j++ {
				Qp[t] += Q[t*k+j] * p[j]
			}
			pQp += p[t] * Qp[t]
		}
		maxErr := 0.0
		for t := 0; t < k; t++ {
			maxErr = max(maxErr, math.Abs(Qp[t]-pQp))
		}
		if maxErr < eps {
			break
		}
		for t := 0; t < k; t++ {
			diff := (-Qp[t] + pQp) / Q[t*k+t]
			p[t] += diff
			pQp = (pQp + diff*(diff*Q[t*k+t]+2*Qp[t])) / (1 + diff) / (1 + diff)
			for j := 0; j < k; j++ {
				Qp[j] = (Qp[j] + diff*Q[t*k+j]) / (1 + diff)
				p[j] /= 1 + diff
			}
		}
	}
	return p
}
