package templates

import "math"

// The float64 activation functions (x, then up to two parameters) and the
// map loop that the unfused element-wise kernels (k_elem_math.go,
// k_elem_bitwise.go) and the fused epilogues (k_epilogue.go) share, so a
// fused activation has its ONNX node's bits; in a file of their own so
// that a model with fused activations does not copy the element-wise
// kernels, nor they the epilogues.

// ewMapF sets out[k] = f(in[k], p, q), computed in float64.
func ewMapF[T ewNum](out, in []T, f func(x, p, q float64) float64, p, q float64) {
	in = in[:len(out)]
	for k, v := range in {
		out[k] = T(f(float64(v), p, q))
	}
}

// actSoftplus64 is log(1 + e^x), x itself above 30.
func actSoftplus64(x float64) float64 {
	if x > 30 {
		return x
	}
	return math.Log1p(math.Exp(x))
}

// actSwish64 is x*sigmoid(a*x) (SiLU for a = 1).
func actSwish64(x, a, _ float64) float64 {
	z := a * x
	if z >= 0 {
		return x / (1 + math.Exp(-z))
	}
	e := math.Exp(z)
	return x * e / (1 + e)
}

// actHardSigmoid64 is max(0, min(1, a*x + b)).
func actHardSigmoid64(x, a, b float64) float64 { return math.Max(0, math.Min(1, a*x+b)) }

// actElu64 is x, or a*(e^x - 1) below 0.
func actElu64(x, a, _ float64) float64 {
	if x < 0 {
		return a * (math.Exp(x) - 1)
	}
	return x
}

// actSelu64 is g*x, or g*a*(e^x - 1) at or below 0.
func actSelu64(x, a, g float64) float64 {
	if x <= 0 {
		return g * a * (math.Exp(x) - 1)
	}
	return g * x
}

// actCelu64 is max(0, x) + min(0, a*(e^(x/a) - 1)).
func actCelu64(x, a, _ float64) float64 {
	return math.Max(0, x) + math.Min(0, a*(math.Exp(x/a)-1))
}

// actMish64 is x*tanh(softplus(x)).
func actMish64(x, _, _ float64) float64 { return x * math.Tanh(actSoftplus64(x)) }
