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

// nhwcPWTileNEON calls the kernel of rows x 4*nv. The calls are direct
// (a table of func values would make every pointer escape, and the local
// tile of nhwcPWTile with it: an allocation per narrow tile).
func nhwcPWTileNEON(rows, nv, k int, a []float32, lda int, offs []int, b, c []float32, ldc int, bias, z []float32, lo, hi float32, flags int) {
	var biasp, zp *float32
	if bias != nil {
		biasp = &bias[0]
	}
	if z != nil {
		zp = &z[0]
	}
	ap, bp, cp := &a[0], &b[0], &c[0]
	switch (rows-1)*4 + nv - 1 {
	case 0:
		if offs == nil {
			nhwcPW1x4NEON(k, ap, lda, bp, cp, ldc, biasp, zp, lo, hi, flags)
		} else {
			nhwcPWOffs1x4NEON(k, ap, lda, &offs[0], bp, cp, ldc, biasp, zp, lo, hi, flags)
		}
	case 1:
		if offs == nil {
			nhwcPW1x8NEON(k, ap, lda, bp, cp, ldc, biasp, zp, lo, hi, flags)
		} else {
			nhwcPWOffs1x8NEON(k, ap, lda, &offs[0], bp, cp, ldc, biasp, zp, lo, hi, flags)
		}
	case 2:
		if offs == nil {
			nhwcPW1x12NEON(k, ap, lda, bp, cp, ldc, biasp, zp, lo, hi, flags)
		} else {
			nhwcPWOffs1x12NEON(k, ap, lda, &offs[0], bp, cp, ldc, biasp, zp, lo, hi, flags)
		}
	case 3:
		if offs == nil {
			nhwcPW1x16NEON(k, ap, lda, bp, cp, ldc, biasp, zp, lo, hi, flags)
		} else {
			nhwcPWOffs1x16NEON(k, ap, lda, &offs[0], bp, cp, ldc, biasp, zp, lo, hi, flags)
		}
	case 4:
		if offs == nil {
			nhwcPW2x4NEON(k, ap, lda, bp, cp, ldc, biasp, zp, lo, hi, flags)
		} else {
			nhwcPWOffs2x4NEON(k, ap, lda, &offs[0], bp, cp, ldc, biasp, zp, lo, hi, flags)
		}
	case 5:
		if offs == nil {
			nhwcPW2x8NEON(k, ap, lda, bp, cp, ldc, biasp, zp, lo, hi, flags)
		} else {
			nhwcPWOffs2x8NEON(k, ap, lda, &offs[0], bp, cp, ldc, biasp, zp, lo, hi, flags)
		}
	case 6:
		if offs == nil {
			nhwcPW2x12NEON(k, ap, lda, bp, cp, ldc, biasp, zp, lo, hi, flags)
		} else {
			nhwcPWOffs2x12NEON(k, ap, lda, &offs[0], bp, cp, ldc, biasp, zp, lo, hi, flags)
		}
	case 7:
		if offs == nil {
			nhwcPW2x16NEON(k, ap, lda, bp, cp, ldc, biasp, zp, lo, hi, flags)
		} else {
			nhwcPWOffs2x16NEON(k, ap, lda, &offs[0], bp, cp, ldc, biasp, zp, lo, hi, flags)
		}
	case 8:
		if offs == nil {
			nhwcPW3x4NEON(k, ap, lda, bp, cp, ldc, biasp, zp, lo, hi, flags)
		} else {
			nhwcPWOffs3x4NEON(k, ap, lda, &offs[0], bp, cp, ldc, biasp, zp, lo, hi, flags)
		}
	case 9:
		if offs == nil {
			nhwcPW3x8NEON(k, ap, lda, bp, cp, ldc, biasp, zp, lo, hi, flags)
		} else {
			nhwcPWOffs3x8NEON(k, ap, lda, &offs[0], bp, cp, ldc, biasp, zp, lo, hi, flags)
		}
	case 10:
		if offs == nil {
			nhwcPW3x12NEON(k, ap, lda, bp, cp, ldc, biasp, zp, lo, hi, flags)
		} else {
			nhwcPWOffs3x12NEON(k, ap, lda, &offs[0], bp, cp, ldc, biasp, zp, lo, hi, flags)
		}
	case 11:
		if offs == nil {
			nhwcPW3x16NEON(k, ap, lda, bp, cp, ldc, biasp, zp, lo, hi, flags)
		} else {
			nhwcPWOffs3x16NEON(k, ap, lda, &offs[0], bp, cp, ldc, biasp, zp, lo, hi, flags)
		}
	case 12:
		if offs == nil {
			nhwcPW4x4NEON(k, ap, lda, bp, cp, ldc, biasp, zp, lo, hi, flags)
		} else {
			nhwcPWOffs4x4NEON(k, ap, lda, &offs[0], bp, cp, ldc, biasp, zp, lo, hi, flags)
		}
	case 13:
		if offs == nil {
			nhwcPW4x8NEON(k, ap, lda, bp, cp, ldc, biasp, zp, lo, hi, flags)
		} else {
			nhwcPWOffs4x8NEON(k, ap, lda, &offs[0], bp, cp, ldc, biasp, zp, lo, hi, flags)
		}
	case 14:
		if offs == nil {
			nhwcPW4x12NEON(k, ap, lda, bp, cp, ldc, biasp, zp, lo, hi, flags)
		} else {
			nhwcPWOffs4x12NEON(k, ap, lda, &offs[0], bp, cp, ldc, biasp, zp, lo, hi, flags)
		}
	case 15:
		if offs == nil {
			nhwcPW4x16NEON(k, ap, lda, bp, cp, ldc, biasp, zp, lo, hi, flags)
		} else {
			nhwcPWOffs4x16NEON(k, ap, lda, &offs[0], bp, cp, ldc, biasp, zp, lo, hi, flags)
		}
	case 16:
		if offs == nil {
			nhwcPW5x4NEON(k, ap, lda, bp, cp, ldc, biasp, zp, lo, hi, flags)
		} else {
			nhwcPWOffs5x4NEON(k, ap, lda, &offs[0], bp, cp, ldc, biasp, zp, lo, hi, flags)
		}
	case 17:
		if offs == nil {
			nhwcPW5x8NEON(k, ap, lda, bp, cp, ldc, biasp, zp, lo, hi, flags)
		} else {
			nhwcPWOffs5x8NEON(k, ap, lda, &offs[0], bp, cp, ldc, biasp, zp, lo, hi, flags)
		}
	case 18:
		if offs == nil {
			nhwcPW5x12NEON(k, ap, lda, bp, cp, ldc, biasp, zp, lo, hi, flags)
		} else {
			nhwcPWOffs5x12NEON(k, ap, lda, &offs[0], bp, cp, ldc, biasp, zp, lo, hi, flags)
		}
	case 19:
		if offs == nil {
			nhwcPW5x16NEON(k, ap, lda, bp, cp, ldc, biasp, zp, lo, hi, flags)
		} else {
			nhwcPWOffs5x16NEON(k, ap, lda, &offs[0], bp, cp, ldc, biasp, zp, lo, hi, flags)
		}
	case 20:
		if offs == nil {
			nhwcPW6x4NEON(k, ap, lda, bp, cp, ldc, biasp, zp, lo, hi, flags)
		} else {
			nhwcPWOffs6x4NEON(k, ap, lda, &offs[0], bp, cp, ldc, biasp, zp, lo, hi, flags)
		}
	case 21:
		if offs == nil {
			nhwcPW6x8NEON(k, ap, lda, bp, cp, ldc, biasp, zp, lo, hi, flags)
		} else {
			nhwcPWOffs6x8NEON(k, ap, lda, &offs[0], bp, cp, ldc, biasp, zp, lo, hi, flags)
		}
	case 22:
		if offs == nil {
			nhwcPW6x12NEON(k, ap, lda, bp, cp, ldc, biasp, zp, lo, hi, flags)
		} else {
			nhwcPWOffs6x12NEON(k, ap, lda, &offs[0], bp, cp, ldc, biasp, zp, lo, hi, flags)
		}
	case 23:
		if offs == nil {
			nhwcPW6x16NEON(k, ap, lda, bp, cp, ldc, biasp, zp, lo, hi, flags)
		} else {
			nhwcPWOffs6x16NEON(k, ap, lda, &offs[0], bp, cp, ldc, biasp, zp, lo, hi, flags)
		}
	default:
		panic("templates: nhwcPWTileNEON shape out of range")
	}
}
