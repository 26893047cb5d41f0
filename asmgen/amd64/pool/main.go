// Command pool generates the float32 max-pooling kernels of package
// templates (AVX2 and AVX-512 versions) and their Go declarations, with
// avo's build API. 2-D MaxPool is separated (templates/k_pool.go): a row
// pass takes the maximum over the window's input rows, a column pass the
// maximum over each window's columns, stride 1 or 2. A NaN tap makes the
// output NaN, as Go's max builtin does: VMAXPS alone would drop a NaN in
// its first operand, so each kernel also ORs an unordered-compare mask of
// its taps into the result (all ones is a NaN). The pure-Go twins are
// maxRowsGo and maxColsGo in templates/k_pool.go.
//
//	go generate ./asmgen/amd64/pool
package main

//go:generate go run . -pkg templates -out ../../../templates/asm_pool_amd64.s -stubs ../../../templates/asm_pool_amd64.go

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

func main() {
	ConstraintExpr("amd64,!purego")
	evens = GLOBL("poolEvens", RODATA|NOPTR)
	for i := 0; i < 16; i++ {
		DATA(4*i, U32(2*i))
	}
	for _, wide := range []bool{false, true} {
		rows(wide)
		cols(wide)
	}
	Generate()
}

// evens is the VPERMT2PS index of the even lanes of two ZMM registers.
var evens Mem

// isa names a kernel's instruction set and makes its vector registers.
func isa(wide bool) (suffix string, lanes int, vec func() VecVirtual) {
	if wide {
		return "AVX512", 16, ZMM
	}
	return "AVX2", 8, YMM
}

// nanAcc collects which lanes saw a NaN: a YMM mask (AVX2) or a K register
// (AVX-512).
type nanAcc struct {
	wide bool
	ymm  VecVirtual
	k    Register
}

// first sets the mask to the lanes where a or b is NaN.
func (n *nanAcc) first(a, b Op) {
	if n.wide {
		n.k = K()
		VCMPPS(U8(3), b, a, n.k) // predicate 3: unordered
		return
	}
	n.ymm = YMM()
	VCMPPS(U8(3), b, a, n.ymm)
}

// add adds the lanes where a or b is NaN.
func (n *nanAcc) add(a, b Op) {
	if n.wide {
		k := K()
		VCMPPS(U8(3), b, a, k)
		KORW(k, n.k, n.k)
		return
	}
	m := YMM()
	VCMPPS(U8(3), b, a, m)
	VORPS(m, n.ymm, n.ymm)
}

// apply sets the NaN lanes of v to all ones (a NaN).
func (n *nanAcc) apply(v VecVirtual) {
	if n.wide {
		VPTERNLOGD(U8(0xff), v, v, n.k, v)
		return
	}
	VORPS(n.ymm, v, v)
}

