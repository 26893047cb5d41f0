// Command vec generates the NEON activation rows of package templates
// (sigmoid, SiLU, HardSwish, exp, tanh, GELU-tanh, Mish, Elu, HardSigmoid,
// LeakyRelu, PRelu) with asmgen/arm64/build. They take the steps of the
// AVX-512 rows (asmgen/amd64/vec, act512.go and act512b.go) and of their
// pure-Go twins in templates/k_elem_act.go, the test references, on four
// lanes at a time; the dispatch (templates/k_elem_act_arm64.go) pads the
// last n%4 elements into a local vector so every element takes the same
// instructions wherever a row is split.
//
// exp's 2^n: where AVX-512 has VSCALEFPS (p*2^n, one rounding), NEON
// multiplies by 2^h and then 2^(n-h), h = floor(n/2), both normal for n in
// [-150, 128]: the first product is exact, so the result is rounded once,
// as the twins' math.Ldexp in float64 then float32 is.
//
//	go generate ./asmgen/arm64/vec
package main

//go:generate go run . -pkg templates -out ../../../templates/asm_vec_arm64.s -stubs ../../../templates/asm_vec_arm64.go

import (
	"fmt"
	"math"

	. "github.com/cuvil/cuvil/asmgen/arm64/build"
)

func main() {
	f := NewFile("arm64 && !purego")
	unary(f, "sigmoidNEON", "sigmoid(y[i])", sigmoid(false))
	unary(f, "siluNEON", "y[i]*sigmoid(y[i]) (SiLU)", sigmoid(true))
	unary(f, "hardSwishNEON", "y[i]*min(max((y[i]+3)*float32(1/6), 0), 1) (HardSwish)", hardSwish)
	unary(f, "expNEON", "exp(y[i]) (the argument clamped to [-104, 89], NaN kept)", expRow)
	unary(f, "tanhNEON", "tanh(y[i])", tanhRow)
	unary(f, "geluTanhNEON", "y[i]*sigmoid(2u), u = sqrt(2/pi)*(y[i] + 0.044715*y[i]^3) (GELU, tanh form)", geluTanh)
	unary(f, "mishNEON", "y[i]*m/(m+2), m = e*(e+2), e = exp(min(y[i], 20)) (Mish)", mish)
	param(f, "eluNEON", "y[i] < 0 ? alpha*expm1(y[i]) : y[i] (Elu)", []string{"alpha"}, elu)
	param(f, "hardSigmoidNEON", "min(max(alpha*y[i] + beta, 0), 1) (HardSigmoid, one FMA; a zero keeps its sign)", []string{"alpha", "beta"}, hardSigmoid)
	param(f, "leakyReluNEON", "alpha*y[i] where y[i] < 0 (LeakyRelu)", []string{"alpha"}, leakyRelu)
	prelu(f)
	f.Generate()
}

// cst is a named float32 constant the kernels broadcast into a register.
var cst = map[string]float32{
	"one": 1, "two": 2, "half": 0.5, "sigLo": -104, "expTop": 89, "mishTop": 20, "mtwo": -2,
	"log2e": float32(math.Log2E), "ln2hi": 0.693359375, "ln2lo": -2.12194440e-4,
	"ep0": 1.9875691500e-4, "ep1": 1.3981999507e-3, "ep2": 8.3334519073e-3,
	"ep3": 4.1665795894e-2, "ep4": 1.6666665459e-1, "ep5": 5.0000001201e-1,
	"three": 3, "sixth": 1.0 / 6, "thSmall": 0.625,
	"th4": -5.70498872745e-3, "th3": 2.06390887954e-2, "th2": -5.37397155531e-2,
	"th1": 1.33314422036e-1, "th0": -3.33332819422e-1,
	"gt1": float32(2 * 0.7978845608028654 * 0.044715), "gt0": float32(2 * 0.7978845608028654),
	"signmask": math.Float32frombits(0x80000000), "bias127": math.Float32frombits(127),
}

// kern is the code generator of one kernel: consts lists the constants
// it needs in registers (loaded once), step emits the activation on the
// vectors xs in place, with scratch registers from fn.
type kern struct {
	consts []string
	step   func(g *gen, xs []V)
}

// narrow lists the kernels that run one vector per iteration: tanh's two
// paths and exp's registers do not fit twice in 32.
var narrow = map[string]bool{"tanhNEON": true}

// gen holds a kernel's constant registers and parameters while it is
// emitted.
type gen struct {
	fn *Func
	k  map[string]V
}

