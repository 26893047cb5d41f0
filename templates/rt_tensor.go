package templates

import (
	"fmt"
	"strconv"
	"strings"
)

// DType is an element type, numbered as ONNX's TensorProto.DataType.
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
	BF16      DType = 16

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

var dtypeNames = map[DType]string{
	F32: "f32", U8: "u8", I8: "i8", U16: "u16", I16: "i16", I32: "i32", I64: "i64",
	String: "string", Bool: "bool", F16: "f16", F64: "f64", U32: "u32", U64: "u64", BF16: "bf16",
	F8E4M3FN: "f8e4m3fn", F8E4M3FNUZ: "f8e4m3fnuz", F8E5M2: "f8e5m2", F8E5M2FNUZ: "f8e5m2fnuz",
	U4: "u4", I4: "i4", F4E2M1: "f4e2m1", F8E8M0: "f8e8m0", U2: "u2", I2: "i2",
}

func (d DType) String() string {
	if s, ok := dtypeNames[d]; ok {
		return s
	}
	return "dtype(" + strconv.Itoa(int(d)) + ")"
}

// Tensor is a dense row-major tensor. Data holds a slice whose Go type
// follows DType:
//
//	F32 []float32, F64 []float64, F16 and BF16 []uint16 (raw bits),
//	I8 []int8, U8 []uint8, I16 []int16, U16 []uint16, I32 []int32,
//	I64 []int64, U32 []uint32, U64 []uint64, Bool []bool, String []string.
//
// The narrow dtypes of ONNX opsets 19 to 26 take one Go element each, not
// packed: I4 and I2 []int8 (the value, -8..7 and -2..1), U4 and U2 []uint8
// (0..15 and 0..3), and the float formats F8E4M3FN, F8E4M3FNUZ, F8E5M2,
// F8E5M2FNUZ, F8E8M0 and F4E2M1 []uint8 holding their bit pattern (F4E2M1
// in the low nibble). F8ToF32 and F32ToF8 (rt_float8.go) convert them.
//
// A scalar has an empty Shape and one element.
type Tensor struct {
	DType DType
	Shape []int
	Data  any
}

// Len is the number of elements the shape describes.
func (t *Tensor) Len() int {
	n := 1
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// Resize sets t's dtype and shape and makes Data hold exactly Len()
// elements, reusing the existing backing array (and the Shape slice) when it
// is large enough, so steady-state runs do not allocate. Contents are not
// cleared.
func (t *Tensor) Resize(dt DType, shape ...int) {
	t.SetShape(shape)
	n := t.Len()
	if t.DType == dt && t.Data != nil {
		if ok := resizeSame(t, n); ok {
			return
		}
	}
	t.DType = dt
	t.Data = makeData(dt, n)
}

// SetShape copies shape into t.Shape, reusing its array.
func (t *Tensor) SetShape(shape []int) {
	if cap(t.Shape) >= len(shape) {
		t.Shape = t.Shape[:len(shape)]
	} else {
		t.Shape = make([]int, len(shape))
	}
	copy(t.Shape, shape)
}

// resizeSame reslices t.Data in place. When the length already matches it
// leaves Data alone: storing a slice into an interface boxes it, which would
// allocate on every run.
func resizeSame(t *Tensor, n int) bool {
	if dataLen(t.Data) == n {
		return true
	}
	switch d := t.Data.(type) {
	case []float32:
		return reslice(t, d, n)
	case []float64:
		return reslice(t, d, n)
	case []uint16:
		return reslice(t, d, n)
	case []int8:
		return reslice(t, d, n)
	case []uint8:
		return reslice(t, d, n)
	case []int16:
		return reslice(t, d, n)
	case []int32:
		return reslice(t, d, n)
	case []int64:
		return reslice(t, d, n)
	case []uint32:
		return reslice(t, d, n)
	case []uint64:
		return reslice(t, d, n)
	case []bool:
		return reslice(t, d, n)
	case []string:
		return reslice(t, d, n)
	}
	return false
}

// reslice sets t.Data to d[:n] when d has the capacity.
func reslice[E any](t *Tensor, d []E, n int) bool {
	if cap(d) < n {
		return false
	}
	t.Data = d[:n]
	return true
}

func makeData(dt DType, n int) any {
	switch dt {
	case F32:
		return make([]float32, n)
	case F64:
		return make([]float64, n)
	case F16, BF16, U16:
		return make([]uint16, n)
	case I8, I4, I2:
		return make([]int8, n)
	case U8, U4, U2, F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, F4E2M1, F8E8M0:
		return make([]uint8, n)
	case I16:
		return make([]int16, n)
	case I32:
		return make([]int32, n)
	case I64:
		return make([]int64, n)
	case U32:
		return make([]uint32, n)
	case U64:
		return make([]uint64, n)
	case Bool:
		return make([]bool, n)
	case String:
		return make([]string, n)
	}
	panic("templates: unsupported dtype " + dt.String())
}

// Typed accessors; each panics with a clear message on a dtype mismatch.
func (t *Tensor) F32() []float32 { return t.Data.([]float32) }
func (t *Tensor) F64() []float64 { return t.Data.([]float64) }
func (t *Tensor) I64() []int64   { return t.Data.([]int64) }
func (t *Tensor) I32() []int32   { return t.Data.([]int32) }
func (t *Tensor) Bool() []bool   { return t.Data.([]bool) }
func (t *Tensor) U16() []uint16  { return t.Data.([]uint16) }
func (t *Tensor) U8() []uint8    { return t.Data.([]uint8) }
func (t *Tensor) I8() []int8     { return t.Data.([]int8) }
func (t *Tensor) Str() []string  { return t.Data.([]string) }
func (t *Tensor) ShapeString() string {
	parts := make([]string, len(t.Shape))
	for i, d := range t.Shape {
		parts[i] = strconv.Itoa(d)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func (t *Tensor) String() string {
	return fmt.Sprintf("%s%s", t.DType, t.ShapeString())
}

// dataLen returns len of the slice held by Data (-1 for nil or unknown).
func dataLen(data any) int {
	switch d := data.(type) {
	case []float32:
		return len(d)
	case []float64:
		return len(d)
	case []uint16:
		return len(d)
	case []int8:
		return len(d)
	case []uint8:
		return len(d)
	case []int16:
		return len(d)
	case []int32:
		return len(d)
	case []int64:
		return len(d)
	case []uint32:
		return len(d)
	case []uint64:
		return len(d)
	case []bool:
		return len(d)
	case []string:
		return len(d)
	}
	return -1
}
