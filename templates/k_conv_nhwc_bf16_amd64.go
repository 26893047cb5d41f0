//go:build amd64 && !purego

package templates

// The bf16 convolutions' tiles and converter (asm_bf16_amd64.s) where
// the CPU has AVX512_BF16; k_conv_nhwc_bf16_purego.go elsewhere.

// bf16PWTiles holds the convolution tiles by [rows-1][panels-1].
var bf16PWTiles = [bf16MR][bf16TW / bf16NR]func(k2 int, a *uint16, lda int, b *uint16, bstride int, c *float32, ldc int, bias, z *float32, lo, hi float32, flags, n int){
	{bf16pw1x16, bf16pw1x32, bf16pw1x48, bf16pw1x64},
	{bf16pw2x16, bf16pw2x32, bf16pw2x48, bf16pw2x64},
	{bf16pw3x16, bf16pw3x32, bf16pw3x48, bf16pw3x64},
	{bf16pw4x16, bf16pw4x32, bf16pw4x48, bf16pw4x64},
	{bf16pw5x16, bf16pw5x32, bf16pw5x48, bf16pw5x64},
	{bf16pw6x16, bf16pw6x32, bf16pw6x48, bf16pw6x64},
}

// bf16PWTile runs a convolution tile (bf16PWTileGo's contract; lda and
// bstride in uint16s) through its kernel where the CPU has AVX512_BF16.
// nhwcBF16Gemm checks the bounds beforehand: the kernels read through raw
// pointers.
func bf16PWTile(rows, panels, k2 int, a []uint16, lda int, b []uint16, bstride int, c []float32, ldc int, bias, z []float32, lo, hi float32, flags, n int) {
	if !cpuHasAVX512BF16 || k2 == 0 {
		bf16PWTileGo(rows, panels, k2, a, lda, b, bstride, c, ldc, bias, z, lo, hi, flags, n)
		return
	}
	_ = a[(rows-1)*lda+k2*2-1]
	_ = b[(panels-1)*bstride+k2*2*bf16NR-1]
	_ = c[(rows-1)*ldc+(panels-1)*bf16NR+n-1]
	bp, zp := (*float32)(nil), (*float32)(nil)
	if flags&nhwcPWBias != 0 {
		_ = bias[(panels-1)*bf16NR+n-1]
		bp = &bias[0]
	}
	if flags&nhwcPWZ != 0 {
		_ = z[(rows-1)*ldc+(panels-1)*bf16NR+n-1]
		zp = &z[0]
	}
	bf16PWTiles[rows-1][panels-1](k2, &a[0], 2*lda, &b[0], 2*bstride, &c[0], ldc, bp, zp, lo, hi, flags, n)
}

// bf16RoundRow rounds src to bf16 into dst (bf16Round; VCVTNEPS2BF16 16
// at a time where the CPU has AVX512_BF16).
func bf16RoundRow(dst []uint16, src []float32) {
	n16 := len(src) / 16
	if !cpuHasAVX512BF16 || n16 == 0 {
		bf16RoundRowGo(dst, src)
		return
	}
	_ = dst[len(src)-1]
	bf16cvt(&dst[0], &src[0], n16)
	bf16RoundRowGo(dst[16*n16:], src[16*n16:])
}
