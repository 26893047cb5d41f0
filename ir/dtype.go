package ir

import "fmt"

// DType is an element type. The numbering is ONNX's TensorProto.DataType, so
// a DType converts to and from the wire value with a plain conversion.
type DType uint8

const (
	Undefined DType = 0
	F32       DType = 1
	U8        DType = 2
	I8        DType = 3
	U16       DType = 4
	I16       DType = 5
	I32       DType = 6
	I64       DType = 7
	String    DType = 8
	Bool      DType = 9
	F16       DType = 10
	F64       DType = 11
	U32       DType = 12
	U64       DType = 13
	C64       DType = 14
	C128      DType = 15
	BF16      DType = 16

	// The dtypes ONNX added after 1.12 (opsets 19 to 26). In a Tensor's Raw
	// (and weights.bin and the harness files) each takes one byte per
	// element: the float8 kinds, float4 and e8m0 their bit pattern (float4 in
	// the low nibble), int4/int2 the sign-extended value, uint4/uint2 the
	// value. Only ONNX's wire form (raw_data, int32_data) packs the 4-bit
	// kinds two and the 2-bit kinds four to a byte; the importer unpacks.
	F8E4M3FN   DType = 17
	F8E4M3FNUZ DType = 18
	F8E5M2     DType = 19
	F8E5M2FNUZ DType = 20
	U4         DType = 21
	I4         DType = 22
	F4E2M1     DType = 23
	F8E8M0     DType = 24
	U2         DType = 25
	I2         DType = 26
)

var dtypeNames = [...]string{
	Undefined: "undef", F32: "f32", U8: "u8", I8: "i8", U16: "u16", I16: "i16",
	I32: "i32", I64: "i64", String: "string", Bool: "bool", F16: "f16", F64: "f64",
	U32: "u32", U64: "u64", C64: "c64", C128: "c128", BF16: "bf16",
	F8E4M3FN: "f8e4m3fn", F8E4M3FNUZ: "f8e4m3fnuz", F8E5M2: "f8e5m2", F8E5M2FNUZ: "f8e5m2fnuz",
	U4: "u4", I4: "i4", F4E2M1: "f4e2m1", F8E8M0: "f8e8m0", U2: "u2", I2: "i2",
}

func (d DType) String() string {
	if int(d) < len(dtypeNames) {
		return dtypeNames[d]
	}
	return fmt.Sprintf("dtype(%d)", uint8(d))
}

// ParseDType is the inverse of DType.String.
func ParseDType(s string) (DType, bool) {
	for i, n := range dtypeNames {
		if n == s {
			return DType(i), true
		}
	}
	return Undefined, false
}

// Size is the number of bytes one element takes in a Tensor's Raw buffer
// (raw_data layout, except that the 4-bit and 2-bit kinds take a byte each,
// see Bits). Bool takes one byte; String has no fixed size and returns 0.
func (d DType) Size() int {
	switch d {
	case U8, I8, Bool, F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, U4, I4, F4E2M1, F8E8M0, U2, I2:
		return 1
	case U16, I16, F16, BF16:
		return 2
	case F32, I32, U32:
		return 4
	case F64, I64, U64, C64:
		return 8
	case C128:
		return 16
	}
	return 0
}

// Bits is the width of one element in ONNX's wire form (raw_data): 4 for
// u4, i4 and f4e2m1, 2 for u2 and i2, else 8*Size.
func (d DType) Bits() int {
	switch d {
	case U4, I4, F4E2M1:
		return 4
	case U2, I2:
		return 2
	}
	return 8 * d.Size()
}

// PackedBytes is the length of n elements in ONNX's raw_data form.
func (d DType) PackedBytes(n int64) int64 {
	if b := d.Bits(); b > 0 && b < 8 {
		per := int64(8 / b)
		return (n + per - 1) / per
	}
	return n * int64(d.Size())
}

// Valid reports whether d is one of the ONNX element types.
func (d DType) Valid() bool { return d > Undefined && d <= I2 }

// IsFloat reports the floating-point dtypes that kernels compute in (f16,
// bf16, f32, f64); the 8- and 4-bit float formats are IsSmallFloat.
func (d DType) IsFloat() bool { return d == F32 || d == F64 || d == F16 || d == BF16 }

// IsSmallFloat reports the storage-only float formats: the float8 kinds,
// f4e2m1 and f8e8m0. Cast, QuantizeLinear and DequantizeLinear convert
// them; other ops only move them.
func (d DType) IsSmallFloat() bool {
	switch d {
	case F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, F4E2M1, F8E8M0:
		return true
	}
	return false
}

// IsSigned includes i4 and i2; IsUnsigned u4 and u2.
func (d DType) IsSigned() bool {
	return d == I8 || d == I16 || d == I32 || d == I64 || d == I4 || d == I2
}
func (d DType) IsUnsigned() bool {
	return d == U8 || d == U16 || d == U32 || d == U64 || d == U4 || d == U2
}
func (d DType) IsInt() bool     { return d.IsSigned() || d.IsUnsigned() }
func (d DType) IsNumeric() bool { return d.IsFloat() || d.IsInt() }
