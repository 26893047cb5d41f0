package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// act512 emits sigmoidAVX512 and siluAVX512 (silu true): y[i] =
// sigmoid(y[i]) or y[i]*sigmoid(y[i]) for every i in [0, n), any n: four
// vectors at a time, then one, then the last n%16 under a lane mask, each
// lane through the same instructions, so an element's bits do not depend
// on where a row, a chunk or a thread's part begins or ends. Per lane
// (the pure-Go twin is vecSigmoidGo in templates/k_elem_act.go):
//
//	z = -|x|, at least -104 (NaN stays NaN)
//	e = exp(z)         Cephes expf by FMAs, 2^n by VSCALEFPS (denormals exact)
//	s = (x < 0 ? e : 1) / (1 + e)
//	y = s, or x*s
//
// exp(-|x|) never overflows and 1+e never cancels, so s is accurate on
// both sides of 0; NaN propagates, sigmoid(+-Inf) is 1 and 0.
func act512(silu bool) {
	name := "sigmoidAVX512"
	what := "sigmoid(y[i])"
	if silu {
		name, what = "siluAVX512", "y[i]*sigmoid(y[i]) (SiLU)"
	}
	TEXT(name, NOSPLIT, "func(y *float32, n int)")
	Doc(
		name+" sets y[i] = "+what+" for i in [0, n), any n",
		"(the tail under a lane mask).",
		"",
		"Requires: AVX512F, BMI2",
	)
	Pragma("noescape")
	y := Load(Param("y"), GP64())
	n := Load(Param("n"), GP64())
	lo := ZMM()
	VBROADCASTSS(k("sigLo"), lo)
	i := GP64()
	XORQ(i, i)
	end := GP64()
	MOVQ(n, end)
	ANDQ(I32(-64), end)
	Label(name + "_four")
	CMPQ(i, end)
	JGE(LabelRef(name + "_one0"))
	act512Block(y, i, lo, 4, silu, nil)
	ADDQ(U8(64), i)
	JMP(LabelRef(name + "_four"))
	Label(name + "_one0")
	MOVQ(n, end)
	ANDQ(I32(-16), end)
	Label(name + "_one")
	CMPQ(i, end)
	JGE(LabelRef(name + "_tail"))
	act512Block(y, i, lo, 1, silu, nil)
	ADDQ(U8(16), i)
	JMP(LabelRef(name + "_one"))
	Label(name + "_tail")
	CMPQ(i, n)
	JGE(LabelRef(name + "_done"))
	// mask = (1 << (n-i)) - 1, by BZHI of all ones.
	rem, ones := GP32(), GP32()
	MOVL(n.(GPVirtual).As32(), rem)
	SUBL(i.(GPVirtual).As32(), rem)
	MOVL(I32(-1), ones)
	BZHIL(rem, ones, ones)
	m := K()
	KMOVW(ones, m)
	act512Block(y, i, lo, 1, silu, m)
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// act512Block emits the activation in place on nv vectors at y[i:], step
// by step across them; mask, when not nil, selects the lanes loaded (the
// others are zero) and stored.
func act512Block(y, i Register, lo VecVirtual, nv int, silu bool, mask Op) {
	each := func(f func(v int)) {
		for v := 0; v < nv; v++ {
			f(v)
		}
	}
	x, z, fx, p, t := make([]VecVirtual, nv), make([]VecVirtual, nv), make([]VecVirtual, nv), make([]VecVirtual, nv), make([]VecVirtual, nv)
	at := func(v int) Mem { return Mem{Base: y, Index: i, Scale: 4, Disp: 64 * v} }
	each(func(v int) {
		x[v], z[v], fx[v], p[v], t[v] = ZMM(), ZMM(), ZMM(), ZMM(), ZMM()
		if mask != nil {
			VMOVUPS_Z(at(v), mask, x[v])
		} else {
			VMOVUPS(at(v), x[v])
		}
	})
	Comment("z = max(-|x|, -104), NaN kept (the constant is the first source)")
	each(func(v int) { VPORD_BCST(k("signmask"), x[v], z[v]) })
	each(func(v int) { VMAXPS(z[v], lo, z[v]) })
	Comment("e = exp(z): Cephes expf, 2^n by VSCALEFPS")
	each(func(v int) { VMULPS_BCST(k("log2e"), z[v], fx[v]) })
	each(func(v int) { VRNDSCALEPS(U8(0), fx[v], fx[v]) })
	each(func(v int) { VFNMADD231PS_BCST(k("ln2hi"), fx[v], z[v]) })
	each(func(v int) { VFNMADD231PS_BCST(k("ln2lo"), fx[v], z[v]) })
	each(func(v int) { VBROADCASTSS(k("ep0"), p[v]) })
	for _, c := range []string{"ep1", "ep2", "ep3", "ep4", "ep5"} {
		each(func(v int) { VFMADD213PS_BCST(k(c), z[v], p[v]) })
	}
	each(func(v int) { VMULPS(z[v], z[v], t[v]) })
	each(func(v int) { VFMADD213PS(z[v], t[v], p[v]) }) // p = p*z*z + z
	each(func(v int) { VADDPS_BCST(k("one"), p[v], p[v]) })
	each(func(v int) { VSCALEFPS(fx[v], p[v], p[v]) })
	Comment("s = (x < 0 ? e : 1) / (1 + e)")
	each(func(v int) { VADDPS_BCST(k("one"), p[v], t[v]) })
	each(func(v int) {
		neg := K()
		VXORPS(z[v], z[v], z[v])
		VCMPPS(U8(1), z[v], x[v], neg) // x < 0 (false for NaN)
		VBROADCASTSS(k("one"), z[v])
		VMOVAPS(p[v], neg, z[v])
	})
	each(func(v int) { VDIVPS(t[v], z[v], z[v]) })
	if silu {
		each(func(v int) { VMULPS(x[v], z[v], z[v]) })
	}
	each(func(v int) {
		if mask != nil {
			VMOVUPS(z[v], mask, at(v))
		} else {
			VMOVUPS(z[v], at(v))
		}
	})
}

// hardSwish512 emits hardSwishAVX512: y[i] = x * min(max((x+3)*(1/6), 0), 1)
// for every i in [0, n), any n (the tail under a lane mask, so bits do not
// depend on where a row is split). (x+3) is exact near -3 (Sterbenz), so
// the gate keeps its relative accuracy where it is small. The twin is
// vecHardSwishGo (templates/k_elem_act.go): the same four roundings.
func hardSwish512() {
	name := "hardSwishAVX512"
	TEXT(name, NOSPLIT, "func(y *float32, n int)")
	Doc(
		name+" sets y[i] = y[i]*min(max((y[i]+3)/6, 0), 1) (HardSwish, the",
		"division as a multiply by float32(1/6)) for i in [0, n), any n.",
		"",
		"Requires: AVX512F, BMI2",
	)
	Pragma("noescape")
	y := Load(Param("y"), GP64())
	n := Load(Param("n"), GP64())
	zero := ZMM()
	VPXORD(zero, zero, zero)
	i := GP64()
	XORQ(i, i)
	end := GP64()
	MOVQ(n, end)
	ANDQ(I32(-64), end)
	block := func(nv int, mask Op) {
		x, t := make([]VecVirtual, nv), make([]VecVirtual, nv)
		at := func(v int) Mem { return Mem{Base: y, Index: i, Scale: 4, Disp: 64 * v} }
		for v := 0; v < nv; v++ {
			x[v], t[v] = ZMM(), ZMM()
			if mask != nil {
				VMOVUPS_Z(at(v), mask, x[v])
			} else {
				VMOVUPS(at(v), x[v])
			}
		}
		for v := 0; v < nv; v++ {
			VADDPS_BCST(k("three"), x[v], t[v])
			VMULPS_BCST(k("sixth"), t[v], t[v])
			VMAXPS(zero, t[v], t[v])
			VMINPS_BCST(k("one"), t[v], t[v])
			VMULPS(x[v], t[v], t[v])
			if mask != nil {
				VMOVUPS(t[v], mask, at(v))
			} else {
				VMOVUPS(t[v], at(v))
			}
		}
	}
	Label(name + "_four")
	CMPQ(i, end)
	JGE(LabelRef(name + "_one0"))
	block(4, nil)
	ADDQ(U8(64), i)
	JMP(LabelRef(name + "_four"))
	Label(name + "_one0")
	MOVQ(n, end)
	ANDQ(I32(-16), end)
	Label(name + "_one")
	CMPQ(i, end)
	JGE(LabelRef(name + "_tail"))
	block(1, nil)
	ADDQ(U8(16), i)
	JMP(LabelRef(name + "_one"))
	Label(name + "_tail")
	CMPQ(i, n)
	JGE(LabelRef(name + "_done"))
	rem, ones := GP32(), GP32()
	MOVL(n.(GPVirtual).As32(), rem)
	SUBL(i.(GPVirtual).As32(), rem)
	MOVL(I32(-1), ones)
	BZHIL(rem, ones, ones)
	m := K()
	KMOVW(ones, m)
	block(1, m)
	Label(name + "_done")
	VZEROUPPER()
	RET()
}
