//go:build amd64 && !purego

package templates

// The bf16 GEMM tiles with AVX512_BF16 (asm_bf16_amd64.s, from
// asmgen/amd64/bf16). Other CPUs run the pure-Go tile.

// cpuHasAVX512BF16 reports AVX512_BF16 (CPUID 7.1 EAX bit 5) on top of
// AVX-512.
var cpuHasAVX512BF16 = cpuHasAVX512 && detectAVX512BF16()

func detectAVX512BF16() bool {
	if maxLeaf, _, _, _ := cpuidAsm(0, 0); maxLeaf < 7 {
		return false
	}
	if sub, _, _, _ := cpuidAsm(7, 0); sub < 1 {
		return false
	}
	eax, _, _, _ := cpuidAsm(7, 1)
	return eax&(1<<5) != 0
}

// bf16Tiles holds the tiles by [rows-1][panels-1].
var bf16Tiles = [bf16MR][bf16TW / bf16NR]func(k2 int, a *uint16, lda int, b *uint16, bstride int, acc *float32){
	{bf16gemm1x16, bf16gemm1x32, bf16gemm1x48, bf16gemm1x64},
	{bf16gemm2x16, bf16gemm2x32, bf16gemm2x48, bf16gemm2x64},
	{bf16gemm3x16, bf16gemm3x32, bf16gemm3x48, bf16gemm3x64},
	{bf16gemm4x16, bf16gemm4x32, bf16gemm4x48, bf16gemm4x64},
	{bf16gemm5x16, bf16gemm5x32, bf16gemm5x48, bf16gemm5x64},
	{bf16gemm6x16, bf16gemm6x32, bf16gemm6x48, bf16gemm6x64},
}

// bf16Tile runs the tile of rows x 16*panels (bf16TileGo's contract; lda
// and bstride in uint16s).
func bf16Tile(a []uint16, lda, rows int, b []uint16, bstride, panels, k2 int, acc *[bf16MR * bf16TW]float32) {
	if !cpuHasAVX512BF16 || k2 == 0 {
		bf16TileGo(a, lda, rows, b, bstride, panels, k2, acc)
		return
	}
	_ = a[(rows-1)*lda+k2*2-1]
	_ = b[(panels-1)*bstride+k2*2*bf16NR-1]
	bf16Tiles[rows-1][panels-1](k2, &a[0], 2*lda, &b[0], 2*bstride, &acc[0])
}

// bf16HasAsm reports whether bf16Tile runs the assembly tiles.
func bf16HasAsm() bool { return cpuHasAVX512BF16 }
