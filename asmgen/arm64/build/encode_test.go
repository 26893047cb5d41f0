package build

import (
	"strconv"
	"strings"
	"testing"
)

// layout assembles an encoding from an Arm ARM encoding diagram written
// from bit 31 down: "0" and "1" are fixed bits, NAME:W a W-bit field (W
// defaults to 1) taken from fields. It is independent of encode.go's
// constants, so each test is a second reading of the manual.
func layout(t *testing.T, diagram string, fields map[string]uint32) uint32 {
	t.Helper()
	var bits uint32
	n := 0
	for _, tok := range strings.Fields(diagram) {
		switch tok {
		case "0", "1":
			bits = bits<<1 | uint32(tok[0]-'0')
			n++
			continue
		}
		name, w := tok, 1
		if i := strings.IndexByte(tok, ':'); i >= 0 {
			name = tok[:i]
			w, _ = strconv.Atoi(tok[i+1:])
		}
		v, ok := fields[name]
		if !ok {
			t.Fatalf("field %s not given", name)
		}
		if v >= 1<<w {
			t.Fatalf("field %s=%d does not fit in %d bits", name, v, w)
		}
		bits = bits<<w | v
		n += w
	}
	if n != 32 {
		t.Fatalf("diagram %q has %d bits", diagram, n)
	}
	return bits
}

// Diagrams from the Arm ARM (DDI 0487), A64 "Advanced SIMD vector x
// indexed element" and "three same (extra)" classes.
const (
	fmlaElemDiagram = "0 Q 0 0 1 1 1 1 1 sz L M Rm:4 0 0 0 1 H 0 Rn:5 Rd:5" // FMLA (by element), single/double
	fmulElemDiagram = "0 Q 0 0 1 1 1 1 1 sz L M Rm:4 1 0 0 1 H 0 Rn:5 Rd:5" // FMUL (by element)
	dotDiagram      = "0 Q U 0 1 1 1 0 size:2 0 Rm:5 1 0 0 1 0 1 Rn:5 Rd:5" // SDOT/UDOT (vector)
	mmlaDiagram     = "0 1 U 0 1 1 1 0 1 0 0 Rm:5 1 0 1 0 B 1 Rn:5 Rd:5"    // SMMLA/UMMLA/USMMLA
	fmlaHDiagram    = "0 Q 0 0 1 1 1 0 0 1 0 Rm:5 0 0 0 0 1 1 Rn:5 Rd:5"    // FMLA (vector), half precision
	// Advanced SIMD "three same", single and double precision: the op is
	// U, bit 23 (o1/E/a) and opcode.
	threeSameDiagram = "0 Q U 0 1 1 1 0 o1 sz 1 Rm:5 opcode:5 1 Rn:5 Rd:5"
	// Advanced SIMD "two-register miscellaneous", floating point: the op
	// is U, bit 23 (a) and opcode.
	twoMiscDiagram = "0 Q U 0 1 1 1 0 a sz 1 0 0 0 0 opcode:5 1 0 Rn:5 Rd:5"
)

