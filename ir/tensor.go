package ir

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Tensor is a constant: an initializer, a Constant node's value or a tensor
// attribute. Its data is one packed little-endian buffer (ONNX raw_data
// layout; bool as one byte) so that weights are never copied around the IR:
// values and passes share the *Tensor. Strings live in Strings.
type Tensor struct {
	Name    string
	DType   DType
	Shape   []int64
	Raw     []byte
	Strings []string
	// Store, when F16 on an F32 tensor, is how weights.bin stores it: as
	// halves (rounded to nearest even), widened back to float32 when the
	// generated package loads it (New). Zero: as DType. Passes set it
	// (widen-half, -precision fp16); only gen reads it.
	Store DType
}

// NumElements is the product of the dims (1 for a scalar).
func (t *Tensor) NumElements() int64 {
	n := int64(1)
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// Type returns the tensor's IR type.
func (t *Tensor) Type() Type { return TensorType(t.DType, ShapeOf(t.Shape...)) }

// Check verifies that the buffer holds exactly the elements the shape says.
func (t *Tensor) Check() error {
	if !t.DType.Valid() {
		return fmt.Errorf("tensor %q: invalid dtype %d", t.Name, uint8(t.DType))
	}
	n := int64(1)
	for _, d := range t.Shape {
		if d < 0 {
			return fmt.Errorf("tensor %q: negative dim %d in %v", t.Name, d, t.Shape)
		}
		if d != 0 && n > math.MaxInt32*int64(64)/d {
			return fmt.Errorf("tensor %q: shape %v is too large", t.Name, t.Shape)
		}
		n *= d
	}
	if t.DType == String {
		if int64(len(t.Strings)) != n {
			return fmt.Errorf("tensor %q: has %d strings, shape %v wants %d", t.Name, len(t.Strings), t.Shape, n)
		}
		return nil
	}
	if want := n * int64(t.DType.Size()); int64(len(t.Raw)) != want {
		return fmt.Errorf("tensor %q: has %d bytes of data, shape %v of %s wants %d", t.Name, len(t.Raw), t.Shape, t.DType, want)
	}
	return nil
}

// Float64s decodes any numeric or bool tensor into float64 (for printing,
// folding small shape tensors and tests).
func (t *Tensor) Float64s() []float64 {
	n := int(t.NumElements())
	out := make([]float64, n)
	b := t.Raw
	for i := 0; i < n; i++ {
		out[i] = t.at(b, i)
	}
	return out
}

// Int64s decodes an integer (or bool) tensor into int64; floats truncate.
func (t *Tensor) Int64s() []int64 {
	n := int(t.NumElements())
	out := make([]int64, n)
	for i := 0; i < n; i++ {
		switch t.DType {
		case I64:
			out[i] = int64(binary.LittleEndian.Uint64(t.Raw[8*i:]))
		case U64:
			out[i] = int64(binary.LittleEndian.Uint64(t.Raw[8*i:]))
		default:
			out[i] = int64(t.at(t.Raw, i))
		}
	}
	return out
}

func (t *Tensor) at(b []byte, i int) float64 {
	switch t.DType {
	case F32:
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
	case F64:
		return math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	case F16:
		return float64(F16ToF32(binary.LittleEndian.Uint16(b[2*i:])))
	case BF16:
		return float64(math.Float32frombits(uint32(binary.LittleEndian.Uint16(b[2*i:])) << 16))
	case I8:
		return float64(int8(b[i]))
	case U8, Bool:
		return float64(b[i])
	case I16:
		return float64(int16(binary.LittleEndian.Uint16(b[2*i:])))
	case U16:
		return float64(binary.LittleEndian.Uint16(b[2*i:]))
	case I32:
		return float64(int32(binary.LittleEndian.Uint32(b[4*i:])))
	case U32:
		return float64(binary.LittleEndian.Uint32(b[4*i:]))
	case I64:
		return float64(int64(binary.LittleEndian.Uint64(b[8*i:])))
	case U64:
		return float64(binary.LittleEndian.Uint64(b[8*i:]))
	case I4, I2:
		return float64(int8(b[i]))
	case U4, U2:
		return float64(b[i])
	case F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, F4E2M1, F8E8M0:
		return SmallFloatValue(t.DType, b[i])
	}
	return math.NaN()
}

// NewTensorInt64 builds an i64 tensor (handy for shapes and tests).
func NewTensorInt64(shape []int64, v []int64) *Tensor {
	raw := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(raw[8*i:], uint64(x))
	}
	return &Tensor{DType: I64, Shape: shape, Raw: raw}
}

// NewTensorF32 builds an f32 tensor.
func NewTensorF32(shape []int64, v []float32) *Tensor {
	raw := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(x))
	}
	return &Tensor{DType: F32, Shape: shape, Raw: raw}
}

// F16ToF32 converts IEEE half-precision bits to float32.
func F16ToF32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	man := uint32(h) & 0x3ff
	switch {
	case exp == 0 && man == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal
		for man&0x400 == 0 {
			man <<= 1
			exp--
		}
		exp++
		man &= 0x3ff
		return math.Float32frombits(sign | (exp+112)<<23 | man<<13)
	case exp == 0x1f:
		return math.Float32frombits(sign | 0xff<<23 | man<<13)
	}
	return math.Float32frombits(sign | (exp+112)<<23 | man<<13)
}

// F32ToF16 converts to IEEE half precision bits, rounding to nearest even
// (overflow to Inf; NaN becomes a quiet NaN).
func F32ToF16(f float32) uint16 { return f32ToF16(f) }
