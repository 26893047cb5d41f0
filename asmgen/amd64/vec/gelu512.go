package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// gelu512 emits geluAVX2's computation on 16 lanes (AVX-512F), the
// epilogue of BERT's first FFN layer (128 x 1024 values a layer): the
// polynomial coefficients live in registers, the other constants are
// broadcast from memory, and two vectors go through per iteration. Every
// operation is geluAVX2's (the same division, the same FMAs), so both
// give the same bits: a row split over threads may send one element
// through either.
func gelu512() {
	TEXT("geluAVX512", NOSPLIT, "func(y *float32, n int)")
	Doc(
		"geluAVX512 sets y[i] = gelu(y[i]) (the erf form, as geluAVX2) for i in",
		"[0, n), n a multiple of 32.",
		"",
		"Requires: AVX512F",
	)
	Pragma("noescape")
	y := Load(Param("y"), GP64())
	n := Load(Param("n"), GP64())
	c := map[string]VecVirtual{}
	for _, name := range []string{"two", "ep0", "ep1", "ep2", "ep3", "ep4", "ep5", "ec9", "ec8", "ec7", "ec6", "ec5", "ec4", "ec3", "ec2", "ec1", "ec0"} {
		c[name] = ZMM()
		VBROADCASTSS(k(name), c[name])
	}
	zero := ZMM()
	VPXORD(zero, zero, zero)
	i := GP64()
	XORQ(i, i)
	Label("gelu512_loop")
	CMPQ(i, n)
	JGE(LabelRef("gelu512_done"))
	for h := 0; h < 2; h++ {
		at := Mem{Base: y, Index: i, Scale: 4, Disp: 64 * h}
		x, z, t, p, e := ZMM(), ZMM(), ZMM(), ZMM(), ZMM()
		VMOVUPS(at, x)
		VPANDD_BCST(k("absmask"), x, z)
		VMULPS_BCST(k("rsqrt2"), z, z)
		Comment("t = 1/(1+z/2)")
		VBROADCASTSS(k("half"), t)
		VFMADD213PS_BCST(k("one"), z, t)
		VBROADCASTSS(k("one"), p)
		VDIVPS(t, p, t)
		Comment("e = -z*z + P(t)")
		VMOVAPS(c["ec9"], p)
		for _, k := range []string{"ec8", "ec7", "ec6", "ec5", "ec4", "ec3", "ec2", "ec1", "ec0"} {
			VFMADD213PS(c[k], t, p)
		}
		VMOVAPS(p, e)
		VFNMADD231PS(z, z, e)
		expVec512(e, c)
		Comment("erfc(|z|) = t*exp(e); 1+erf = erfc for x < 0, else 2 - erfc")
		VMULPS(t, e, e)
		VSUBPS(e, c["two"], p)
		neg := K()
		VCMPPS(U8(1), zero, x, neg) // x < 0 (ordered: NaN takes 2 - erfc)
		VMOVAPS(e, neg, p)
		VMULPS_BCST(k("half"), x, x)
		VMULPS(p, x, x)
		VMOVUPS(x, at)
	}
	ADDQ(U8(32), i)
	JMP(LabelRef("gelu512_loop"))
	Label("gelu512_done")
	VZEROUPPER()
	RET()
}

// expVec512 is expVec on 16 lanes, the coefficients in registers.
func expVec512(x VecVirtual, c map[string]VecVirtual) {
	fx, t, p := ZMM(), ZMM(), ZMM()
	VMINPS_BCST(k("expHi"), x, x)
	VMAXPS_BCST(k("expLo"), x, x)
	VMULPS_BCST(k("log2e"), x, fx)
	VRNDSCALEPS(U8(0), fx, fx) // to nearest
	VFNMADD231PS_BCST(k("ln2hi"), fx, x)
	VFNMADD231PS_BCST(k("ln2lo"), fx, x)
	VMOVAPS(c["ep0"], p)
	for _, k := range []string{"ep1", "ep2", "ep3", "ep4", "ep5"} {
		VFMADD213PS(c[k], x, p)
	}
	VMULPS(x, x, t)
	VFMADD213PS(x, t, p) // p = p*x*x + x
	VADDPS_BCST(k("one"), p, p)
	VCVTPS2DQ(fx, fx)
	VPSLLD(U8(23), fx, fx)
	VPADDD_BCST(k("one"), fx, fx) // the bits of 1.0 plus n in the exponent
	VMULPS(fx, p, x)
}
