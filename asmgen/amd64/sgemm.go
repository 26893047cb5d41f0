package main

import (
	"fmt"
	"math/bits"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// The SGEMM micro-kernel tile: MR rows of C by NR columns, NR = two YMM
// vectors of 8 float32. 6x16 keeps 12 accumulators, two B vectors and a
// broadcast A value in the 16 YMM registers, and gives 12 FMAs for every 2
// vector loads and 6 broadcasts: enough independent FMAs to cover the FMA
// latency on both FMA ports.
const (
	mr     = 6
	nr     = 16
	vec    = 8 // float32 lanes in a YMM register
	unroll = 4 // k steps per iteration of the main loop
	// prefetchA is how far ahead (bytes) the main loop prefetches the A
	// micro-panel, which streams from L2; 0 leaves it to the hardware.
	prefetchA = 0
	// prefetchNextPanel makes B packing prefetch the next panel's rows.
	prefetchNextPanel = true
)

// sgemmKernels emits the full-tile micro-kernel and the edge micro-kernel
// (partial tiles, m < 6 rows or n < 16 columns, through masked loads and
// stores of C), and the mask table the edge kernel reads.
func sgemmKernels() {
	// masks: 16 all-ones lanes then 16 zero lanes; the 16 lanes starting at
	// lane 16-n have exactly the first n lanes set.
	masks := GLOBL("sgemmColMask", RODATA|NOPTR)
	for i := 0; i < 2*nr; i++ {
		v := uint32(0)
		if i < nr {
			v = 0xffffffff
		}
		DATA(4*i, U32(v))
	}

	sgemmKernel("sgemmKernel6x16AVX2", false, masks)
	sgemmKernel("sgemmKernel6x16EdgeAVX2", true, masks)
	sgemmPackB()
}

func sgemmKernel(name string, edge bool, masks Mem) {
	sig := "func(k int, a, b, c *float32, ldc int, alpha, beta float32)"
	if edge {
		sig = "func(k int, a, b, c *float32, ldc int, alpha, beta float32, m, n int)"
	}
	TEXT(name, NOSPLIT, sig)
	var doc []string
	if edge {
		doc = []string{
			name + " is sgemmKernel6x16AVX2 for a partial tile: it writes only",
			"the first m rows (1..6) and n columns (1..16) of C, through masked",
			"loads and stores. The packed panels are full (zero padded).",
		}
	} else {
		doc = []string{
			name + " computes C = alpha*A*B + beta*C for one 6x16 tile of C,",
			"row-major with row stride ldc (in elements). a is a packed A micro-panel",
			"(k steps of 6 contiguous values, one per row), b a packed B micro-panel",
			"(k steps of 16 contiguous values). When beta is 0, C is only written,",
			"never read (BLAS semantics: NaNs in C do not propagate).",
		}
	}
	Doc(append(doc, "", "Requires: AVX, AVX2, FMA")...)
	Pragma("noescape")

	k := Load(Param("k"), GP64())
	a := Load(Param("a"), GP64())
	b := Load(Param("b"), GP64())
	c := Load(Param("c"), GP64())
	ldc := Load(Param("ldc"), GP64())
	SHLQ(U8(2), ldc) // elements -> bytes

	Comment("Zero the 12 accumulators: acc[2*r+h] holds row r, columns 8h..8h+7.")
	acc := make([]VecVirtual, 2*mr)
	for i := range acc {
		acc[i] = YMM()
		VXORPS(acc[i], acc[i], acc[i])
	}

	Comment("Prefetch the C tile while the products are computed.")
	{
		p := GP64()
		MOVQ(c, p)
		for r := 0; r < mr; r++ {
			PREFETCHT0(Mem{Base: p})
			PREFETCHT0(Mem{Base: p, Disp: 4*nr - 4})
			if r < mr-1 {
				ADDQ(ldc, p)
			}
		}
	}

	Comment("Main loop: unrolled k steps, each a rank-1 update of the tile.")
	iters := GP64()
	MOVQ(k, iters)
	SHRQ(U8(bits.TrailingZeros(unroll)), iters)
	JZ(LabelRef(name + "_tail"))
	Label(name + "_loop")
	if prefetchA > 0 {
		PREFETCHT0(Mem{Base: a, Disp: prefetchA})
	}
	for u := 0; u < unroll; u++ {
		rank1(acc, Mem{Base: a, Disp: 4 * mr * u}, Mem{Base: b, Disp: 4 * nr * u})
	}
	ADDQ(U32(4*mr*unroll), a)
	ADDQ(U32(4*nr*unroll), b)
	DECQ(iters)
	JNZ(LabelRef(name + "_loop"))

	Commentf("Tail: the k%%%d remaining steps, one at a time.", unroll)
	Label(name + "_tail")
	ANDQ(U8(unroll-1), k)
	JZ(LabelRef(name + "_epilogue"))
	Label(name + "_tailloop")
	rank1(acc, Mem{Base: a}, Mem{Base: b})
	ADDQ(U32(4*mr), a)
	ADDQ(U32(4*nr), b)
	DECQ(k)
	JNZ(LabelRef(name + "_tailloop"))

	Comment("Epilogue: scale the products by alpha.")
	Label(name + "_epilogue")
	alpha := YMM()
	VBROADCASTSS(paramAddr("alpha"), alpha)
	for i := range acc {
		VMULPS(alpha, acc[i], acc[i])
	}

	var mask [2]VecVirtual
	var rows Register
	if edge {
		Comment("Column masks for n < 16: lanes j < n set, read from sgemmColMask[16-n:].")
		n := Load(Param("n"), GP64())
		NEGQ(n)
		ADDQ(U8(nr), n)
		tbl := GP64()
		LEAQ(masks, tbl)
		for h := range mask {
			mask[h] = YMM()
			VMOVUPS(Mem{Base: tbl, Index: n, Scale: 4, Disp: 4 * vec * h}, mask[h])
		}
		rows = Load(Param("m"), GP64())
	}

	Comment("beta == 0 (ordered compare: a NaN beta takes the general path) stores without reading C.")
	betaX := XMM()
	VMOVSS(paramAddr("beta"), betaX)
	zero := XMM()
	VXORPS(zero, zero, zero)
	VUCOMISS(zero, betaX)
	JNE(LabelRef(name + "_beta"))
	JP(LabelRef(name + "_beta"))
	storeRows(name+"_store", acc, c, ldc, rows, mask, nil)
	JMP(LabelRef(name + "_done"))

	Comment("General beta: C = alpha*A*B + beta*C.")
	Label(name + "_beta")
	beta := YMM()
	VBROADCASTSS(betaX, beta)
	storeRows(name+"_update", acc, c, ldc, rows, mask, beta)

	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// paramAddr is the stack address of a scalar argument. Float arguments are
// read with VEX instructions straight from there: avo's Load would use the
// legacy-SSE MOVSS, and legacy SSE after 256-bit code with dirty upper YMM
// halves costs a state transition (hundreds of cycles per call on some
// CPUs and hypervisors), measured at a third of the kernel's speed.
func paramAddr(name string) Mem {
	b, err := Param(name).Resolve()
	if err != nil {
		panic(err)
	}
	return b.Addr
}

// rank1 emits one k step: load the 16 values of B, then for each of the 6
// rows broadcast its A value and multiply-add into the row's accumulators.
func rank1(acc []VecVirtual, a, b Mem) {
	b0, b1 := YMM(), YMM()
	VMOVUPS(b, b0)
	VMOVUPS(b.Offset(4*vec), b1)
	for r := 0; r < mr; r++ {
		t := YMM()
		VBROADCASTSS(a.Offset(4*r), t)
		VFMADD231PS(b0, t, acc[2*r])
		VFMADD231PS(b1, t, acc[2*r+1])
	}
}

// storeRows writes the accumulators to C row by row. With beta set it first
// adds beta*C. With rows set (edge kernel) it stops after that many rows and
// goes through the column masks.
func storeRows(prefix string, acc []VecVirtual, c, ldc Register, rows Register, mask [2]VecVirtual, beta VecVirtual) {
	p := GP64()
	MOVQ(c, p)
	for r := 0; r < mr; r++ {
		for h := 0; h < 2; h++ {
			dst := Mem{Base: p, Disp: 4 * vec * h}
			v := acc[2*r+h]
			switch {
			case rows == nil && beta == nil:
				VMOVUPS(v, dst)
			case rows == nil:
				VFMADD231PS(dst, beta, v)
				VMOVUPS(v, dst)
			case beta == nil:
				VMASKMOVPS(v, mask[h], dst)
			default:
				t := YMM()
				VMASKMOVPS(dst, mask[h], t)
				VFMADD231PS(t, beta, v)
				VMASKMOVPS(v, mask[h], dst)
			}
		}
		if r == mr-1 {
			break
		}
		if rows != nil {
			CMPQ(rows, U8(r+1))
			JEQ(LabelRef(fmt.Sprintf("%s_end", prefix)))
		}
		ADDQ(ldc, p)
	}
	if rows != nil {
		Label(prefix + "_end")
	}
}

// sgemmPackB emits the copy at the heart of B packing: kc rows of 16
// contiguous floats, row stride ldb, into one packed micro-panel. (Go
// compiles a 64-byte array copy to a runtime.memmove call per row.)
func sgemmPackB() {
	TEXT("sgemmPackB16AVX", NOSPLIT, "func(kc int, src *float32, ldb int, dst *float32)")
	Doc(
		"sgemmPackB16AVX copies kc rows of 16 floats, src row stride ldb",
		"(in elements), to dst contiguously: one packed B micro-panel.",
		"",
		"Requires: AVX",
	)
	Pragma("noescape")
	kc := Load(Param("kc"), GP64())
	src := Load(Param("src"), GP64())
	ldb := Load(Param("ldb"), GP64())
	dst := Load(Param("dst"), GP64())
	SHLQ(U8(2), ldb)
	TESTQ(kc, kc)
	JZ(LabelRef("packb_done"))

	Comment(
		"One row per iteration: two 32-byte loads, two stores, and a prefetch into",
		"L2 of the row's next 64 bytes, which the next panel to the right packs:",
		"the rows are too many streams for the hardware prefetchers to follow.",
	)
	Label("packb_loop")
	v0, v1 := YMM(), YMM()
	if prefetchNextPanel {
		PREFETCHT1(Mem{Base: src, Disp: 4 * nr})
	}
	VMOVUPS(Mem{Base: src}, v0)
	VMOVUPS(Mem{Base: src, Disp: 4 * vec}, v1)
	VMOVUPS(v0, Mem{Base: dst})
	VMOVUPS(v1, Mem{Base: dst, Disp: 4 * vec})
	ADDQ(ldb, src)
	ADDQ(U8(4*nr), dst)
	DECQ(kc)
	JNZ(LabelRef("packb_loop"))

	Label("packb_done")
	VZEROUPPER()
	RET()
}
