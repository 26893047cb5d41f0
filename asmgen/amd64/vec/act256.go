package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// The float32 activation rows of act512.go and act512b.go on 8 lanes
// (AVX2 + FMA): sigmoid, SiLU, HardSwish, exp, tanh, GELU's tanh form,
// Mish, Elu, HardSigmoid, LeakyRelu and PRelu, in place on y[0:n] for any
// n: nv vectors at a time, then one, then the last n%8 under a VMASKMOVPS
// lane mask (the other lanes load as zero and are not stored), so every
// element goes through the same instructions wherever a row, a chunk or a
// thread's part begins or ends. Each takes the AVX-512 kernel's steps,
// instruction for instruction (the same FMAs, the same operand order of
// VMAXPS/VMINPS, so NaN is kept the same way), and so has its bits.
//
// AVX2 has no VSCALEFPS: exp's 2^n (n integral in [-150, 128]) is built as
// in the NEON rows (asmgen/arm64/vec): p times 2^h, h = floor(n/2), then
// times 2^(n-h), both factors normal floats made from their exponent
// bits; the first product is exact (p is in [0.5, 2]), so the result is
// rounded once, into the denormals and to +Inf as VSCALEFPS rounds it.

// tail8 is the lane-mask table of the masked tails: 8 words of all ones,
// then 8 of zeros; the 8 words at word 8-r have r leading ones.
var tail8 Mem

func tail8Table() {
	tail8 = GLOBL("vecTail8", RODATA|NOPTR)
	for l := 0; l < 16; l++ {
		v := uint32(0)
		if l < 8 {
			v = 0xffffffff
		}
		DATA(4*l, U32(v))
	}
}

