package templates

import (
	"encoding/binary"
	"math"
	"strconv"
	"strings"
)

// Cast and CastLike: every pair of the tensor dtypes here. Numbers convert
// like C (floats truncate toward zero when they become integers; integers
// wrap when they narrow); f16 rounds to nearest even, bf16 truncates
// toward zero before opset 19 (see castToBF16) and rounds to nearest even
// from 19; bool is x != 0
// one way and 0/1 the other; strings parse and print numbers (shortest
// representation that reads back, as numpy does). The float8 kinds and
// float4e2m1 round to nearest even and saturate by attribute "saturate"
// (default 1; F64ToF8), e8m0 rounds by "round_mode" (F32ToE8M0); int4,
// uint4, int2 and uint2 take the integer (floats truncated toward zero)
// modulo 16 or 4, two's complement for the signed ones, as the ONNX
// reference does.

var ewDTypeByName = map[string]DType{
	"FLOAT": F32, "UINT8": U8, "INT8": I8, "UINT16": U16, "INT16": I16, "INT32": I32,
	"INT64": I64, "STRING": String, "BOOL": Bool, "FLOAT16": F16, "DOUBLE": F64,
	"UINT32": U32, "UINT64": U64, "BFLOAT16": BF16,
	"FLOAT8E4M3FN": F8E4M3FN, "FLOAT8E4M3FNUZ": F8E4M3FNUZ, "FLOAT8E5M2": F8E5M2, "FLOAT8E5M2FNUZ": F8E5M2FNUZ,
	"UINT4": U4, "INT4": I4, "FLOAT4E2M1": F4E2M1, "FLOAT8E8M0": F8E8M0, "UINT2": U2, "INT2": I2,
}

// Cast converts input 0 to the dtype named by attribute "to" (a
// TensorProto number, or before opset 6 its name).
func Cast(n *Node) error {
	var to DType
	switch v := n.Attrs["to"].(type) {
	case int64:
		to = DType(v)
	case string:
		dt, ok := ewDTypeByName[strings.ToUpper(v)]
		if !ok {
			return n.Errorf("unknown dtype %q", v)
		}
		to = dt
	default:
		return n.Errorf("missing attribute to")
	}
	return ewCast(n, to)
}

// CastLike converts input 0 to input 1's dtype.
func CastLike(n *Node) error {
	if len(n.In) < 2 || n.In[1] == nil {
		return n.Errorf("want 2 inputs")
	}
	return ewCast(n, n.In[1].DType)
}

func ewCast(n *Node, to DType) error {
	if len(n.In) < 1 || n.In[0] == nil {
		return n.Errorf("want an input")
	}
	x, out := n.In[0], n.Out[0]
	if _, ok := dtypeNames[to]; !ok || to == Undefined {
		return n.Errorf("unsupported target dtype %s", to)
	}
	if x == out {
		return n.Errorf("input and output alias")
	}
	out.Resize(to, x.Shape...)
	if x.DType == to {
		ewCopyData(out.Data, x.Data)
		return nil
	}
	if x.DType == String {
		return ewCastFromString(n, out, x)
	}
	switch to {
	case F32:
		if x.DType == F16 { // F16C where the CPU has it (k_half.go)
			F16ToF32s(out.F32(), x.U16())
			break
		}
		ewCastNum(out.F32(), x)
	case F64:
		ewCastNum(out.F64(), x)
	case I8:
		ewCastNum(out.I8(), x)
	case I16:
		ewCastNum(out.Data.([]int16), x)
	case I32:
		ewCastNum(out.I32(), x)
	case I64:
		ewCastNum(out.I64(), x)
	case U8:
		ewCastNum(out.U8(), x)
	case U16:
		ewCastNum(out.U16(), x)
	case U32:
		ewCastNum(out.Data.([]uint32), x)
	case U64:
		ewCastNum(out.Data.([]uint64), x)
	case F16, BF16:
		enc := ewF64ToF16
		if to == BF16 {
			enc = castToBF16
			if n.Version >= 19 {
				enc = castToBF16Even
			}
		}
		o := out.U16()
		if x.DType == F32 && to == F16 { // F16C where the CPU has it (k_half.go)
			F32ToF16s(o, x.F32())
			break
		}
		if x.DType == F32 { // the common case, without a per-element switch
			for i, v := range x.F32()[:len(o)] {
				o[i] = enc(float64(v))
			}
			break
		}
		for i := range o {
			o[i] = enc(ewF64At(x, i))
		}
	case Bool:
		o := out.Bool()
		for i := range o {
			o[i] = ewF64At(x, i) != 0
		}
	case String:
		o := out.Str()
		for i := range o {
			o[i] = ewFormat(x, i)
		}
	case F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, F4E2M1:
		sat := n.Attrs.Int("saturate", 1) != 0
		o := out.U8()
		for i := range o {
			o[i] = F64ToF8(to, ewF64At(x, i), sat)
		}
	case F8E8M0:
		sat := n.Attrs.Int("saturate", 1) != 0
		mode, ok := ParseE8M0Mode(n.Attrs.String("round_mode", "up"))
		if !ok {
			return n.Errorf("round_mode %q, want up, down or nearest", n.Attrs.String("round_mode", "up"))
		}
		o := out.U8()
		for i := range o {
			o[i] = F32ToE8M0(float32(ewF64At(x, i)), sat, mode)
		}
	case I4, I2, U4, U2:
		bits := uint(4)
		if to == I2 || to == U2 {
			bits = 2
		}
		for i := 0; i < out.Len(); i++ {
			v := castIntAt(x, i)
			if to == I4 || to == I2 {
				out.I8()[i] = int8(v << (64 - bits) >> (64 - bits))
			} else {
				out.U8()[i] = uint8(uint64(v) & (1<<bits - 1))
			}
		}
	}
	return nil
}

