package templates

import "unsafe"

// Half-precision storage: vectorised f16 <-> f32 conversion for the weights
// weights.bin stores f16 (widened at New: WidenF16) and for Cast between
// float32 and float16 (F16ToF32s, F32ToF16s). The F16C kernels
// (asm_f16_amd64.s, from asmgen/amd64/f16) run where the CPU has F16C;
// f16ToF32sGo and f32ToF16sGo are the pure-Go twins and give the same
// bits (a signalling NaN quieted, as VCVTPH2PS does).

// F16ToF32s widens len(src) halves into dst[:len(src)] (exact).
func F16ToF32s(dst []float32, src []uint16) {
	if len(src) == 0 {
		return
	}
	_ = dst[len(src)-1]
	f16ToF32s(dst[:len(src)], src)
}

// F32ToF16s rounds len(src) floats into dst[:len(src)], to nearest even.
func F32ToF16s(dst []uint16, src []float32) {
	if len(src) == 0 {
		return
	}
	_ = dst[len(src)-1]
	f32ToF16s(dst[:len(src)], src)
}

// f16ToF32sGo is the pure-Go widening: F16ToF32, with a signalling NaN
// quieted (bit 22 set) as the F16C instruction does.
func f16ToF32sGo(dst []float32, src []uint16) {
	for i, h := range src {
		dst[i] = f16Widen(h)
	}
}

func f16Widen(h uint16) float32 {
	if h&0x7c00 == 0x7c00 && h&0x3ff != 0 {
		h |= 0x200 // quiet: the widened NaN has bit 22 set
	}
	return F16ToF32(h)
}

// f32ToF16sGo is the pure-Go narrowing: F32ToF16 (nearest even; a NaN
// becomes the quiet NaN of its sign, 0x7e00).
func f32ToF16sGo(dst []uint16, src []float32) {
	for i, f := range src {
		dst[i] = F32ToF16(f)
	}
}

// f16QuietNaNs sets each NaN in h to the quiet NaN of its sign (0x7e00),
// as F32ToF16 writes it: VCVTPS2PH keeps a NaN's payload.
func f16QuietNaNs(h []uint16) {
	for i, v := range h {
		if v&0x7fff > 0x7c00 {
			h[i] = v&0x8000 | 0x7e00
		}
	}
}

// WidenF16 fills dst with the halves src holds (2*len(dst) bytes, little
// endian: a constant weights.bin stores f16, widened at New).
func WidenF16(dst []float32, src string) {
	if len(src) != 2*len(dst) {
		panic("WidenF16: length mismatch")
	}
	if len(dst) == 0 {
		return
	}
	p := unsafe.Pointer(unsafe.StringData(src))
	if halfLittleEndian && uintptr(p)%2 == 0 {
		F16ToF32s(dst, unsafe.Slice((*uint16)(p), len(dst)))
		return
	}
	for i := range dst {
		dst[i] = f16Widen(uint16(src[2*i]) | uint16(src[2*i+1])<<8)
	}
}

// halfLittleEndian: halves in memory are weights.bin's byte order.
var halfLittleEndian = func() bool { x := uint16(1); return *(*byte)(unsafe.Pointer(&x)) == 1 }()

// CuvilRoundHalf is cuvil::RoundHalf: each float32 rounded to the nearest
// half and widened back, as Cast to FLOAT16 then to FLOAT gives it (the
// same bits, NaNs included), through a half buffer that stays in L1.
func CuvilRoundHalf(n *Node) error {
	if len(n.In) < 1 || n.In[0] == nil || n.In[0].DType != F32 {
		return n.Errorf("want a float32 input")
	}
	x := n.In[0]
	n.Out[0].Resize(F32, x.Shape...)
	src, dst := x.F32(), n.Out[0].F32()
	var buf [512]uint16
	for i := 0; i < len(src); i += len(buf) {
		end := min(i+len(buf), len(src))
		h := buf[:end-i]
		F32ToF16s(h, src[i:end])
		F16ToF32s(dst[i:end], h)
	}
	return nil
}