// c is the register of a named constant (or parameter).
func (g *gen) c(name string) V {
	v, ok := g.k[name]
	if !ok {
		panic(g.fn.Name + ": constant " + name + " not loaded")
	}
	return v
}

// tmp allocates one scratch register per vector.
func (g *gen) tmp(n int) []V {
	vs := make([]V, n)
	for i := range vs {
		vs[i] = g.fn.AllocV()
	}
	return vs
}

func (g *gen) free(vss ...[]V) {
	for _, vs := range vss {
		g.fn.FreeV(vs...)
	}
}

// mov copies s into d.
func (g *gen) mov(d, s V) { g.fn.I("VORR", s.B16(), s.B16(), d.B16()) }

// fmaTo sets d = c + a*b (one rounding): d gets c, then FMLA.
func (g *gen) fmaTo(d, a, b, c V) {
	g.mov(d, c)
	g.fn.I("VFMLA", a.S4(), b.S4(), d.S4())
}

// unroll is the vectors per main-loop iteration (independent chains).
const unroll = 2

// unary emits name(y *float32, n int), n a multiple of 4.
func unary(f *File, name, what string, k kern) { param(f, name, what, nil, k) }

// param emits name(y *float32, n int, params... float32).
func param(f *File, name, what string, params []string, k kern) {
	fn := f.Func(name, fmt.Sprintf("sets y[i] = %s\nfor i in [0, n), n a multiple of 4 (the caller pads the tail).", what), "ASIMD")
	ay, an := fn.Arg("y", "*float32"), fn.Arg("n", "int")
	var ap []Arg
	for _, p := range params {
		ap = append(ap, fn.Arg(p, "float32"))
	}
	fn.Comment("R0 = y, R1 = end of y, R2 = end of the unrolled part")
	fn.Load(ay, "R0")
	fn.Load(an, "R1")
	fn.I("ADD", "R1<<2", "R0", "R1")
	wide := unroll
	if narrow[name] {
		wide = 1
	}
	if wide > 1 {
		fn.Load(an, "R2")
		fn.I("AND", fmt.Sprintf("$%d", -4*wide), "R2", "R2")
		fn.I("ADD", "R2<<2", "R0", "R2")
	}
	g := &gen{fn: fn, k: map[string]V{}}
	loadConsts(g, k.consts)
	for i, a := range ap {
		v := fn.AllocV()
		fn.Load(a, v.F())
		fn.I("VDUP", fmt.Sprintf("V%d.S[0]", v), v.S4())
		g.k[params[i]] = v
	}
	loop := func(label string, nv int, end string) {
		xs := g.tmp(nv)
		fn.Label(name + "_" + label)
		fn.I("CMP", end, "R0")
		fn.I("BGE", name+"_"+label+"_done")
		fn.I("VLD1", "(R0)", List(xs...))
		k.step(g, xs)
		fn.I("VST1.P", List(xs...), fmt.Sprintf("%d(R0)", 16*nv))
		fn.I("B", name+"_"+label)
		fn.Label(name + "_" + label + "_done")
		g.free(xs)
	}
	if wide > 1 {
		fn.Comment("%d vectors at a time, then one", wide)
		loop("wide", wide, "R2")
	}
	loop("one", 1, "R1")
	fn.I("RET")
}

// loadConsts broadcasts the named constants into registers of their own.
func loadConsts(g *gen, names []string) {
	if len(names) > 0 {
		g.fn.Comment("Constants: %v", names)
	}
	for _, name := range names {
		v, ok := cst[name]
		if !ok {
			panic("no constant " + name)
		}
		r := g.fn.AllocV()
		g.fn.I("MOVW", fmt.Sprintf("$0x%08x", math.Float32bits(v)), "R3")
		g.fn.I("VDUP", "R3", r.S4())
		g.k[name] = r
	}
}

var expConsts = []string{"log2e", "ln2hi", "ln2lo", "ep0", "ep1", "ep2", "ep3", "ep4", "ep5", "one", "half", "bias127"}

