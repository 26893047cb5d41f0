package main

import (
	"strings"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// The layer norm's rows on 16 lanes (AVX-512F) for any n, the last n%16
// under a lane mask: the sum of x (or of a+b, stored), the sum of
// (x-mean)^2, and (x-mean)*inv*s (+ b). The sums run in 64 lanes (four
// accumulators) and then across, so a row's result depends only on its
// length, never on where the pool split the rows.

// row512 emits name(ptrs *float32..., n int, params float32...) [float32]:
// body runs on nv vectors at a time (then one, then the masked tail);
// at(p, v) addresses vector v of pointer p at the current index, mask is
// nil or the tail's lane mask (loads under it must zero the other lanes),
// acc are the accumulators (nv of them, zeroed) when ret, whose lanes'
// total is returned.
func row512(name string, doc []string, ptrs, params []string, ret bool, nv int,
	body func(at func(p, v int) Mem, mask Op, cnt int, pv, acc []VecVirtual)) {
	sig := "func(" + strings.Join(ptrs, ", ") + " *float32, n int"
	for _, p := range params {
		sig += ", " + p + " float32"
	}
	sig += ")"
	if ret {
		sig += " float32"
	}
	TEXT(name, NOSPLIT, sig)
	Doc(append(doc, "", "Requires: AVX512F, BMI2")...)
	Pragma("noescape")
	base := make([]Register, len(ptrs))
	for j, p := range ptrs {
		base[j] = Load(Param(p), GP64())
	}
	n := Load(Param("n"), GP64())
	pv := make([]VecVirtual, len(params))
	for j, p := range params {
		pv[j] = ZMM()
		VBROADCASTSS(paramAddr(p), pv[j])
	}
	var acc []VecVirtual
	if ret {
		acc = make([]VecVirtual, nv)
		for j := range acc {
			acc[j] = ZMM()
			VXORPS(acc[j], acc[j], acc[j])
		}
	}
	i := GP64()
	XORQ(i, i)
	end := GP64()
	at := func(p, v int) Mem { return Mem{Base: base[p], Index: i, Scale: 4, Disp: 64 * v} }
	MOVQ(n, end)
	ANDQ(I32(-16*nv), end)
	Label(name + "_many")
	CMPQ(i, end)
	JGE(LabelRef(name + "_one0"))
	body(at, nil, nv, pv, acc)
	ADDQ(U32(16*nv), i)
	JMP(LabelRef(name + "_many"))
	Label(name + "_one0")
	MOVQ(n, end)
	ANDQ(I32(-16), end)
	Label(name + "_one")
	CMPQ(i, end)
	JGE(LabelRef(name + "_tail"))
	body(at, nil, 1, pv, acc)
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
	body(at, m, 1, pv, acc)
	Label(name + "_done")
	if !ret {
		VZEROUPPER()
		RET()
		return
	}
	for j := 1; j < len(acc); j++ {
		VADDPS(acc[j], acc[0], acc[0])
	}
	h := YMM()
	VEXTRACTF64X4(U8(1), acc[0], h)
	VADDPS(h, acc[0].AsY(), h)
	hsum(h)
	VZEROUPPER()
	Store(h.AsX(), ReturnIndex(0))
	RET()
}

// load512 loads vector v of pointer p, zeroing the lanes outside mask.
func load512(at func(p, v int) Mem, mask Op, p, v int) VecVirtual {
	z := ZMM()
	if mask != nil {
		VMOVUPS_Z(at(p, v), mask, z)
	} else {
		VMOVUPS(at(p, v), z)
	}
	return z
}

// store512 stores z as vector v of pointer p, only the lanes in mask.
func store512(at func(p, v int) Mem, mask Op, p, v int, z VecVirtual) {
	if mask != nil {
		VMOVUPS(z, mask, at(p, v))
	} else {
		VMOVUPS(z, at(p, v))
	}
}

func ln512() {
	row512("sumAVX512", []string{"sumAVX512 returns the sum of x[0:n], any n (in 64 lanes, then across)."},
		[]string{"x"}, nil, true, 4, func(at func(p, v int) Mem, mask Op, cnt int, _, acc []VecVirtual) {
			for v := 0; v < cnt; v++ {
				VADDPS(load512(at, mask, 0, v), acc[v], acc[v])
			}
		})
	row512("addSumAVX512", []string{"addSumAVX512 sets y[i] = a[i] + b[i] for i in [0, n), any n, and returns",
		"the sum of the y[i] (in 64 lanes, then across)."},
		[]string{"y", "a", "b"}, nil, true, 4, func(at func(p, v int) Mem, mask Op, cnt int, _, acc []VecVirtual) {
			for v := 0; v < cnt; v++ {
				s := load512(at, mask, 1, v)
				VADDPS(load512(at, mask, 2, v), s, s)
				store512(at, mask, 0, v, s)
				VADDPS(s, acc[v], acc[v])
			}
		})
	row512("sumSqDevAVX512", []string{"sumSqDevAVX512 returns the sum of (x[i]-mean)^2 for i in [0, n), any n",
		"(in 64 lanes, then across)."},
		[]string{"x"}, []string{"mean"}, true, 4, func(at func(p, v int) Mem, mask Op, cnt int, pv, acc []VecVirtual) {
			for v := 0; v < cnt; v++ {
				d := load512(at, mask, 0, v)
				if mask != nil {
					VSUBPS_Z(pv[0], d, mask, d) // lanes outside the row: 0
				} else {
					VSUBPS(pv[0], d, d)
				}
				VFMADD231PS(d, d, acc[v])
			}
		})
	row512("normAffineAVX512", []string{"normAffineAVX512 sets y[i] = (x[i]-mean)*inv*s[i] + b[i] for i in [0, n),",
		"any n (the last step one FMA, as normAffineAVX2)."},
		[]string{"y", "x", "s", "b"}, []string{"mean", "inv"}, false, 4, func(at func(p, v int) Mem, mask Op, cnt int, pv, _ []VecVirtual) {
			for v := 0; v < cnt; v++ {
				x := load512(at, mask, 1, v)
				VSUBPS(pv[0], x, x)
				VMULPS(pv[1], x, x)
				w := load512(at, mask, 3, v)
				VFMADD231PS(load512(at, mask, 2, v), x, w)
				store512(at, mask, 0, v, w)
			}
		})
	row512("normScaleAVX512", []string{"normScaleAVX512 sets y[i] = (x[i]-mean)*inv*s[i] for i in [0, n), any n."},
		[]string{"y", "x", "s"}, []string{"mean", "inv"}, false, 4, func(at func(p, v int) Mem, mask Op, cnt int, pv, _ []VecVirtual) {
			for v := 0; v < cnt; v++ {
				x := load512(at, mask, 1, v)
				VSUBPS(pv[0], x, x)
				VMULPS(pv[1], x, x)
				VMULPS(load512(at, mask, 2, v), x, x)
				store512(at, mask, 0, v, x)
			}
		})
}
