package templates

import "math"

// Dtype helpers shared by the elementwise and shape kernels.

// ewNum is every Go element type that holds a number directly (f16 and
// bf16 are []uint16 bits and go through their own paths).
type ewNum interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~float32 | ~float64
}

// ewWide is the type a number is computed in: float64 for floats, int64
// for signed and uint64 for unsigned integers.
type ewWide interface{ ~int64 | ~uint64 | ~float64 }

func ewIsFloat(dt DType) bool { return dt == F32 || dt == F64 || dt == F16 || dt == BF16 }
func ewIsHalf(dt DType) bool  { return dt == F16 || dt == BF16 }
func ewIsSigned(dt DType) bool {
	return dt == I8 || dt == I16 || dt == I32 || dt == I64
}
func ewIsUnsigned(dt DType) bool {
	return dt == U8 || dt == U16 || dt == U32 || dt == U64
}
func ewIsNumeric(dt DType) bool { return ewIsFloat(dt) || ewIsSigned(dt) || ewIsUnsigned(dt) }

// ewInts reads an integer tensor (any integer dtype) into dst, which must
// have room; it returns the filled prefix.
func ewInts(t *Tensor, dst []int) []int {
	n := t.Len()
	dst = dst[:n]
	switch s := t.Data.(type) {
	case []int64:
		for i, v := range s[:n] {
			dst[i] = int(v)
		}
	case []int32:
		for i, v := range s[:n] {
			dst[i] = int(v)
		}
	case []int16:
		for i, v := range s[:n] {
			dst[i] = int(v)
		}
	case []int8:
		for i, v := range s[:n] {
			dst[i] = int(v)
		}
	case []uint8:
		for i, v := range s[:n] {
			dst[i] = int(v)
		}
	case []uint16:
		for i, v := range s[:n] {
			dst[i] = int(v)
		}
	case []uint32:
		for i, v := range s[:n] {
			dst[i] = int(v)
		}
	case []uint64:
		for i, v := range s[:n] {
			dst[i] = int(v)
		}
	default:
		for i := range dst {
			dst[i] = int(ewF64At(t, i))
		}
	}
	return dst
}

// ewF64At reads element i of any numeric or bool tensor as float64.
func ewF64At(t *Tensor, i int) float64 {
	switch s := t.Data.(type) {
	case []float32:
		return float64(s[i])
	case []float64:
		return s[i]
	case []uint16:
		switch t.DType {
		case F16:
			return float64(F16ToF32(s[i]))
		case BF16:
			return float64(BF16ToF32(s[i]))
		}
		return float64(s[i])
	case []int8:
		return float64(s[i])
	case []uint8:
		if t.DType != U8 && IsSmallFloat(t.DType) {
			return F8ToF64(t.DType, s[i])
		}
		return float64(s[i])
	case []int16:
		return float64(s[i])
	case []int32:
		return float64(s[i])
	case []int64:
		return float64(s[i])
	case []uint32:
		return float64(s[i])
	case []uint64:
		return float64(s[i])
	case []bool:
		if s[i] {
			return 1
		}
		return 0
	}
	panic("templates: not a numeric tensor: " + t.DType.String())
}

// ewI64At reads element i of an integer tensor exactly (floats truncate).
func ewI64At(t *Tensor, i int) int64 {
	switch s := t.Data.(type) {
	case []int64:
		return s[i]
	case []int32:
		return int64(s[i])
	case []int16:
		return int64(s[i])
	case []int8:
		return int64(s[i])
	case []uint8:
		return int64(s[i])
	case []uint32:
		return int64(s[i])
	case []uint64:
		return int64(s[i])
	case []uint16:
		if t.DType == U16 {
			return int64(s[i])
		}
	}
	return int64(ewF64At(t, i))
}

// ewF64ToF16 converts float64 to half bits with one rounding: it first
// rounds to float32 with round-to-odd, which makes the second rounding to
// 11 bits exact.
func ewF64ToF16(x float64) uint16 { return F32ToF16(ewRoundOdd32(x)) }

// ewF64ToBF16 is ewF64ToF16 for bfloat16.
func ewF64ToBF16(x float64) uint16 { return F32ToBF16(ewRoundOdd32(x)) }

func ewRoundOdd32(x float64) float32 {
	f := float32(x)
	if float64(f) == x || math.IsNaN(x) || math.IsInf(float64(f), 0) {
		return f
	}
	b := math.Float32bits(f)
	if math.Abs(float64(f)) > math.Abs(x) { // rounded away from zero: step back
		b--
	}
	return math.Float32frombits(b | 1)
}

// ewScratch is per-node reusable memory for this kernel group, kept in
// Node.Cache.
type ewScratch struct {
	f64  []float64
	ints [4][]int
	val  Tensor // a one-element value (Pad's constant)
}

func ewScr(n *Node) *ewScratch {
	if s, ok := n.Cache.(*ewScratch); ok {
		return s
	}
	s := &ewScratch{}
	n.Cache = s
	return s
}

func (s *ewScratch) F64(size int) []float64 {
	if cap(s.f64) < size {
		s.f64 = make([]float64, size)
	}
	return s.f64[:size]
}

// Ints returns int buffer slot (0..3) with length size.
func (s *ewScratch) Ints(slot, size int) []int {
	if cap(s.ints[slot]) < size {
		s.ints[slot] = make([]int, size)
	}
	return s.ints[slot][:size]
}

