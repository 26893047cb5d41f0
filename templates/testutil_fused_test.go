package templates

import (
	"math"
	"testing"
)

// The fused kernels are checked against the unfused kernels composed
// (Conv, Add, Relu, ...) run in float64 on the same random data, so the
// reference carries no float32 rounding of its own.

// fusedActCase is one activation with its ONNX spelling for the reference.
type fusedActCase struct {
	name   string
	params []float32
}

var fusedActCases = []fusedActCase{
	{"", nil},
	{"Relu", nil},
	{"Clip", []float32{-0.5, 1.5}},
	{"LeakyRelu", []float32{0.2}},
	{"Sigmoid", nil},
	{"Tanh", nil},
	{"HardSwish", nil},
	{"Gelu", nil},
	{"GeluTanh", nil},
	{"Swish", []float32{1}},
	{"HardSigmoid", []float32{1.0 / 6, 0.5}},
	{"Elu", []float32{0.7}},
	{"Mish", nil},
	{"Swish", []float32{1.5}},
	{"Selu", []float32{1.6732632, 1.050701}},
	{"Celu", []float32{0.8}},
}

func fusedAttrs(a fusedActCase, extra Attrs) Attrs {
	at := Attrs{}
	for k, v := range extra {
		at[k] = v
	}
	if a.name != "" {
		at["activation"] = a.name
	}
	if a.params != nil {
		at["activation_params"] = a.params
	}
	return at
}

// fusedRef64 runs an unfused ai.onnx kernel in float64.
func fusedRef64(t *testing.T, op string, version int, attrs Attrs, in ...*Tensor) *Tensor {
	t.Helper()
	return nnRun(t, op, version, attrs, 1, in...)[0]
}

// fusedRefAct applies the activation the unfused way (its own ONNX node;
// Gelu, which ONNX lacks before opset 20, as Erf/Mul/Add or Tanh/Pow...).
func fusedRefAct(t *testing.T, a fusedActCase, x *Tensor) *Tensor {
	t.Helper()
	switch a.name {
	case "":
		return x
	case "Relu":
		return fusedRef64(t, "Relu", 14, nil, x)
	case "Clip":
		lo, hi := &Tensor{}, &Tensor{}
		lo.Resize(F64)
		hi.Resize(F64)
		lo.F64()[0], hi.F64()[0] = float64(a.params[0]), float64(a.params[1])
		return fusedRef64(t, "Clip", 13, nil, x, lo, hi)
	case "LeakyRelu":
		return fusedRef64(t, "LeakyRelu", 16, Attrs{"alpha": a.params[0]}, x)
	case "Sigmoid", "Tanh":
		return fusedRef64(t, a.name, 13, nil, x)
	case "HardSwish":
		return fusedRef64(t, "HardSwish", 14, nil, x)
	case "Swish":
		return fusedRef64(t, "Swish", 24, Attrs{"alpha": a.params[0]}, x)
	case "HardSigmoid":
		return fusedRef64(t, "HardSigmoid", 6, Attrs{"alpha": a.params[0], "beta": a.params[1]}, x)
	case "Elu", "Celu":
		return fusedRef64(t, a.name, 12, Attrs{"alpha": a.params[0]}, x)
	case "Selu":
		return fusedRef64(t, "Selu", 6, Attrs{"alpha": a.params[0], "gamma": a.params[1]}, x)
	case "Mish":
		return fusedRef64(t, "Mish", 18, nil, x)
	case "Gelu", "GeluTanh":
		y := &Tensor{}
		y.Resize(F64, x.Shape...)
		for i, v := range x.F64() {
			if a.name == "Gelu" {
				y.F64()[i] = v * 0.5 * (1 + math.Erf(v/math.Sqrt2))
			} else {
				y.F64()[i] = 0.5 * v * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(v+0.044715*math.Pow(v, 3))))
			}
		}
		return y
	}
	t.Fatalf("unknown activation %q", a.name)
	return nil
}

func f64(t *Tensor) *Tensor { return nnAs(t, F64) }
