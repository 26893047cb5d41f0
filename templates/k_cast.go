package templates

import (
	"math"
	"strconv"
	"strings"
)

// Cast and CastLike: every pair of the tensor dtypes here. Numbers convert
// like C (floats truncate toward zero when they become integers; integers
// wrap when they narrow); f16 rounds to nearest even, bf16 truncates
// toward zero (see castToBF16); bool is x != 0
// one way and 0/1 the other; strings parse and print numbers (shortest
// representation that reads back, as numpy does).

var ewDTypeByName = map[string]DType{
	"FLOAT": F32, "UINT8": U8, "INT8": I8, "UINT16": U16, "INT16": I16, "INT32": I32,
	"INT64": I64, "STRING": String, "BOOL": Bool, "FLOAT16": F16, "DOUBLE": F64,
	"UINT32": U32, "UINT64": U64, "BFLOAT16": BF16,
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
		}
		o := out.U16()
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
	}
	return nil
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
	if ewIsHalf(x.DType) {
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