// rows256 emits a kernel func(y *float32[, second *float32], n int[,
// params]) that applies body to nv vectors at a time, then to one, then
// to the masked tail; body gets the loaded vectors x (and s, read from
// the second row at the same index) and the broadcast params, and
// returns the results to store.
func rows256(name, doc, second string, params []string, nv int, body func(x, s, p []VecVirtual) []VecVirtual) {
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
	Doc(name+" sets "+doc+" for i in [0, n), any n", "(the tail under a VMASKMOVPS lane mask).", "", "Requires: AVX, AVX2, FMA")
	Pragma("noescape")
	y := Load(Param("y"), GP64())
	var sp Register
	if second != "" {
		sp = Load(Param(second), GP64())
	}
	n := Load(Param("n"), GP64())
	pv := make([]VecVirtual, len(params))
	for j, p := range params {
		pv[j] = YMM()
		VBROADCASTSS(paramAddr(p), pv[j])
	}
	i := GP64()
	XORQ(i, i)
	end := GP64()
	block := func(cnt int, mask Op) {
		load := func(base Register, v int) VecVirtual {
			r := YMM()
			at := Mem{Base: base, Index: i, Scale: 4, Disp: 32 * v}
			if mask != nil {
				VMASKMOVPS(at, mask, r)
			} else {
				VMOVUPS(at, r)
			}
			return r
		}
		x := make([]VecVirtual, cnt)
		for v := range x {
			x[v] = load(y, v)
		}
		var sv []VecVirtual
		if second != "" {
			sv = make([]VecVirtual, cnt)
			for v := range sv {
				sv[v] = load(sp, v)
			}
		}
		r := body(x, sv, pv)
		for v := range r {
			at := Mem{Base: y, Index: i, Scale: 4, Disp: 32 * v}
			if mask != nil {
				VMASKMOVPS(r[v], mask, at)
			} else {
				VMOVUPS(r[v], at)
			}
		}
	}
	MOVQ(n, end)
	ANDQ(I32(-8*nv), end)
	Label(name + "_many")
	CMPQ(i, end)
	JGE(LabelRef(name + "_one0"))
	block(nv, nil)
	ADDQ(U32(8*nv), i)
	JMP(LabelRef(name + "_many"))
	Label(name + "_one0")
	MOVQ(n, end)
	ANDQ(I32(-8), end)
	Label(name + "_one")
	CMPQ(i, end)
	JGE(LabelRef(name + "_tail"))
	block(1, nil)
	ADDQ(U8(8), i)
	JMP(LabelRef(name + "_one"))
	Label(name + "_tail")
	CMPQ(i, n)
	JGE(LabelRef(name + "_done"))
	Comment("mask: the first n-i lanes, the 8 words of vecTail8 from word 8-(n-i)")
	off, tb := GP64(), GP64()
	MOVQ(U32(8), off)
	ADDQ(i, off)
	SUBQ(n, off)
	LEAQ(tail8, tb)
	m := YMM()
	VMOVUPS(Mem{Base: tb, Index: off, Scale: 4}, m)
	block(1, m)
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// unary256 is rows256 without a second row.
func unary256(name, doc string, params []string, nv int, body func(x, p []VecVirtual) []VecVirtual) {
	rows256(name, doc, "", params, nv, func(x, _, p []VecVirtual) []VecVirtual { return body(x, p) })
}

// each256 runs f for every vector index.
func each256(nv int, f func(v int)) {
	for v := 0; v < nv; v++ {
		f(v)
	}
}

// bcst256 returns a register holding constant name in every lane.
func bcst256(name string) VecVirtual {
	r := YMM()
	VMOVUPS(k(name), r)
	return r
}

// zero256 returns a zeroed register.
func zero256() VecVirtual {
	r := YMM()
	VXORPS(r, r, r)
	return r
}

// exp256q is exp512q on 8 lanes: for each z (clamped to [-104, 89]), fx =
// round(z*log2e) and q = exp(z - fx*ln2) - 1; z is overwritten by r.
func exp256q(z []VecVirtual) (fx, q []VecVirtual) {
	nv := len(z)
	fx, q = make([]VecVirtual, nv), make([]VecVirtual, nv)
	each256(nv, func(v int) { fx[v], q[v] = YMM(), YMM() })
	each256(nv, func(v int) { VMULPS(k("log2e"), z[v], fx[v]) })
	each256(nv, func(v int) { VROUNDPS(U8(0), fx[v], fx[v]) }) // to nearest even
	each256(nv, func(v int) { VFNMADD231PS(k("ln2hi"), fx[v], z[v]) })
	each256(nv, func(v int) { VFNMADD231PS(k("ln2lo"), fx[v], z[v]) })
	each256(nv, func(v int) { VMOVUPS(k("ep0"), q[v]) })
	for _, c := range []string{"ep1", "ep2", "ep3", "ep4", "ep5"} {
		each256(nv, func(v int) { VFMADD213PS(k(c), z[v], q[v]) })
	}
	t := make([]VecVirtual, nv)
	each256(nv, func(v int) {
		t[v] = YMM()
		VMULPS(z[v], z[v], t[v])
	})
	each256(nv, func(v int) { VFMADD213PS(z[v], t[v], q[v]) }) // q = q*r*r + r
	return fx, q
}

// scale256 sets p = p * 2^fx (fx integral in [-150, 128], p in [0.5, 2))
// with one rounding, fx overwritten. When every lane's fx is in [-125,
// 127] (all but arguments near exp's clamps) p*2^fx is normal, so one
// factor 2^fx, built from its exponent bits, scales exactly; otherwise
// (or for a NaN) times 2^h, h = floor(fx/2), exactly, then times
// 2^(fx-h), each factor a normal float. Both give the bits of VSCALEFPS.
func scale256(p, fx []VecVirtual) {
	nv := len(p)
	scaleLabels++
	slow, done := fmt.Sprintf("scale256_%d_slow", scaleLabels), fmt.Sprintf("scale256_%d_done", scaleLabels)
	in := YMM()
	for v := 0; v < nv; v++ {
		lo, hi := YMM(), YMM()
		VCMPPS(U8(0x1d), k("fxLo"), fx[v], lo) // fx >= -125 (false for NaN)
		VCMPPS(U8(0x12), k("fxHi"), fx[v], hi) // fx <= 127
		VANDPS(hi, lo, lo)
		if v == 0 {
			VMOVAPS(lo, in)
		} else {
			VANDPS(lo, in, in)
		}
	}
	m := GP32()
	VMOVMSKPS(in, m)
	CMPL(m, U8(0xff))
	JNE(LabelRef(slow))
	each256(nv, func(v int) {
		t := YMM()
		VCVTTPS2DQ(fx[v], t)
		VPADDD(k("bias127"), t, t)
		VPSLLD(U8(23), t, t)
		VMULPS(t, p[v], p[v])
	})
	JMP(LabelRef(done))
	Label(slow)
	h := make([]VecVirtual, nv)
	each256(nv, func(v int) {
		h[v] = YMM()
		VMULPS(k("half"), fx[v], h[v])
		VROUNDPS(U8(1), h[v], h[v]) // floor
		VSUBPS(h[v], fx[v], fx[v])  // fx - h
	})
	for _, s := range [][]VecVirtual{h, fx} {
		each256(nv, func(v int) {
			VCVTTPS2DQ(s[v], s[v])
			VPADDD(k("bias127"), s[v], s[v])
			VPSLLD(U8(23), s[v], s[v])
			VMULPS(s[v], p[v], p[v])
		})
	}
	Label(done)
}

// scaleLabels numbers scale256's labels (it is emitted once per kernel
// block).
var scaleLabels int

// exp256 emits e = exp(z) for z clamped to [-104, 89] (expClampedGo); z is
// clobbered.
func exp256(z []VecVirtual) []VecVirtual {
	fx, q := exp256q(z)
	each256(len(z), func(v int) { VADDPS(k("one"), q[v], q[v]) })
	scale256(q, fx)
	return q
}

// clamp256 returns copies of x clamped to [lo, hi] (constant names; ""
// for none), NaN kept (the constant is the first source, as in clamp512).
func clamp256(x []VecVirtual, lo, hi string) []VecVirtual {
	z := make([]VecVirtual, len(x))
	each256(len(x), func(v int) {
		z[v] = YMM()
		VMOVAPS(x[v], z[v])
	})
	if lo != "" {
		l := bcst256(lo)
		each256(len(x), func(v int) { VMAXPS(z[v], l, z[v]) })
	}
	if hi != "" {
		h := bcst256(hi)
		each256(len(x), func(v int) { VMINPS(z[v], h, z[v]) })
	}
	return z
}

// sigmoid256On emits sigmoid(w) for each w by act512's steps (e =
// exp(max(-|w|, -104)), (w < 0 ? e : 1) / (1 + e)); w is kept.
func sigmoid256On(w []VecVirtual) []VecVirtual {
	nv := len(w)
	z := make([]VecVirtual, nv)
	lo := bcst256("sigLo")
	each256(nv, func(v int) {
		z[v] = YMM()
		VORPS(k("signmask"), w[v], z[v]) // -|w|
	})
	each256(nv, func(v int) { VMAXPS(z[v], lo, z[v]) })
	e := exp256(z)
	t := make([]VecVirtual, nv)
	each256(nv, func(v int) {
		t[v] = YMM()
		VADDPS(k("one"), e[v], t[v]) // 1 + e
	})
	each256(nv, func(v int) {
		neg := YMM()
		VXORPS(z[v], z[v], z[v])
		VCMPPS(U8(1), z[v], w[v], neg) // w < 0 (false for NaN)
		VMOVUPS(k("one"), z[v])
		VBLENDVPS(neg, e[v], z[v], z[v])
	})
	each256(nv, func(v int) { VDIVPS(t[v], z[v], z[v]) })
	return z
}

func act256() {
	tail8Table()
	unary256("sigmoidAVX2", "y[i] = sigmoid(y[i])", nil, 2, func(x, _ []VecVirtual) []VecVirtual {
		return sigmoid256On(x)
	})
	unary256("siluAVX2", "y[i] = y[i]*sigmoid(y[i]) (SiLU)", nil, 2, func(x, _ []VecVirtual) []VecVirtual {
		s := sigmoid256On(x)
		each256(len(x), func(v int) { VMULPS(x[v], s[v], s[v]) })
		return s
	})

	// HardSwish: x * min(max((x+3)*(1/6), 0), 1), hardSwish512's four
	// roundings.
	unary256("hardSwishAVX2", "y[i] = y[i]*min(max((y[i]+3)*float32(1/6), 0), 1) (HardSwish)", nil, 4, func(x, _ []VecVirtual) []VecVirtual {
		zero := zero256()
		t := make([]VecVirtual, len(x))
		each256(len(x), func(v int) {
			t[v] = YMM()
			VADDPS(k("three"), x[v], t[v])
			VMULPS(k("sixth"), t[v], t[v])
			VMAXPS(zero, t[v], t[v])
			VMINPS(k("one"), t[v], t[v])
			VMULPS(x[v], t[v], t[v])
		})
		return t
	})

	unary256("expAVX2", "y[i] = exp(y[i]) (the argument clamped to [-104, 89], NaN kept)", nil, 2, func(x, _ []VecVirtual) []VecVirtual {
		return exp256(clamp256(x, "sigLo", "expTop"))
	})

	// tanh: |x| < 0.625: x + (x*s)*P(s), s = x*x; else copysign((1-e)/(1+e),
	// x), e = exp(max(-2|x|, -104)).
	unary256("tanhAVX2", "y[i] = tanh(y[i])", nil, 2, func(x, _ []VecVirtual) []VecVirtual {
		nv := len(x)
		a, z := make([]VecVirtual, nv), make([]VecVirtual, nv)
		lo := bcst256("sigLo")
		each256(nv, func(v int) {
			a[v], z[v] = YMM(), YMM()
			VANDPS(k("absmask"), x[v], a[v])
			VMULPS(k("mtwo"), a[v], z[v])
		})
		each256(nv, func(v int) { VMAXPS(z[v], lo, z[v]) })
		e := exp256(z)
		one := bcst256("one")
		num := make([]VecVirtual, nv)
		each256(nv, func(v int) {
			num[v] = YMM()
			VSUBPS(e[v], one, num[v]) // 1 - e
			VADDPS(one, e[v], e[v])   // 1 + e
		})
		each256(nv, func(v int) { VDIVPS(e[v], num[v], num[v]) })
		each256(nv, func(v int) {
			t := YMM()
			VANDPS(k("signmask"), x[v], t)
			VORPS(t, num[v], num[v])
		})
		s, p := make([]VecVirtual, nv), make([]VecVirtual, nv)
		each256(nv, func(v int) {
			s[v], p[v] = YMM(), YMM()
			VMULPS(x[v], x[v], s[v])
			VMOVUPS(k("th4"), p[v])
		})
		for _, c := range []string{"th3", "th2", "th1", "th0"} {
			each256(nv, func(v int) { VFMADD213PS(k(c), s[v], p[v]) })
		}
		each256(nv, func(v int) { VMULPS(x[v], s[v], s[v]) })
		each256(nv, func(v int) { VFMADD213PS(x[v], s[v], p[v]) }) // p = p*(x*s) + x
		lim := bcst256("thSmall")
		each256(nv, func(v int) {
			small := YMM()
			VCMPPS(U8(1), lim, a[v], small) // |x| < 0.625
			VBLENDVPS(small, p[v], num[v], num[v])
		})
		return num
	})

	// GELU, tanh form: x * sigmoid(w), w = x*(x*x*(2c*0.044715) + 2c).
	unary256("geluTanhAVX2", "y[i] = x*sigmoid(2*sqrt(2/pi)*(x+0.044715*x^3)), x = y[i]", nil, 2, func(x, _ []VecVirtual) []VecVirtual {
		nv := len(x)
		w := make([]VecVirtual, nv)
		g1 := bcst256("gt1")
		each256(nv, func(v int) {
			w[v] = YMM()
			VMULPS(x[v], x[v], w[v])
			VFMADD213PS(k("gt0"), g1, w[v]) // w = x*x*g1 + g0
			VMULPS(x[v], w[v], w[v])
		})
		s := sigmoid256On(w)
		each256(nv, func(v int) { VMULPS(x[v], s[v], s[v]) })
		return s
	})

	// Mish: x * m/(m+2), m = e*(e+2), e = exp(min(x, 20)) (at least -104).
	unary256("mishAVX2", "y[i] = y[i]*tanh(log(1+exp(y[i]))) (Mish)", nil, 2, func(x, _ []VecVirtual) []VecVirtual {
		nv := len(x)
		e := exp256(clamp256(x, "sigLo", "mishTop"))
		m := make([]VecVirtual, nv)
		two := bcst256("two")
		each256(nv, func(v int) {
			m[v] = YMM()
			VADDPS(two, e[v], m[v])
			VMULPS(e[v], m[v], m[v]) // m = e*(e+2)
			VADDPS(two, m[v], e[v])  // m + 2
		})
		each256(nv, func(v int) { VDIVPS(e[v], m[v], m[v]) })
		each256(nv, func(v int) { VMULPS(x[v], m[v], m[v]) })
		return m
	})

	// Elu: x < 0 ? alpha*(s*q + (s-1)) : x, s = 2^n exact, q = exp(r)-1.
	unary256("eluAVX2", "y[i] = y[i] < 0 ? alpha*(exp(y[i])-1) : y[i] (Elu)", []string{"alpha"}, 2, func(x, p []VecVirtual) []VecVirtual {
		nv := len(x)
		fx, q := exp256q(clamp256(x, "sigLo", ""))
		s := make([]VecVirtual, nv)
		each256(nv, func(v int) { s[v] = bcst256("one") })
		scale256(s, fx) // s = 2^n (fx is clobbered)
		zero := zero256()
		each256(nv, func(v int) {
			VSUBPS(k("one"), s[v], fx[v])  // s - 1
			VFMADD213PS(fx[v], s[v], q[v]) // q = q*s + (s-1)
			VMULPS(p[0], q[v], q[v])
			neg := fx[v]
			VCMPPS(U8(1), zero, x[v], neg) // x < 0
			VBLENDVPS(neg, q[v], x[v], x[v])
		})
		return x
	})

	// HardSigmoid: min(max(alpha*x + beta, 0), 1) (one FMA; NaN kept).
	unary256("hardSigmoidAVX2", "y[i] = min(max(alpha*y[i]+beta, 0), 1) (HardSigmoid)", []string{"alpha", "beta"}, 4, func(x, p []VecVirtual) []VecVirtual {
		zero := zero256()
		one := bcst256("one")
		each256(len(x), func(v int) {
			VFMADD213PS(p[1], p[0], x[v]) // x = x*alpha + beta
			VMAXPS(x[v], zero, x[v])
			VMINPS(x[v], one, x[v])
		})
		return x
	})

	// LeakyRelu: x < 0 ? alpha*x : x (NaN and -0 kept).
	unary256("leakyReluAVX2", "y[i] = y[i] < 0 ? alpha*y[i] : y[i] (LeakyRelu)", []string{"alpha"}, 4, func(x, p []VecVirtual) []VecVirtual {
		zero := zero256()
		each256(len(x), func(v int) {
			neg, t := YMM(), YMM()
			VCMPPS(U8(1), zero, x[v], neg) // x < 0
			VMULPS(p[0], x[v], t)
			VBLENDVPS(neg, t, x[v], x[v])
		})
		return x
	})

	// PRelu with a slope per element.
	rows256("preluAVX2", "y[i] = y[i] < 0 ? s[i]*y[i] : y[i] (PRelu)", "s", nil, 4, func(x, sv, _ []VecVirtual) []VecVirtual {
		zero := zero256()
		each256(len(x), func(v int) {
			neg := YMM()
			VCMPPS(U8(1), zero, x[v], neg) // x < 0
			VMULPS(sv[v], x[v], sv[v])
			VBLENDVPS(neg, sv[v], x[v], x[v])
		})
		return x
	})
}
