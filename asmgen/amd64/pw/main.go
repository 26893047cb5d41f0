// Command pw generates the AVX-512 kernels of package templates that run
// NHWC convolutions as a GEMM with A read in place (no packing): pointwise
// convolutions, whose A is the activation [pixels, C] as it is, and
// convolutions reading an NCHW image through a table of tap offsets (the
// model's first convolution, whose input Transpose the layout pass folds
// into it). AVX-512 tiles are up to 12 rows by 16 or 32 columns, so layers
// with 16 or 24 output channels do not run masked 6x32 tiles; AVX2 tiles
// up to 6 rows by 16 columns. The bias, the residual and a clamp run in
// the kernel's epilogue. Their pure-Go twin is nhwcPWTileGo in
// templates/k_conv_nhwc_pw.go, the test reference.
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
	maxRows = 12 // rows of the largest AVX-512 tile: 24 accumulators for 32 columns
	rows2   = 6  // rows of the largest AVX2 tile: 12 YMM accumulators for 16 columns
	lanes   = 16 // columns of a B panel (one ZMM, two YMM)
	unroll  = 2  // k steps per iteration of the main loop (4: no faster, 1.6x the code)
)

// Epilogue flags (templates: nhwcPWAccum ...).
const (
	flagAccum    = 1 << iota // add C (the sums of earlier k blocks)
	flagBias                 // add bias[j]
	flagZ                    // add z (residual, row stride ldc)
	flagClamp                // min(max(v, lo), hi)
	flagPrefetch             // prefetch the tile's rows of C and z first
)

// maskTab is 16 all-ones int32 then 16 zeros: the AVX2 kernels load the
// lane masks of n columns from 16-n elements in.
var maskTab Mem

func main() {
	ConstraintExpr("amd64,!purego")
	maskTab = GLOBL("nhwcPWMaskTab", RODATA|NOPTR)
	for i := 0; i < 2*lanes; i++ {
		v := uint32(0)
		if i < lanes {
			v = 0xffffffff
		}
		DATA(4*i, U32(v))
	}
	for _, offs := range []bool{false, true} {
		for panels := 1; panels <= 2; panels++ {
			for rows := 1; rows <= maxRows; rows++ {
				kernel(rows, panels, offs, true)
			}
		}
		for rows := 1; rows <= rows2; rows++ {
			kernel(rows, 1, offs, false)
		}
	}
	Generate()
}

