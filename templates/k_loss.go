package templates

import (
	"math"
	"slices"
)

// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (versions 12, 13).
// The input is [N, C] or [N, C, d1, ..., dk] and the target [N] or
// [N, d1, ..., dk] of class indices; an optional weight [C] scales each
// class. A target equal to ignore_index contributes nothing, not even to
// the weight sum that "mean" divides by. Sums run in float64.

// NegativeLogLikelihoodLoss is ONNX NegativeLogLikelihoodLoss:
// loss = -input[n, target, d] * weight[target].
func NegativeLogLikelihoodLoss(n *Node) error {
	X := n.Input(0)
	if X == nil || n.Input(1) == nil {
		return n.Errorf("want inputs input and target")
	}
	return lossNLL(n, X, nil)
}

// SoftmaxCrossEntropyLoss is ONNX SoftmaxCrossEntropyLoss: the negative
// log likelihood of log(softmax(scores)) along axis 1; the optional second
// output is that log-probability tensor.
func SoftmaxCrossEntropyLoss(n *Node) error {
	X := n.Input(0)
	if X == nil || n.Input(1) == nil {
		return n.Errorf("want inputs scores and labels")
	}
	if len(X.Shape) < 2 {
		return n.Errorf("scores must have rank >= 2, have shape %s", X.ShapeString())
	}
	N, C, D := X.Shape[0], X.Shape[1], lossInner(X.Shape)
	lp := miscScr[float64](n).getF64(0, X.Len())
	for b := 0; b < N; b++ {
		for d := 0; d < D; d++ {
			base := b*C*D + d
			mx := math.Inf(-1)
			for c := 0; c < C; c++ {
				mx = math.Max(mx, ewF64At(X, base+c*D))
			}
			sum := 0.0
			for c := 0; c < C; c++ {
				sum += math.Exp(ewF64At(X, base+c*D) - mx)
			}
			ls := mx + math.Log(sum)
			for c := 0; c < C; c++ {
				lp[base+c*D] = ewF64At(X, base+c*D) - ls
			}
		}
	}
	if len(n.Out) > 1 && n.Out[1] != nil {
		n.Out[1].Resize(X.DType, X.Shape...)
		for i, v := range lp {
			ewSetF64(n.Out[1], i, v)
		}
	}
	return lossNLL(n, X, lp)
}

func lossInner(shape []int) int {
	d := 1
	for _, s := range shape[2:] {
		d *= s
	}
	return d
}

// lossNLL writes output 0 of either loss. lp, when not nil, holds the
// log-probabilities (laid out like X) to use instead of X's values.
func lossNLL(n *Node, X *Tensor, lp []float64) error {
	T, W := n.In[1], n.Input(2)
	if !ewIsFloat(X.DType) {
		return n.Errorf("input dtype %s is not a float type", X.DType)
	}
	if len(X.Shape) < 2 {
		return n.Errorf("input must have rank >= 2, have shape %s", X.ShapeString())
	}
	N, C, D := X.Shape[0], X.Shape[1], lossInner(X.Shape)
	if len(T.Shape) != len(X.Shape)-1 || T.Shape[0] != N || !slices.Equal(T.Shape[1:], X.Shape[2:]) {
		return n.Errorf("target shape %s does not match input shape %s", T.ShapeString(), X.ShapeString())
	}
	if W != nil && (len(W.Shape) != 1 || W.Shape[0] != C) {
		return n.Errorf("weight shape %s, want [%d]", W.ShapeString(), C)
	}
	hasIgnore := n.Attrs.Has("ignore_index")
	ignore := n.Attrs.Int("ignore_index", 0)
	red := n.Attrs.String("reduction", "mean")
	out := n.Out[0]
	switch red {
	case "none":
		s := miscScr[float64](n).getInts(0, len(T.Shape))
		copy(s, T.Shape)
		out.Resize(X.DType, s...)
	case "sum", "mean":
		out.Resize(X.DType)
	default:
		return n.Errorf("reduction %q: want none, sum or mean", red)
	}
	var sum, wsum float64
	for b := 0; b < N; b++ {
		for d := 0; d < D; d++ {
			i := b*D + d
			t := ewI64At(T, i)
			var loss, w float64
			if !hasIgnore || t != ignore {
				if t < 0 || t >= int64(C) {
					return n.Errorf("target %d at element %d is outside [0, %d)", t, i, C)
				}
				w = 1
				if W != nil {
					w = ewF64At(W, int(t))
				}
				j := (b*C+int(t))*D + d
				if lp != nil {
					loss = -lp[j] * w
				} else {
					loss = -ewF64At(X, j) * w
				}
			}
			if red == "none" {
				ewSetF64(out, i, loss)
			}
			sum += loss
			wsum += w
		}
	}
	switch red {
	case "sum":
		ewSetF64(out, 0, sum)
	case "mean":
		ewSetF64(out, 0, sum/wsum)
	}
	return nil
}
