//go:build arm64 && !purego

package templates

// nhwcPWFast reports whether the NEON tiles (asm_pw_arm64.s, up to 6 rows
// by 16 columns) run; else NHWC convolutions take the packed SGEMM driver.
var nhwcPWFast = cpuHasASIMD

// nhwcPWTileShape is the largest tile: rows, and panels of 16 columns.
func nhwcPWTileShape() (rows, panels int) {
	if nhwcPWFast {
		return nhwcPWNEONRows, 1
	}
	return nhwcPWMaxRows, 2
}

// nhwcPWNEONRows is the tallest NEON tile (24 accumulators).
const nhwcPWNEONRows = 6

type (
	nhwcPWKernelNEON     func(k int, a *float32, lda int, b *float32, c *float32, ldc int, bias, z *float32, lo, hi float32, flags int)
	nhwcPWOffsKernelNEON func(k int, a *float32, lda int, offs *int, b *float32, c *float32, ldc int, bias, z *float32, lo, hi float32, flags int)
)

// The generated tiles by rows (1..6) and vectors of 4 columns (1..4) of
// one 16-column panel.
var (
	nhwcPWKernelsNEON = [nhwcPWNEONRows][4]nhwcPWKernelNEON{
		{nhwcPW1x4NEON, nhwcPW1x8NEON, nhwcPW1x12NEON, nhwcPW1x16NEON},
		{nhwcPW2x4NEON, nhwcPW2x8NEON, nhwcPW2x12NEON, nhwcPW2x16NEON},
		{nhwcPW3x4NEON, nhwcPW3x8NEON, nhwcPW3x12NEON, nhwcPW3x16NEON},
		{nhwcPW4x4NEON, nhwcPW4x8NEON, nhwcPW4x12NEON, nhwcPW4x16NEON},
		{nhwcPW5x4NEON, nhwcPW5x8NEON, nhwcPW5x12NEON, nhwcPW5x16NEON},
		{nhwcPW6x4NEON, nhwcPW6x8NEON, nhwcPW6x12NEON, nhwcPW6x16NEON},
	}
	nhwcPWOffsKernelsNEON = [nhwcPWNEONRows][4]nhwcPWOffsKernelNEON{
		{nhwcPWOffs1x4NEON, nhwcPWOffs1x8NEON, nhwcPWOffs1x12NEON, nhwcPWOffs1x16NEON},
		{nhwcPWOffs2x4NEON, nhwcPWOffs2x8NEON, nhwcPWOffs2x12NEON, nhwcPWOffs2x16NEON},
		{nhwcPWOffs3x4NEON, nhwcPWOffs3x8NEON, nhwcPWOffs3x12NEON, nhwcPWOffs3x16NEON},
		{nhwcPWOffs4x4NEON, nhwcPWOffs4x8NEON, nhwcPWOffs4x12NEON, nhwcPWOffs4x16NEON},
		{nhwcPWOffs5x4NEON, nhwcPWOffs5x8NEON, nhwcPWOffs5x12NEON, nhwcPWOffs5x16NEON},
		{nhwcPWOffs6x4NEON, nhwcPWOffs6x8NEON, nhwcPWOffs6x12NEON, nhwcPWOffs6x16NEON},
	}
)

// nhwcPWTile runs one tile (see nhwcPWTileGo) through its NEON kernel when
// nhwcPWFast and the shape is one nhwcPWTileShape allows, else the twin.
// nhwcPWGemm checks the bounds of every access beforehand: the kernels
// read through raw pointers. The last panel of M not a multiple of 16 runs
// the kernel of its width when n is a multiple of 4 (24 channels: a 16-
// and an 8-column tile), else the next wider one into a local tile and
// its epilogue here on the n columns, so nothing past them is read or
// written. pf (a prefetch hint) is unused.
func nhwcPWTile(rows, panels, k int, a []float32, lda int, offs []int, b []float32, bstride int, pf, c []float32, ldc int, bias, z []float32, lo, hi float32, flags, n int) {
	if !nhwcPWFast || k <= 0 || panels != 1 || rows < 1 || rows > nhwcPWNEONRows || n < 1 || n > sgemmPkNR {
		nhwcPWTileGo(rows, panels, k, a, lda, offs, b, bstride, c, ldc, bias, z, lo, hi, flags, n)
		return
	}
	_ = b[k*sgemmPkNR-1]
	if n%4 != 0 {
		var t [nhwcPWNEONRows * sgemmPkNR]float32
		nhwcPWTileNEON(rows, (n+3)/4, k, a, lda, offs, b, t[:], sgemmPkNR, nil, nil, 0, 0, 0)
		for r := 0; r < rows; r++ {
			for j := 0; j < n; j++ {
				v := t[r*sgemmPkNR+j]
				o := r*ldc + j
				if flags&nhwcPWAccum != 0 {
					v += c[o]
				}
				if flags&nhwcPWBias != 0 {
					v += bias[j]
				}
				if flags&nhwcPWZ != 0 {
					v += z[o]
				}
				if flags&nhwcPWClamp != 0 {
					v = min(max(v, lo), hi)
				}
				c[o] = v
			}
		}
		return
	}
	_ = c[(rows-1)*ldc+n-1]
	if flags&nhwcPWBias != 0 {
		_ = bias[n-1]
	}
	if flags&nhwcPWZ != 0 {
		_ = z[(rows-1)*ldc+n-1]
	}
	nhwcPWTileNEON(rows, n/4, k, a, lda, offs, b, c, ldc, bias, z, lo, hi, flags)
}

// nhwcPWTileNEON calls the kernel of rows x 4*nv.
func nhwcPWTileNEON(rows, nv, k int, a []float32, lda int, offs []int, b, c []float32, ldc int, bias, z []float32, lo, hi float32, flags int) {
	var bp, zp *float32
	if bias != nil {
		bp = &bias[0]
	}
	if z != nil {
		zp = &z[0]
	}
	if offs == nil {
		nhwcPWKernelsNEON[rows-1][nv-1](k, &a[0], lda, &b[0], &c[0], ldc, bp, zp, lo, hi, flags)
		return
	}
	nhwcPWOffsKernelsNEON[rows-1][nv-1](k, &a[0], lda, &offs[0], &b[0], &c[0], ldc, bp, zp, lo, hi, flags)
}
