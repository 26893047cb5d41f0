package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// gelu512 emits geluAVX2's computation on 16 lanes (AVX-512F), the
// epilogue of BERT's first FFN layer (128 x 1024 values a layer), and
// geluBiasAVX512, the same after adding a bias row (the layer's bias, so
// the epilogue makes one pass over the output, not two). The results
// have geluAVX2's bits (axpyAVX2's y + 1*b then geluAVX2 for the bias
// form): the same division and FMAs; 2^n by VSCALEFPS instead of
// exponent bits and one multiply, exact either way for GELU's exp
// arguments (<= 0, clamped at -87.3). A row split over threads may send
// one element through either kernel.
//
// One vector's GELU is a chain of about 40 dependent operations (some
// 150 cycles), so the loop is latency-bound unless several vectors are in
// flight: it runs four at a time, each step emitted for all four before
// the next step (two vectors a step measured 1.1x slower per element, one
// 1.6x), the constants as broadcast memory operands to leave the
// registers to the four chains. A remainder of 32 runs two.
func gelu512(bias bool) {
	name, sig, pre := "geluAVX512", "func(y *float32, n int)", "y[i] = gelu(y[i])"
	if bias {
		name, sig, pre = "geluBiasAVX512", "func(y, b *float32, n int)", "y[i] = gelu(y[i] + b[i])"
	}
	TEXT(name, NOSPLIT, sig)
	Doc(
		name+" sets "+pre+" (the erf form, as geluAVX2) for i in",
		"[0, n), n a multiple of 32.",
		"",
		"Requires: AVX512F",
	)
	Pragma("noescape")
	y := Load(Param("y"), GP64())
	var b Register
	if bias {
		b = Load(Param("b"), GP64())
	}
	n := Load(Param("n"), GP64())
	zero, two := ZMM(), ZMM()
	VPXORD(zero, zero, zero)
	VBROADCASTSS(k("two"), two)
	i := GP64()
	XORQ(i, i)
	end := GP64()
	MOVQ(n, end)
	ANDQ(I32(-64), end)
	Label(name + "_loop")
	CMPQ(i, end)
	JGE(LabelRef(name + "_two"))
	gelu512Block(y, b, i, zero, two, 4)
	ADDQ(U8(64), i)
	JMP(LabelRef(name + "_loop"))
	Label(name + "_two")
	CMPQ(i, n)
	JGE(LabelRef(name + "_done"))
	gelu512Block(y, b, i, zero, two, 2)
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// gelu512Block emits GELU in place on nv vectors at y[i:] (after adding
// b[i:] unless b is nil), step by step.
func gelu512Block(y, b, i Register, zero, two VecVirtual, nv int) {
	each := func(f func(v int)) {
		for v := 0; v < nv; v++ {
			f(v)
		}
	}
	x, z, t, p, e := make([]VecVirtual, nv), make([]VecVirtual, nv), make([]VecVirtual, nv), make([]VecVirtual, nv), make([]VecVirtual, nv)
	at := func(r Register, v int) Mem { return Mem{Base: r, Index: i, Scale: 4, Disp: 64 * v} }
	each(func(v int) {
		x[v], z[v], t[v], p[v], e[v] = ZMM(), ZMM(), ZMM(), ZMM(), ZMM()
		VMOVUPS(at(y, v), x[v])
	})
	if b != nil {
		each(func(v int) { VADDPS(at(b, v), x[v], x[v]) })
	}
	each(func(v int) { VPANDD_BCST(k("absmask"), x[v], z[v]) })
	each(func(v int) { VMULPS_BCST(k("rsqrt2"), z[v], z[v]) })
	Comment("t = 1/(1+z/2)")
	each(func(v int) { VBROADCASTSS(k("half"), t[v]) })
	each(func(v int) { VFMADD213PS_BCST(k("one"), z[v], t[v]) })
	each(func(v int) { VBROADCASTSS(k("one"), p[v]) })
	each(func(v int) { VDIVPS(t[v], p[v], t[v]) })
	Comment("e = -z*z + P(t)")
	each(func(v int) { VBROADCASTSS(k("ec9"), p[v]) })
	for _, c := range []string{"ec8", "ec7", "ec6", "ec5", "ec4", "ec3", "ec2", "ec1", "ec0"} {
		each(func(v int) { VFMADD213PS_BCST(k(c), t[v], p[v]) })
	}
	each(func(v int) { VFNMADD231PS(z[v], z[v], p[v]) })
	expVec512(p, z, e, true)
	Comment("erfc(|z|) = t*exp(e); 1+erf = erfc for x < 0, else 2 - erfc")
	each(func(v int) { VMULPS(t[v], p[v], p[v]) })
	each(func(v int) {
		pos := K()
		VCMPPS(U8(5), zero, x[v], pos) // !(x < 0) (NaN takes 2 - erfc)
		VSUBPS(p[v], two, pos, p[v])
	})
	each(func(v int) { VMULPS_BCST(k("half"), x[v], x[v]) })
	each(func(v int) { VMULPS(p[v], x[v], x[v]) })
	each(func(v int) { VMOVUPS(x[v], at(y, v)) })
}

// expVec512 is expVec on 16 lanes for each vector of x, step by step
// across the vectors; fx and p are scratch (one register per vector).
// With scalef, 2^n comes from VSCALEFPS: the same bits where p*2^n is
// finite (arguments below 88), 4 operations fewer.
func expVec512(x, fx, p []VecVirtual, scalef bool) {
	each := func(f func(v int)) {
		for v := range x {
			f(v)
		}
	}
	each(func(v int) { VMINPS_BCST(k("expHi"), x[v], x[v]) })
	each(func(v int) { VMAXPS_BCST(k("expLo"), x[v], x[v]) })
	each(func(v int) { VMULPS_BCST(k("log2e"), x[v], fx[v]) })
	each(func(v int) { VRNDSCALEPS(U8(0), fx[v], fx[v]) }) // to nearest
	each(func(v int) { VFNMADD231PS_BCST(k("ln2hi"), fx[v], x[v]) })
	each(func(v int) { VFNMADD231PS_BCST(k("ln2lo"), fx[v], x[v]) })
	each(func(v int) { VBROADCASTSS(k("ep0"), p[v]) })
	for _, c := range []string{"ep1", "ep2", "ep3", "ep4", "ep5"} {
		each(func(v int) { VFMADD213PS_BCST(k(c), x[v], p[v]) })
	}
	t := make([]VecVirtual, len(x))
	each(func(v int) { t[v] = ZMM(); VMULPS(x[v], x[v], t[v]) })
	each(func(v int) { VFMADD213PS(x[v], t[v], p[v]) }) // p = p*x*x + x
	each(func(v int) { VADDPS_BCST(k("one"), p[v], p[v]) })
	if scalef {
		each(func(v int) { VSCALEFPS(fx[v], p[v], x[v]) })
		return
	}
	each(func(v int) { VCVTPS2DQ(fx[v], fx[v]) })
	each(func(v int) { VPSLLD(U8(23), fx[v], fx[v]) })
	each(func(v int) { VPADDD_BCST(k("one"), fx[v], fx[v]) }) // the bits of 1.0 plus n in the exponent
	each(func(v int) { VMULPS(fx[v], p[v], x[v]) })
}

// expSum512 emits expSumAVX2 on 16 lanes, four vectors in flight (one
// vector's exp is a chain of about 20 dependent operations, and
// expSumAVX2's single sum serialises its iterations): softmax's
// numerator and denominator, in BERT's attention 128 x 128 scores a
// head. Each y[i] has expSumAVX2's bits; the sum is taken in four
// 16-lane partial sums, so its rounding differs.
func expSum512() {
	TEXT("expSumAVX512", NOSPLIT, "func(y, x *float32, n int, sub float32) float32")
	Doc(
		"expSumAVX512 sets y[i] = exp(x[i] - sub) for i in [0, n), n a multiple",
		"of 64, and returns the sum of the y[i].",
		"",
		"Requires: AVX512F",
	)
	Pragma("noescape")
	y := Load(Param("y"), GP64())
	x := Load(Param("x"), GP64())
	n := Load(Param("n"), GP64())
	sub := ZMM()
	VBROADCASTSS(paramAddr("sub"), sub)
	const nv = 4
	sums := make([]VecVirtual, nv)
	for v := range sums {
		sums[v] = ZMM()
		VPXORD(sums[v], sums[v], sums[v])
	}
	i := GP64()
	XORQ(i, i)
	Label("es512_loop")
	CMPQ(i, n)
	JGE(LabelRef("es512_done"))
	e, fx, p := make([]VecVirtual, nv), make([]VecVirtual, nv), make([]VecVirtual, nv)
	for v := range e {
		e[v], fx[v], p[v] = ZMM(), ZMM(), ZMM()
		VMOVUPS(Mem{Base: x, Index: i, Scale: 4, Disp: 64 * v}, e[v])
	}
	for v := range e {
		VSUBPS(sub, e[v], e[v])
	}
	expVec512(e, fx, p, false)
	for v := range e {
		VMOVUPS(e[v], Mem{Base: y, Index: i, Scale: 4, Disp: 64 * v})
		VADDPS(e[v], sums[v], sums[v])
	}
	ADDQ(U8(64), i)
	JMP(LabelRef("es512_loop"))
	Label("es512_done")
	VADDPS(sums[1], sums[0], sums[0])
	VADDPS(sums[3], sums[2], sums[2])
	VADDPS(sums[2], sums[0], sums[0])
	h := YMM()
	VEXTRACTF64X4(U8(1), sums[0], h)
	VADDPS(h, sums[0].AsY(), h)
	hsum(h)
	VZEROUPPER()
	Store(h.AsX(), ReturnIndex(0))
	RET()
}

// packBT16 emits the transposing B-panel pack of the SGEMM driver (op(B)
// = B^T, B's rows contiguous in k: attention's K in Q.K^T): sixteen rows
// of B, sixteen k steps at a time, transposed in registers (unpack
// pairs of floats, pairs of pairs, then 128-bit lanes twice: 64
// shuffles a 16x16 block) into sixteen 16-value k steps of the panel.
func packBT16() {
	TEXT("packBT16AVX512", NOSPLIT, "func(kc int, b *float32, ldb int, dst *float32)")
	Doc(
		"packBT16AVX512 sets dst[p*16+j] = b[j*ldb+p] for j in [0, 16), p in",
		"[0, kc), kc a multiple of 16.",
		"",
		"Requires: AVX512F",
	)
	Pragma("noescape")
	kc := Load(Param("kc"), GP64())
	b := Load(Param("b"), GP64())
	ldb := Load(Param("ldb"), GP64())
	dst := Load(Param("dst"), GP64())
	SHLQ(U8(2), ldb)
	p := GP64()
	XORQ(p, p)
	Label("pbt_loop")
	CMPQ(p, kc)
	JGE(LabelRef("pbt_done"))
	Comment("Sixteen rows of B, k steps p..p+15.")
	r := make([]VecVirtual, 16)
	row := GP64()
	MOVQ(b, row)
	for j := range r {
		r[j] = ZMM()
		VMOVUPS(Mem{Base: row}, r[j])
		if j < 15 {
			ADDQ(ldb, row)
		}
	}
	t := make([]VecVirtual, 16)
	for j := 0; j < 16; j += 2 {
		t[j], t[j+1] = ZMM(), ZMM()
		VUNPCKLPS(r[j+1], r[j], t[j])
		VUNPCKHPS(r[j+1], r[j], t[j+1])
	}
	u := make([]VecVirtual, 16)
	for g := 0; g < 16; g += 4 {
		for h := 0; h < 2; h++ {
			u[g+2*h], u[g+2*h+1] = ZMM(), ZMM()
			VUNPCKLPD(t[g+h+2], t[g+h], u[g+2*h])
			VUNPCKHPD(t[g+h+2], t[g+h], u[g+2*h+1])
		}
	}
	w := make([]VecVirtual, 16)
	for g := 0; g < 16; g += 8 {
		for h := 0; h < 4; h++ {
			w[g+h], w[g+h+4] = ZMM(), ZMM()
			VSHUFF32X4(U8(0x88), u[g+h+4], u[g+h], w[g+h])
			VSHUFF32X4(U8(0xdd), u[g+h+4], u[g+h], w[g+h+4])
		}
	}
	for h := 0; h < 8; h++ {
		o0, o1 := ZMM(), ZMM()
		VSHUFF32X4(U8(0x88), w[h+8], w[h], o0)
		VSHUFF32X4(U8(0xdd), w[h+8], w[h], o1)
		VMOVUPS(o0, Mem{Base: dst, Disp: 64 * h})
		VMOVUPS(o1, Mem{Base: dst, Disp: 64 * (h + 8)})
	}
	ADDQ(U8(16), p)
	ADDQ(U8(64), b)
	ADDQ(U32(1024), dst)
	JMP(LabelRef("pbt_loop"))
	Label("pbt_done")
	VZEROUPPER()
	RET()
}

// scale emits y *= a, attention's 1/sum on each output row (64 values a
// head in BERT; Go's scalar loop took 1% of the run).
func scale() {
	TEXT("scaleAVX", NOSPLIT, "func(y *float32, n int, a float32)")
	Doc(
		"scaleAVX sets y[i] *= a for i in [0, n), n a multiple of 8.",
		"",
		"Requires: AVX",
	)
	Pragma("noescape")
	y := Load(Param("y"), GP64())
	n := Load(Param("n"), GP64())
	a := YMM()
	VBROADCASTSS(paramAddr("a"), a)
	i := GP64()
	XORQ(i, i)
	Label("scale_loop")
	CMPQ(i, n)
	JGE(LabelRef("scale_done"))
	v := YMM()
	VMULPS(Mem{Base: y, Index: i, Scale: 4}, a, v)
	VMOVUPS(v, Mem{Base: y, Index: i, Scale: 4})
	ADDQ(U8(8), i)
	JMP(LabelRef("scale_loop"))
	Label("scale_done")
	VZEROUPPER()
	RET()
}

// maxRow512 emits maxAVX on 16 lanes with four running maxima (maxAVX's
// one VMAXPS chain is latency-bound): softmax's row maximum. Max is exact,
// so the result is maxAVX's (NaN aside: like maxAVX, a NaN in x may or
// may not show).
func maxRow512() {
	TEXT("maxAVX512", NOSPLIT, "func(x *float32, n int) float32")
	Doc(
		"maxAVX512 returns the maximum of x[0:n], n a positive multiple of 64.",
		"",
		"Requires: AVX512F",
	)
	Pragma("noescape")
	x := Load(Param("x"), GP64())
	n := Load(Param("n"), GP64())
	m := make([]VecVirtual, 4)
	for j := range m {
		m[j] = ZMM()
		VMOVUPS(Mem{Base: x, Disp: 64 * j}, m[j])
	}
	i := GP64()
	MOVQ(U32(64), i)
	Label("max512_loop")
	CMPQ(i, n)
	JGE(LabelRef("max512_done"))
	for j := range m {
		VMAXPS(Mem{Base: x, Index: i, Scale: 4, Disp: 64 * j}, m[j], m[j])
	}
	ADDQ(U8(64), i)
	JMP(LabelRef("max512_loop"))
	Label("max512_done")
	VMAXPS(m[1], m[0], m[0])
	VMAXPS(m[3], m[2], m[2])
	VMAXPS(m[2], m[0], m[0])
	h := YMM()
	VEXTRACTF64X4(U8(1), m[0], h)
	VMAXPS(h, m[0].AsY(), h)
	l := XMM()
	VEXTRACTF128(U8(1), h, l)
	VMAXPS(l, h.AsX(), l)
	VMOVHLPS(l, l, h.AsX())
	VMAXPS(h.AsX(), l, l)
	VMOVSHDUP(l, h.AsX())
	VMAXSS(h.AsX(), l, l)
	VZEROUPPER()
	Store(l, ReturnIndex(0))
	RET()
}
