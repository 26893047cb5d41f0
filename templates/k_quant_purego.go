//go:build !amd64 || purego

package templates

// quantizeU8Vec stores nothing here: QuantizeLinear's Go loop does it all
// (k_quant_amd64.go: the AVX2 loop).
func quantizeU8Vec(x []float32, s float32, z float64, y []uint8) int { return 0 }
