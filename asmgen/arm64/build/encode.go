package build

import "fmt"

// Enc is one instruction's encoding and its Arm-syntax mnemonic.
type Enc struct {
	Bits uint32
	Asm  string
}

func reg5(v V) uint32 {
	if v < 0 || v > 31 {
		panic(fmt.Sprintf("build: V%d is not a vector register", int(v)))
	}
	return uint32(v)
}

// elemS encodes the single-precision by-element group (Q=1, sz=0): the
// index is H:L, the element register M:Rm (all 32 registers).
func elemS(base uint32, d, n, m V, idx int) uint32 {
	if idx < 0 || idx > 3 {
		panic("build: element index out of range")
	}
	i := uint32(idx)
	return base | (i&1)<<21 | reg5(m)<<16 | (i>>1)<<11 | reg5(n)<<5 | reg5(d)
}

// FMLAElemS is FMLA Vd.4S, Vn.4S, Vm.S[idx] (ASIMD): Vd += Vn * Vm[idx].
func FMLAElemS(d, n, m V, idx int) Enc {
	return Enc{elemS(0x4f801000, d, n, m, idx), fmt.Sprintf("FMLA V%d.4S, V%d.4S, V%d.S[%d]", d, n, m, idx)}
}

// FMULElemS is FMUL Vd.4S, Vn.4S, Vm.S[idx] (ASIMD): Vd = Vn * Vm[idx].
func FMULElemS(d, n, m V, idx int) Enc {
	return Enc{elemS(0x4f809000, d, n, m, idx), fmt.Sprintf("FMUL V%d.4S, V%d.4S, V%d.S[%d]", d, n, m, idx)}
}

func three(base uint32, d, n, m V) uint32 { return base | reg5(m)<<16 | reg5(n)<<5 | reg5(d) }

// SDOT is SDOT Vd.4S, Vn.16B, Vm.16B (DotProd): each 32-bit lane of Vd
// adds the dot product of four signed bytes of Vn and Vm.
func SDOT(d, n, m V) Enc {
	return Enc{three(0x4e809400, d, n, m), fmt.Sprintf("SDOT V%d.4S, V%d.16B, V%d.16B", d, n, m)}
}

// UDOT is SDOT for unsigned bytes (DotProd).
func UDOT(d, n, m V) Enc {
	return Enc{three(0x6e809400, d, n, m), fmt.Sprintf("UDOT V%d.4S, V%d.16B, V%d.16B", d, n, m)}
}

// SMMLA is SMMLA Vd.4S, Vn.16B, Vm.16B (I8MM): Vd (2x2 int32) += Vn (2x8
// int8) times Vm (2x8 int8) transposed.
func SMMLA(d, n, m V) Enc {
	return Enc{three(0x4e80a400, d, n, m), fmt.Sprintf("SMMLA V%d.4S, V%d.16B, V%d.16B", d, n, m)}
}

// FMLAH is FMLA Vd.8H, Vn.8H, Vm.8H (FP16): eight half-precision fused
// multiply-adds.
func FMLAH(d, n, m V) Enc {
	return Enc{three(0x4e400c00, d, n, m), fmt.Sprintf("FMLA V%d.8H, V%d.8H, V%d.8H", d, n, m)}
}

// The single-precision "three same" group (Q=1, sz=0): Vd.4S = Vn.4S op
// Vm.4S, lane by lane. Go's assembler has VFMLA but none of these.

// FADD is FADD Vd.4S, Vn.4S, Vm.4S (ASIMD).
func FADD(d, n, m V) Enc {
	return Enc{three(0x4e20d400, d, n, m), fmt.Sprintf("FADD V%d.4S, V%d.4S, V%d.4S", d, n, m)}
}

// FSUB is FSUB Vd.4S, Vn.4S, Vm.4S (ASIMD): Vn - Vm.
func FSUB(d, n, m V) Enc {
	return Enc{three(0x4ea0d400, d, n, m), fmt.Sprintf("FSUB V%d.4S, V%d.4S, V%d.4S", d, n, m)}
}

// FMUL is FMUL Vd.4S, Vn.4S, Vm.4S (ASIMD).
func FMUL(d, n, m V) Enc {
	return Enc{three(0x6e20dc00, d, n, m), fmt.Sprintf("FMUL V%d.4S, V%d.4S, V%d.4S", d, n, m)}
}

// FMAX is FMAX Vd.4S, Vn.4S, Vm.4S (ASIMD): a NaN in either operand gives
// NaN, as Go's max does.
func FMAX(d, n, m V) Enc {
	return Enc{three(0x4e20f400, d, n, m), fmt.Sprintf("FMAX V%d.4S, V%d.4S, V%d.4S", d, n, m)}
}

// FMIN is FMIN Vd.4S, Vn.4S, Vm.4S (ASIMD): NaN propagates, as Go's min.
func FMIN(d, n, m V) Enc {
	return Enc{three(0x4ea0f400, d, n, m), fmt.Sprintf("FMIN V%d.4S, V%d.4S, V%d.4S", d, n, m)}
}

// FCMGT is FCMGT Vd.4S, Vn.4S, Vm.4S (ASIMD): all ones in each lane where
// Vn > Vm (false when either is NaN), else zero.
func FCMGT(d, n, m V) Enc {
	return Enc{three(0x6ea0e400, d, n, m), fmt.Sprintf("FCMGT V%d.4S, V%d.4S, V%d.4S", d, n, m)}
}

// FDIV is FDIV Vd.4S, Vn.4S, Vm.4S (ASIMD): Vn / Vm, correctly rounded.
func FDIV(d, n, m V) Enc {
	return Enc{three(0x6e20fc00, d, n, m), fmt.Sprintf("FDIV V%d.4S, V%d.4S, V%d.4S", d, n, m)}
}

// The single-precision "two-register miscellaneous" group (Q=1): Vd.4S =
// op(Vn.4S), lane by lane.
func two(base uint32, d, n V) uint32 { return base | reg5(n)<<5 | reg5(d) }

// FRINTN is FRINTN Vd.4S, Vn.4S (ASIMD): round to nearest, ties to even.
func FRINTN(d, n V) Enc {
	return Enc{two(0x4e218800, d, n), fmt.Sprintf("FRINTN V%d.4S, V%d.4S", d, n)}
}

// FRINTM is FRINTM Vd.4S, Vn.4S (ASIMD): round toward minus infinity.
func FRINTM(d, n V) Enc {
	return Enc{two(0x4e219800, d, n), fmt.Sprintf("FRINTM V%d.4S, V%d.4S", d, n)}
}

// FCVTZS is FCVTZS Vd.4S, Vn.4S (ASIMD): to int32 toward zero (NaN gives 0).
func FCVTZS(d, n V) Enc {
	return Enc{two(0x4ea1b800, d, n), fmt.Sprintf("FCVTZS V%d.4S, V%d.4S", d, n)}
}

// FCMLT0 is FCMLT Vd.4S, Vn.4S, #0.0 (ASIMD): all ones where Vn < 0
// (false for NaN and -0).
func FCMLT0(d, n V) Enc {
	return Enc{two(0x4ea0e800, d, n), fmt.Sprintf("FCMLT V%d.4S, V%d.4S, #0.0", d, n)}
}

// FABS is FABS Vd.4S, Vn.4S (ASIMD): clears each sign bit.
func FABS(d, n V) Enc {
	return Enc{two(0x4ea0f800, d, n), fmt.Sprintf("FABS V%d.4S, V%d.4S", d, n)}
}
