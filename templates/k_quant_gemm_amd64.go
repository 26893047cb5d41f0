//go:build amd64 && !purego

package templates

// The int8 GEMM tiles with AVX512-VNNI (asm_q8_amd64.s, from
// asmgen/amd64/q8). Other CPUs run the pure-Go tile: an AVX2 path
// (VPMADDUBSW/VPMADDWD, whose 16-bit pair sums saturate for u8 x s8
// unless A is u7 or the pairs are split) and AVX-VNNI tiles are not
// written yet.

// cpuHasVNNI reports AVX512-VNNI (CPUID 7.0 ECX bit 11) on top of AVX-512.
var cpuHasVNNI = detectVNNI()

func detectVNNI() bool {
	_, _, ecx7, _ := cpuidAsm(7, 0)
	return qgemmUseVNNI(cpuHasAVX512, ecx7)
}

// qgemmUseVNNI is the tiles' dispatch rule from the CPUID bits: the
// AVX-512 VNNI tiles need usable AVX-512 (cpuHasAVX512) and AVX512-VNNI,
// CPUID leaf 7.0 ECX bit 11. AVX-VNNI (the VEX form, leaf 7.1 EAX bit 4)
// is neither needed nor enough: AMD Zen 4 has AVX512-VNNI without it,
// Intel Alder Lake AVX-VNNI without AVX-512.
func qgemmUseVNNI(avx512 bool, ecx7 uint32) bool {
	return avx512 && ecx7&cpuidAVX512VNNI != 0
}

// cpuidAVX512VNNI and cpuidAVXVNNI are the feature bits: CPUID 7.0 ECX
// and CPUID 7.1 EAX.
const cpuidAVX512VNNI, cpuidAVXVNNI = 1 << 11, 1 << 4

// qgemmVNNI holds the tiles by [rows-1][panels-1].
var qgemmVNNI = [qgemmMR][qgemmTW / qgemmNR]func(k4 int, a *uint8, lda int, b *int8, bstride int, acc *int32){
	{qgemmVNNI1x16, qgemmVNNI1x32, qgemmVNNI1x48, qgemmVNNI1x64},
	{qgemmVNNI2x16, qgemmVNNI2x32, qgemmVNNI2x48, qgemmVNNI2x64},
	{qgemmVNNI3x16, qgemmVNNI3x32, qgemmVNNI3x48, qgemmVNNI3x64},
	{qgemmVNNI4x16, qgemmVNNI4x32, qgemmVNNI4x48, qgemmVNNI4x64},
	{qgemmVNNI5x16, qgemmVNNI5x32, qgemmVNNI5x48, qgemmVNNI5x64},
	{qgemmVNNI6x16, qgemmVNNI6x32, qgemmVNNI6x48, qgemmVNNI6x64},
}

// qgemmTile runs the tile of rows x 16*panels (qgemmTileGo's contract).
func qgemmTile(a []uint8, lda, rows int, b []int8, bstride, panels, k4 int, acc *[qgemmMR * qgemmTW]int32) {
	if !cpuHasVNNI || k4 == 0 {
		qgemmTileGo(a, lda, rows, b, bstride, panels, k4, acc)
		return
	}
	_ = a[(rows-1)*lda+k4*4-1]
	_ = b[(panels-1)*bstride+k4*64-1]
	qgemmVNNI[rows-1][panels-1](k4, &a[0], lda, &b[0], bstride, &acc[0])
}
