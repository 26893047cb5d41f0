//go:build amd64 && !purego

package templates

// The dispatch of the activation rows (k_elem_act.go): the AVX-512
// kernels on the whole row (their tail is masked), else the Go twins.

// sigmoid32 sets y[i] = sigmoid(y[i]).
func sigmoid32(y []float32) {
	if cpuHasAVX512 && len(y) > 0 {
		sigmoidAVX512(&y[0], len(y))
		return
	}
	sigmoidGo(y)
}

// silu32 sets y[i] = y[i] * sigmoid(y[i]).
func silu32(y []float32) {
	if cpuHasAVX512 && len(y) > 0 {
		siluAVX512(&y[0], len(y))
		return
	}
	siluGo(y)
}

// hardSwish32 sets y[i] = HardSwish(y[i]).
func hardSwish32(y []float32) {
	if cpuHasAVX512 && len(y) > 0 {
		hardSwishAVX512(&y[0], len(y))
		return
	}
	hardSwishGo(y)
}

// exp32 sets y[i] = exp(y[i]).
func exp32(y []float32) {
	if cpuHasAVX512 && len(y) > 0 {
		expAVX512(&y[0], len(y))
		return
	}
	expGo(y)
}

// tanh32 sets y[i] = tanh(y[i]).
func tanh32(y []float32) {
	if cpuHasAVX512 && len(y) > 0 {
		tanhAVX512(&y[0], len(y))
		return
	}
	tanhGo(y)
}

// geluTanh32 sets y[i] = GELU (tanh form) of y[i].
func geluTanh32(y []float32) {
	if cpuHasAVX512 && len(y) > 0 {
		geluTanhAVX512(&y[0], len(y))
		return
	}
	geluTanhGo(y)
}

// mish32 sets y[i] = Mish(y[i]).
func mish32(y []float32) {
	if cpuHasAVX512 && len(y) > 0 {
		mishAVX512(&y[0], len(y))
		return
	}
	mishGo(y)
}

// elu32 sets y[i] = Elu(y[i]) with alpha.
func elu32(y []float32, alpha float32) {
	if cpuHasAVX512 && len(y) > 0 {
		eluAVX512(&y[0], len(y), alpha)
		return
	}
	eluGo(y, alpha)
}

// hardSigmoid32 sets y[i] = HardSigmoid(y[i]) with alpha and beta.
func hardSigmoid32(y []float32, alpha, beta float32) {
	if cpuHasAVX512 && len(y) > 0 {
		hardSigmoidAVX512(&y[0], len(y), alpha, beta)
		return
	}
	hardSigmoidGo(y, alpha, beta)
}

// leakyRelu32 sets y[i] = alpha*y[i] where y[i] < 0.
func leakyRelu32(y []float32, alpha float32) {
	if cpuHasAVX512 && len(y) > 0 {
		leakyReluAVX512(&y[0], len(y), alpha)
		return
	}
	leakyReluGo(y, alpha)
}

// prelu32 sets y[i] = s[i]*y[i] where y[i] < 0 (len(s) >= len(y)).
func prelu32(y, s []float32) {
	if cpuHasAVX512 && len(y) > 0 {
		s = s[:len(y)]
		preluAVX512(&y[0], &s[0], len(y))
		return
	}
	preluGo(y, s)
}
