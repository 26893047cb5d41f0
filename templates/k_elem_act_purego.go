//go:build !amd64 || purego

package templates

// The activation rows without assembly: their pure-Go twins (k_elem_act.go).

func sigmoid32(y []float32) { sigmoidGo(y) }

func silu32(y []float32) { siluGo(y) }

func hardSwish32(y []float32) { hardSwishGo(y) }
