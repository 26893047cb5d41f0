//go:build !(amd64 || arm64) || purego

package templates

// The activation rows without assembly: their pure-Go twins (k_elem_act.go).

func sigmoid32(y []float32) { sigmoidGo(y) }

func silu32(y []float32) { siluGo(y) }

func hardSwish32(y []float32) { hardSwishGo(y) }

func exp32(y []float32) { expGo(y) }

func tanh32(y []float32) { tanhGo(y) }

func geluTanh32(y []float32) { geluTanhGo(y) }

func mish32(y []float32) { mishGo(y) }

func elu32(y []float32, alpha float32) { eluGo(y, alpha) }

func hardSigmoid32(y []float32, alpha, beta float32) { hardSigmoidGo(y, alpha, beta) }

func leakyRelu32(y []float32, alpha float32) { leakyReluGo(y, alpha) }

func prelu32(y, s []float32) { preluGo(y, s) }