// expQ emits expQGo on z (in [-104, 89], NaN kept): fx = round(z*log2e)
// and q = exp(z - fx*ln2) - 1 by Cephes' polynomial; z is overwritten.
func expQ(g *gen, z []V) (fx, q []V) {
	fn := g.fn
	fx, q = g.tmp(len(z)), g.tmp(len(z))
	t := g.tmp(len(z))
	fn.Comment("fx = round(z*log2e), r = z - fx*ln2hi - fx*ln2lo")
	for i := range z {
		fn.Word(FMUL(fx[i], z[i], g.c("log2e")))
		fn.Word(FRINTN(fx[i], fx[i]))
	}
	for i := range z {
		fn.I("VFMLS", fx[i].S4(), g.c("ln2hi").S4(), z[i].S4())
		fn.I("VFMLS", fx[i].S4(), g.c("ln2lo").S4(), z[i].S4())
	}
	fn.Comment("q = p(r)*r*r + r, p by Horner from ep0")
	for i := range z {
		g.fmaTo(q[i], g.c("ep0"), z[i], g.c("ep1"))
	}
	for _, c := range []string{"ep2", "ep3", "ep4", "ep5"} {
		for i := range z {
			g.fmaTo(t[i], q[i], z[i], g.c(c))
			g.mov(q[i], t[i])
		}
	}
	for i := range z {
		fn.Word(FMUL(t[i], z[i], z[i]))
	}
	for i := range z {
		// q = q*(r*r) + r
		g.fn.I("VFMLA", q[i].S4(), t[i].S4(), z[i].S4())
		g.mov(q[i], z[i])
	}
	g.free(t)
	return fx, q
}

// scale2 sets p = p * 2^fx (fx integral in [-150, 128]) with one rounding:
// p times 2^h, h = floor(fx/2), exactly, then times 2^(fx-h); fx is
// overwritten.
func scale2(g *gen, p, fx []V) {
	fn := g.fn
	h, e := g.tmp(len(p)), g.tmp(len(p))
	fn.Comment("p *= 2^h * 2^(fx-h), h = floor(fx/2): one rounding")
	for i := range p {
		fn.Word(FMUL(h[i], fx[i], g.c("half")))
		fn.Word(FRINTM(h[i], h[i]))
		fn.Word(FSUB(fx[i], fx[i], h[i]))
	}
	for _, s := range [][]V{h, fx} {
		for i := range p {
			fn.Word(FCVTZS(e[i], s[i]))
			fn.I("VADD", g.c("bias127").S4(), e[i].S4(), e[i].S4())
			fn.I("VSHL", "$23", e[i].S4(), e[i].S4())
			fn.Word(FMUL(p[i], p[i], e[i]))
		}
	}
	g.free(h, e)
}

// expClamped emits e = exp(z) for z in [-104, 89] (expClampedGo) into a
// new register per vector; z is overwritten.
func expClamped(g *gen, z []V) []V {
	fx, q := expQ(g, z)
	for i := range q {
		g.fn.Word(FADD(q[i], q[i], g.c("one")))
	}
	scale2(g, q, fx)
	g.free(fx)
	return q
}

// sigmoidOf sets each x to sigmoid(x) (vecSigmoidGo): e = exp(max(-|x|,
// -104)), s = (x < 0 ? e : 1) / (1 + e); with mul, x*s. x is kept until
// the end.
func sigmoidOf(g *gen, xs []V, mul bool) {
	fn := g.fn
	z := g.tmp(len(xs))
	fn.Comment("z = max(-|x|, -104) (NaN kept)")
	for i, x := range xs {
		fn.I("VORR", g.c("signmask").B16(), x.B16(), z[i].B16())
		fn.Word(FMAX(z[i], z[i], g.c("sigLo")))
	}
	e := expClamped(g, z)
	fn.Comment("s = (x < 0 ? e : 1) / (1 + e)")
	for i, x := range xs {
		fn.Word(FADD(z[i], e[i], g.c("one")))
		m := fn.AllocV()
		fn.Word(FCMLT0(m, x))
		fn.I("VBIF", m.B16(), g.c("one").B16(), e[i].B16()) // e where x < 0, else 1
		fn.FreeV(m)
		fn.Word(FDIV(e[i], e[i], z[i]))
		if mul {
			fn.Word(FMUL(x, x, e[i]))
		} else {
			g.mov(x, e[i])
		}
	}
	g.free(z, e)
}

var sigConsts = append([]string{"signmask", "sigLo"}, expConsts...)

func sigmoid(mul bool) kern {
	return kern{sigConsts, func(g *gen, xs []V) { sigmoidOf(g, xs, mul) }}
}