// castIntAt is element i as an integer, floats truncated toward zero (NaN
// and infinities 0, as the reference's numpy conversion gives for int4).
func castIntAt(x *Tensor, i int) int64 {
	switch x.Data.(type) {
	case []float32, []float64, []uint16, []uint8:
		if ewIsFloat(x.DType) || IsSmallFloat(x.DType) && x.DType != U8 {
			f := math.Trunc(ewF64At(x, i))
			if math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > 1<<62 {
				return 0
			}
			return int64(f)
		}
	case []bool:
		if x.Bool()[i] {
			return 1
		}
		return 0
	}
	if x.DType == U64 {
		return int64(x.Data.([]uint64)[i])
	}
	return ewI64At(x, i)
}

// castToBF16 is Cast's conversion to bfloat16: it keeps the top 16 bits of
// the float32 (truncation toward zero), which is what the ONNX 1.12
// reference for Cast computes (test_cast_FLOAT_to_BFLOAT16 takes the high
// halves of the float32 words) and what ONNX Runtime did then. Float64
// input is truncated exactly, not rounded to float32 first. NaN stays a
// quiet NaN. Other kernels that produce bfloat16 round to nearest even.
func castToBF16(x float64) uint16 {
	if math.IsNaN(x) {
		return uint16(math.Float32bits(float32(x))>>16) | 0x40
	}
	f := float32(x)
	if math.Abs(float64(f)) > math.Abs(x) { // rounded away from zero: step back
		f = math.Nextafter32(f, 0)
	}
	return uint16(math.Float32bits(f) >> 16)
}

// castToBF16Even is Cast's conversion to bfloat16 from opset 19 on: round
// to nearest even (the ONNX 1.22 tests, made with ml_dtypes, encode it).
func castToBF16Even(x float64) uint16 { return F32ToBF16(float32(x)) }

// ewCastNum converts any numeric or bool tensor into dst.
func ewCastNum[D ewNum](dst []D, src *Tensor) {
	switch s := src.Data.(type) {
	case []float32:
		ewConvF(dst, s)
	case []float64:
		ewConvF(dst, s)
	case []uint16:
		switch src.DType {
		case F16:
			for i := range dst {
				dst[i] = ewF32To[D](F16ToF32(s[i]))
			}
		case BF16:
			for i := range dst {
				dst[i] = ewF32To[D](BF16ToF32(s[i]))
			}
		default:
			ewConv(dst, s)
		}
	case []int8:
		ewConv(dst, s)
	case []uint8:
		if src.DType != U8 && IsSmallFloat(src.DType) {
			for i := range dst {
				dst[i] = ewF64To[D](F8ToF64(src.DType, s[i]))
			}
			break
		}
		ewConv(dst, s)
	case []int16:
		ewConv(dst, s)
	case []int32:
		ewConv(dst, s)
	case []int64:
		ewConv(dst, s)
	case []uint32:
		ewConv(dst, s)
	case []uint64:
		ewConv(dst, s)
	case []bool:
		for i := range dst {
			dst[i] = 0
			if s[i] {
				dst[i] = 1
			}
		}
	}
}

