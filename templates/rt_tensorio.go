package templates

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file reads tensors from the two formats test data comes in, so a
// program can feed a generated package without writing a decoder: ONNX's
// TensorProto (the input_K.pb / output_K.pb files of ONNX test folders,
// onnx.numpy_helper.from_array(...).SerializeToString()) and numpy's .npy
// (numpy.save). It decodes the protobuf wire format by hand: generated
// packages import only the standard library.

// tioMaxElems bounds the elements a file may declare (2^48, as the
// compiler's shape inference): larger shapes are refused before anything
// is allocated, and the data must then be present in full.
const tioMaxElems = 1 << 48 >> ((64 - 32<<(^uint(0)>>63)) / 32 * 18) // 2^30 where int is 32 bits

// LoadTensorFile reads a tensor from a file: an ONNX TensorProto (.pb) or
// a numpy .npy file, told apart by their contents (.npy files start with
// "\x93NUMPY"). See ReadTensor.
func LoadTensorFile(path string) (*Tensor, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	t, err := ReadTensor(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// ReadTensor reads one tensor, an ONNX TensorProto or a numpy .npy file,
// from r (to its end). Every dtype of Tensor is read: from a TensorProto
// in raw_data or in its typed field (float_data, int32_data, int64_data,
// double_data, uint64_data, string_data), the 4- and 2-bit dtypes packed
// low bits first; from .npy the bool, integer, float16/32/64 and string
// (S, U) dtypes, either byte order, C or Fortran order (returned in C
// order). The data must match the shape exactly. Not read: complex
// dtypes, .npy object arrays (pickles), TensorProto segments and external
// data (the file names another file).
func ReadTensor(r io.Reader) (*Tensor, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	if bytes.HasPrefix(b, []byte("\x93NUMPY")) {
		t, err := tioDecodeNpy(b)
		if err != nil {
			return nil, fmt.Errorf("npy: %w", err)
		}
		return t, nil
	}
	t, err := tioDecodeProto(b)
	if err != nil {
		return nil, fmt.Errorf("TensorProto: %w", err)
	}
	return t, nil
}

// tioShape checks dims and returns them as a Shape with their product.
func tioShape(dims []int64) ([]int, int, error) {
	shape := make([]int, len(dims))
	n := int64(1)
	for i, d := range dims {
		if d < 0 {
			return nil, 0, fmt.Errorf("dim %d is %d", i, d)
		}
		if d > tioMaxElems || (d > 0 && n > tioMaxElems/d) {
			return nil, 0, fmt.Errorf("shape %v has more than 2^48 elements", dims)
		}
		n *= d
		shape[i] = int(d)
	}
	if int64(int(n)) != n {
		return nil, 0, fmt.Errorf("shape %v has too many elements for this platform", dims)
	}
	return shape, int(n), nil
}

// tioBits is the width of a dtype's elements in raw_data (0: none).
func tioBits(dt DType) int {
	switch dt {
	case F64, I64, U64:
		return 64
	case F32, I32, U32:
		return 32
	case F16, BF16, I16, U16:
		return 16
	case I8, U8, Bool, F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, F8E8M0:
		return 8
	case I4, U4, F4E2M1:
		return 4
	case I2, U2:
		return 2
	}
	return 0
}

// tioPut stores element i of data from v: an integer value for the
// integer and bool dtypes (truncated to the element type), the bit
// pattern for the float dtypes (float32 and float64 included).
func tioPut(data any, i int, v uint64) {
	switch d := data.(type) {
	case []float32:
		d[i] = math.Float32frombits(uint32(v))
	case []float64:
		d[i] = math.Float64frombits(v)
	case []int8:
		d[i] = int8(v)
	case []uint8:
		d[i] = uint8(v)
	case []int16:
		d[i] = int16(v)
	case []uint16:
		d[i] = uint16(v)
	case []int32:
		d[i] = int32(v)
	case []uint32:
		d[i] = uint32(v)
	case []int64:
		d[i] = int64(v)
	case []uint64:
		d[i] = v
	case []bool:
		d[i] = v != 0
	}
}

// tioFromRaw decodes n elements of dt from packed data in the given byte
// order (sub-byte dtypes low bits first, int4 and int2 sign-extended).
func tioFromRaw(dt DType, raw []byte, n int, order binary.ByteOrder) (any, error) {
	bits := tioBits(dt)
	if bits == 0 {
		return nil, fmt.Errorf("dtype %s has no raw form", dt)
	}
	if want := (int64(n)*int64(bits) + 7) / 8; int64(len(raw)) != want {
		return nil, fmt.Errorf("%d bytes of data, shape of %d %s elements wants %d", len(raw), n, dt, want)
	}
	data := makeData(dt, n)
	switch d := data.(type) {
	case []float32:
		for i := range d {
			d[i] = math.Float32frombits(order.Uint32(raw[4*i:]))
		}
		return data, nil
	case []float64:
		for i := range d {
			d[i] = math.Float64frombits(order.Uint64(raw[8*i:]))
		}
		return data, nil
	}
	if bits < 8 {
		per := 8 / bits
		mask := byte(1)<<bits - 1
		signed := dt == I4 || dt == I2
		for i := 0; i < n; i++ {
			v := raw[i/per] >> (uint(i%per) * uint(bits)) & mask
			if signed && v&(1<<(bits-1)) != 0 {
				v |= ^mask
			}
			tioPut(data, i, uint64(v))
		}
		return data, nil
	}
	size := bits / 8
	for i := 0; i < n; i++ {
		var v uint64
		switch size {
		case 1:
			v = uint64(raw[i])
		case 2:
			v = uint64(order.Uint16(raw[2*i:]))
		case 4:
			v = uint64(order.Uint32(raw[4*i:]))
		default:
			v = order.Uint64(raw[8*i:])
		}
		tioPut(data, i, v)
	}
	return data, nil
}

// tioWire reads protobuf wire-format fields.
type tioWire struct {
	b   []byte
	err error
}

func (w *tioWire) varint() uint64 {
	var v uint64
	for shift := uint(0); shift < 64; shift += 7 {
		if len(w.b) == 0 {
			w.fail("truncated varint")
			return 0
		}
		c := w.b[0]
		w.b = w.b[1:]
		v |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return v
		}
	}
	w.fail("varint longer than 10 bytes")
	return 0
}

func (w *tioWire) fail(msg string) {
	if w.err == nil {
		w.err = errors.New(msg)
	}
	w.b = nil
}

func (w *tioWire) take(n uint64) []byte {
	if n > uint64(len(w.b)) {
		w.fail("truncated field")
		return nil
	}
	p := w.b[:n]
	w.b = w.b[n:]
	return p
}

// skip passes over a field of the given wire type.
func (w *tioWire) skip(typ uint64) {
	switch typ {
	case 0:
		w.varint()
	case 1:
		w.take(8)
	case 2:
		w.take(w.varint())
	case 5:
		w.take(4)
	default:
		w.fail(fmt.Sprintf("wire type %d", typ))
	}
}

// tioProto holds the TensorProto fields ReadTensor uses.
type tioProto struct {
	dims      []int64
	dtype     int64
	hasDType  bool
	raw       []byte
	hasRaw    bool
	floats    []uint64 // float_data, as bits
	int32s    []uint64 // int32_data, sign-extended
	int64s    []uint64
	doubles   []uint64
	uint64s   []uint64
	strs      [][]byte
	segment   bool
	external  bool
	extFields int
}

// repeated appends the values of a repeated scalar field, packed (wire
// type 2) or not: varints, or fixed 4- or 8-byte values (fixed > 0).
func (w *tioWire) repeated(dst []uint64, typ uint64, fixed int) []uint64 {
	one := func(r *tioWire) uint64 {
		switch fixed {
		case 4:
			p := r.take(4)
			if p == nil {
				return 0
			}
			return uint64(binary.LittleEndian.Uint32(p))
		case 8:
			p := r.take(8)
			if p == nil {
				return 0
			}
			return binary.LittleEndian.Uint64(p)
		}
		return r.varint()
	}
	want := uint64(0)
	switch fixed {
	case 4:
		want = 5
	case 8:
		want = 1
	}
	if typ == 2 {
		r := &tioWire{b: w.take(w.varint())}
		for len(r.b) > 0 && r.err == nil {
			dst = append(dst, one(r))
		}
		if r.err != nil {
			w.fail(r.err.Error())
		}
		return dst
	}
	if typ != want {
		w.fail(fmt.Sprintf("repeated field of wire type %d", typ))
		return dst
	}
	return append(dst, one(w))
}

func tioParseProto(b []byte) (*tioProto, error) {
	p := &tioProto{}
	w := &tioWire{b: b}
	for len(w.b) > 0 && w.err == nil {
		key := w.varint()
		field, typ := key>>3, key&7
		switch {
		case field == 1:
			var d []uint64
			d = w.repeated(d, typ, 0)
			for _, v := range d {
				p.dims = append(p.dims, int64(v))
			}
		case field == 2 && typ == 0:
			p.dtype, p.hasDType = int64(w.varint()), true
		case field == 3:
			p.segment = true
			w.skip(typ)
		case field == 4:
			p.floats = w.repeated(p.floats, typ, 4)
		case field == 5:
			p.int32s = w.repeated(p.int32s, typ, 0)
		case field == 6 && typ == 2:
			p.strs = append(p.strs, w.take(w.varint()))
		case field == 7:
			p.int64s = w.repeated(p.int64s, typ, 0)
		case field == 9 && typ == 2:
			p.raw, p.hasRaw = w.take(w.varint()), true
		case field == 10:
			p.doubles = w.repeated(p.doubles, typ, 8)
		case field == 11:
			p.uint64s = w.repeated(p.uint64s, typ, 0)
		case field == 13:
			p.extFields++
			w.skip(typ)
		case field == 14 && typ == 0:
			p.external = w.varint() == 1
		case field == 0:
			w.fail("field number 0")
		default: // name, doc_string, metadata_props, unknown fields
			w.skip(typ)
		}
	}
	if w.err != nil {
		return nil, w.err
	}
	return p, nil
}

func tioDecodeProto(b []byte) (*Tensor, error) {
	p, err := tioParseProto(b)
	if err != nil {
		return nil, err
	}
	if !p.hasDType {
		return nil, errors.New("no data_type (is this a TensorProto?)")
	}
	dt := DType(p.dtype)
	if p.dtype < 0 || p.dtype > 255 || (dt != String && tioBits(dt) == 0) {
		return nil, fmt.Errorf("data_type %d is not supported", p.dtype)
	}
	if p.external || p.extFields > 0 {
		return nil, errors.New("the data is stored in another file (external data): not supported")
	}
	if p.segment {
		return nil, errors.New("segmented tensors are not supported")
	}
	shape, n, err := tioShape(p.dims)
	if err != nil {
		return nil, err
	}
	t := &Tensor{DType: dt, Shape: shape}
	count := func(field string, have, want int) error {
		if have != want {
			return fmt.Errorf("%d values in %s, shape %v of %s wants %d", have, field, p.dims, dt, want)
		}
		return nil
	}
	fill := func(field string, vals []uint64) error {
		if err := count(field, len(vals), n); err != nil {
			return err
		}
		t.Data = makeData(dt, n)
		for i, v := range vals {
			tioPut(t.Data, i, v)
		}
		return nil
	}
	switch {
	case dt == String:
		if p.hasRaw {
			return nil, errors.New("string tensor with raw_data")
		}
		if err := count("string_data", len(p.strs), n); err != nil {
			return nil, err
		}
		s := make([]string, n)
		for i, v := range p.strs {
			s[i] = string(v)
		}
		t.Data = s
	case p.hasRaw:
		t.Data, err = tioFromRaw(dt, p.raw, n, binary.LittleEndian)
		if err != nil {
			return nil, fmt.Errorf("raw_data: %w", err)
		}
	case dt == F32:
		err = fill("float_data", p.floats)
	case dt == F64:
		err = fill("double_data", p.doubles)
	case dt == I64:
		err = fill("int64_data", p.int64s)
	case dt == U32 || dt == U64:
		err = fill("uint64_data", p.uint64s)
	case tioBits(dt) < 8:
		// Packed like raw_data, one byte in each int32_data entry.
		packed := make([]byte, len(p.int32s))
		for i, v := range p.int32s {
			packed[i] = byte(v)
		}
		t.Data, err = tioFromRaw(dt, packed, n, binary.LittleEndian)
		if err != nil {
			err = fmt.Errorf("int32_data: %w", err)
		}
	default: // the other narrow dtypes: one element per int32_data entry
		err = fill("int32_data", p.int32s)
	}
	if err != nil {
		return nil, err
	}
	return t, nil
}

// tioNpyHeader is the dict at the start of a .npy file.
type tioNpyHeader struct {
	descr   string
	fortran bool
	shape   []int64
}

// tioParseNpyHeader reads {'descr': '<f4', 'fortran_order': False,
// 'shape': (2, 3), } (keys in any order, either quote).
func tioParseNpyHeader(h string) (tioNpyHeader, error) {
	var out tioNpyHeader
	s := strings.TrimSpace(h)
	if !strings.HasPrefix(s, "{") || !strings.HasSuffix(s, "}") {
		return out, fmt.Errorf("header %q is not a dict", h)
	}
	s = strings.TrimSpace(s[1 : len(s)-1])
	seen := map[string]bool{}
	str := func() (string, error) {
		if s == "" || (s[0] != '\'' && s[0] != '"') {
			return "", fmt.Errorf("header %q: want a quoted string", h)
		}
		end := strings.IndexByte(s[1:], s[0])
		if end < 0 {
			return "", fmt.Errorf("header %q: unterminated string", h)
		}
		v := s[1 : 1+end]
		s = strings.TrimSpace(s[end+2:])
		return v, nil
	}
	for s != "" {
		key, err := str()
		if err != nil {
			return out, err
		}
		if !strings.HasPrefix(s, ":") {
			return out, fmt.Errorf("header %q: want ':' after %q", h, key)
		}
		s = strings.TrimSpace(s[1:])
		switch key {
		case "descr":
			if out.descr, err = str(); err != nil {
				return out, err
			}
		case "fortran_order":
			switch {
			case strings.HasPrefix(s, "True"):
				out.fortran, s = true, s[4:]
			case strings.HasPrefix(s, "False"):
				s = s[5:]
			default:
				return out, fmt.Errorf("header %q: fortran_order is not True or False", h)
			}
		case "shape":
			end := strings.IndexByte(s, ')')
			if !strings.HasPrefix(s, "(") || end < 0 {
				return out, fmt.Errorf("header %q: shape is not a tuple", h)
			}
			out.shape = []int64{}
			for _, f := range strings.Split(s[1:end], ",") {
				f = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(f), "L"))
				if f == "" {
					continue
				}
				d, err := strconv.ParseInt(f, 10, 64)
				if err != nil {
					return out, fmt.Errorf("header %q: dim %q: %v", h, f, err)
				}
				out.shape = append(out.shape, d)
			}
			s = s[end+1:]
		default:
			return out, fmt.Errorf("header %q: unknown key %q", h, key)
		}
		seen[key] = true
		s = strings.TrimSpace(s)
		if strings.HasPrefix(s, ",") {
			s = strings.TrimSpace(s[1:])
		} else if s != "" {
			return out, fmt.Errorf("header %q: want ',' after %q", h, key)
		}
	}
	for _, k := range []string{"descr", "fortran_order", "shape"} {
		if !seen[k] {
			return out, fmt.Errorf("header %q has no %q", h, k)
		}
	}
	return out, nil
}