func TestEncodings(t *testing.T) {
	for d := V(0); d < 32; d += 5 {
		for n := V(1); n < 32; n += 7 {
			for m := V(2); m < 32; m += 3 {
				for idx := 0; idx < 4; idx++ {
					f := map[string]uint32{"Q": 1, "sz": 0, "L": uint32(idx & 1), "H": uint32(idx >> 1),
						"M": uint32(m >> 4), "Rm": uint32(m & 15), "Rn": uint32(n), "Rd": uint32(d)}
					if got, want := FMLAElemS(d, n, m, idx).Bits, layout(t, fmlaElemDiagram, f); got != want {
						t.Errorf("FMLA V%d, V%d, V%d[%d] = %#08x, want %#08x", d, n, m, idx, got, want)
					}
					if got, want := FMULElemS(d, n, m, idx).Bits, layout(t, fmulElemDiagram, f); got != want {
						t.Errorf("FMUL V%d, V%d, V%d[%d] = %#08x, want %#08x", d, n, m, idx, got, want)
					}
				}
				r := map[string]uint32{"Q": 1, "size": 2, "Rm": uint32(m), "Rn": uint32(n), "Rd": uint32(d)}
				r["U"] = 0
				if got, want := SDOT(d, n, m).Bits, layout(t, dotDiagram, r); got != want {
					t.Errorf("SDOT = %#08x, want %#08x", got, want)
				}
				r["U"] = 1
				if got, want := UDOT(d, n, m).Bits, layout(t, dotDiagram, r); got != want {
					t.Errorf("UDOT = %#08x, want %#08x", got, want)
				}
				r["U"], r["B"] = 0, 0
				if got, want := SMMLA(d, n, m).Bits, layout(t, mmlaDiagram, r); got != want {
					t.Errorf("SMMLA = %#08x, want %#08x", got, want)
				}
				if got, want := FMLAH(d, n, m).Bits, layout(t, fmlaHDiagram, r); got != want {
					t.Errorf("FMLA .8H = %#08x, want %#08x", got, want)
				}
				for _, c := range []struct {
					f          func(d, n, m V) Enc
					u, o1, opc uint32
				}{
					{FADD, 0, 0, 0b11010}, {FSUB, 0, 1, 0b11010}, {FMUL, 1, 0, 0b11011},
					{FMAX, 0, 0, 0b11110}, {FMIN, 0, 1, 0b11110}, {FCMGT, 1, 1, 0b11100},
					{FDIV, 1, 0, 0b11111},
				} {
					f := map[string]uint32{"Q": 1, "U": c.u, "o1": c.o1, "sz": 0, "opcode": c.opc, "Rm": uint32(m), "Rn": uint32(n), "Rd": uint32(d)}
					if e := c.f(d, n, m); e.Bits != layout(t, threeSameDiagram, f) {
						t.Errorf("%s = %#08x, want %#08x", e.Asm, e.Bits, layout(t, threeSameDiagram, f))
					}
				}
			}
			for _, c := range []struct {
				f         func(d, n V) Enc
				u, a, opc uint32
			}{
				{FRINTN, 0, 0, 0b11000}, {FRINTM, 0, 0, 0b11001}, {FCVTZS, 0, 1, 0b11011},
				{FCMLT0, 0, 1, 0b01110}, {FABS, 0, 1, 0b01111},
			} {
				f := map[string]uint32{"Q": 1, "U": c.u, "a": c.a, "sz": 0, "opcode": c.opc, "Rn": uint32(n), "Rd": uint32(d)}
				if e := c.f(d, n); e.Bits != layout(t, twoMiscDiagram, f) {
					t.Errorf("%s = %#08x, want %#08x", e.Asm, e.Bits, layout(t, twoMiscDiagram, f))
				}
			}
		}
	}
}

// TestKnownWords: words an assembler (llvm-mc -triple=aarch64
// -mattr=+dotprod,+i8mm,+fullfp16 -show-encoding) writes for the same
// mnemonics, so a diagram misread twice still fails.
func TestKnownWords(t *testing.T) {
	for _, c := range []struct {
		e    Enc
		want uint32
	}{
		{FMLAElemS(0, 1, 2, 0), 0x4f821020},
		{FMLAElemS(3, 17, 29, 3), 0x4fbd1a23},
		{FMLAElemS(21, 5, 28, 1), 0x4fbc10b5},
		{FMULElemS(7, 9, 30, 2), 0x4f9e9927},
		{SDOT(0, 1, 2), 0x4e829420},
		{UDOT(31, 15, 16), 0x6e9095ff},
		{SMMLA(4, 5, 6), 0x4e86a4a4},
		{FMLAH(1, 2, 30), 0x4e5e0c41},
		{FADD(1, 2, 30), 0x4e3ed441},
		{FSUB(1, 2, 30), 0x4ebed441},
		{FMUL(7, 9, 30), 0x6e3edd27},
		{FMAX(3, 17, 29), 0x4e3df623},
		{FMIN(3, 17, 29), 0x4ebdf623},
		{FCMGT(21, 5, 28), 0x6ebce4b5},
		{FDIV(1, 2, 30), 0x6e3efc41},
		{FRINTN(3, 17), 0x4e218a23},
		{FRINTM(21, 5), 0x4e2198b5},
		{FCVTZS(7, 9), 0x4ea1b927},
		{FCMLT0(1, 2), 0x4ea0e841},
		{FABS(31, 15), 0x4ea0f9ff},
	} {
		if c.e.Bits != c.want {
			t.Errorf("%s = %#08x, want %#08x", c.e.Asm, c.e.Bits, c.want)
		}
	}
}
