package main

import (
	"fmt"
	"math/bits"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// sgemmKernel512 emits the AVX-512 micro-kernel: a 6x32 tile of C from one
// packed A micro-panel and two adjacent packed B micro-panels (the same
// 6-row and 16-column layouts as the AVX2 kernel, so prepacked weights do
// not depend on the CPU). One ZMM holds a 16-column B step; 12 accumulators
// give 12 FMAs for every 2 vector loads and 6 broadcasts, twice the work
// per instruction of the 6x16 YMM kernel.
func sgemmKernel512() {
	sgemmKernel512Var("sgemmKernel6x32AVX512", false, false, mr)
	sgemmKernel512Var("sgemmKernel6x32EdgeAVX512", true, false, mr)
	sgemmKernel512Var("sgemmKernel6x32DirectAVX512", false, true, mr)
	for rows := 1; rows < mr; rows++ {
		sgemmKernel512Var(fmt.Sprintf("sgemmKernel%dx32DirectAVX512", rows), false, true, rows)
	}
}

// sgemmKernel512Var emits the full 6x32 kernel, or (edge) its variant for
// partial tiles: the same product over the zero-padded panels, stored to the
// first m rows and n columns of C through opmask-masked loads and stores
// (channel counts like 64 and 256 leave 4 rows in the last tile), or
// (direct) its variant reading A unpacked, six rows of a row-major matrix,
// as MLAS does: the 128-row activations of a transformer then need no
// packing at all. A direct kernel may have fewer rows (1..5, for the last
// row tile: 128 rows leave 2), each element summed in the same order.
func sgemmKernel512Var(name string, edge, direct bool, rows int) {
	sig := "func(k int, a, b0, b1, c *float32, ldc int, alpha, beta float32)"
	doc := []string{
		name + " computes C = alpha*A*[B0 B1] + beta*C for one 6x32 tile of C,",
		"row-major with row stride ldc (in elements): a is a packed A micro-panel",
		"(k steps of 6 values), b0 and b1 packed B micro-panels (k steps of 16",
		"values) for columns 0-15 and 16-31. When beta is 0, C is only written.",
	}
	if direct {
		sig = "func(k int, a *float32, lda int, b0, b1, c *float32, ldc int, alpha, beta float32)"
		doc = []string{
			name + " is sgemmKernel6x32AVX512 with A read in place: a is",
			fmt.Sprintf("row 0 of %d rows of a row-major A, row stride lda (in elements), and", rows),
			fmt.Sprintf("step p reads a[r*lda+p] for r in 0..%d. The sums are the same, in the", rows-1),
			fmt.Sprintf("same order, as from a packed A. It writes %d rows of C.", rows),
		}
		if rows == mr {
			doc[3] = "same order, as from a packed A."
		}
	}
	if edge {
		sig = "func(k int, a, b0, b1, c *float32, ldc int, alpha, beta float32, m, n int)"
		doc = []string{
			name + " is sgemmKernel6x32AVX512 for a partial tile: it",
			"reads and writes only the first m rows (1..6) and n columns (1..32) of",
			"C, through masked loads and stores. The packed panels are full (zero",
			"padded); b1 must be readable even when n <= 16.",
		}
	}
	TEXT(name, NOSPLIT, sig)
	Doc(append(doc, "", map[bool]string{false: "Requires: AVX512F", true: "Requires: AVX512F, BMI2"}[edge])...)
	Pragma("noescape")
	k := Load(Param("k"), GP64())
	a := Load(Param("a"), GP64())
	// In place, rows 0, 1, 2 and 4 are a + r*lda (an index register with
	// scale 1, 2, 4), rows 3 and 5 are a3 + {0, 2}*lda with a3 = a + 3*lda.
	var lda, a3 Register
	if direct {
		lda = Load(Param("lda"), GP64())
		SHLQ(U8(2), lda)
		if rows > 3 {
			a3 = GP64()
			LEAQ(Mem{Base: a, Index: lda, Scale: 2}, a3)
			ADDQ(lda, a3)
		}
	}
	aAt := func(r, u int) Mem {
		if !direct {
			return Mem{Base: a, Disp: 4 * (mr*u + r)}
		}
		switch r {
		case 0:
			return Mem{Base: a, Disp: 4 * u}
		case 1, 2, 4:
			return Mem{Base: a, Index: lda, Scale: uint8(r), Disp: 4 * u}
		case 3:
			return Mem{Base: a3, Disp: 4 * u}
		default:
			return Mem{Base: a3, Index: lda, Scale: 2, Disp: 4 * u}
		}
	}
	// advanceA moves A on by steps k steps.
	advanceA := func(steps int) {
		if !direct {
			ADDQ(U32(4*mr*steps), a)
			return
		}
		ADDQ(U32(4*steps), a)
		if rows > 3 {
			ADDQ(U32(4*steps), a3)
		}
	}
	b0 := Load(Param("b0"), GP64())
	b1 := Load(Param("b1"), GP64())
	c := Load(Param("c"), GP64())
	ldc := Load(Param("ldc"), GP64())
	SHLQ(U8(2), ldc)

	Comment(fmt.Sprintf("Zero the %d accumulators: acc[2*r+h] holds row r, columns 16h..16h+15.", 2*rows))
	acc := make([]VecVirtual, 2*rows)
	for i := range acc {
		acc[i] = ZMM()
		VPXORD(acc[i], acc[i], acc[i])
	}

	Comment("Prefetch the C tile (two cache lines a row).")
	{
		p := GP64()
		MOVQ(c, p)
		for r := 0; r < rows; r++ {
			PREFETCHT0(Mem{Base: p})
			PREFETCHT0(Mem{Base: p, Disp: 4*2*nr - 4})
			if r < rows-1 {
				ADDQ(ldc, p)
			}
		}
	}

	rank1 := func(u int) {
		v0, v1 := ZMM(), ZMM()
		VMOVUPS(Mem{Base: b0, Disp: 4 * nr * u}, v0)
		VMOVUPS(Mem{Base: b1, Disp: 4 * nr * u}, v1)
		for r := 0; r < rows; r++ {
			t := ZMM()
			VBROADCASTSS(aAt(r, u), t)
			VFMADD231PS(v0, t, acc[2*r])
			VFMADD231PS(v1, t, acc[2*r+1])
		}
	}

	Comment("Main loop: unrolled k steps, each a rank-1 update of the tile.")
	iters := GP64()
	MOVQ(k, iters)
	SHRQ(U8(bits.TrailingZeros(unroll)), iters)
	JZ(LabelRef(name + "_tail"))
	Label(name + "_loop")
	for u := 0; u < unroll; u++ {
		rank1(u)
	}
	advanceA(unroll)
	ADDQ(U32(4*nr*unroll), b0)
	ADDQ(U32(4*nr*unroll), b1)
	DECQ(iters)
	JNZ(LabelRef(name + "_loop"))

	Label(name + "_tail")
	ANDQ(U8(unroll-1), k)
	JZ(LabelRef(name + "_epilogue"))
	Label(name + "_tailloop")
	rank1(0)
	advanceA(1)
	ADDQ(U32(4*nr), b0)
	ADDQ(U32(4*nr), b1)
	DECQ(k)
	JNZ(LabelRef(name + "_tailloop"))

	Comment("Epilogue: scale the products by alpha.")
	Label(name + "_epilogue")
	alpha := ZMM()
	VBROADCASTSS(paramAddr("alpha"), alpha)
	for i := range acc {
		VMULPS(alpha, acc[i], acc[i])
	}

	var masks [2]OpmaskVirtual
	var mRows Register // the edge kernel's m
	if edge {
		Comment("Column masks: lanes [0, min(n,16)) and [0, n-16) of the two halves.")
		mRows = Load(Param("m"), GP64())
		n := Load(Param("n"), GP64())
		ones, zero := GP64(), GP64()
		MOVQ(U32(0xffff), ones)
		XORQ(zero, zero)
		for h := 0; h < 2; h++ {
			// BZHI keeps the bits of 0xffff below the count (all 16 for a
			// count of 16 or more); the second half's count n-16 is
			// clamped at 0.
			cnt, bitsR := GP64(), GP64()
			MOVQ(n, cnt)
			if h == 1 {
				SUBQ(U8(nr), cnt)
				CMOVQLT(zero, cnt)
			}
			BZHIQ(cnt, ones, bitsR)
			masks[h] = K()
			KMOVW(bitsR.As32(), masks[h])
		}
	}
	Comment("beta == 0 (ordered compare: a NaN beta takes the general path) stores without reading C.")
	betaX := XMM()
	VMOVSS(paramAddr("beta"), betaX)
	zero := XMM()
	VXORPS(zero, zero, zero)
	VUCOMISS(zero, betaX)
	JNE(LabelRef(name + "_beta"))
	JP(LabelRef(name + "_beta"))
	store := func(beta VecVirtual, suffix string) {
		p := GP64()
		MOVQ(c, p)
		for r := 0; r < rows; r++ {
			if edge && r > 0 {
				CMPQ(mRows, U8(r))
				JLE(LabelRef(name + "_done" + suffix))
			}
			for h := 0; h < 2; h++ {
				dst := Mem{Base: p, Disp: 4 * nr * h}
				switch {
				case edge && beta != nil:
					t := ZMM()
					VMOVUPS_Z(dst, masks[h], t)
					VFMADD231PS(t, beta, acc[2*r+h])
					VMOVUPS(acc[2*r+h], masks[h], dst)
				case edge:
					VMOVUPS(acc[2*r+h], masks[h], dst)
				case beta != nil:
					VFMADD231PS(dst, beta, acc[2*r+h])
					VMOVUPS(acc[2*r+h], dst)
				default:
					VMOVUPS(acc[2*r+h], dst)
				}
			}
			if r < rows-1 {
				ADDQ(ldc, p)
			}
		}
		if edge {
			Label(name + "_done" + suffix)
		}
	}
	store(nil, "0")
	JMP(LabelRef(name + "_done"))

	Comment("General beta: C = alpha*A*B + beta*C.")
	Label(name + "_beta")
	beta := ZMM()
	VBROADCASTSS(betaX, beta)
	store(beta, "1")

	Label(name + "_done")
	VZEROUPPER()
	RET()
}
