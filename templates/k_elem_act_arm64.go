//go:build arm64 && !purego

package templates

// The dispatch of the activation rows (k_elem_act.go) on arm64: the NEON
// kernels (asmgen/arm64/vec, asm_vec_arm64.s) on the largest multiple of 4
// elements, and the last n%4 padded into a local vector that runs through
// the same kernel, so an element's bits do not depend on where a row, an
// element-wise chunk or a thread's part ends. The kernels take the Go
// twins' steps with single-rounding FMAs, as the twins' fma32 rounds: the
// same bits (k_elem_act_impl_test.go, TestActivationRowsExactTwin).

// actNEON reports whether the rows take the NEON kernels (the generated
// packages' TestNEONDispatch checks it).
var actNEON = cpuHasASIMD

// The kernels of actRowNEON.
const (
	actKSigmoid = iota
	actKSilu
	actKHardSwish
	actKExp
	actKTanh
	actKGeluTanh
	actKMish
	actKElu
	actKHardSigmoid
	actKLeakyRelu
)

// actRowNEON runs kernel k (alpha, beta its parameters) on y: the body in
// place, the tail through a padded vector. The calls are direct (a func
// value would make y and the local vector escape: an allocation per row).
func actRowNEON(y []float32, k int, alpha, beta float32) {
	n := len(y)
	nv := n &^ 3
	if nv > 0 {
		actKernelNEON(&y[0], nv, k, alpha, beta)
	}
	if nv < n {
		var t [4]float32
		copy(t[:], y[nv:])
		actKernelNEON(&t[0], 4, k, alpha, beta)
		copy(y[nv:], t[:])
	}
}

func actKernelNEON(p *float32, n, k int, alpha, beta float32) {
	switch k {
	case actKSigmoid:
		sigmoidNEON(p, n)
	case actKSilu:
		siluNEON(p, n)
	case actKHardSwish:
		hardSwishNEON(p, n)
	case actKExp:
		expNEON(p, n)
	case actKTanh:
		tanhNEON(p, n)
	case actKGeluTanh:
		geluTanhNEON(p, n)
	case actKMish:
		mishNEON(p, n)
	case actKElu:
		eluNEON(p, n, alpha)
	case actKHardSigmoid:
		hardSigmoidNEON(p, n, alpha, beta)
	case actKLeakyRelu:
		leakyReluNEON(p, n, alpha)
	}
}

// sigmoid32 sets y[i] = sigmoid(y[i]).
func sigmoid32(y []float32) {
	if !actNEON {
		sigmoidGo(y)
		return
	}
	actRowNEON(y, actKSigmoid, 0, 0)
}

// silu32 sets y[i] = y[i] * sigmoid(y[i]).
func silu32(y []float32) {
	if !actNEON {
		siluGo(y)
		return
	}
	actRowNEON(y, actKSilu, 0, 0)
}

// hardSwish32 sets y[i] = HardSwish(y[i]).
func hardSwish32(y []float32) {
	if !actNEON {
		hardSwishGo(y)
		return
	}
	actRowNEON(y, actKHardSwish, 0, 0)
}

// exp32 sets y[i] = exp(y[i]).
func exp32(y []float32) {
	if !actNEON {
		expGo(y)
		return
	}
	actRowNEON(y, actKExp, 0, 0)
}

// tanh32 sets y[i] = tanh(y[i]).
func tanh32(y []float32) {
	if !actNEON {
		tanhGo(y)
		return
	}
	actRowNEON(y, actKTanh, 0, 0)
}

// geluTanh32 sets y[i] = GELU (tanh form) of y[i].
func geluTanh32(y []float32) {
	if !actNEON {
		geluTanhGo(y)
		return
	}
	actRowNEON(y, actKGeluTanh, 0, 0)
}

// mish32 sets y[i] = Mish(y[i]).
func mish32(y []float32) {
	if !actNEON {
		mishGo(y)
		return
	}
	actRowNEON(y, actKMish, 0, 0)
}

// elu32 sets y[i] = Elu(y[i]) with alpha.
func elu32(y []float32, alpha float32) {
	if !actNEON {
		eluGo(y, alpha)
		return
	}
	actRowNEON(y, actKElu, alpha, 0)
}

// hardSigmoid32 sets y[i] = HardSigmoid(y[i]) with alpha and beta.
func hardSigmoid32(y []float32, alpha, beta float32) {
	if !actNEON {
		hardSigmoidGo(y, alpha, beta)
		return
	}
	actRowNEON(y, actKHardSigmoid, alpha, beta)
}

// leakyRelu32 sets y[i] = alpha*y[i] where y[i] < 0.
func leakyRelu32(y []float32, alpha float32) {
	if !actNEON {
		leakyReluGo(y, alpha)
		return
	}
	actRowNEON(y, actKLeakyRelu, alpha, 0)
}

// prelu32 sets y[i] = s[i]*y[i] where y[i] < 0 (len(s) >= len(y)).
func prelu32(y, s []float32) {
	if !actNEON || len(y) == 0 {
		preluGo(y, s)
		return
	}
	s = s[:len(y)]
	n := len(y)
	nv := n &^ 3
	if nv > 0 {
		preluNEON(&y[0], &s[0], nv)
	}
	if nv < n {
		var t, u [4]float32
		copy(t[:], y[nv:])
		copy(u[:], s[nv:])
		preluNEON(&t[0], &u[0], 4)
		copy(y[nv:], t[:])
	}
}
