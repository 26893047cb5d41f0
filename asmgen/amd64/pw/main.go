// Command pw generates the AVX-512 kernels of package templates that run
// NHWC convolutions as a GEMM with A read in place (no packing): pointwise
// convolutions, whose A is the activation [pixels, C] as it is, and
// convolutions reading an NCHW image through a table of tap offsets (the
// model's first convolution, whose input Transpose the layout pass folds
// into it). Tiles are up to 12 rows by 16 or 32 columns, so layers with 16
// or 24 output channels do not run masked 6x32 tiles, and the bias, the
// residual and a clamp run in the kernel's epilogue. Their pure-Go twin is
// nhwcPWTileGo in templates/k_nhwc_pw.go, the test reference.
//
//	go generate ./asmgen/amd64/pw
package main

//go:generate go run . -pkg templates -out ../../../templates/asm_pw_amd64.s -stubs ../../../templates/asm_pw_amd64.go

import (
	"fmt"
	"math/bits"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

const (
	maxRows = 12 // rows of the largest tile: 24 accumulators for 32 columns
	lanes   = 16 // float32 lanes in a ZMM register (one B panel)
	unroll  = 4  // k steps per iteration of the main loop
)

// Epilogue flags (templates: nhwcPWAccum ...).
const (
	flagAccum = 1 << iota // add C (the sums of earlier k blocks)
	flagBias              // add bias[j]
	flagZ                 // add z (residual, row stride ldc)
	flagClamp             // min(max(v, lo), hi)
)

func main() {
	ConstraintExpr("amd64,!purego")
	for _, offs := range []bool{false, true} {
		for panels := 1; panels <= 2; panels++ {
			for rows := 1; rows <= maxRows; rows++ {
				kernel(rows, panels, offs)
			}
		}
	}
	Generate()
}

// KernelName is the name of the kernel for a tile of rows x 16*panels,
// reading A linearly or through tap offsets.
func kernelName(rows, panels int, offs bool) string {
	mode := ""
	if offs {
		mode = "Offs"
	}
	return fmt.Sprintf("nhwcPW%s%dx%dAVX512", mode, rows, lanes*panels)
}

// paramAddr is the stack address of an argument: float arguments are
// broadcast from there (VEX/EVEX loads, never avo's legacy-SSE Load).
func paramAddr(name string) Mem {
	b, err := Param(name).Resolve()
	if err != nil {
		panic(err)
	}
	return b.Addr
}

// kernel emits one tile kernel. For rows r < rows, columns j of the
// panels and k steps p it sums acc[r][j] = sum_p A(r, p) * b[panel][p][j],
// where A(r, p) is a[r*lda+p] (linear) or a[r*lda+offs[p]/4] (offs: byte
// offsets of the taps), b the packed B panels (k steps of 16 values; the
// second panel bstride elements after the first). The epilogue then
// applies the flags in order (C, bias, z, clamp) and stores the tile;
// the last panel's loads and stores are masked to its first n columns.
func kernel(rows, panels int, offs bool) {
	name := kernelName(rows, panels, offs)
	sig := "func(k int, a *float32, lda int, b *float32, bstride int, c *float32, ldc int, bias, z *float32, lo, hi float32, flags, n int)"
	src := "a[r*lda+p]"
	if offs {
		sig = "func(k int, a *float32, lda int, offs *int, b *float32, bstride int, c *float32, ldc int, bias, z *float32, lo, hi float32, flags, n int)"
		src = "a[r*lda+offs[p]/4]"
	}
	TEXT(name, NOSPLIT, sig)
	Doc(
		fmt.Sprintf("%s computes a %dx%d tile of C (row stride ldc) over k steps:", name, rows, lanes*panels),
		fmt.Sprintf("C[r][j] = sum_p %s * B[p][j], B packed panels of 16 columns", src),
		"(panel h at b + h*bstride). flags: 1 adds C, 2 bias[j], 4 z[r*ldc+j], 8 clamps",
		"to [lo, hi]; the last panel touches only its first n columns (1..16).",
		"",
		"Requires: AVX512F, BMI2",
	)
	Pragma("noescape")
	k := Load(Param("k"), GP64())
	a := Load(Param("a"), GP64())
	lda := Load(Param("lda"), GP64())
	SHLQ(U8(2), lda)
	// Rows 0..5 are base + {0, 1, 2, 3, 4, 5}*lda through index registers
	// holding lda, 3*lda and 5*lda; rows 6..11 the same from base + 6*lda.
	var l3, l5, l6 Register
	if rows > 3 {
		l3 = GP64()
		LEAQ(Mem{Base: lda, Index: lda, Scale: 2}, l3)
	}
	if rows > 5 {
		l5 = GP64()
		LEAQ(Mem{Base: lda, Index: lda, Scale: 4}, l5)
	}
	if rows > 6 {
		l6 = GP64()
		LEAQ(Mem{Base: l3, Index: l3, Scale: 1}, l6)
	}
	rowAt := func(base, base6 Register, r, disp int) Mem {
		if r >= 6 {
			base, r = base6, r-6
		}
		switch r {
		case 0:
			return Mem{Base: base, Disp: disp}
		case 1, 2, 4:
			return Mem{Base: base, Index: lda, Scale: uint8(r), Disp: disp}
		case 3:
			return Mem{Base: base, Index: l3, Scale: 1, Disp: disp}
		default:
			return Mem{Base: base, Index: l5, Scale: 1, Disp: disp}
		}
	}
	var a6, offp Register
	if offs {
		offp = Load(Param("offs"), GP64())
	} else if rows > 6 {
		a6 = GP64()
		LEAQ(Mem{Base: a, Index: l6, Scale: 1}, a6)
	}
	b0 := Load(Param("b"), GP64())
	var b1 Register
	if panels == 2 {
		b1 = Load(Param("bstride"), GP64())
		LEAQ(Mem{Base: b0, Index: b1, Scale: 4}, b1)
	}

	Comment(fmt.Sprintf("Zero the %d accumulators: acc[r*%d+h] holds row r, panel h.", rows*panels, panels))
	acc := make([]VecVirtual, rows*panels)
	for i := range acc {
		acc[i] = ZMM()
		VPXORD(acc[i], acc[i], acc[i])
	}

	// step emits k step u of the current iteration.
	step := func(u int) {
		base, base6, disp := a, a6, 4*u
		if offs {
			t := GP64()
			MOVQ(Mem{Base: offp, Disp: 8 * u}, t)
			base = GP64()
			LEAQ(Mem{Base: a, Index: t, Scale: 1}, base)
			if rows > 6 {
				base6 = GP64()
				LEAQ(Mem{Base: base, Index: l6, Scale: 1}, base6)
			}
			disp = 0
		}
		v0 := ZMM()
		VMOVUPS(Mem{Base: b0, Disp: 4 * lanes * u}, v0)
		if panels == 1 {
			for r := 0; r < rows; r++ {
				VFMADD231PS_BCST(rowAt(base, base6, r, disp), v0, acc[r])
			}
			return
		}
		v1 := ZMM()
		VMOVUPS(Mem{Base: b1, Disp: 4 * lanes * u}, v1)
		for r := 0; r < rows; r++ {
			t := ZMM()
			VBROADCASTSS(rowAt(base, base6, r, disp), t)
			VFMADD231PS(v0, t, acc[2*r])
			VFMADD231PS(v1, t, acc[2*r+1])
		}
	}
	advance := func(steps int) {
		if offs {
			ADDQ(U32(8*steps), offp)
		} else {
			ADDQ(U32(4*steps), a)
			if rows > 6 {
				ADDQ(U32(4*steps), a6)
			}
		}
		ADDQ(U32(4*lanes*steps), b0)
		if panels == 2 {
			ADDQ(U32(4*lanes*steps), b1)
		}
	}

	Comment("Main loop: unrolled k steps, each a rank-1 update of the tile.")
	iters := GP64()
	MOVQ(k, iters)
	SHRQ(U8(bits.TrailingZeros(unroll)), iters)
	JZ(LabelRef(name + "_tail"))
	Label(name + "_loop")
	for u := 0; u < unroll; u++ {
		step(u)
	}
	advance(unroll)
	DECQ(iters)
	JNZ(LabelRef(name + "_loop"))

	Label(name + "_tail")
	ANDQ(U8(unroll-1), k)
	JZ(LabelRef(name + "_epilogue"))
	Label(name + "_tailloop")
	step(0)
	advance(1)
	DECQ(k)
	JNZ(LabelRef(name + "_tailloop"))

	Label(name + "_epilogue")
	Comment("The last panel's mask: its first n lanes.")
	mask := K()
	{
		n := Load(Param("n"), GP64())
		ones, m := GP64(), GP64()
		MOVQ(U32(0xffff), ones)
		BZHIQ(n, ones, m)
		KMOVW(m.As32(), mask)
	}
	c := Load(Param("c"), GP64())
	ldc := Load(Param("ldc"), GP64())
	SHLQ(U8(2), ldc)
	flags := Load(Param("flags"), GP64())
	// each walks the tile's rows of a matrix with row stride ldc from
	// base, calling f with each vector's address and accumulator; the
	// last panel is masked.
	each := func(base Register, f func(m Mem, acc VecVirtual, masked bool)) {
		p := GP64()
		MOVQ(base, p)
		for r := 0; r < rows; r++ {
			for h := 0; h < panels; h++ {
				f(Mem{Base: p, Disp: 4 * lanes * h}, acc[r*panels+h], h == panels-1)
			}
			if r < rows-1 {
				ADDQ(ldc, p)
			}
		}
	}
	// add adds the vectors of a matrix (C or z) to the accumulators.
	add := func(m Mem, acc VecVirtual, masked bool) {
		if masked {
			t := ZMM()
			VMOVUPS_Z(m, mask, t)
			VADDPS(t, acc, acc)
			return
		}
		VADDPS(m, acc, acc)
	}
	skip := func(flag int, label string) {
		TESTQ(U32(flag), flags)
		JZ(LabelRef(name + label))
	}

	Comment("C: the sums of the earlier k blocks.")
	skip(flagAccum, "_nocarry")
	each(c, add)
	Label(name + "_nocarry")

	Comment("Bias, one vector per panel.")
	skip(flagBias, "_nobias")
	{
		bias := Load(Param("bias"), GP64())
		bv := make([]VecVirtual, panels)
		for h := range bv {
			bv[h] = ZMM()
			if h == panels-1 {
				VMOVUPS_Z(Mem{Base: bias, Disp: 4 * lanes * h}, mask, bv[h])
			} else {
				VMOVUPS(Mem{Base: bias, Disp: 4 * lanes * h}, bv[h])
			}
		}
		for i := range acc {
			VADDPS(bv[i%panels], acc[i], acc[i])
		}
	}
	Label(name + "_nobias")

	Comment("Residual z (row stride ldc).")
	skip(flagZ, "_noz")
	{
		z := Load(Param("z"), GP64())
		each(z, add)
	}
	Label(name + "_noz")

	Comment("Clamp: the value as the second source, so a NaN passes through.")
	skip(flagClamp, "_store")
	{
		lo, hi := ZMM(), ZMM()
		VBROADCASTSS(paramAddr("lo"), lo)
		VBROADCASTSS(paramAddr("hi"), hi)
		for i := range acc {
			VMAXPS(acc[i], lo, acc[i])
			VMINPS(acc[i], hi, acc[i])
		}
	}

	Label(name + "_store")
	each(c, func(m Mem, acc VecVirtual, masked bool) {
		if masked {
			VMOVUPS(acc, mask, m)
			return
		}
		VMOVUPS(acc, m)
	})
	VZEROUPPER()
	RET()
}