var hardSwish = kern{[]string{"three", "sixth", "one"}, func(g *gen, xs []V) {
	fn := g.fn
	t := g.tmp(len(xs))
	zero := fn.AllocV()
	fn.I("VEOR", zero.B16(), zero.B16(), zero.B16())
	fn.Comment("t = min(max((x+3)*(1/6), 0), 1), y = x*t")
	for i, x := range xs {
		fn.Word(FADD(t[i], x, g.c("three")))
		fn.Word(FMUL(t[i], t[i], g.c("sixth")))
		fn.Word(FMAX(t[i], t[i], zero))
		fn.Word(FMIN(t[i], t[i], g.c("one")))
		fn.Word(FMUL(x, x, t[i]))
	}
	fn.FreeV(zero)
	g.free(t)
}}

var expRow = kern{append([]string{"sigLo", "expTop"}, expConsts...), func(g *gen, xs []V) {
	fn := g.fn
	z := g.tmp(len(xs))
	fn.Comment("z = min(max(x, -104), 89) (NaN kept)")
	for i, x := range xs {
		fn.Word(FMAX(z[i], x, g.c("sigLo")))
		fn.Word(FMIN(z[i], z[i], g.c("expTop")))
	}
	e := expClamped(g, z)
	for i, x := range xs {
		g.mov(x, e[i])
	}
	g.free(z, e)
}}

var tanhRow = kern{append([]string{"signmask", "sigLo", "mtwo", "thSmall", "th4", "th3", "th2", "th1", "th0"}, expConsts...), func(g *gen, xs []V) {
	fn := g.fn
	a, s, p := g.tmp(len(xs)), g.tmp(len(xs)), g.tmp(len(xs))
	fn.Comment("Small |x| < 0.625: p(s)*x*s + x, s = x*x")
	for i, x := range xs {
		fn.Word(FMUL(s[i], x, x))
		g.fmaTo(p[i], g.c("th4"), s[i], g.c("th3"))
		for _, c := range []string{"th2", "th1", "th0"} {
			g.fmaTo(a[i], p[i], s[i], g.c(c))
			g.mov(p[i], a[i])
		}
		fn.Word(FMUL(s[i], x, s[i]))
		g.mov(a[i], x)
		fn.I("VFMLA", p[i].S4(), s[i].S4(), a[i].S4())
		g.mov(p[i], a[i])
	}
	fn.Comment("Large: e = exp(max(-2|x|, -104)), (1-e)/(1+e) with x's sign")
	for i, x := range xs {
		fn.Word(FABS(a[i], x))
		fn.Word(FMUL(s[i], a[i], g.c("mtwo")))
		fn.Word(FMAX(s[i], s[i], g.c("sigLo")))
	}
	e := expClamped(g, s)
	for i, x := range xs {
		fn.Word(FSUB(s[i], g.c("one"), e[i]))
		fn.Word(FADD(e[i], g.c("one"), e[i]))
		fn.Word(FDIV(s[i], s[i], e[i]))
		fn.I("VBIT", g.c("signmask").B16(), x.B16(), s[i].B16()) // x's sign bit
		fn.Comment("Small where |x| < 0.625; NaN: |x| compares false, s is NaN")
		m := fn.AllocV()
		fn.Word(FCMGT(m, g.c("thSmall"), a[i]))
		fn.I("VBIT", m.B16(), p[i].B16(), s[i].B16())
		fn.FreeV(m)
		g.mov(x, s[i])
	}
	g.free(a, s, p, e)
}}

var geluTanh = kern{append([]string{"gt1", "gt0"}, sigConsts...), func(g *gen, xs []V) {
	fn := g.fn
	w, u := g.tmp(len(xs)), g.tmp(len(xs))
	fn.Comment("w = x*x*gt1 + gt0, u = x*w: y = x*sigmoid(u)")
	for i, x := range xs {
		fn.Word(FMUL(u[i], x, x))
		g.fmaTo(w[i], u[i], g.c("gt1"), g.c("gt0"))
		fn.Word(FMUL(u[i], x, w[i]))
	}
	g.free(w)
	sigmoidOf(g, u, false)
	for i, x := range xs {
		fn.Word(FMUL(x, x, u[i]))
	}
	g.free(u)
}}