func tioDecodeNpy(b []byte) (*Tensor, error) {
	if len(b) < 10 {
		return nil, errors.New("truncated header")
	}
	major := b[6]
	var hlen, start int
	switch major {
	case 1:
		hlen, start = int(binary.LittleEndian.Uint16(b[8:])), 10
	case 2, 3:
		if len(b) < 12 {
			return nil, errors.New("truncated header")
		}
		l := binary.LittleEndian.Uint32(b[8:])
		if uint64(l) > uint64(len(b)) {
			return nil, errors.New("truncated header")
		}
		hlen, start = int(l), 12
	default:
		return nil, fmt.Errorf("format version %d.%d is not supported", major, b[7])
	}
	if start+hlen > len(b) {
		return nil, errors.New("truncated header")
	}
	h, err := tioParseNpyHeader(string(b[start : start+hlen]))
	if err != nil {
		return nil, err
	}
	data := b[start+hlen:]
	shape, n, err := tioShape(h.shape)
	if err != nil {
		return nil, err
	}
	if len(h.descr) < 2 {
		return nil, fmt.Errorf("dtype %q is not supported", h.descr)
	}
	var order binary.ByteOrder
	switch h.descr[0] {
	case '<', '|':
		order = binary.LittleEndian
	case '>':
		order = binary.BigEndian
	case '=':
		order = binary.NativeEndian
	default:
		return nil, fmt.Errorf("dtype %q is not supported", h.descr)
	}
	kind := h.descr[1]
	width, err := strconv.Atoi(h.descr[2:])
	if err != nil || width <= 0 || width > 1<<20 {
		return nil, fmt.Errorf("dtype %q is not supported", h.descr)
	}
	t := &Tensor{Shape: shape}
	if kind == 'S' || kind == 'U' {
		t.DType = String
		elem := width
		if kind == 'U' {
			elem = 4 * width
		}
		if len(data)%elem != 0 || len(data)/elem != n { // no product: n*elem may overflow
			return nil, fmt.Errorf("%d bytes of data, not %d strings of %q (%d bytes each)", len(data), n, h.descr, elem)
		}
		s := make([]string, n)
		for i := range s {
			p := data[i*elem : (i+1)*elem]
			if kind == 'S' {
				s[i] = string(bytes.TrimRight(p, "\x00"))
				continue
			}
			var sb strings.Builder
			for j := 0; j < width; j++ {
				r := rune(order.Uint32(p[4*j:]))
				if r == 0 {
					break
				}
				if !utf8.ValidRune(r) {
					return nil, fmt.Errorf("string %d: code point %#x is not valid", i, uint32(r))
				}
				sb.WriteRune(r)
			}
			s[i] = sb.String()
		}
		t.Data = s
	} else {
		dt, ok := map[string]DType{"b1": Bool, "i1": I8, "u1": U8, "i2": I16, "u2": U16, "i4": I32, "u4": U32,
			"i8": I64, "u8": U64, "f2": F16, "f4": F32, "f8": F64}[h.descr[1:]]
		if !ok {
			return nil, fmt.Errorf("dtype %q is not supported (object arrays, complex and structured dtypes are not read)", h.descr)
		}
		t.DType = dt
		if t.Data, err = tioFromRaw(dt, data, n, order); err != nil {
			return nil, err
		}
	}
	if h.fortran && len(shape) > 1 {
		tioFromFortran(t)
	}
	return t, nil
}

