//go:build amd64 && !purego

package templates

// nhwcPWFast reports whether the tile kernels run (else NHWC convolutions
// take the packed SGEMM driver): AVX-512 ones, or AVX2 ones (6x16 tiles)
// when nhwcPWAVX2 is set.
var (
	nhwcPWFast = cpuHasAVX512 || cpuHasAVX2FMA
	nhwcPWAVX2 = !cpuHasAVX512
)

// nhwcPWTileShape is the largest tile: rows, and panels of 16 columns.
func nhwcPWTileShape() (rows, panels int) {
	if nhwcPWFast && nhwcPWAVX2 {
		return 6, 1
	}
	return nhwcPWMaxRows, 2
}

type (
	nhwcPWKernel     func(k int, a *float32, lda int, b *float32, bstride int, pf *float32, c *float32, ldc int, bias, z *float32, lo, hi float32, flags, n int)
	nhwcPWOffsKernel func(k int, a *float32, lda int, offs *int, b *float32, bstride int, pf *float32, c *float32, ldc int, bias, z *float32, lo, hi float32, flags, n int)
)

// The generated tiles by panels (1, 2) and rows (1..12); AVX2 by rows
// (1..6, one panel).
var (
	nhwcPWKernelsAVX2     = [6]nhwcPWKernel{nhwcPW1x16AVX2, nhwcPW2x16AVX2, nhwcPW3x16AVX2, nhwcPW4x16AVX2, nhwcPW5x16AVX2, nhwcPW6x16AVX2}
	nhwcPWOffsKernelsAVX2 = [6]nhwcPWOffsKernel{nhwcPWOffs1x16AVX2, nhwcPWOffs2x16AVX2, nhwcPWOffs3x16AVX2, nhwcPWOffs4x16AVX2, nhwcPWOffs5x16AVX2, nhwcPWOffs6x16AVX2}

	nhwcPWKernels = [2][nhwcPWMaxRows]nhwcPWKernel{
		{nhwcPW1x16AVX512, nhwcPW2x16AVX512, nhwcPW3x16AVX512, nhwcPW4x16AVX512, nhwcPW5x16AVX512, nhwcPW6x16AVX512,
			nhwcPW7x16AVX512, nhwcPW8x16AVX512, nhwcPW9x16AVX512, nhwcPW10x16AVX512, nhwcPW11x16AVX512, nhwcPW12x16AVX512},
		{nhwcPW1x32AVX512, nhwcPW2x32AVX512, nhwcPW3x32AVX512, nhwcPW4x32AVX512, nhwcPW5x32AVX512, nhwcPW6x32AVX512,
			nhwcPW7x32AVX512, nhwcPW8x32AVX512, nhwcPW9x32AVX512, nhwcPW10x32AVX512, nhwcPW11x32AVX512, nhwcPW12x32AVX512},
	}
	nhwcPWOffsKernels = [2][nhwcPWMaxRows]nhwcPWOffsKernel{
		{nhwcPWOffs1x16AVX512, nhwcPWOffs2x16AVX512, nhwcPWOffs3x16AVX512, nhwcPWOffs4x16AVX512, nhwcPWOffs5x16AVX512, nhwcPWOffs6x16AVX512,
			nhwcPWOffs7x16AVX512, nhwcPWOffs8x16AVX512, nhwcPWOffs9x16AVX512, nhwcPWOffs10x16AVX512, nhwcPWOffs11x16AVX512, nhwcPWOffs12x16AVX512},
		{nhwcPWOffs1x32AVX512, nhwcPWOffs2x32AVX512, nhwcPWOffs3x32AVX512, nhwcPWOffs4x32AVX512, nhwcPWOffs5x32AVX512, nhwcPWOffs6x32AVX512,
			nhwcPWOffs7x32AVX512, nhwcPWOffs8x32AVX512, nhwcPWOffs9x32AVX512, nhwcPWOffs10x32AVX512, nhwcPWOffs11x32AVX512, nhwcPWOffs12x32AVX512},
	}
)

// nhwcPWTile runs one tile (see nhwcPWTileGo) through its kernel when
// nhwcPWFast (a shape nhwcPWTileShape allows), else the twin. nhwcPWGemm checks the bounds of every
// access beforehand: the kernels read through raw pointers. The kernel
// prefetches one cache line into L2 per two k steps from pf[0] on (a hint:
// it may run past pf's end).
func nhwcPWTile(rows, panels, k int, a []float32, lda int, offs []int, b []float32, bstride int, pf, c []float32, ldc int, bias, z []float32, lo, hi float32, flags, n int) {
	if !nhwcPWFast || k <= 0 {
		nhwcPWTileGo(rows, panels, k, a, lda, offs, b, bstride, c, ldc, bias, z, lo, hi, flags, n)
		return
	}
	bp, zp, pp := (*float32)(nil), (*float32)(nil), &b[0]
	if len(pf) > 0 {
		pp = &pf[0]
	}
	if bias != nil {
		bp = &bias[0]
	}
	if z != nil {
		zp = &z[0]
	} else {
		zp = &c[0] // nhwcPWPrefetch reads it
	}
	switch {
	case nhwcPWAVX2 && offs == nil:
		nhwcPWKernelsAVX2[rows-1](k, &a[0], lda, &b[0], bstride, pp, &c[0], ldc, bp, zp, lo, hi, flags, n)
	case nhwcPWAVX2:
		nhwcPWOffsKernelsAVX2[rows-1](k, &a[0], lda, &offs[0], &b[0], bstride, pp, &c[0], ldc, bp, zp, lo, hi, flags, n)
	case offs == nil:
		nhwcPWKernels[panels-1][rows-1](k, &a[0], lda, &b[0], bstride, pp, &c[0], ldc, bp, zp, lo, hi, flags, n)
	default:
		nhwcPWOffsKernels[panels-1][rows-1](k, &a[0], lda, &offs[0], &b[0], bstride, pp, &c[0], ldc, bp, zp, lo, hi, flags, n)
	}
}
