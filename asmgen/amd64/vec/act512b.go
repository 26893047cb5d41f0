package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// More float32 activation rows on 16 lanes (AVX-512F): exp, tanh, GELU's
// tanh form, Mish, Elu and HardSigmoid, in place on y[0:n] for any n, the
// last n%16 under a lane mask (each lane through the same instructions,
// so an element's bits do not depend on where a row, a chunk or a
// thread's part begins or ends). The pure-Go twins, with the same
// roundings, are in templates/k_elem_act.go (vecExpGo2 ... ).
//
// exp is act512's: Cephes expf by FMAs on r = z - n*ln2, q = exp(r)-1 by
// the polynomial, exp(z) = 2^n*(1+q) by VSCALEFPS (denormals rounded
// once, overflow to +Inf), the argument clamped to [-104, 89] (NaN kept).

// unary512 emits a kernel func(y *float32, n int[, params]) that applies
// body to nv vectors at a time (then one, then the masked tail). body
// gets the loaded vectors and returns the results; params are float32
// arguments broadcast once into registers.
func unary512(name, doc string, params []string, nv int, body func(x []VecVirtual, p []VecVirtual) []VecVirtual) {
	rows512(name, doc, "", params, nv, func(x, _, p []VecVirtual) []VecVirtual { return body(x, p) })
}

