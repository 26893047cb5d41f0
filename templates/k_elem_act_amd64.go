//go:build amd64 && !purego

package templates

// The dispatch of the activation rows (k_elem_act.go): the AVX-512
// kernels (act512.go, act512b.go) on the whole row where the CPU has
// AVX-512, else the AVX2+FMA kernels (act256.go), the same steps on 8
// lanes, the tail of each under a lane mask; the Go twins only on CPUs
// without AVX2 and FMA.

// The kernel families of the activation rows.
const (
	actGo = iota
	actAVX2
	actAVX512
)

// actLevelFor is the family the rows take on a CPU with (or without)
// AVX-512 and AVX2+FMA.
func actLevelFor(avx512, avx2fma bool) int {
	switch {
	case avx512:
		return actAVX512
	case avx2fma:
		return actAVX2
	}
	return actGo
}

// actLevel is this CPU's family (TestActivationDispatchAMD64 checks it).
var actLevel = actLevelFor(cpuHasAVX512, cpuHasAVX2FMA)

// sigmoid32 sets y[i] = sigmoid(y[i]).
func sigmoid32(y []float32) {
	switch {
	case len(y) == 0:
	case actLevel == actAVX512:
		sigmoidAVX512(&y[0], len(y))
	case actLevel == actAVX2:
		sigmoidAVX2(&y[0], len(y))
	default:
		sigmoidGo(y)
	}
}

// silu32 sets y[i] = y[i] * sigmoid(y[i]).
func silu32(y []float32) {
	switch {
	case len(y) == 0:
	case actLevel == actAVX512:
		siluAVX512(&y[0], len(y))
	case actLevel == actAVX2:
		siluAVX2(&y[0], len(y))
	default:
		siluGo(y)
	}
}

// hardSwish32 sets y[i] = HardSwish(y[i]).
func hardSwish32(y []float32) {
	switch {
	case len(y) == 0:
	case actLevel == actAVX512:
		hardSwishAVX512(&y[0], len(y))
	case actLevel == actAVX2:
		hardSwishAVX2(&y[0], len(y))
	default:
		hardSwishGo(y)
	}
}

// exp32 sets y[i] = exp(y[i]).
func exp32(y []float32) {
	switch {
	case len(y) == 0:
	case actLevel == actAVX512:
		expAVX512(&y[0], len(y))
	case actLevel == actAVX2:
		expAVX2(&y[0], len(y))
	default:
		expGo(y)
	}
}

// tanh32 sets y[i] = tanh(y[i]).
func tanh32(y []float32) {
	switch {
	case len(y) == 0:
	case actLevel == actAVX512:
		tanhAVX512(&y[0], len(y))
	case actLevel == actAVX2:
		tanhAVX2(&y[0], len(y))
	default:
		tanhGo(y)
	}
}

// geluTanh32 sets y[i] = GELU (tanh form) of y[i].
func geluTanh32(y []float32) {
	switch {
	case len(y) == 0:
	case actLevel == actAVX512:
		geluTanhAVX512(&y[0], len(y))
	case actLevel == actAVX2:
		geluTanhAVX2(&y[0], len(y))
	default:
		geluTanhGo(y)
	}
}

// mish32 sets y[i] = Mish(y[i]).
func mish32(y []float32) {
	switch {
	case len(y) == 0:
	case actLevel == actAVX512:
		mishAVX512(&y[0], len(y))
	case actLevel == actAVX2:
		mishAVX2(&y[0], len(y))
	default:
		mishGo(y)
	}
}

// elu32 sets y[i] = Elu(y[i]) with alpha.
func elu32(y []float32, alpha float32) {
	switch {
	case len(y) == 0:
	case actLevel == actAVX512:
		eluAVX512(&y[0], len(y), alpha)
	case actLevel == actAVX2:
		eluAVX2(&y[0], len(y), alpha)
	default:
		eluGo(y, alpha)
	}
}

// hardSigmoid32 sets y[i] = HardSigmoid(y[i]) with alpha and beta.
func hardSigmoid32(y []float32, alpha, beta float32) {
	switch {
	case len(y) == 0:
	case actLevel == actAVX512:
		hardSigmoidAVX512(&y[0], len(y), alpha, beta)
	case actLevel == actAVX2:
		hardSigmoidAVX2(&y[0], len(y), alpha, beta)
	default:
		hardSigmoidGo(y, alpha, beta)
	}
}

// leakyRelu32 sets y[i] = alpha*y[i] where y[i] < 0.
func leakyRelu32(y []float32, alpha float32) {
	switch {
	case len(y) == 0:
	case actLevel == actAVX512:
		leakyReluAVX512(&y[0], len(y), alpha)
	case actLevel == actAVX2:
		leakyReluAVX2(&y[0], len(y), alpha)
	default:
		leakyReluGo(y, alpha)
	}
}

// prelu32 sets y[i] = s[i]*y[i] where y[i] < 0 (len(s) >= len(y)).
func prelu32(y, s []float32) {
	if len(y) == 0 {
		return
	}
	s = s[:len(y)]
	switch actLevel {
	case actAVX512:
		preluAVX512(&y[0], &s[0], len(y))
	case actAVX2:
		preluAVX2(&y[0], &s[0], len(y))
	default:
		preluGo(y, s)
	}
}
