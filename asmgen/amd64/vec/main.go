// Command vec generates the AVX2/FMA vector kernels of package templates
// (depthwise 3x3 convolution rows, bias+clamp epilogues, GELU, exp for
// softmax) and their Go declarations, with avo's build API. Each kernel's
// pure-Go twin lives in templates/k_simd_rows.go and is its test reference.
//
//	go generate ./asmgen/amd64/vec
package main

//go:generate go run . -pkg templates -out ../../../templates/asm_vec_amd64.s -stubs ../../../templates/asm_vec_amd64.go

import (
	"fmt"

	"math"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

func main() {
	ConstraintExpr("amd64,!purego")
	constants()
	dwConv9()
	biasClamp()
	gelu256(false)
	gelu256(true)
	gelu512(false)
	gelu512(true)
	expSum512()
	act512(false)
	act512(true)
	hardSwish512()
	act512b()
	act256()
	packBT16()
	packBT16AVX2()
	scale()
	maxRow512()
	expSum()
	maxRow()
	axpy()
	mul()
	mulRows16()
	interleave2()
	addSum()
	sumRow()
	sumSqDev()
	normAffine(true)
	normAffine(false)
	ln512()
	dot4()
	gemvRows(true)
	gemvRows(false)
	lstmGates()
	Generate()
}

// consts holds each constant the kernels need as 8 equal float32 lanes, so
// it can be a memory operand of any VEX instruction.
var (
	consts     Mem
	constIndex = map[string]int{}
)

var constList = []struct {
	name string
	v    float32
}{
	{"one", 1}, {"two", 2}, {"half", 0.5}, {"rsqrt2", float32(1 / math.Sqrt2)},
	{"absmask", math.Float32frombits(0x7fffffff)},
	// Cephes expf.
	{"expHi", 88.3762626647949}, {"expLo", -87.3365478515625}, {"log2e", float32(math.Log2E)},
	{"ln2hi", 0.693359375}, {"ln2lo", -2.12194440e-4},
	{"ep0", 1.9875691500e-4}, {"ep1", 1.3981999507e-3}, {"ep2", 8.3334519073e-3},
	{"ep3", 4.1665795894e-2}, {"ep4", 1.6666665459e-1}, {"ep5", 5.0000001201e-1},
	// erfc(z) = t*exp(-z*z + P(t)), t = 1/(1+z/2) (Numerical Recipes erfcc,
	// fractional error under 1.2e-7), coefficients from t^9 down.
	{"ec9", 0.17087277}, {"ec8", -0.82215223}, {"ec7", 1.48851587}, {"ec6", -1.13520398},
	{"ec5", 0.27886807}, {"ec4", -0.18628806}, {"ec3", 0.09678418}, {"ec2", 0.37409196},
	{"ec1", 1.00002368}, {"ec0", -1.26551223},
	// sigmoid and SiLU (act512.go): exp's argument -|x| down to -104
	// (exp(-104) is below the smallest denormal).
	{"signmask", math.Float32frombits(0x80000000)}, {"sigLo", -104},
	{"three", 3}, {"sixth", 1.0 / 6},
	// act512b.go: exp's upper clamp (exp(89) overflows), -2 for tanh's
	// argument, Cephes tanhf's polynomial (from s^4 down) and where it
	// applies, GELU-tanh's 2c*0.044715 and 2c (c = sqrt(2/pi)), Mish's
	// upper clamp.
	{"expTop", 89}, {"mtwo", -2},
	{"th4", -5.70498872745e-3}, {"th3", 2.06390887954e-2}, {"th2", -5.37397155531e-2},
	{"th1", 1.33314422036e-1}, {"th0", -3.33332819422e-1}, {"thSmall", 0.625},
	{"gt1", float32(2 * 0.7978845608028654 * 0.044715)}, {"gt0", float32(2 * 0.7978845608028654)},
	{"mishTop", 20},
	// act256.go: the exponent bias, an int32, for building 2^h.
	{"bias127", math.Float32frombits(127)},
	// scale256's one-factor range: p*2^fx is normal for p in [0.5, 2).
	{"fxLo", -125}, {"fxHi", 127},
}

func constants() {
	consts = GLOBL("vecConsts", RODATA|NOPTR)
	for i, c := range constList {
		constIndex[c.name] = i
		for l := 0; l < 8; l++ {
			DATA(32*i+4*l, U32(math.Float32bits(c.v)))
		}
	}
}

// k is the memory operand of a named constant.
func k(name string) Mem {
	i, ok := constIndex[name]
	if !ok {
		panic("no constant " + name)
	}
	return consts.Offset(32 * i)
}

// paramAddr is the stack address of a scalar argument: float arguments are
// read with VEX broadcasts, never avo's legacy-SSE Load (see asmgen/amd64).
func paramAddr(name string) Mem {
	b, err := Param(name).Resolve()
	if err != nil {
		panic(err)
	}
	return b.Addr
}

// dwConv9 emits the depthwise 3x3 row kernel: nine shifted input rows,
// nine weights, bias and clamp, 32 outputs per iteration in four
// independent accumulators (the FMAs read the inputs from memory).
func dwConv9() {
	TEXT("dwConv9AVX2", NOSPLIT, "func(y *float32, src *[9]*float32, w *[9]float32, n int, bias, lo, hi float32)")
	Doc(
		"dwConv9AVX2 sets y[i] = min(max(bias + sum_t w[t]*src[t][i], lo), hi)",
		"for i in [0, n), n a multiple of 8: one output row of a depthwise 3x3",
		"convolution, each src[t] the input row of tap t already shifted.",
		"",
		"Requires: AVX, FMA",
	)
	Pragma("noescape")
	y := Load(Param("y"), GP64())
	srcp := Load(Param("src"), GP64())
	wp := Load(Param("w"), GP64())
	n := Load(Param("n"), GP64())
	var src [9]GPVirtual
	var w [9]VecVirtual
	for t := 0; t < 9; t++ {
		src[t] = GP64()
		MOVQ(Mem{Base: srcp, Disp: 8 * t}, src[t])
		w[t] = YMM()
		VBROADCASTSS(Mem{Base: wp, Disp: 4 * t}, w[t])
	}
	bias, lo, hi := YMM(), YMM(), YMM()
	VBROADCASTSS(paramAddr("bias"), bias)
	VBROADCASTSS(paramAddr("lo"), lo)
	VBROADCASTSS(paramAddr("hi"), hi)
	i := GP64()
	XORQ(i, i)

	body := func(vecs int) {
		acc := make([]VecVirtual, vecs)
		for v := range acc {
			acc[v] = YMM()
			VMOVAPS(bias, acc[v])
		}
		for t := 0; t < 9; t++ {
			for v := range acc {
				VFMADD231PS(Mem{Base: src[t], Index: i, Scale: 4, Disp: 32 * v}, w[t], acc[v])
			}
		}
		for v := range acc {
			// The value as the second source: NaN passes through.
			VMAXPS(acc[v], lo, acc[v])
			VMINPS(acc[v], hi, acc[v])
			VMOVUPS(acc[v], Mem{Base: y, Index: i, Scale: 4, Disp: 32 * v})
		}
		ADDQ(U8(8*vecs), i)
	}
	Comment("32 outputs at a time.")
	last := GP64()
	MOVQ(n, last)
	SUBQ(U8(32), last)
	Label("dw9_loop4")
	CMPQ(i, last)
	JG(LabelRef("dw9_loop1"))
	body(4)
	JMP(LabelRef("dw9_loop4"))
	Comment("Then 8 at a time.")
	Label("dw9_loop1")
	CMPQ(i, n)
	JGE(LabelRef("dw9_done"))
	body(1)
	JMP(LabelRef("dw9_loop1"))
	Label("dw9_done")
	VZEROUPPER()
	RET()
}

// biasClamp emits y = min(max(y + bias, lo), hi), the bias and Relu/Clip
// epilogue (lo = -Inf, hi = +Inf for none).
func biasClamp() {
	TEXT("biasClampAVX", NOSPLIT, "func(y *float32, n int, bias, lo, hi float32)")
	Doc(
		"biasClampAVX sets y[i] = min(max(y[i] + bias, lo), hi) for i in [0, n),",
		"n a multiple of 8.",
		"",
		"Requires: AVX",
	)
	Pragma("noescape")
	y := Load(Param("y"), GP64())
	n := Load(Param("n"), GP64())
	bias, lo, hi := YMM(), YMM(), YMM()
	VBROADCASTSS(paramAddr("bias"), bias)
	VBROADCASTSS(paramAddr("lo"), lo)
	VBROADCASTSS(paramAddr("hi"), hi)
	i := GP64()
	XORQ(i, i)
	Label("bc_loop")
	CMPQ(i, n)
	JGE(LabelRef("bc_done"))
	v := YMM()
	VADDPS(Mem{Base: y, Index: i, Scale: 4}, bias, v)
	VMAXPS(v, lo, v) // the value as the second source: NaN passes through
	VMINPS(v, hi, v)
	VMOVUPS(v, Mem{Base: y, Index: i, Scale: 4})
	ADDQ(U8(8), i)
	JMP(LabelRef("bc_loop"))
	Label("bc_done")
	VZEROUPPER()
	RET()
}

// expVec sets x = exp(x) lane-wise (Cephes expf: x = n*ln2 + r, a degree-5
// polynomial for exp(r), 2^n through the exponent bits). Inputs are
// clamped to [-87.34, 88.38]: exp of anything below is about 1e-38.
func expVec(x VecVirtual) {
	fx, t, p := YMM(), YMM(), YMM()
	VMINPS(k("expHi"), x, x)
	VMAXPS(k("expLo"), x, x)
	VMULPS(k("log2e"), x, fx)
	VROUNDPS(U8(0), fx, fx) // to nearest
	VFNMADD231PS(k("ln2hi"), fx, x)
	VFNMADD231PS(k("ln2lo"), fx, x)
	VMOVUPS(k("ep0"), p)
	for _, c := range []string{"ep1", "ep2", "ep3", "ep4", "ep5"} {
		VFMADD213PS(k(c), x, p)
	}
	VMULPS(x, x, t)
	VFMADD213PS(x, t, p) // p = p*x*x + x
	VADDPS(k("one"), p, p)
	VCVTPS2DQ(fx, fx)
	VPSLLD(U8(23), fx, fx)
	VPADDD(k("one"), fx, fx) // the bits of 1.0 plus n in the exponent
	VMULPS(fx, p, x)
}

// expSum emits y = exp(x - sub), returning the sum of y (softmax's
// numerator and denominator in one pass). One vector's exp is a chain of
// about 20 dependent operations, so the main loop runs three vectors a
// step (expVec3: each step emitted for the three before the next, the
// same operations per lane as expVec, so the same bits), each into its
// own partial sum (four registers a chain, the three sums and sub fill
// the sixteen); single vectors take the rest into the first sum.
func expSum() {
	TEXT("expSumAVX2", NOSPLIT, "func(y, x *float32, n int, sub float32) float32")
	Doc(
		"expSumAVX2 sets y[i] = exp(x[i] - sub) for i in [0, n), n a multiple of",
		"8, and returns the sum of the y[i] (summed in three 8-lane partial",
		"sums, then across).",
		"",
		"Requires: AVX, AVX2, FMA",
	)
	Pragma("noescape")
	y := Load(Param("y"), GP64())
	x := Load(Param("x"), GP64())
	n := Load(Param("n"), GP64())
	sub := YMM()
	VBROADCASTSS(paramAddr("sub"), sub)
	const nv = 3
	sums := make([]VecVirtual, nv)
	for v := range sums {
		sums[v] = YMM()
		VXORPS(sums[v], sums[v], sums[v])
	}
	i := GP64()
	XORQ(i, i)
	last := GP64()
	MOVQ(n, last)
	SUBQ(U8(8*nv), last)
	Label("es_loop3")
	CMPQ(i, last)
	JG(LabelRef("es_loop1"))
	e := make([]VecVirtual, nv)
	for v := range e {
		e[v] = YMM()
		VMOVUPS(Mem{Base: x, Index: i, Scale: 4, Disp: 32 * v}, e[v])
	}
	for v := range e {
		VSUBPS(sub, e[v], e[v])
	}
	expVecN(e)
	for v := range e {
		VMOVUPS(e[v], Mem{Base: y, Index: i, Scale: 4, Disp: 32 * v})
		VADDPS(e[v], sums[v], sums[v])
	}
	ADDQ(U8(8*nv), i)
	JMP(LabelRef("es_loop3"))
	Label("es_loop1")
	CMPQ(i, n)
	JGE(LabelRef("es_done"))
	v := YMM()
	VMOVUPS(Mem{Base: x, Index: i, Scale: 4}, v)
	VSUBPS(sub, v, v)
	expVec(v)
	VMOVUPS(v, Mem{Base: y, Index: i, Scale: 4})
	VADDPS(v, sums[0], sums[0])
	ADDQ(U8(8), i)
	JMP(LabelRef("es_loop1"))
	Label("es_done")
	VADDPS(sums[1], sums[0], sums[0])
	VADDPS(sums[2], sums[0], sums[0])
	hsum(sums[0])
	VZEROUPPER()
	Store(sums[0].AsX(), ReturnIndex(0))
	RET()
}

// expVecN is expVec on each vector of x, step by step across them.
func expVecN(x []VecVirtual) {
	each := func(f func(v int)) {
		for v := range x {
			f(v)
		}
	}
	fx, t, p := make([]VecVirtual, len(x)), make([]VecVirtual, len(x)), make([]VecVirtual, len(x))
	each(func(v int) { fx[v], t[v], p[v] = YMM(), YMM(), YMM() })
	each(func(v int) { VMINPS(k("expHi"), x[v], x[v]) })
	each(func(v int) { VMAXPS(k("expLo"), x[v], x[v]) })
	each(func(v int) { VMULPS(k("log2e"), x[v], fx[v]) })
	each(func(v int) { VROUNDPS(U8(0), fx[v], fx[v]) }) // to nearest
	each(func(v int) { VFNMADD231PS(k("ln2hi"), fx[v], x[v]) })
	each(func(v int) { VFNMADD231PS(k("ln2lo"), fx[v], x[v]) })
	each(func(v int) { VMOVUPS(k("ep0"), p[v]) })
	for _, c := range []string{"ep1", "ep2", "ep3", "ep4", "ep5"} {
		each(func(v int) { VFMADD213PS(k(c), x[v], p[v]) })
	}
	each(func(v int) { VMULPS(x[v], x[v], t[v]) })
	each(func(v int) { VFMADD213PS(x[v], t[v], p[v]) }) // p = p*x*x + x
	each(func(v int) { VADDPS(k("one"), p[v], p[v]) })
	each(func(v int) { VCVTPS2DQ(fx[v], fx[v]) })
	each(func(v int) { VPSLLD(U8(23), fx[v], fx[v]) })
	each(func(v int) { VPADDD(k("one"), fx[v], fx[v]) }) // the bits of 1.0 plus n in the exponent
	each(func(v int) { VMULPS(fx[v], p[v], x[v]) })
}

// hsum leaves the sum of v's 8 lanes in lane 0.
func hsum(v VecVirtual) {
	h := XMM()
	VEXTRACTF128(U8(1), v, h)
	VADDPS(h, v.AsX(), v.AsX())
	VMOVHLPS(v.AsX(), v.AsX(), h)
	VADDPS(h, v.AsX(), v.AsX())
	VMOVSHDUP(v.AsX(), h)
	VADDSS(h, v.AsX(), v.AsX())
}

// maxRow emits the maximum of x[0:n].
func maxRow() {
	TEXT("maxAVX", NOSPLIT, "func(x *float32, n int) float32")
	Doc(
		"maxAVX returns the maximum of x[0:n], n a positive multiple of 8.",
		"",
		"Requires: AVX",
	)
	Pragma("noescape")
	x := Load(Param("x"), GP64())
	n := Load(Param("n"), GP64())
	m := YMM()
	VMOVUPS(Mem{Base: x}, m)
	i := GP64()
	MOVQ(U32(8), i)
	Label("max_loop")
	CMPQ(i, n)
	JGE(LabelRef("max_done"))
	VMAXPS(Mem{Base: x, Index: i, Scale: 4}, m, m)
	ADDQ(U8(8), i)
	JMP(LabelRef("max_loop"))
	Label("max_done")
	h := XMM()
	VEXTRACTF128(U8(1), m, h)
	VMAXPS(h, m.AsX(), m.AsX())
	VMOVHLPS(m.AsX(), m.AsX(), h)
	VMAXPS(h, m.AsX(), m.AsX())
	VMOVSHDUP(m.AsX(), h)
	VMAXSS(h, m.AsX(), m.AsX())
	VZEROUPPER()
	Store(m.AsX(), ReturnIndex(0))
	RET()
}

// axpy emits y += a*x, 32 floats per iteration then 8.
func axpy() {
	TEXT("axpyAVX2", NOSPLIT, "func(y, x *float32, n int, a float32)")
	Doc(
		"axpyAVX2 sets y[i] += a*x[i] for i in [0, n), n a multiple of 8.",
		"",
		"Requires: AVX, FMA",
	)
	Pragma("noescape")
	y := Load(Param("y"), GP64())
	x := Load(Param("x"), GP64())
	n := Load(Param("n"), GP64())
	a := YMM()
	VBROADCASTSS(paramAddr("a"), a)
	i := GP64()
	XORQ(i, i)
	last := GP64()
	MOVQ(n, last)
	SUBQ(U8(32), last)
	body := func(vecs int) {
		v := make([]VecVirtual, vecs)
		for j := range v {
			v[j] = YMM()
			VMOVUPS(Mem{Base: y, Index: i, Scale: 4, Disp: 32 * j}, v[j])
			VFMADD231PS(Mem{Base: x, Index: i, Scale: 4, Disp: 32 * j}, a, v[j])
			VMOVUPS(v[j], Mem{Base: y, Index: i, Scale: 4, Disp: 32 * j})
		}
		ADDQ(U8(8*vecs), i)
	}
	Label("axpy_loop4")
	CMPQ(i, last)
	JG(LabelRef("axpy_loop1"))
	body(4)
	JMP(LabelRef("axpy_loop4"))
	Label("axpy_loop1")
	CMPQ(i, n)
	JGE(LabelRef("axpy_done"))
	body(1)
	JMP(LabelRef("axpy_loop1"))
	Label("axpy_done")
	VZEROUPPER()
	RET()
}

// loop4 emits a loop over i in [0, n) that runs body(4) (32 floats) while
// 32 are left, then body(1) (8 floats); body advances nothing, loop4 does.
func loop4(name string, i GPVirtual, n Register, body func(vecs int)) {
	last := GP64()
	MOVQ(n, last)
	SUBQ(U8(32), last)
	Label(name + "_loop4")
	CMPQ(i, last)
	JG(LabelRef(name + "_loop1"))
	body(4)
	ADDQ(U8(32), i)
	JMP(LabelRef(name + "_loop4"))
	Label(name + "_loop1")
	CMPQ(i, n)
	JGE(LabelRef(name + "_done"))
	body(1)
	ADDQ(U8(8), i)
	JMP(LabelRef(name + "_loop1"))
	Label(name + "_done")
}

// sumAccs makes four zeroed accumulators.
func sumAccs() []VecVirtual {
	acc := make([]VecVirtual, 4)
	for j := range acc {
		acc[j] = YMM()
		VXORPS(acc[j], acc[j], acc[j])
	}
	return acc
}

// sumReturn adds the four accumulators, then their lanes, and returns the
// sum as the float32 result.
func sumReturn(acc []VecVirtual) {
	VADDPS(acc[1], acc[0], acc[0])
	VADDPS(acc[3], acc[2], acc[2])
	VADDPS(acc[2], acc[0], acc[0])
	hsum(acc[0])
	VZEROUPPER()
	Store(acc[0].AsX(), ReturnIndex(0))
	RET()
}

// addSum emits y = a + b, returning the sum of y (a residual add and the
// first pass of a layer norm at once).
func addSum() {
	TEXT("addSumAVX", NOSPLIT, "func(y, a, b *float32, n int) float32")
	Doc(
		"addSumAVX sets y[i] = a[i] + b[i] for i in [0, n), n a multiple of 8,",
		"and returns the sum of the y[i] (in 32 lanes, then across).",
		"",
		"Requires: AVX",
	)
	Pragma("noescape")
	y := Load(Param("y"), GP64())
	a := Load(Param("a"), GP64())
	b := Load(Param("b"), GP64())
	n := Load(Param("n"), GP64())
	acc := sumAccs()
	i := GP64()
	XORQ(i, i)
	loop4("as", i, n, func(vecs int) {
		for j := 0; j < vecs; j++ {
			v := YMM()
			VMOVUPS(Mem{Base: a, Index: i, Scale: 4, Disp: 32 * j}, v)
			VADDPS(Mem{Base: b, Index: i, Scale: 4, Disp: 32 * j}, v, v)
			VMOVUPS(v, Mem{Base: y, Index: i, Scale: 4, Disp: 32 * j})
			VADDPS(v, acc[j], acc[j])
		}
	})
	sumReturn(acc)
}

// sumRow emits the sum of x[0:n].
func sumRow() {
	TEXT("sumAVX", NOSPLIT, "func(x *float32, n int) float32")
	Doc(
		"sumAVX returns the sum of x[0:n], n a multiple of 8 (in 32 lanes, then",
		"across).",
		"",
		"Requires: AVX",
	)
	Pragma("noescape")
	x := Load(Param("x"), GP64())
	n := Load(Param("n"), GP64())
	acc := sumAccs()
	i := GP64()
	XORQ(i, i)
	loop4("sum", i, n, func(vecs int) {
		for j := 0; j < vecs; j++ {
			VADDPS(Mem{Base: x, Index: i, Scale: 4, Disp: 32 * j}, acc[j], acc[j])
		}
	})
	sumReturn(acc)
}

// sumSqDev emits the sum of (x[i]-mean)^2 (a layer norm's second pass).
func sumSqDev() {
	TEXT("sumSqDevAVX2", NOSPLIT, "func(x *float32, n int, mean float32) float32")
	Doc(
		"sumSqDevAVX2 returns the sum of (x[i]-mean)^2 for i in [0, n), n a",
		"multiple of 8 (in 32 lanes, then across).",
		"",
		"Requires: AVX, FMA",
	)
	Pragma("noescape")
	x := Load(Param("x"), GP64())
	n := Load(Param("n"), GP64())
	mean := YMM()
	VBROADCASTSS(paramAddr("mean"), mean)
	acc := sumAccs()
	i := GP64()
	XORQ(i, i)
	loop4("ssd", i, n, func(vecs int) {
		for j := 0; j < vecs; j++ {
			d := YMM()
			VMOVUPS(Mem{Base: x, Index: i, Scale: 4, Disp: 32 * j}, d)
			VSUBPS(mean, d, d)
			VFMADD231PS(d, d, acc[j])
		}
	})
	sumReturn(acc)
}

// normAffine emits y = (x-mean)*inv*s + b (b omitted without bias), a
// layer norm's last pass.
func normAffine(bias bool) {
	name, sig := "normAffineAVX2", "func(y, x, s, b *float32, n int, mean, inv float32)"
	if !bias {
		name, sig = "normScaleAVX2", "func(y, x, s *float32, n int, mean, inv float32)"
	}
	TEXT(name, NOSPLIT, sig)
	if bias {
		Doc(
			"normAffineAVX2 sets y[i] = (x[i]-mean)*inv*s[i] + b[i] for i in [0, n),",
			"n a multiple of 8.",
			"",
			"Requires: AVX, FMA",
		)
	} else {
		Doc(
			"normScaleAVX2 sets y[i] = (x[i]-mean)*inv*s[i] for i in [0, n), n a",
			"multiple of 8.",
			"",
			"Requires: AVX",
		)
	}
	Pragma("noescape")
	y := Load(Param("y"), GP64())
	x := Load(Param("x"), GP64())
	sp := Load(Param("s"), GP64())
	var bp Register
	if bias {
		bp = Load(Param("b"), GP64())
	}
	n := Load(Param("n"), GP64())
	mean, inv := YMM(), YMM()
	VBROADCASTSS(paramAddr("mean"), mean)
	VBROADCASTSS(paramAddr("inv"), inv)
	i := GP64()
	XORQ(i, i)
	loop4(name, i, n, func(vecs int) {
		for j := 0; j < vecs; j++ {
			v := YMM()
			VMOVUPS(Mem{Base: x, Index: i, Scale: 4, Disp: 32 * j}, v)
			VSUBPS(mean, v, v)
			VMULPS(inv, v, v)
			if bias {
				w := YMM()
				VMOVUPS(Mem{Base: bp, Index: i, Scale: 4, Disp: 32 * j}, w)
				VFMADD231PS(Mem{Base: sp, Index: i, Scale: 4, Disp: 32 * j}, v, w)
				VMOVUPS(w, Mem{Base: y, Index: i, Scale: 4, Disp: 32 * j})
			} else {
				VMULPS(Mem{Base: sp, Index: i, Scale: 4, Disp: 32 * j}, v, v)
				VMOVUPS(v, Mem{Base: y, Index: i, Scale: 4, Disp: 32 * j})
			}
		}
	})
	VZEROUPPER()
	RET()
}

// dot4 emits four dot products of one row a with four rows of b ldb
// floats apart (a GEMV's transposed-B block: batch-1 fully connected
// layers, recurrent projections). The float32 lanes are widened to
// float64 (VCVTPS2PD) and summed in float64, 8 floats per iteration in
// two accumulators per row; the sums are stored as float64 so the caller
// can add a tail and round once. The loop is bound by loading b, so the
// conversions cost little.
func dot4() {
	TEXT("dot4AVX2", NOSPLIT, "func(a, b *float32, ldb, k int, out *[4]float64)")
	Doc(
		"dot4AVX2 sets out[r] = sum_p float64(a[p])*float64(b[r*ldb+p]) for r in",
		"[0, 4), p in [0, k), k a multiple of 8, summed in float64.",
		"",
		"Requires: AVX, FMA",
	)
	Pragma("noescape")
	a := Load(Param("a"), GP64())
	r0 := Load(Param("b"), GP64())
	ldb := Load(Param("ldb"), GP64())
	k := Load(Param("k"), GP64())
	SHLQ(U8(2), ldb)
	r1, r2, r3 := GP64(), GP64(), GP64()
	LEAQ(Mem{Base: r0, Index: ldb, Scale: 1}, r1)
	LEAQ(Mem{Base: r1, Index: ldb, Scale: 1}, r2)
	LEAQ(Mem{Base: r2, Index: ldb, Scale: 1}, r3)
	rows := []Register{r0, r1, r2, r3}
	acc := make([]VecVirtual, 8)
	for j := range acc {
		acc[j] = YMM()
		VXORPD(acc[j], acc[j], acc[j])
	}
	i := GP64()
	XORQ(i, i)
	Label("d4_loop")
	CMPQ(i, k)
	JGE(LabelRef("d4_done"))
	x0, x1 := YMM(), YMM()
	VCVTPS2PD(Mem{Base: a, Index: i, Scale: 4}, x0)
	VCVTPS2PD(Mem{Base: a, Index: i, Scale: 4, Disp: 16}, x1)
	for r, row := range rows {
		t0, t1 := YMM(), YMM()
		VCVTPS2PD(Mem{Base: row, Index: i, Scale: 4}, t0)
		VCVTPS2PD(Mem{Base: row, Index: i, Scale: 4, Disp: 16}, t1)
		VFMADD231PD(t0, x0, acc[r])
		VFMADD231PD(t1, x1, acc[4+r])
	}
	ADDQ(U8(8), i)
	JMP(LabelRef("d4_loop"))
	Label("d4_done")
	out := Load(Param("out"), GP64())
	for r := range rows {
		VADDPD(acc[4+r], acc[r], acc[r])
		hi := XMM()
		VEXTRACTF128(U8(1), acc[r], hi)
		VADDPD(hi, acc[r].AsX(), hi)
		sw := XMM()
		VUNPCKHPD(hi, hi, sw)
		VADDSD(sw, hi, hi)
		VMOVSD(hi, Mem{Base: out, Disp: 8 * r})
	}
	VZEROUPPER()
	RET()
}

// gemvRows emits y[j] += x . a[j*lda:] for n rows of a, four rows at a
// time, summed in float32 (an LSTM/GRU step's recurrent product h * R^T:
// R is [gates*hs, hs] and stays in L2 across the steps, so unlike dot4 the
// loop is bound by the FMAs and the horizontal sums, not by memory). Each
// row keeps two accumulators (even and odd chunks of a vector); the four
// rows' sums are reduced together by VHADDPS into one XMM. wide: on ZMMs
// (gemvRowsAVX512, 16-float chunks), else on YMMs for CPUs without
// AVX-512 (gemvRowsAVX2, 8-float chunks; the AVX2 fallback before it,
// dot4AVX2, widens to float64: twice the instructions per element).
func gemvRows(wide bool) {
	name, lab, lanes, req := "gemvRowsAVX2", "gr2", 8, "Requires: AVX, FMA"
	vec := func() VecVirtual { return YMM() }
	if wide {
		name, lab, lanes, req = "gemvRowsAVX512", "gr", 16, "Requires: AVX512F"
		vec = func() VecVirtual { return ZMM() }
	}
	TEXT(name, NOSPLIT, "func(y, x, a *float32, lda, n, k int)")
	Doc(
		name+" adds sum_p x[p]*a[j*lda+p] (p in [0, k)) to y[j] for j in",
		fmt.Sprintf("[0, n), n a multiple of 4, k a multiple of %d, summed in float32.", lanes),
		"",
		req,
	)
	Pragma("noescape")
	y := Load(Param("y"), GP64())
	x := Load(Param("x"), GP64())
	r0 := Load(Param("a"), GP64())
	lda := Load(Param("lda"), GP64())
	n := Load(Param("n"), GP64())
	k := Load(Param("k"), GP64())
	SHLQ(U8(2), lda)
	k2 := GP64()
	MOVQ(k, k2)
	ANDQ(I32(-2*lanes), k2)
	r1, r2, r3 := GP64(), GP64(), GP64()
	Label(lab + "_rows")
	CMPQ(n, U8(4))
	JL(LabelRef(lab + "_done"))
	LEAQ(Mem{Base: r0, Index: lda, Scale: 1}, r1)
	LEAQ(Mem{Base: r1, Index: lda, Scale: 1}, r2)
	LEAQ(Mem{Base: r2, Index: lda, Scale: 1}, r3)
	rows := []Register{r0, r1, r2, r3}
	acc := make([]VecVirtual, 8)
	for j := range acc {
		acc[j] = vec()
		VXORPS(acc[j], acc[j], acc[j])
	}
	i := GP64()
	XORQ(i, i)
	loop := fmt.Sprintf("%s_loop%d", lab, 2*lanes)
	Label(loop)
	CMPQ(i, k2)
	JGE(LabelRef(lab + "_tail"))
	x0, x1 := vec(), vec()
	VMOVUPS(Mem{Base: x, Index: i, Scale: 4}, x0)
	VMOVUPS(Mem{Base: x, Index: i, Scale: 4, Disp: 4 * lanes}, x1)
	for r, row := range rows {
		VFMADD231PS(Mem{Base: row, Index: i, Scale: 4}, x0, acc[r])
		VFMADD231PS(Mem{Base: row, Index: i, Scale: 4, Disp: 4 * lanes}, x1, acc[4+r])
	}
	ADDQ(U8(2*lanes), i)
	JMP(LabelRef(loop))
	Label(lab + "_tail")
	CMPQ(i, k)
	JGE(LabelRef(lab + "_sum"))
	xt := vec()
	VMOVUPS(Mem{Base: x, Index: i, Scale: 4}, xt)
	for r, row := range rows {
		VFMADD231PS(Mem{Base: row, Index: i, Scale: 4}, xt, acc[r])
	}
	Label(lab + "_sum")
	sums := acc[:4] // each row's sum as one YMM
	if wide {
		sums = make([]VecVirtual, 4)
	}
	for r := range rows {
		VADDPS(acc[4+r], acc[r], acc[r])
		if wide {
			sums[r] = YMM()
			VEXTRACTF64X4(U8(1), acc[r], sums[r])
			VADDPS(sums[r], acc[r].AsY(), sums[r])
		}
	}
	t01, t23 := YMM(), YMM()
	VHADDPS(sums[1], sums[0], t01)
	VHADDPS(sums[3], sums[2], t23)
	VHADDPS(t23, t01, t01) // lane q of each 128-bit half: row q's partial sum
	hi := XMM()
	VEXTRACTF128(U8(1), t01, hi)
	VADDPS(hi, t01.AsX(), hi)
	VADDPS(Mem{Base: y}, hi, hi)
	VMOVUPS(hi, Mem{Base: y})
	ADDQ(U8(16), y)
	LEAQ(Mem{Base: r3, Index: lda, Scale: 1}, r0)
	SUBQ(U8(4), n)
	JMP(LabelRef(lab + "_rows"))
	Label(lab + "_done")
	VZEROUPPER()
	RET()
}

// lstmGates emits one LSTM step's gate equations with the default
// activations: g holds the pre-activations i, o, f, c (hs each); c and h
// are updated in place. sigmoid(x) = 1/(1+exp(-x)), tanh(x) =
// 1 - 2/(exp(2x)+1), as in the Go twin rnnLSTMGates32.
func lstmGates() {
	TEXT("lstmGatesAVX2", NOSPLIT, "func(gates, c, h *float32, hs int)")
	Doc(
		"lstmGatesAVX2 sets, for u in [0, hs) (hs a multiple of 8), with",
		"i, o, f, z = gates[u], gates[hs+u], gates[2hs+u], gates[3hs+u]:",
		"c[u] = sigmoid(f)*c[u] + sigmoid(i)*tanh(z), h[u] = sigmoid(o)*tanh(c[u]).",
		"",
		"Requires: AVX, AVX2, FMA",
	)
	Pragma("noescape")
	gi := Load(Param("gates"), GP64())
	c := Load(Param("c"), GP64())
	h := Load(Param("h"), GP64())
	n := Load(Param("hs"), GP64())
	stride := GP64()
	MOVQ(n, stride)
	SHLQ(U8(2), stride)
	gO, gf, gz := GP64(), GP64(), GP64()
	LEAQ(Mem{Base: gi, Index: stride, Scale: 1}, gO)
	LEAQ(Mem{Base: gO, Index: stride, Scale: 1}, gf)
	LEAQ(Mem{Base: gf, Index: stride, Scale: 1}, gz)
	sigmoid := func(src Mem) VecVirtual {
		v := YMM()
		VXORPS(v, v, v)
		VSUBPS(src, v, v)
		expVec(v)
		VADDPS(k("one"), v, v)
		r := YMM()
		VMOVUPS(k("one"), r)
		VDIVPS(v, r, r)
		return r
	}
	tanh := func(v VecVirtual) VecVirtual {
		VADDPS(v, v, v)
		expVec(v)
		VADDPS(k("one"), v, v)
		r := YMM()
		VMOVUPS(k("two"), r)
		VDIVPS(v, r, r)
		o := YMM()
		VMOVUPS(k("one"), o)
		VSUBPS(r, o, o)
		return o
	}
	i := GP64()
	XORQ(i, i)
	Label("lg_loop")
	CMPQ(i, n)
	JGE(LabelRef("lg_done"))
	fv := sigmoid(Mem{Base: gf, Index: i, Scale: 4})
	VMULPS(Mem{Base: c, Index: i, Scale: 4}, fv, fv)
	iv := sigmoid(Mem{Base: gi, Index: i, Scale: 4})
	z := YMM()
	VMOVUPS(Mem{Base: gz, Index: i, Scale: 4}, z)
	zt := tanh(z)
	VMULPS(zt, iv, iv)
	VADDPS(iv, fv, fv) // the new c
	VMOVUPS(fv, Mem{Base: c, Index: i, Scale: 4})
	ct := tanh(fv)
	ov := sigmoid(Mem{Base: gO, Index: i, Scale: 4})
	VMULPS(ct, ov, ov)
	VMOVUPS(ov, Mem{Base: h, Index: i, Scale: 4})
	ADDQ(U8(8), i)
	JMP(LabelRef("lg_loop"))
	Label("lg_done")
	VZEROUPPER()
	RET()
}