// rows512 is unary512 with, when second is not "", a second row
// (second *float32 after y) read at the same index as y; body gets its
// vectors as s.
func rows512(name, doc, second string, params []string, nv int, body func(x, s, p []VecVirtual) []VecVirtual) {
	sig := "func(y *float32"
	if second != "" {
		sig += ", " + second + " *float32"
	}
	sig += ", n int"
	for _, p := range params {
		sig += ", " + p + " float32"
	}
	sig += ")"
	TEXT(name, NOSPLIT, sig)
	Doc(name+" sets "+doc+" for i in [0, n), any n", "(the tail under a lane mask).", "", "Requires: AVX512F, BMI2")
	Pragma("noescape")
	y := Load(Param("y"), GP64())
	var sp Register
	if second != "" {
		sp = Load(Param(second), GP64())
	}
	n := Load(Param("n"), GP64())
	pv := make([]VecVirtual, len(params))
	for j, p := range params {
		pv[j] = ZMM()
		VBROADCASTSS(paramAddr(p), pv[j])
	}
	i := GP64()
	XORQ(i, i)
	end := GP64()
	block := func(cnt int, mask Op) {
		at := func(v int) Mem { return Mem{Base: y, Index: i, Scale: 4, Disp: 64 * v} }
		x := make([]VecVirtual, cnt)
		for v := range x {
			x[v] = ZMM()
			if mask != nil {
				VMOVUPS_Z(at(v), mask, x[v])
			} else {
				VMOVUPS(at(v), x[v])
			}
		}
		var sv []VecVirtual
		if second != "" {
			sv = make([]VecVirtual, cnt)
			for v := range sv {
				sv[v] = ZMM()
				sat := Mem{Base: sp, Index: i, Scale: 4, Disp: 64 * v}
				if mask != nil {
					VMOVUPS_Z(sat, mask, sv[v])
				} else {
					VMOVUPS(sat, sv[v])
				}
			}
		}
		r := body(x, sv, pv)
		for v := range r {
			if mask != nil {
				VMOVUPS(r[v], mask, at(v))
			} else {
				VMOVUPS(r[v], at(v))
			}
		}
	}
	MOVQ(n, end)
	ANDQ(I32(-16*nv), end)
	Label(name + "_many")
	CMPQ(i, end)
	JGE(LabelRef(name + "_one0"))
	block(nv, nil)
	ADDQ(U32(16*nv), i)
	JMP(LabelRef(name + "_many"))
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

// each runs f for every vector index.
func each512(nv int, f func(v int)) {
	for v := 0; v < nv; v++ {
		f(v)
	}
}

// exp512q emits, for each z (already clamped to [-104, 89]), fx = round(z*log2e)
// and q = exp(z - fx*ln2) - 1 (Cephes' polynomial); z is overwritten by r.
func exp512q(z []VecVirtual) (fx, q []VecVirtual) {
	nv := len(z)
	fx, q = make([]VecVirtual, nv), make([]VecVirtual, nv)
	t := make([]VecVirtual, nv)
	each512(nv, func(v int) { fx[v], q[v], t[v] = ZMM(), ZMM(), ZMM() })
	each512(nv, func(v int) { VMULPS_BCST(k("log2e"), z[v], fx[v]) })
	each512(nv, func(v int) { VRNDSCALEPS(U8(0), fx[v], fx[v]) })
	each512(nv, func(v int) { VFNMADD231PS_BCST(k("ln2hi"), fx[v], z[v]) })
	each512(nv, func(v int) { VFNMADD231PS_BCST(k("ln2lo"), fx[v], z[v]) })
	each512(nv, func(v int) { VBROADCASTSS(k("ep0"), q[v]) })
	for _, c := range []string{"ep1", "ep2", "ep3", "ep4", "ep5"} {
		each512(nv, func(v int) { VFMADD213PS_BCST(k(c), z[v], q[v]) })
	}
	each512(nv, func(v int) { VMULPS(z[v], z[v], t[v]) })
	each512(nv, func(v int) { VFMADD213PS(z[v], t[v], q[v]) }) // q = q*r*r + r
	return fx, q
}

// exp512 emits e = exp(z) for z clamped to [-104, 89]; z is clobbered.
func exp512(z []VecVirtual) []VecVirtual {
	fx, q := exp512q(z)
	each512(len(z), func(v int) { VADDPS_BCST(k("one"), q[v], q[v]) })
	each512(len(z), func(v int) { VSCALEFPS(fx[v], q[v], q[v]) })
	return q
}

// clamp512 returns copies of x clamped to [lo, hi] (constant names; ""
// for none), NaN kept (the constant is the first source).
func clamp512(x []VecVirtual, lo, hi string) []VecVirtual {
	z := make([]VecVirtual, len(x))
	each512(len(x), func(v int) {
		z[v] = ZMM()
		VMOVAPS(x[v], z[v])
	})
	if lo != "" {
		l := ZMM()
		VBROADCASTSS(k(lo), l)
		each512(len(x), func(v int) { VMAXPS(z[v], l, z[v]) })
	}
	if hi != "" {
		h := ZMM()
		VBROADCASTSS(k(hi), h)
		each512(len(x), func(v int) { VMINPS(z[v], h, z[v]) })
	}
	return z
}

// sigmoid512On emits sigmoid(w) for each w by act512's steps (e =
// exp(-|w|), (w < 0 ? e : 1) / (1 + e)); w is kept.
func sigmoid512On(w []VecVirtual) []VecVirtual {
	nv := len(w)
	z := make([]VecVirtual, nv)
	lo := ZMM()
	VBROADCASTSS(k("sigLo"), lo)
	each512(nv, func(v int) {
		z[v] = ZMM()
		VPORD_BCST(k("signmask"), w[v], z[v])
	})
	each512(nv, func(v int) { VMAXPS(z[v], lo, z[v]) })
	e := exp512(z)
	t := make([]VecVirtual, nv)
	each512(nv, func(v int) {
		t[v] = ZMM()
		VADDPS_BCST(k("one"), e[v], t[v])
	})
	each512(nv, func(v int) {
		neg := K()
		VXORPS(z[v], z[v], z[v])
		VCMPPS(U8(1), z[v], w[v], neg) // w < 0 (false for NaN)
		VBROADCASTSS(k("one"), z[v])
		VMOVAPS(e[v], neg, z[v])
	})
	each512(nv, func(v int) { VDIVPS(t[v], z[v], z[v]) })
	return z
}

// bcst512 returns a register holding constant name in every lane.
func bcst512(name string) VecVirtual {
	r := ZMM()
	VBROADCASTSS(k(name), r)
	return r
}

// signOr512 sets r[v] |= x[v] & sign (r non-negative: copysign).
func signOr512(x, r []VecVirtual) {
	each512(len(x), func(v int) {
		t := ZMM()
		VANDPS_BCST(k("signmask"), x[v], t)
		VORPS(t, r[v], r[v])
	})
}

func act512b() {
	// exp(x), x clamped to [-104, 89] (so exp overflows to +Inf and
	// underflows to 0 as float32 does).
	unary512("expAVX512", "y[i] = exp(y[i])", nil, 4, func(x, _ []VecVirtual) []VecVirtual {
		return exp512(clamp512(x, "sigLo", "expTop"))
	})

	// tanh: |x| < 0.625: Cephes' odd polynomial x + (x*s)*P(s), s = x*x;
	// else copysign((1-e)/(1+e), x), e = exp(max(-2|x|, -104)). NaN: the
	// compare is false and the exp path keeps it.
	unary512("tanhAVX512", "y[i] = tanh(y[i])", nil, 2, func(x, _ []VecVirtual) []VecVirtual {
		nv := len(x)
		a, z := make([]VecVirtual, nv), make([]VecVirtual, nv)
		lo := bcst512("sigLo")
		each512(nv, func(v int) {
			a[v], z[v] = ZMM(), ZMM()
			VANDPS_BCST(k("absmask"), x[v], a[v])
			VMULPS_BCST(k("mtwo"), a[v], z[v])
		})
		each512(nv, func(v int) { VMAXPS(z[v], lo, z[v]) })
		e := exp512(z)
		one := bcst512("one")
		num := make([]VecVirtual, nv)
		each512(nv, func(v int) {
			num[v] = ZMM()
			VSUBPS(e[v], one, num[v]) // 1 - e
			VADDPS(one, e[v], e[v])   // 1 + e
		})
		each512(nv, func(v int) { VDIVPS(e[v], num[v], num[v]) })
		signOr512(x, num)
		s, p := make([]VecVirtual, nv), make([]VecVirtual, nv)
		each512(nv, func(v int) {
			s[v], p[v] = ZMM(), ZMM()
			VMULPS(x[v], x[v], s[v])
			VBROADCASTSS(k("th4"), p[v])
		})
		for _, c := range []string{"th3", "th2", "th1", "th0"} {
			each512(nv, func(v int) { VFMADD213PS_BCST(k(c), s[v], p[v]) })
		}
		each512(nv, func(v int) { VMULPS(x[v], s[v], s[v]) })
		each512(nv, func(v int) { VFMADD213PS(x[v], s[v], p[v]) }) // p = p*(x*s) + x
		lim := bcst512("thSmall")
		each512(nv, func(v int) {
			small := K()
			VCMPPS(U8(1), lim, a[v], small) // |x| < 0.625
			VMOVAPS(p[v], small, num[v])
		})
		return num
	})

	// GELU, tanh form: x * sigmoid(w), w = 2u = x*(x*x*(2c*0.044715) + 2c),
	// c = sqrt(2/pi): 0.5*(1+tanh(u)) = sigmoid(2u), accurate for negative
	// x where 1+tanh(u) cancels.
	unary512("geluTanhAVX512", "y[i] = x*sigmoid(2*sqrt(2/pi)*(x+0.044715*x^3)), x = y[i]", nil, 2, func(x, _ []VecVirtual) []VecVirtual {
		nv := len(x)
		w := make([]VecVirtual, nv)
		g1 := bcst512("gt1")
		each512(nv, func(v int) {
			w[v] = ZMM()
			VMULPS(x[v], x[v], w[v])
			VFMADD213PS_BCST(k("gt0"), g1, w[v]) // w = x*x*g1 + g0
			VMULPS(x[v], w[v], w[v])
		})
		s := sigmoid512On(w)
		each512(nv, func(v int) { VMULPS(x[v], s[v], s[v]) })
		return s
	})

	// Mish: x * tanh(softplus(x)) = x * m/(m+2), m = e*(e+2), e =
	// exp(min(x, 20)) (clamped below at -104): no cancellation on either
	// side (at x = 20 the ratio is 1 in float32).
	unary512("mishAVX512", "y[i] = y[i]*tanh(log(1+exp(y[i]))) (Mish)", nil, 2, func(x, _ []VecVirtual) []VecVirtual {
		nv := len(x)
		e := exp512(clamp512(x, "sigLo", "mishTop"))
		m := make([]VecVirtual, nv)
		two := bcst512("two")
		each512(nv, func(v int) {
			m[v] = ZMM()
			VADDPS(two, e[v], m[v])
			VMULPS(e[v], m[v], m[v]) // m = e*(e+2)
			VADDPS(two, m[v], e[v])  // m + 2
		})
		each512(nv, func(v int) { VDIVPS(e[v], m[v], m[v]) })
		each512(nv, func(v int) { VMULPS(x[v], m[v], m[v]) })
		return m
	})

	// Elu: x < 0 ? alpha*expm1(x) : x, expm1(x) = s*q + (s-1), s = 2^n
	// (exact) and q = exp(r)-1, x clamped below at -104.
	unary512("eluAVX512", "y[i] = y[i] < 0 ? alpha*(exp(y[i])-1) : y[i] (Elu)", []string{"alpha"}, 2, func(x, p []VecVirtual) []VecVirtual {
		nv := len(x)
		fx, q := exp512q(clamp512(x, "sigLo", ""))
		one := bcst512("one")
		s := make([]VecVirtual, nv)
		each512(nv, func(v int) {
			s[v] = ZMM()
			VSCALEFPS(fx[v], one, s[v])    // s = 2^n
			VSUBPS(one, s[v], fx[v])       // s - 1
			VFMADD213PS(fx[v], s[v], q[v]) // q = q*s + (s-1)
			VMULPS(p[0], q[v], q[v])
		})
		zero := ZMM()
		VXORPS(zero, zero, zero)
		r := make([]VecVirtual, nv)
		each512(nv, func(v int) {
			r[v] = ZMM()
			VMOVAPS(x[v], r[v])
			neg := K()
			VCMPPS(U8(1), zero, x[v], neg) // x < 0
			VMOVAPS(q[v], neg, r[v])
		})
		return r
	})

	// HardSigmoid: min(max(alpha*x + beta, 0), 1) (one FMA; NaN kept).
	unary512("hardSigmoidAVX512", "y[i] = min(max(alpha*y[i]+beta, 0), 1) (HardSigmoid)", []string{"alpha", "beta"}, 4, func(x, p []VecVirtual) []VecVirtual {
		zero := ZMM()
		VXORPS(zero, zero, zero)
		one := bcst512("one")
		each512(len(x), func(v int) {
			VFMADD213PS(p[1], p[0], x[v]) // x = x*alpha + beta
			VMAXPS(x[v], zero, x[v])
			VMINPS(x[v], one, x[v])
		})
		return x
	})

	// LeakyRelu (and PRelu with one slope per row): x < 0 ? alpha*x : x
	// (the product rounded once, as float64's x*alpha rounded to float32;
	// NaN and -0 kept).
	unary512("leakyReluAVX512", "y[i] = y[i] < 0 ? alpha*y[i] : y[i] (LeakyRelu)", []string{"alpha"}, 4, func(x, p []VecVirtual) []VecVirtual {
		zero := ZMM()
		VXORPS(zero, zero, zero)
		each512(len(x), func(v int) {
			neg := K()
			VCMPPS(U8(1), zero, x[v], neg) // x < 0
			VMULPS(p[0], x[v], neg, x[v])
		})
		return x
	})

	// PRelu with a slope per element (a channel-last slope vector).
	rows512("preluAVX512", "y[i] = y[i] < 0 ? s[i]*y[i] : y[i] (PRelu)", "s", nil, 4, func(x, sv, _ []VecVirtual) []VecVirtual {
		zero := ZMM()
		VXORPS(zero, zero, zero)
		each512(len(x), func(v int) {
			neg := K()
			VCMPPS(U8(1), zero, x[v], neg) // x < 0
			VMULPS(sv[v], x[v], neg, x[v])
		})
		return x
	})
}
