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
)

var dtypeNames = [...]string{
	Undefined: "undef", F32: "f32", U8: "u8", I8: "i8", U16: "u16", I16: "i16",
	I32: "i32", I64: "i64", String: "string", Bool: "bool", F16: "f16", F64: "f64",
	U32: "u32", U64: "u64", C64: "c64", C128: "c128", BF16: "bf16",
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

// Size is the number of bytes one element takes in a packed buffer (raw_data
// layout). Bool takes one byte; String has no fixed size and returns 0.
func (d DType) Size() int {
	switch d {
	case U8, I8, Bool:
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

// Valid reports whether d is one of the ONNX element types.
func (d DType) Valid() bool { return d > Undefined && d <= BF16 }

func (d DType) IsFloat() bool { return d == F32 || d == F64 || d == F16 || d == BF16 }
func (d DType) IsSigned() bool {
	return d == I8 || d == I16 || d == I32 || d == I64
}
func (d DType) IsUnsigned() bool {
	return d == U8 || d == U16 || d == U32 || d == U64
}
func (d DType) IsInt() bool     { return d.IsSigned() || d.IsUnsigned() }
func (d DType) IsNumeric() bool { return d.IsFloat() || d.IsInt() }