// rows emits dst[i] = max(r0[i], r1[i], r2[i]) over one vector per
// iteration (dst may be r0: a window of more rows accumulates).
func rows(wide bool) {
	suffix, lanes, vec := isa(wide)
	name := "maxPoolRows" + suffix
	TEXT(name, NOSPLIT, "func(dst, r0, r1, r2 *float32, n int)")
	Doc(
		name+" sets dst[i] = max(r0[i], r1[i], r2[i]) for i in [0, n), n a",
		fmt.Sprintf("multiple of %d; a NaN in any row makes dst[i] NaN. dst may be r0.", lanes),
		"",
		"Requires: "+map[bool]string{false: "AVX", true: "AVX512F"}[wide],
	)
	Pragma("noescape")
	dst := Load(Param("dst"), GP64())
	r0 := Load(Param("r0"), GP64())
	r1 := Load(Param("r1"), GP64())
	r2 := Load(Param("r2"), GP64())
	n := Load(Param("n"), GP64())
	i := GP64()
	XORQ(i, i)
	Label(name + "_loop")
	CMPQ(i, n)
	JGE(LabelRef(name + "_done"))
	at := func(base Register) Mem { return Mem{Base: base, Index: i, Scale: 4} }
	a, b, c := vec(), vec(), vec()
	VMOVUPS(at(r0), a)
	VMOVUPS(at(r1), b)
	VMOVUPS(at(r2), c)
	nan := &nanAcc{wide: wide}
	nan.first(a, b)
	nan.add(c, c)
	VMAXPS(b, a, a)
	VMAXPS(c, a, a)
	nan.apply(a)
	VMOVUPS(a, at(dst))
	ADDQ(U8(lanes), i)
	JMP(LabelRef(name + "_loop"))
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// cols emits y[o] = max_{kw<k} x[s*o+kw] for s 1 or 2: per output vector,
// k unaligned loads (s = 1) or k deinterleaved pairs of loads (s = 2).
func cols(wide bool) {
	suffix, lanes, vec := isa(wide)
	name := "maxPoolCols" + suffix
	TEXT(name, NOSPLIT, "func(y, x *float32, n, k, s int)")
	Doc(
		name+" sets y[o] = max(x[s*o+kw] for kw in [0, k)) for o in [0, n), n",
		fmt.Sprintf("a multiple of %d, k >= 1, s 1 or 2; a NaN tap makes y[o] NaN. With", lanes),
		"s = 2 it reads x up to x[2n+k-2], one element past the last tap.",
		"",
		"Requires: "+map[bool]string{false: "AVX2", true: "AVX512F"}[wide],
	)
	Pragma("noescape")
	y := Load(Param("y"), GP64())
	x := Load(Param("x"), GP64())
	n := Load(Param("n"), GP64())
	k := Load(Param("k"), GP64())
	s := Load(Param("s"), GP64())
	var idx VecVirtual
	if wide {
		idx = ZMM()
		VMOVDQU32(evens, idx)
	}
	o := GP64()
	XORQ(o, o)
	CMPQ(s, U8(2))
	JE(LabelRef(name + "_s2"))

	// loop emits the output loop for stride s; tap loads the taps of one
	// output vector at p into a vector.
	loop := func(label string, stride int, tap func(p Register) VecVirtual) {
		Label(label)
		CMPQ(o, n)
		JGE(LabelRef(name + "_done"))
		p := GP64()
		LEAQ(Mem{Base: x, Index: o, Scale: uint8(4 * stride)}, p)
		acc := tap(p)
		nan := &nanAcc{wide: wide}
		nan.first(acc, acc)
		kw := GP64()
		MOVQ(U32(1), kw)
		Label(label + "_tap")
		CMPQ(kw, k)
		JGE(LabelRef(label + "_store"))
		ADDQ(U8(4), p)
		v := tap(p)
		nan.add(v, v)
		VMAXPS(v, acc, acc)
		INCQ(kw)
		JMP(LabelRef(label + "_tap"))
		Label(label + "_store")
		nan.apply(acc)
		if stride == 2 && !wide {
			// The AVX2 deinterleave leaves the 64-bit pairs in the order
			// 0 2 1 3 (see tap below); max is lane-wise, so one permute
			// at the end puts every tap's lanes right.
			VPERMPD(U8(0xd8), acc, acc)
		}
		VMOVUPS(acc, Mem{Base: y, Index: o, Scale: 4})
		ADDQ(U8(lanes), o)
		JMP(LabelRef(label))
	}
	loop(name+"_s1", 1, func(p Register) VecVirtual {
		v := vec()
		VMOVUPS(Mem{Base: p}, v)
		return v
	})
	loop(name+"_s2", 2, func(p Register) VecVirtual {
		// The even lanes of x[p : p+2*lanes].
		v := vec()
		VMOVUPS(Mem{Base: p}, v)
		if wide {
			VPERMT2PS(Mem{Base: p, Disp: 64}, idx, v)
		} else {
			// Within each 128-bit lane: v0 v2 w0 w2 | v4 v6 w4 w6.
			VSHUFPS(U8(0x88), Mem{Base: p, Disp: 32}, v, v)
		}
		return v
	})
	Label(name + "_done")
	VZEROUPPER()
	RET()
}