// tioFromFortran reorders t's elements from column-major to row-major.
func tioFromFortran(t *Tensor) {
	n := t.Len()
	src := t.Data
	dst := makeData(t.DType, n)
	rank := len(t.Shape)
	idx := make([]int, rank)
	// Walk the row-major destination; the source offset is the
	// column-major offset of the same index.
	colStride := make([]int, rank)
	s := 1
	for d := 0; d < rank; d++ {
		colStride[d] = s
		s *= t.Shape[d]
	}
	for i := 0; i < n; i++ {
		off := 0
		for d := 0; d < rank; d++ {
			off += idx[d] * colStride[d]
		}
		tioCopyElem(dst, i, src, off)
		for d := rank - 1; d >= 0; d-- {
			idx[d]++
			if idx[d] < t.Shape[d] {
				break
			}
			idx[d] = 0
		}
	}
	t.Data = dst
}

func tioCopyElem(dst any, i int, src any, j int) {
	switch d := dst.(type) {
	case []float32:
		d[i] = src.([]float32)[j]
	case []float64:
		d[i] = src.([]float64)[j]
	case []int8:
		d[i] = src.([]int8)[j]
	case []uint8:
		d[i] = src.([]uint8)[j]
	case []int16:
		d[i] = src.([]int16)[j]
	case []uint16:
		d[i] = src.([]uint16)[j]
	case []int32:
		d[i] = src.([]int32)[j]
	case []uint32:
		d[i] = src.([]uint32)[j]
	case []int64:
		d[i] = src.([]int64)[j]
	case []uint64:
		d[i] = src.([]uint64)[j]
	case []bool:
		d[i] = src.([]bool)[j]
	case []string:
		d[i] = src.([]string)[j]
	}
}