func ewConv[D, S ewNum](dst []D, src []S) {
	src = src[:len(dst)]
	for i, v := range src {
		dst[i] = D(v)
	}
}

// ewConvF converts floats; negative values bound for an unsigned type go
// through int64 so they wrap as in C rather than depend on the platform.
func ewConvF[D ewNum, S float32 | float64](dst []D, src []S) {
	src = src[:len(dst)]
	var z D
	z--
	unsigned := z > 0
	for i, v := range src {
		if unsigned && v < 0 {
			dst[i] = D(int64(v))
		} else {
			dst[i] = D(v)
		}
	}
}

func ewF64To[D ewNum](v float64) D {
	var z D
	z--
	if z > 0 && v < 0 {
		return D(int64(v))
	}
	return D(v)
}

func ewF32To[D ewNum](v float32) D {
	var z D
	z--
	if z > 0 && v < 0 {
		return D(int64(v))
	}
	return D(v)
}

func ewFormat(x *Tensor, i int) string {
	switch s := x.Data.(type) {
	case []float32:
		return ewFormatF(float64(s[i]), 32)
	case []float64:
		return ewFormatF(s[i], 64)
	case []bool:
		if s[i] {
			return "True"
		}
		return "False"
	case []uint64:
		return strconv.FormatUint(s[i], 10)
	}
	if ewIsHalf(x.DType) || x.DType != U8 && IsSmallFloat(x.DType) {
		return ewFormatF(ewF64At(x, i), 32)
	}
	return strconv.FormatInt(ewI64At(x, i), 10)
}

func ewFormatF(v float64, bits int) string {
	switch {
	case v != v:
		return "NaN"
	case math.IsInf(v, 1):
		return "INF"
	case math.IsInf(v, -1):
		return "-INF"
	}
	return strconv.FormatFloat(v, 'g', -1, bits)
}

func ewCastFromString(n *Node, out, x *Tensor) error {
	s := x.Str()
	for i := range s[:out.Len()] {
		str := strings.TrimSpace(s[i])
		if out.DType == Bool {
			switch strings.ToLower(str) {
			case "true":
				out.Bool()[i] = true
				continue
			case "false":
				out.Bool()[i] = false
				continue
			}
		}
		if (ewIsSigned(out.DType) || ewIsUnsigned(out.DType)) && out.DType != U64 {
			if v, err := strconv.ParseInt(str, 10, 64); err == nil {
				tmp := Tensor{DType: I64, Data: []int64{v}}
				ewCastElem(out, i, &tmp)
				continue
			}
		}
		if out.DType == U64 {
			if v, err := strconv.ParseUint(str, 10, 64); err == nil {
				out.Data.([]uint64)[i] = v
				continue
			}
		}
		v, err := strconv.ParseFloat(str, 64)
		if err != nil && !strings.Contains(err.Error(), "range") {
			return n.Errorf("cannot parse %q as %s", s[i], out.DType)
		}
		tmp := Tensor{DType: F64, Data: []float64{v}}
		ewCastElem(out, i, &tmp)
	}
	return nil
}