// ewCopyData copies src's data into dst's (same Go type, dst long enough).
func ewCopyData(dst, src any) {
	n := dataLen(src)
	if n == 0 {
		return
	}
	var w ewWalk
	w.rank, w.nops = 1, 2
	w.dims[0] = n
	w.st[0][0], w.st[1][0] = 1, 1
	ewCopyWalkAny(&w, dst, src)
}

// ewCopyTensor makes dst a copy of src.
func ewCopyTensor(dst, src *Tensor) {
	dst.Resize(src.DType, src.Shape...)
	ewCopyData(dst.Data, src.Data)
}

// ewMove copies n elements from src[si:] to dst[di:] (same Go type).
func ewMove(dst any, di int, src any, si, n int) {
	switch d := dst.(type) {
	case []float32:
		copy(d[di:di+n], src.([]float32)[si:si+n])
	case []float64:
		copy(d[di:di+n], src.([]float64)[si:si+n])
	case []uint16:
		copy(d[di:di+n], src.([]uint16)[si:si+n])
	case []int8:
		copy(d[di:di+n], src.([]int8)[si:si+n])
	case []uint8:
		copy(d[di:di+n], src.([]uint8)[si:si+n])
	case []int16:
		copy(d[di:di+n], src.([]int16)[si:si+n])
	case []int32:
		copy(d[di:di+n], src.([]int32)[si:si+n])
	case []int64:
		copy(d[di:di+n], src.([]int64)[si:si+n])
	case []uint32:
		copy(d[di:di+n], src.([]uint32)[si:si+n])
	case []uint64:
		copy(d[di:di+n], src.([]uint64)[si:si+n])
	case []bool:
		copy(d[di:di+n], src.([]bool)[si:si+n])
	case []string:
		copy(d[di:di+n], src.([]string)[si:si+n])
	default:
		panic("templates: unsupported tensor data")
	}
}

func ewFillT[T any](d []T, v T) {
	for i := range d {
		d[i] = v
	}
}

// ewFill sets dst[di:di+n] to src[si] (same Go type).
func ewFill(dst any, di, n int, src any, si int) {
	switch d := dst.(type) {
	case []float32:
		ewFillT(d[di:di+n], src.([]float32)[si])
	case []float64:
		ewFillT(d[di:di+n], src.([]float64)[si])
	case []uint16:
		ewFillT(d[di:di+n], src.([]uint16)[si])
	case []int8:
		ewFillT(d[di:di+n], src.([]int8)[si])
	case []uint8:
		ewFillT(d[di:di+n], src.([]uint8)[si])
	case []int16:
		ewFillT(d[di:di+n], src.([]int16)[si])
	case []int32:
		ewFillT(d[di:di+n], src.([]int32)[si])
	case []int64:
		ewFillT(d[di:di+n], src.([]int64)[si])
	case []uint32:
		ewFillT(d[di:di+n], src.([]uint32)[si])
	case []uint64:
		ewFillT(d[di:di+n], src.([]uint64)[si])
	case []bool:
		ewFillT(d[di:di+n], src.([]bool)[si])
	case []string:
		ewFillT(d[di:di+n], src.([]string)[si])
	default:
		panic("templates: unsupported tensor data")
	}
}

// ewZero clears dst[di:di+n] (0, false, "").
func ewZero(dst any, di, n int) {
	switch d := dst.(type) {
	case []float32:
		clear(d[di : di+n])
	case []float64:
		clear(d[di : di+n])
	case []uint16:
		clear(d[di : di+n])
	case []int8:
		clear(d[di : di+n])
	case []uint8:
		clear(d[di : di+n])
	case []int16:
		clear(d[di : di+n])
	case []int32:
		clear(d[di : di+n])
	case []int64:
		clear(d[di : di+n])
	case []uint32:
		clear(d[di : di+n])
	case []uint64:
		clear(d[di : di+n])
	case []bool:
		clear(d[di : di+n])
	case []string:
		clear(d[di : di+n])
	default:
		panic("templates: unsupported tensor data")
	}
}

// ewSetF64 stores v (converted like Cast) into element i of a numeric or
// bool tensor.
func ewSetF64(t *Tensor, i int, v float64) {
	switch d := t.Data.(type) {
	case []float32:
		d[i] = float32(v)
	case []float64:
		d[i] = v
	case []uint16:
		switch t.DType {
		case F16:
			d[i] = ewF64ToF16(v)
		case BF16:
			d[i] = ewF64ToBF16(v)
		default:
			d[i] = uint16(int64(v))
		}
	case []int8:
		d[i] = int8(int64(v))
	case []uint8:
		d[i] = uint8(int64(v))
	case []int16:
		d[i] = int16(int64(v))
	case []int32:
		d[i] = int32(int64(v))
	case []int64:
		d[i] = int64(v)
	case []uint32:
		d[i] = uint32(int64(v))
	case []uint64:
		d[i] = uint64(v)
	case []bool:
		d[i] = v != 0
	default:
		panic("templates: not a numeric tensor: " + t.DType.String())
	}
}

// ewAxis normalises a possibly negative axis against rank.
func ewAxis(axis int64, rank int) (int, bool) {
	a := int(axis)
	if a < 0 {
		a += rank
	}
	return a, a >= 0 && a < rank
}
