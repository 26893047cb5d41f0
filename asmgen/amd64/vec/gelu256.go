package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// gelu256 emits geluAVX2 (y = x/2 * (1 + erf(x/sqrt2)) in place, with
// 1 + erf(z) = erfc(-z) = 2 - erfc(z), erfc from its exp form, so that
// the result keeps its relative accuracy for negative x too) and, with
// bias, geluBiasAVX2: the same after adding a bias row (the FFN
// layer's bias: one pass over the output, not axpyAVX2's and then
// geluAVX2's; y + 1*b by FMA is y + b rounded once, so the bits are the
// two passes').
//
// One vector's GELU is a chain of about 40 dependent operations (a
// division, ten FMAs of the erfc polynomial, the exp), some 130 cycles:
// one vector an iteration left the loop latency-bound at 3 ns an element
// on Zen 2, where two FMA pipes of latency 5 want ten independent chains.
// The main loop (gelu256Staged) takes eight vectors an iteration in
// stages through a stack scratch, so that each stage keeps few registers
// a vector and runs eight (or four) chains; 24 and 8 elements at a time
// (gelu256Block: three or one chain, each step emitted for all before
// the next) take the remainder. Every path runs the same operations per
// lane, so all give the one-vector loop's bits; x is loaded (and the
// bias added) again for the last steps instead of kept in a register.
func gelu256(bias bool) {
	name, sig, pre := "geluAVX2", "func(y *float32, n int)", "y[i] = gelu(y[i])"
	if bias {
		name, sig, pre = "geluBiasAVX2", "func(y, b *float32, n int)", "y[i] = gelu(y[i] + b[i])"
	}
	TEXT(name, NOSPLIT, sig)
	Doc(
		name+" sets "+pre+" (the erf form) for i in [0, n), n a",
		"multiple of 8.",
		"",
		"Requires: AVX, AVX2, FMA",
	)
	Pragma("noescape")
	y := Load(Param("y"), GP64())
	var b Register
	if bias {
		b = Load(Param("b"), GP64())
	}
	n := Load(Param("n"), GP64())
	scratch := AllocLocal(2 * gelu256Wide * 32)
	i := GP64()
	XORQ(i, i)
	last := GP64()
	MOVQ(n, last)
	SUBQ(U8(8*gelu256Wide), last)
	Label(name + "_loop8")
	CMPQ(i, last)
	JG(LabelRef(name + "_tail"))
	gelu256Staged(y, b, i, scratch)
	ADDQ(U8(8*gelu256Wide), i)
	JMP(LabelRef(name + "_loop8"))
	Label(name + "_tail")
	MOVQ(n, last)
	SUBQ(U8(24), last)
	Label(name + "_loop3")
	CMPQ(i, last)
	JG(LabelRef(name + "_loop1"))
	gelu256Block(y, b, i, 3)
	ADDQ(U8(24), i)
	JMP(LabelRef(name + "_loop3"))
	Label(name + "_loop1")
	CMPQ(i, n)
	JGE(LabelRef(name + "_done"))
	gelu256Block(y, b, i, 1)
	ADDQ(U8(8), i)
	JMP(LabelRef(name + "_loop1"))
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// gelu256Block emits GELU in place on nv vectors at y[i:] (after adding
// b[i:] unless b is nil), step by step across the vectors.
func gelu256Block(y, b, i Register, nv int) {
	each := func(f func(v int)) {
		for v := 0; v < nv; v++ {
			f(v)
		}
	}
	at := func(r Register, v int) Mem { return Mem{Base: r, Index: i, Scale: 4, Disp: 32 * v} }
	load := func(x []VecVirtual) {
		each(func(v int) { VMOVUPS(at(y, v), x[v]) })
		if b != nil {
			each(func(v int) { VADDPS(at(b, v), x[v], x[v]) })
		}
	}
	z, t, p := make([]VecVirtual, nv), make([]VecVirtual, nv), make([]VecVirtual, nv)
	each(func(v int) { z[v], t[v], p[v] = YMM(), YMM(), YMM() })
	load(z)
	each(func(v int) { VANDPS(k("absmask"), z[v], z[v]) })
	each(func(v int) { VMULPS(k("rsqrt2"), z[v], z[v]) })
	Comment("t = 1/(1+z/2)")
	each(func(v int) { VMOVUPS(k("half"), t[v]) })
	each(func(v int) { VFMADD213PS(k("one"), z[v], t[v]) })
	each(func(v int) { VMOVUPS(k("one"), p[v]) })
	each(func(v int) { VDIVPS(t[v], p[v], t[v]) })
	Comment("e = -z*z + P(t)")
	each(func(v int) { VMOVUPS(k("ec9"), p[v]) })
	for _, c := range []string{"ec8", "ec7", "ec6", "ec5", "ec4", "ec3", "ec2", "ec1", "ec0"} {
		each(func(v int) { VFMADD213PS(k(c), t[v], p[v]) })
	}
	each(func(v int) { VFNMADD231PS(z[v], z[v], p[v]) })
	// expVec on p, z (free now) as fx.
	fx, q, sq := z, make([]VecVirtual, nv), make([]VecVirtual, nv)
	each(func(v int) { q[v], sq[v] = YMM(), YMM() })
	each(func(v int) { VMINPS(k("expHi"), p[v], p[v]) })
	each(func(v int) { VMAXPS(k("expLo"), p[v], p[v]) })
	each(func(v int) { VMULPS(k("log2e"), p[v], fx[v]) })
	each(func(v int) { VROUNDPS(U8(0), fx[v], fx[v]) }) // to nearest
	each(func(v int) { VFNMADD231PS(k("ln2hi"), fx[v], p[v]) })
	each(func(v int) { VFNMADD231PS(k("ln2lo"), fx[v], p[v]) })
	each(func(v int) { VMOVUPS(k("ep0"), q[v]) })
	for _, c := range []string{"ep1", "ep2", "ep3", "ep4", "ep5"} {
		each(func(v int) { VFMADD213PS(k(c), p[v], q[v]) })
	}
	each(func(v int) { VMULPS(p[v], p[v], sq[v]) })
	each(func(v int) { VFMADD213PS(p[v], sq[v], q[v]) }) // q = q*p*p + p
	each(func(v int) { VADDPS(k("one"), q[v], q[v]) })
	each(func(v int) { VCVTPS2DQ(fx[v], fx[v]) })
	each(func(v int) { VPSLLD(U8(23), fx[v], fx[v]) })
	each(func(v int) { VPADDD(k("one"), fx[v], fx[v]) }) // the bits of 1.0 plus n in the exponent
	each(func(v int) { VMULPS(fx[v], q[v], p[v]) })
	Comment("erfc(|z|) = t*exp(e); 1+erf = erfc for x < 0, else 2 - erfc")
	each(func(v int) { VMULPS(t[v], p[v], p[v]) })
	x := sq // free again
	load(x)
	each(func(v int) { VMOVUPS(k("two"), q[v]) })
	each(func(v int) { VSUBPS(p[v], q[v], q[v]) })
	each(func(v int) { VBLENDVPS(x[v], p[v], q[v], q[v]) })
	each(func(v int) { VMULPS(k("half"), x[v], x[v]) })
	each(func(v int) { VMULPS(q[v], x[v], x[v]) })
	each(func(v int) { VMOVUPS(x[v], at(y, v)) })
}

// gelu256Wide is the vectors gelu256Staged takes an iteration.
const gelu256Wide = 8

// gelu256Staged emits GELU in place on gelu256Wide vectors at y[i:] (after
// adding b[i:] unless b is nil), gelu256Block's operations in two stages
// over a scratch of 2*gelu256Wide vectors (z, then e; and t): first z,
// t = 1/(1+z/2), the erfc polynomial and e = P(t) - z*z on all eight
// chains at two registers each, then exp(e) and the result on two groups
// of four chains at four registers each.
func gelu256Staged(y, b, i Register, scratch Mem) {
	const nv = gelu256Wide
	at := func(r Register, v int) Mem { return Mem{Base: r, Index: i, Scale: 4, Disp: 32 * v} }
	zs := func(v int) Mem { return scratch.Offset(32 * v) }        // z, then e
	ts := func(v int) Mem { return scratch.Offset(32 * (nv + v)) } // t
	each := func(lo, hi int, f func(v int)) {
		for v := lo; v < hi; v++ {
			f(v)
		}
	}
	load := func(lo, hi int, x []VecVirtual) {
		each(lo, hi, func(v int) { VMOVUPS(at(y, v), x[v]) })
		if b != nil {
			each(lo, hi, func(v int) { VADDPS(at(b, v), x[v], x[v]) })
		}
	}
	// Stage 1: two registers a chain, r (z, then t) and q (then P(t), e).
	r, q := make([]VecVirtual, nv), make([]VecVirtual, nv)
	each(0, nv, func(v int) { r[v], q[v] = YMM(), YMM() })
	load(0, nv, r)
	each(0, nv, func(v int) { VANDPS(k("absmask"), r[v], r[v]) })
	each(0, nv, func(v int) { VMULPS(k("rsqrt2"), r[v], r[v]) })
	each(0, nv, func(v int) { VMOVUPS(r[v], zs(v)) })
	Comment("t = 1/(1+z/2)")
	each(0, nv, func(v int) { VMOVUPS(k("half"), q[v]) })
	each(0, nv, func(v int) { VFMADD213PS(k("one"), r[v], q[v]) })
	each(0, nv, func(v int) { VMOVUPS(k("one"), r[v]) })
	each(0, nv, func(v int) { VDIVPS(q[v], r[v], r[v]) })
	each(0, nv, func(v int) { VMOVUPS(r[v], ts(v)) })
	Comment("e = -z*z + P(t)")
	each(0, nv, func(v int) { VMOVUPS(k("ec9"), q[v]) })
	for _, c := range []string{"ec8", "ec7", "ec6", "ec5", "ec4", "ec3", "ec2", "ec1", "ec0"} {
		each(0, nv, func(v int) { VFMADD213PS(k(c), r[v], q[v]) })
	}
	each(0, nv, func(v int) { VMOVUPS(zs(v), r[v]) })
	each(0, nv, func(v int) { VFNMADD231PS(r[v], r[v], q[v]) })
	each(0, nv, func(v int) { VMOVUPS(q[v], zs(v)) })
	// Stage 2: expVec on e, then the result, four chains at a time.
	const g = nv / 2
	for lo := 0; lo < nv; lo += g {
		hi := lo + g
		p, fx, e, sq := make([]VecVirtual, nv), make([]VecVirtual, nv), make([]VecVirtual, nv), make([]VecVirtual, nv)
		each(lo, hi, func(v int) { p[v], fx[v], e[v], sq[v] = YMM(), YMM(), YMM(), YMM() })
		each(lo, hi, func(v int) { VMOVUPS(zs(v), p[v]) })
		each(lo, hi, func(v int) { VMINPS(k("expHi"), p[v], p[v]) })
		each(lo, hi, func(v int) { VMAXPS(k("expLo"), p[v], p[v]) })
		each(lo, hi, func(v int) { VMULPS(k("log2e"), p[v], fx[v]) })
		each(lo, hi, func(v int) { VROUNDPS(U8(0), fx[v], fx[v]) }) // to nearest
		each(lo, hi, func(v int) { VFNMADD231PS(k("ln2hi"), fx[v], p[v]) })
		each(lo, hi, func(v int) { VFNMADD231PS(k("ln2lo"), fx[v], p[v]) })
		each(lo, hi, func(v int) { VMOVUPS(k("ep0"), e[v]) })
		for _, c := range []string{"ep1", "ep2", "ep3", "ep4", "ep5"} {
			each(lo, hi, func(v int) { VFMADD213PS(k(c), p[v], e[v]) })
		}
		each(lo, hi, func(v int) { VMULPS(p[v], p[v], sq[v]) })
		each(lo, hi, func(v int) { VFMADD213PS(p[v], sq[v], e[v]) }) // e = e*p*p + p
		each(lo, hi, func(v int) { VADDPS(k("one"), e[v], e[v]) })
		each(lo, hi, func(v int) { VCVTPS2DQ(fx[v], fx[v]) })
		each(lo, hi, func(v int) { VPSLLD(U8(23), fx[v], fx[v]) })
		each(lo, hi, func(v int) { VPADDD(k("one"), fx[v], fx[v]) }) // the bits of 1.0 plus n in the exponent
		each(lo, hi, func(v int) { VMULPS(fx[v], e[v], p[v]) })
		Comment("erfc(|z|) = t*exp(e); 1+erf = erfc for x < 0, else 2 - erfc")
		each(lo, hi, func(v int) { VMULPS(ts(v), p[v], p[v]) })
		x := fx // free again
		load(lo, hi, x)
		each(lo, hi, func(v int) { VMOVUPS(k("two"), e[v]) })
		each(lo, hi, func(v int) { VSUBPS(p[v], e[v], e[v]) })
		each(lo, hi, func(v int) { VBLENDVPS(x[v], p[v], e[v], e[v]) })
		each(lo, hi, func(v int) { VMULPS(k("half"), x[v], x[v]) })
		each(lo, hi, func(v int) { VMULPS(e[v], x[v], x[v]) })
		each(lo, hi, func(v int) { VMOVUPS(x[v], at(y, v)) })
	}
}