// KernelName is the name of the kernel for a tile of rows x 16*panels,
// reading A linearly or through tap offsets.
func kernelName(rows, panels int, offs, avx512 bool) string {
	mode, isa := "", "AVX2"
	if offs {
		mode = "Offs"
	}
	if avx512 {
		isa = "AVX512"
	}
	return fmt.Sprintf("nhwcPW%s%dx%d%s", mode, rows, lanes*panels, isa)
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
// avx512 false: YMM registers, two per panel, masks from maskTab.
func kernel(rows, panels int, offs, avx512 bool) {
	name := kernelName(rows, panels, offs, avx512)
	vec, vp, req := ZMM, 1, "Requires: AVX512F, BMI2"
	if !avx512 {
		vec, vp, req = YMM, 2, "Requires: AVX, AVX2, FMA"
	}
	vb := 4 * lanes / vp // bytes per vector
	sig := "func(k int, a *float32, lda int, b *float32, bstride int, pf *float32, c *float32, ldc int, bias, z *float32, lo, hi float32, flags, n int)"
	src := "a[r*lda+p]"
	if offs {
		sig = "func(k int, a *float32, lda int, offs *int, b *float32, bstride int, pf *float32, c *float32, ldc int, bias, z *float32, lo, hi float32, flags, n int)"
		src = "a[r*lda+offs[p]/4]"
	}
	TEXT(name, NOSPLIT, sig)
	Doc(
		fmt.Sprintf("%s computes a %dx%d tile of C (row stride ldc) over k steps:", name, rows, lanes*panels),
		fmt.Sprintf("C[r][j] = sum_p %s * B[p][j], B packed panels of 16 columns", src),
		"(panel h at b + h*bstride). flags: 1 adds C, 2 bias[j], 4 z[r*ldc+j], 8 clamps",
		"to [lo, hi]; the last panel touches only its first n columns (1..16).",
		"Each iteration of the main loop (2 k steps) prefetches one cache line into",
		"L2 from pf on (the caller's next B panels, streamed from memory). flags 16",
		"prefetches the tile's rows of C and z (then z must be valid) first.",
		"",
		req,
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

	pf := Load(Param("pf"), GP64())
	{
		Comment("flagPrefetch: prefetch the tile's rows of C and z, which the epilogue reads or writes after the k loop.")
		fl := Load(Param("flags"), GP64())
		TESTQ(U32(flagPrefetch), fl)
		JZ(LabelRef(name + "_noprefetch"))
		pc, pz, ldc := Load(Param("c"), GP64()), Load(Param("z"), GP64()), Load(Param("ldc"), GP64())
		SHLQ(U8(2), ldc)
		for r := 0; r < rows; r++ {
			for l := 0; l < panels; l++ {
				PREFETCHT0(Mem{Base: pc, Disp: 64 * l})
				PREFETCHT0(Mem{Base: pz, Disp: 64 * l})
			}
			if r < rows-1 {
				ADDQ(ldc, pc)
				ADDQ(ldc, pz)
			}
		}
		Label(name + "_noprefetch")
	}

	nv := panels * vp // vectors per row
	Comment(fmt.Sprintf("Zero the %d accumulators: acc[r*%d+v] holds row r, vector v.", rows*nv, nv))
	acc := make([]VecVirtual, rows*nv)
	for i := range acc {
		acc[i] = vec()
		if avx512 {
			VPXORD(acc[i], acc[i], acc[i])
		} else {
			VXORPS(acc[i], acc[i], acc[i])
		}
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
		bv := make([]VecVirtual, nv)
		for i := range bv {
			bv[i] = vec()
			bp := b0
			if i >= vp {
				bp = b1
			}
			VMOVUPS(Mem{Base: bp, Disp: 4*lanes*u + vb*(i%vp)}, bv[i])
		}
		if nv == 1 {
			for r := 0; r < rows; r++ {
				VFMADD231PS_BCST(rowAt(base, base6, r, disp), bv[0], acc[r])
			}
			return
		}
		for r := 0; r < rows; r++ {
			t := vec()
			VBROADCASTSS(rowAt(base, base6, r, disp), t)
			for i := range bv {
				VFMADD231PS(bv[i], t, acc[r*nv+i])
			}
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
	PREFETCHT1(Mem{Base: pf})
	ADDQ(U8(64), pf)
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
	var mask OpmaskVirtual
	var maskAt Register // AVX2: the masks' address in maskTab
	n := Load(Param("n"), GP64())
	if avx512 {
		mask = K()
		ones, m := GP64(), GP64()
		MOVQ(U32(0xffff), ones)
		BZHIQ(n, ones, m)
		KMOVW(m.As32(), mask)
	} else {
		maskAt = GP64()
		LEAQ(maskTab, maskAt)
		NEGQ(n)
		LEAQ(Mem{Base: maskAt, Index: n, Scale: 4, Disp: 4 * lanes}, maskAt)
	}
	// maskOf is the mask of vector v of a row (nil: unmasked); AVX2 loads
	// it from maskTab, so each use has its own short-lived register.
	maskOf := func(v int) VecVirtual {
		if avx512 || v < nv-vp {
			return nil
		}
		m := YMM()
		VMOVUPS(Mem{Base: maskAt, Disp: vb * (v % vp)}, m)
		return m
	}
	c := Load(Param("c"), GP64())
	ldc := Load(Param("ldc"), GP64())
	SHLQ(U8(2), ldc)
	flags := Load(Param("flags"), GP64())
	// each walks the tile's rows of a matrix with row stride ldc from
	// base, calling f with each vector's address and accumulator; the
	// last panel is masked.
	each := func(base Register, f func(m Mem, acc VecVirtual, v int)) {
		p := GP64()
		MOVQ(base, p)
		for r := 0; r < rows; r++ {
			for v := 0; v < nv; v++ {
				f(Mem{Base: p, Disp: vb * v}, acc[r*nv+v], v)
			}
			if r < rows-1 {
				ADDQ(ldc, p)
			}
		}
	}
	// add adds the vectors of a matrix (C or z) to the accumulators.
	add := func(m Mem, acc VecVirtual, v int) {
		switch {
		case avx512 && v == nv-1:
			t := ZMM()
			VMOVUPS_Z(m, mask, t)
			VADDPS(t, acc, acc)
		case !avx512:
			if mk := maskOf(v); mk != nil {
				t := YMM()
				VMASKMOVPS(m, mk, t)
				VADDPS(t, acc, acc)
				break
			}
			fallthrough
		default:
			VADDPS(m, acc, acc)
		}
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
		bv := make([]VecVirtual, nv)
		for v := range bv {
			bv[v] = vec()
			m := Mem{Base: bias, Disp: vb * v}
			switch mk := maskOf(v); {
			case avx512 && v == nv-1:
				VMOVUPS_Z(m, mask, bv[v])
			case mk != nil:
				VMASKMOVPS(m, mk, bv[v])
			default:
				VMOVUPS(m, bv[v])
			}
		}
		for i := range acc {
			VADDPS(bv[i%nv], acc[i], acc[i])
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
		lo, hi := vec(), vec()
		VBROADCASTSS(paramAddr("lo"), lo)
		VBROADCASTSS(paramAddr("hi"), hi)
		for i := range acc {
			VMAXPS(acc[i], lo, acc[i])
			VMINPS(acc[i], hi, acc[i])
		}
	}

	Label(name + "_store")
	if !avx512 {
		// Whole panels store unmasked (VMASKMOVPS stores are slow on
		// some AVX2 cores).
		CMPQ(n, I8(-lanes))
		JNE(LabelRef(name + "_masked"))
		each(c, func(m Mem, acc VecVirtual, v int) { VMOVUPS(acc, m) })
		VZEROUPPER()
		RET()
		Label(name + "_masked")
	}
	each(c, func(m Mem, acc VecVirtual, v int) {
		switch mk := maskOf(v); {
		case avx512 && v == nv-1:
			VMOVUPS(acc, mask, m)
		case mk != nil:
			VMASKMOVPS(acc, mk, m)
		default:
			VMOVUPS(acc, m)
		}
	})
	VZEROUPPER()
	RET()
}
