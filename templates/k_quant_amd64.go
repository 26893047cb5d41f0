//go:build amd64 && !purego

package templates

// quantizeU8Vec stores QuantizeLinear's per-tensor f32 -> u8 bytes y[i]
// for i below the largest multiple of 8 <= len(x) with the AVX2 loop
// (asm_q8_amd64.s, quantizeU8AVX2: the Go loop's bytes) and returns that
// count; 0 without AVX2 or when z is not an integer in [0, 255].
func quantizeU8Vec(x []float32, s float32, z float64, y []uint8) int {
	n := len(x) &^ 7
	if !cpuHasAVX2FMA || n == 0 || z != float64(int(z)) || z < 0 || z > 255 {
		return 0
	}
	_ = y[n-1]
	quantizeU8AVX2(n, &x[0], s, float32(z), &y[0])
	return n
}