// ewCastElem converts the single element of one into out[i] (string
// parsing only; not a steady-state path for numeric models).
func ewCastElem(out *Tensor, i int, one *Tensor) {
	var t Tensor
	t.Resize(out.DType, 1)
	n := Node{Op: "Cast", In: []*Tensor{one}, Out: []*Tensor{&t}}
	if err := ewCast(&n, out.DType); err != nil {
		panic(err)
	}
	switch o := out.Data.(type) {
	case []float32:
		o[i] = t.F32()[0]
	case []float64:
		o[i] = t.F64()[0]
	case []uint16:
		o[i] = t.U16()[0]
	case []int8:
		o[i] = t.I8()[0]
	case []uint8:
		o[i] = t.U8()[0]
	case []int16:
		o[i] = t.Data.([]int16)[0]
	case []int32:
		o[i] = t.I32()[0]
	case []int64:
		o[i] = t.I64()[0]
	case []uint32:
		o[i] = t.Data.([]uint32)[0]
	case []uint64:
		o[i] = t.Data.([]uint64)[0]
	case []bool:
		o[i] = t.Bool()[0]
	}
}

// BitCast (opset 26) reinterprets each element's bits as dtype "to" of the
// same width, little-endian, as a C union or numpy's view would.
func BitCast(n *Node) error {
	x, out := n.Input(0), n.Out[0]
	if x == nil {
		return n.Errorf("want an input")
	}
	to := DType(n.Attrs.Int("to", 0))
	if _, ok := dtypeNames[to]; !ok || to == String || x.DType == String {
		return n.Errorf("cannot bit-cast %s to %s", x.DType, to)
	}
	w := bitCastWidth(x.DType)
	if w == 0 || w != bitCastWidth(to) {
		return n.Errorf("cannot bit-cast %s to %s: widths differ", x.DType, to)
	}
	out.Resize(to, x.Shape...)
	cnt := x.Len()
	buf := miscScr[byte](n)
	b := buf.get(0, cnt*w)
	bitCastPut(b, x)
	bitCastGet(out, b)
	return nil
}

func bitCastWidth(dt DType) int {
	switch dt {
	case I8, U8, Bool, F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, F8E8M0:
		return 1
	case I16, U16, F16, BF16:
		return 2
	case I32, U32, F32:
		return 4
	case I64, U64, F64:
		return 8
	}
	return 0
}

// bitCastPut writes t's elements into b little-endian.
func bitCastPut(b []byte, t *Tensor) {
	switch s := t.Data.(type) {
	case []uint8:
		copy(b, s)
	case []int8:
		for i, v := range s {
			b[i] = byte(v)
		}
	case []bool:
		for i, v := range s {
			b[i] = 0
			if v {
				b[i] = 1
			}
		}
	case []uint16:
		for i, v := range s {
			binary.LittleEndian.PutUint16(b[2*i:], v)
		}
	case []int16:
		for i, v := range s {
			binary.LittleEndian.PutUint16(b[2*i:], uint16(v))
		}
	case []uint32:
		for i, v := range s {
			binary.LittleEndian.PutUint32(b[4*i:], v)
		}
	case []int32:
		for i, v := range s {
			binary.LittleEndian.PutUint32(b[4*i:], uint32(v))
		}
	case []float32:
		for i, v := range s {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
		}
	case []uint64:
		for i, v := range s {
			binary.LittleEndian.PutUint64(b[8*i:], v)
		}
	case []int64:
		for i, v := range s {
			binary.LittleEndian.PutUint64(b[8*i:], uint64(v))
		}
	case []float64:
		for i, v := range s {
			binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(v))
		}
	}
}

// bitCastGet reads t's elements from b (bool: any non-zero byte is true).
func bitCastGet(t *Tensor, b []byte) {
	switch s := t.Data.(type) {
	case []uint8:
		copy(s, b)
	case []int8:
		for i := range s {
			s[i] = int8(b[i])
		}
	case []bool:
		for i := range s {
			s[i] = b[i] != 0
		}
	case []uint16:
		for i := range s {
			s[i] = binary.LittleEndian.Uint16(b[2*i:])
		}
	case []int16:
		for i := range s {
			s[i] = int16(binary.LittleEndian.Uint16(b[2*i:]))
		}
	case []uint32:
		for i := range s {
			s[i] = binary.LittleEndian.Uint32(b[4*i:])
		}
	case []int32:
		for i := range s {
			s[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
		}
	case []float32:
		for i := range s {
			s[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
	case []uint64:
		for i := range s {
			s[i] = binary.LittleEndian.Uint64(b[8*i:])
		}
	case []int64:
		for i := range s {
			s[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
		}
	case []float64:
		for i := range s {
			s[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
		}
	}
}
