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
