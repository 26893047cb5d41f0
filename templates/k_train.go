package templates

import (
	"math"
	"slices"
)

// The optimizers of the ai.onnx.preview.training domain (version 1):
// Adagrad, Adam and Momentum. Each takes the learning rate R (a scalar),
// the step count T (an int64 scalar), then groups of equal length: the
// tensors X..., their gradients G..., and the optimizer state; it writes
// the updated X... and state. Arithmetic is in float64 per element, then
// rounded to the tensors' dtype (f32 or f64).

// trainArgs checks the variadic inputs form groups of k tensors and the
// outputs groups of k-1, and returns the group size, R and T.
func trainArgs(n *Node, k int) (m int, r float64, t int64, err error) {
	if len(n.In) < 2 || n.In[0] == nil || n.In[1] == nil {
		return 0, 0, 0, n.Errorf("want inputs R and T")
	}
	if n.In[0].Len() != 1 || n.In[1].Len() != 1 {
		return 0, 0, 0, n.Errorf("R and T must be scalars, have shapes %s and %s", n.In[0].ShapeString(), n.In[1].ShapeString())
	}
	rest := len(n.In) - 2
	if rest == 0 || rest%k != 0 {
		return 0, 0, 0, n.Errorf("want %d groups of tensors after R and T, have %d inputs", k, rest)
	}
	m = rest / k
	if len(n.Out) != (k-1)*m {
		return 0, 0, 0, n.Errorf("want %d outputs for %d tensors, have %d", (k-1)*m, m, len(n.Out))
	}
	for g := 0; g < m; g++ {
		x := n.In[2+g]
		if x == nil || (x.DType != F32 && x.DType != F64) {
			return 0, 0, 0, n.Errorf("input %d must be a float or double tensor", 2+g)
		}
		for j := 1; j < k; j++ {
			y := n.In[2+j*m+g]
			if y == nil || y.DType != x.DType || !slices.Equal(y.Shape, x.Shape) {
				return 0, 0, 0, n.Errorf("input %d must have input %d's dtype and shape %s", 2+j*m+g, 2+g, x.String())
			}
		}
	}
	return m, ewF64At(n.In[0], 0), ewI64At(n.In[1], 0), nil
}

// Adagrad is ai.onnx.preview.training Adagrad: inputs X..., G..., H...;
// outputs X_new..., H_new....
func Adagrad(n *Node) error {
	m, r, t, err := trainArgs(n, 3)
	if err != nil {
		return err
	}
	decay := float64(n.Attrs.Float("decay_factor", 0))
	eps := float64(n.Attrs.Float("epsilon", 1e-6))
	norm := float64(n.Attrs.Float("norm_coefficient", 0))
	rate := r / (1 + float64(t)*decay)
	for g := 0; g < m; g++ {
		X, G, H := n.In[2+g], n.In[2+m+g], n.In[2+2*m+g]
		Xo, Ho := n.Out[g], n.Out[m+g]
		Xo.Resize(X.DType, X.Shape...)
		Ho.Resize(X.DType, X.Shape...)
		for i, l := 0, X.Len(); i < l; i++ {
			x := ewF64At(X, i)
			gr := norm*x + ewF64At(G, i)
			h := ewF64At(H, i) + gr*gr
			ewSetF64(Ho, i, h)
			ewSetF64(Xo, i, x-rate*gr/(math.Sqrt(h)+eps))
		}
	}
	return nil
}

// Adam is ai.onnx.preview.training Adam: inputs X..., G..., V..., H...;
// outputs X_new..., V_new..., H_new....
func Adam(n *Node) error {
	m, r, t, err := trainArgs(n, 4)
	if err != nil {
		return err
	}
	alpha := float64(n.Attrs.Float("alpha", 0.9))
	beta := float64(n.Attrs.Float("beta", 0.999))
	eps := float64(n.Attrs.Float("epsilon", 1e-6))
	norm := float64(n.Attrs.Float("norm_coefficient", 0))
	post := float64(n.Attrs.Float("norm_coefficient_post", 0))
	rate := r
	if t > 0 { // bias correction of both moments
		rate = r * math.Sqrt(1-math.Pow(beta, float64(t))) / (1 - math.Pow(alpha, float64(t)))
	}
	for g := 0; g < m; g++ {
		X, G, V, H := n.In[2+g], n.In[2+m+g], n.In[2+2*m+g], n.In[2+3*m+g]
		Xo, Vo, Ho := n.Out[g], n.Out[m+g], n.Out[2*m+g]
		Xo.Resize(X.DType, X.Shape...)
		Vo.Resize(X.DType, X.Shape...)
		Ho.Resize(X.DType, X.Shape...)
		for i, l := 0, X.Len(); i < l; i++ {
			x := ewF64At(X, i)
			gr := norm*x + ewF64At(G, i)
			v := alpha*ewF64At(V, i) + (1-alpha)*gr
			h := beta*ewF64At(H, i) + (1-beta)*gr*gr
			ewSetF64(Vo, i, v)
			ewSetF64(Ho, i, h)
			ewSetF64(Xo, i, (1-post)*(x-rate*(v/(math.Sqrt(h)+eps))))
		}
	}
	return nil
}

// Momentum is ai.onnx.preview.training Momentum (mode standard or
// nesterov): inputs X..., G..., V...; outputs X_new..., V_new....
func Momentum(n *Node) error {
	m, r, t, err := trainArgs(n, 3)
	if err != nil {
		return err
	}
	for _, a := range []string{"alpha", "beta", "mode", "norm_coefficient"} {
		if !n.Attrs.Has(a) {
			return n.Errorf("missing attribute %s", a)
		}
	}
	alpha := float64(n.Attrs.Float("alpha", 0))
	beta := float64(n.Attrs.Float("beta", 0))
	norm := float64(n.Attrs.Float("norm_coefficient", 0))
	var nesterov bool
	switch mode := n.Attrs.String("mode", ""); mode {
	case "standard":
	case "nesterov":
		nesterov = true
	default:
		return n.Errorf("mode %q: want standard or nesterov", mode)
	}
	if t <= 0 { // the first step takes the whole gradient
		beta = 1
	}
	for g := 0; g < m; g++ {
		X, G, V := n.In[2+g], n.In[2+m+g], n.In[2+2*m+g]
		Xo, Vo := n.Out[g], n.Out[m+g]
		Xo.Resize(X.DType, X.Shape...)
		Vo.Resize(X.DType, X.Shape...)
		for i, l := 0, X.Len(); i < l; i++ {
			x := ewF64At(X, i)
			gr := norm*x + ewF64At(G, i)
			v := alpha*ewF64At(V, i) + beta*gr
			ewSetF64(Vo, i, v)
			if nesterov {
				ewSetF64(Xo, i, x-r*(gr+alpha*v))
			} else {
				ewSetF64(Xo, i, x-r*v)
			}
		}
	}
	return nil
}