var mish = kern{append([]string{"sigLo", "mishTop", "two"}, expConsts...), func(g *gen, xs []V) {
	fn := g.fn
	z := g.tmp(len(xs))
	fn.Comment("e = exp(min(max(x, -104), 20)), m = (e+2)*e, y = x*(m/(m+2)); NaN kept")
	for i, x := range xs {
		fn.Word(FMAX(z[i], x, g.c("sigLo")))
		fn.Word(FMIN(z[i], z[i], g.c("mishTop")))
	}
	e := expClamped(g, z)
	for i, x := range xs {
		fn.Word(FADD(z[i], e[i], g.c("two")))
		fn.Word(FMUL(e[i], z[i], e[i]))
		fn.Word(FADD(z[i], e[i], g.c("two")))
		fn.Word(FDIV(e[i], e[i], z[i]))
		fn.Word(FMUL(x, x, e[i]))
	}
	g.free(z, e)
}}

var elu = kern{append([]string{"sigLo"}, expConsts...), func(g *gen, xs []V) {
	fn := g.fn
	z := g.tmp(len(xs))
	fn.Comment("x < 0: fx, q = expQ(max(x, -104)), s = 2^fx, (q*s + (s-1))*alpha")
	for i, x := range xs {
		fn.Word(FMAX(z[i], x, g.c("sigLo")))
	}
	fx, q := expQ(g, z)
	for i := range xs {
		g.mov(z[i], g.c("one"))
	}
	scale2(g, z, fx)
	for i, x := range xs {
		fn.Word(FSUB(fx[i], z[i], g.c("one")))
		fn.I("VFMLA", q[i].S4(), z[i].S4(), fx[i].S4())
		fn.Word(FMUL(fx[i], fx[i], g.c("alpha")))
		m := fn.AllocV()
		fn.Word(FCMLT0(m, x))
		fn.I("VBIT", m.B16(), fx[i].B16(), x.B16())
		fn.FreeV(m)
	}
	g.free(z, fx, q)
}}

var hardSigmoid = kern{[]string{"one"}, func(g *gen, xs []V) {
	fn := g.fn
	t, m := g.tmp(len(xs)), g.tmp(len(xs))
	zero := fn.AllocV()
	fn.I("VEOR", zero.B16(), zero.B16(), zero.B16())
	fn.Comment("t = alpha*x + beta; 0 where t < 0, 1 where t > 1 (NaN and -0 kept)")
	for i, x := range xs {
		g.fmaTo(t[i], g.c("alpha"), x, g.c("beta"))
		fn.Word(FCMLT0(m[i], t[i]))
		fn.I("VBIT", m[i].B16(), zero.B16(), t[i].B16())
		fn.Word(FCMGT(m[i], t[i], g.c("one")))
		fn.I("VBIT", m[i].B16(), g.c("one").B16(), t[i].B16())
		g.mov(x, t[i])
	}
	fn.FreeV(zero)
	g.free(t, m)
}}

var leakyRelu = kern{nil, func(g *gen, xs []V) {
	fn := g.fn
	t, m := g.tmp(len(xs)), g.tmp(len(xs))
	for i, x := range xs {
		fn.Word(FMUL(t[i], x, g.c("alpha")))
		fn.Word(FCMLT0(m[i], x))
		fn.I("VBIT", m[i].B16(), t[i].B16(), x.B16())
	}
	g.free(t, m)
}}

// prelu emits preluNEON(y, s *float32, n int): y[i] = s[i]*y[i] where
// y[i] < 0.
func prelu(f *File) {
	fn := f.Func("preluNEON", "sets y[i] = s[i]*y[i] where y[i] < 0 (PRelu, a slope per element)\nfor i in [0, n), n a multiple of 4 (the caller pads the tail).", "ASIMD")
	ay, as, an := fn.Arg("y", "*float32"), fn.Arg("s", "*float32"), fn.Arg("n", "int")
	fn.Comment("R0 = y, R4 = s, R1 = end of y")
	fn.Load(ay, "R0")
	fn.Load(as, "R4")
	fn.Load(an, "R1")
	fn.I("ADD", "R1<<2", "R0", "R1")
	x, s, m := fn.AllocV(), fn.AllocV(), fn.AllocV()
	fn.Label("preluNEON_loop")
	fn.I("CMP", "R1", "R0")
	fn.I("BGE", "preluNEON_done")
	fn.I("VLD1", "(R0)", List(x))
	fn.I("VLD1.P", "16(R4)", List(s))
	fn.Word(FMUL(s, x, s))
	fn.Word(FCMLT0(m, x))
	fn.I("VBIT", m.B16(), s.B16(), x.B16())
	fn.I("VST1.P", List(x), "16(R0)")
	fn.I("B", "preluNEON_loop")
	fn.Label("preluNEON_done")
	fn.I("RET")
}
