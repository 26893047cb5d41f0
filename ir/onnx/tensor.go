package onnx

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cuvil/cuvil/ir"
	pb "github.com/cuvil/cuvil/ir/onnx/onnxpb"
)

// maxElements bounds the element count of any shape the importer accepts.
// It is far above any real model (2^40 elements is 4 TiB of f32) and far
// below int64 overflow, so sizes computed from it in bytes cannot wrap.
const maxElements = int64(1) << 40

// checkDims rejects negative dims and element counts above maxElements,
// before anything is allocated from them.
func checkDims(dims []int64) (int64, error) {
	n := int64(1)
	for _, d := range dims {
		if d < 0 {
			return 0, fmt.Errorf("negative dim %d in shape %v", d, dims)
		}
	}
	for _, d := range dims {
		if d == 0 {
			return 0, nil
		}
		if n > maxElements/d {
			return 0, fmt.Errorf("shape %v has too many elements (limit %d)", dims, maxElements)
		}
		n *= d
	}
	return n, nil
}

// tensorFromProto converts a TensorProto into a packed ir.Tensor. dir is
// the folder external data is read from ("" refuses external data).
func tensorFromProto(tp *pb.TensorProto, dir string) (*ir.Tensor, error) {
	t, err := convertTensor(tp, dir)
	if err != nil {
		return nil, fmt.Errorf("tensor %q: %w", tp.GetName(), err)
	}
	return t, nil
}

func convertTensor(tp *pb.TensorProto, dir string) (*ir.Tensor, error) {
	dt := ir.DType(tp.GetDataType())
	if tp.GetDataType() < 0 || tp.GetDataType() > 255 || !dt.Valid() {
		return nil, fmt.Errorf("invalid dtype %d (want 1..%d, TensorProto.DataType)", tp.GetDataType(), int(ir.I2))
	}
	if tp.Segment != nil {
		return nil, fmt.Errorf("segmented tensors (TensorProto.segment) are not supported")
	}
	n, err := checkDims(tp.Dims)
	if err != nil {
		return nil, err
	}
	t := &ir.Tensor{Name: tp.GetName(), DType: dt, Shape: append([]int64{}, tp.Dims...)}
	if len(t.Shape) == 0 {
		t.Shape = nil
	}
	if tp.GetDataLocation() == pb.TensorProto_EXTERNAL {
		if dt == ir.String {
			return nil, fmt.Errorf("string tensors cannot have external data")
		}
		raw, err := readExternal(tp, dir, dt.PackedBytes(n))
		if err != nil {
			return nil, err
		}
		t.Raw = unpackSubByte(dt, raw, n)
		return t, t.Check()
	}
	if dt == ir.String {
		if tp.RawData != nil {
			return nil, fmt.Errorf("string tensor has raw_data; strings must be in string_data")
		}
		if int64(len(tp.StringData)) != n {
			return nil, fmt.Errorf("has %d strings in string_data, shape %v wants %d", len(tp.StringData), tp.Dims, n)
		}
		t.Strings = make([]string, n)
		for i, s := range tp.StringData {
			t.Strings[i] = string(s)
		}
		return t, nil
	}
	if tp.RawData != nil {
		if dt.Bits() < 8 {
			if want := dt.PackedBytes(n); int64(len(tp.RawData)) != want {
				return nil, fmt.Errorf("has %d bytes of raw_data, shape %v of %s wants %d (%d elements per byte)", len(tp.RawData), tp.Dims, dt, want, 8/dt.Bits())
			}
		}
		t.Raw = unpackSubByte(dt, tp.RawData, n)
		return t, t.Check()
	}
	raw, err := typedToRaw(tp, dt, n)
	if err != nil {
		return nil, err
	}
	t.Raw = raw
	return t, t.Check()
}

// typedToRaw packs the typed field that ONNX uses for dt into raw_data
// layout. The counts are checked before allocating, so a tiny file cannot
// ask for a huge buffer.
func typedToRaw(tp *pb.TensorProto, dt ir.DType, n int64) ([]byte, error) {
	count := func(field string, have int, per int64) error {
		if int64(have) != n*per {
			return fmt.Errorf("has %d values in %s, shape %v of %s wants %d", have, field, tp.Dims, dt, n*per)
		}
		return nil
	}
	raw := func() []byte { return make([]byte, n*int64(dt.Size())) }
	switch dt {
	case ir.F32, ir.C64:
		per := int64(1)
		if dt == ir.C64 {
			per = 2
		}
		if err := count("float_data", len(tp.FloatData), per); err != nil {
			return nil, err
		}
		b := raw()
		for i, v := range tp.FloatData {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
		}
		return b, nil
	case ir.F64, ir.C128:
		per := int64(1)
		if dt == ir.C128 {
			per = 2
		}
		if err := count("double_data", len(tp.DoubleData), per); err != nil {
			return nil, err
		}
		b := raw()
		for i, v := range tp.DoubleData {
			binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(v))
		}
		return b, nil
	case ir.I64:
		if err := count("int64_data", len(tp.Int64Data), 1); err != nil {
			return nil, err
		}
		b := raw()
		for i, v := range tp.Int64Data {
			binary.LittleEndian.PutUint64(b[8*i:], uint64(v))
		}
		return b, nil
	case ir.U32, ir.U64:
		if err := count("uint64_data", len(tp.Uint64Data), 1); err != nil {
			return nil, err
		}
		b := raw()
		for i, v := range tp.Uint64Data {
			if dt == ir.U32 {
				binary.LittleEndian.PutUint32(b[4*i:], uint32(v))
			} else {
				binary.LittleEndian.PutUint64(b[8*i:], v)
			}
		}
		return b, nil
	case ir.U4, ir.I4, ir.F4E2M1, ir.U2, ir.I2:
		// Packed like raw_data, one byte in each int32_data entry.
		want := dt.PackedBytes(n)
		if int64(len(tp.Int32Data)) != want {
			return nil, fmt.Errorf("has %d values in int32_data, shape %v of %s wants %d (%d elements per value)", len(tp.Int32Data), tp.Dims, dt, want, 8/dt.Bits())
		}
		b := make([]byte, want)
		for i, v := range tp.Int32Data {
			b[i] = byte(v)
		}
		return unpackSubByte(dt, b, n), nil
	case ir.I32, ir.I16, ir.I8, ir.U16, ir.U8, ir.Bool, ir.F16, ir.BF16,
		ir.F8E4M3FN, ir.F8E4M3FNUZ, ir.F8E5M2, ir.F8E5M2FNUZ, ir.F8E8M0:
		// int32_data carries every narrow type, one element per entry (the
		// 16-bit floats as their bits in the low half).
		if err := count("int32_data", len(tp.Int32Data), 1); err != nil {
			return nil, err
		}
		b := raw()
		for i, v := range tp.Int32Data {
			switch dt.Size() {
			case 1:
				b[i] = byte(v)
			case 2:
				binary.LittleEndian.PutUint16(b[2*i:], uint16(v))
			default:
				binary.LittleEndian.PutUint32(b[4*i:], uint32(v))
			}
		}
		return b, nil
	}
	return nil, fmt.Errorf("no typed data field for dtype %s", dt)
}

// unpackSubByte turns ONNX's packed form of the 4-bit and 2-bit dtypes
// (low bits first) into one byte per element: int4 and int2 sign-extended,
// the others zero-extended. Other dtypes are returned as they are. packed
// must hold dt.PackedBytes(n) bytes.
func unpackSubByte(dt ir.DType, packed []byte, n int64) []byte {
	bits := dt.Bits()
	if bits >= 8 {
		return packed
	}
	per := int64(8 / bits)
	mask := byte(1)<<bits - 1
	signed := dt == ir.I4 || dt == ir.I2
	out := make([]byte, n)
	for i := int64(0); i < n; i++ {
		v := packed[i/per] >> (uint(i%per) * uint(bits)) & mask
		if signed && v&(1<<(bits-1)) != 0 {
			v |= ^mask
		}
		out[i] = v
	}
	return out
}

// packSubByte is the inverse of unpackSubByte: one byte per element to
// ONNX's packed form (the unused high bits of the last byte zero).
func packSubByte(dt ir.DType, raw []byte) []byte {
	bits := dt.Bits()
	if bits >= 8 {
		return raw
	}
	per := 8 / bits
	mask := byte(1)<<bits - 1
	out := make([]byte, (len(raw)+per-1)/per)
	for i, v := range raw {
		out[i/per] |= (v & mask) << (uint(i%per) * uint(bits))
	}
	return out
}

// readExternal reads the bytes of a tensor stored outside the model file.
// The location must stay inside dir: absolute paths, ".." and symlinks that
// lead out are refused, so a model cannot make the compiler read (and embed
// into a generated package) arbitrary files.
func readExternal(tp *pb.TensorProto, dir string, want int64) ([]byte, error) {
	if dir == "" {
		return nil, fmt.Errorf("has external data, but no model folder is known to read it from (decode from a file with Load)")
	}
	var location string
	offset, length := int64(0), int64(-1)
	for _, kv := range tp.ExternalData {
		switch kv.GetKey() {
		case "location":
			location = kv.GetValue()
		case "offset", "length":
			v, err := strconv.ParseInt(kv.GetValue(), 10, 64)
			if err != nil || v < 0 {
				return nil, fmt.Errorf("external data %s %q is not a non-negative integer", kv.GetKey(), kv.GetValue())
			}
			if kv.GetKey() == "offset" {
				offset = v
			} else {
				length = v
			}
		}
	}
	if location == "" {
		return nil, fmt.Errorf("external data has no location")
	}
	slashed := filepath.FromSlash(location)
	if filepath.IsAbs(slashed) || strings.HasPrefix(location, "/") || !filepath.IsLocal(slashed) {
		return nil, fmt.Errorf("external data location %q leaves the model folder; it must be a relative path inside %s", location, dir)
	}
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, fmt.Errorf("external data: %w", err)
	}
	path, err := filepath.EvalSymlinks(filepath.Join(dir, slashed))
	if err != nil {
		return nil, fmt.Errorf("external data: %w", err)
	}
	if rel, err := filepath.Rel(root, path); err != nil || !filepath.IsLocal(rel) {
		return nil, fmt.Errorf("external data location %q resolves to %s, outside the model folder %s", location, path, root)
	}
	// Check before opening: opening a named pipe or a device can block.
	if st, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("external data: %w", err)
	} else if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("external data location %q is not a regular file (%s)", location, st.Mode().Type())
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("external data: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("external data: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("external data location %q is not a regular file", location)
	}
	size := st.Size()
	if offset > size {
		return nil, fmt.Errorf("external data offset %d is past the end of %s (%d bytes)", offset, location, size)
	}
	if length < 0 {
		length = size - offset
	}
	if length > size-offset {
		return nil, fmt.Errorf("external data wants %d bytes at offset %d of %s, which has %d", length, offset, location, size)
	}
	if length != want {
		return nil, fmt.Errorf("external data has %d bytes, shape %v of %s wants %d", length, tp.Dims, ir.DType(tp.GetDataType()), want)
	}
	buf := make([]byte, length)
	if _, err := f.ReadAt(buf, offset); err != nil && !(errors.Is(err, io.EOF) && length == 0) {
		return nil, fmt.Errorf("external data: reading %s: %w", location, err)
	}
	return buf, nil
}

// maxDenseBytes bounds a densified sparse tensor: sparse data is tiny in
// the file, so its dims alone must not be allowed to allocate gigabytes.
const maxDenseBytes = int64(1) << 30

// sparseToDense expands a SparseTensorProto into a dense tensor: Cuvil's
// IR has no sparse values, and the only place ONNX uses them in inference
// models is constants (Constant's sparse_value and sparse initializers).
func sparseToDense(sp *pb.SparseTensorProto, dir string) (*ir.Tensor, error) {
	if sp.Values == nil || sp.Indices == nil {
		return nil, fmt.Errorf("sparse tensor: values and indices are required")
	}
	name := sp.Values.GetName()
	vals, err := tensorFromProto(sp.Values, dir)
	if err != nil {
		return nil, fmt.Errorf("sparse tensor %q values: %w", name, err)
	}
	idx, err := tensorFromProto(sp.Indices, dir)
	if err != nil {
		return nil, fmt.Errorf("sparse tensor %q indices: %w", name, err)
	}
	n, err := checkDims(sp.Dims)
	if err != nil {
		return nil, fmt.Errorf("sparse tensor %q: %w", name, err)
	}
	size := int64(vals.DType.Size())
	if vals.DType == ir.String {
		size = 16
	}
	if n*size > maxDenseBytes {
		return nil, fmt.Errorf("sparse tensor %q: dense shape %v is too large to expand (%d bytes, limit %d)", name, sp.Dims, n*size, maxDenseBytes)
	}
	nnz := vals.NumElements()
	if len(vals.Shape) != 1 {
		return nil, fmt.Errorf("sparse tensor %q: values have shape %v, want rank 1", name, vals.Shape)
	}
	if idx.DType != ir.I64 {
		return nil, fmt.Errorf("sparse tensor %q: indices have dtype %s, want i64", name, idx.DType)
	}
	rank := int64(len(sp.Dims))
	linear := idx.Int64s()
	switch {
	case len(idx.Shape) == 1 && idx.Shape[0] == nnz:
	case len(idx.Shape) == 2 && idx.Shape[0] == nnz && idx.Shape[1] == rank:
		// [NNZ, rank] coordinates: fold into linear indices.
		flat := make([]int64, nnz)
		for i := int64(0); i < nnz; i++ {
			off := int64(0)
			for j := int64(0); j < rank; j++ {
				c := linear[i*rank+j]
				if c < 0 || c >= sp.Dims[j] {
					return nil, fmt.Errorf("sparse tensor %q: index %d out of range for dim %d of %v", name, c, j, sp.Dims)
				}
				off = off*sp.Dims[j] + c
			}
			flat[i] = off
		}
		linear = flat
	default:
		return nil, fmt.Errorf("sparse tensor %q: indices have shape %v, want [%d] or [%d,%d]", name, idx.Shape, nnz, nnz, rank)
	}
	t := &ir.Tensor{Name: name, DType: vals.DType, Shape: append([]int64(nil), sp.Dims...)}
	if vals.DType == ir.String {
		t.Strings = make([]string, n)
	} else {
		t.Raw = make([]byte, n*size)
	}
	for i, at := range linear {
		if at < 0 || at >= n {
			return nil, fmt.Errorf("sparse tensor %q: linear index %d out of range for shape %v", name, at, sp.Dims)
		}
		if vals.DType == ir.String {
			t.Strings[at] = vals.Strings[i]
		} else {
			copy(t.Raw[at*size:(at+1)*size], vals.Raw[int64(i)*size:])
		}
	}
	return t, nil
}

// tensorToProto is the inverse of tensorFromProto: numbers go to raw_data,
// strings to string_data.
func tensorToProto(t *ir.Tensor) (*pb.TensorProto, error) {
	if err := t.Check(); err != nil {
		return nil, err
	}
	tp := &pb.TensorProto{
		Dims:     append([]int64{}, t.Shape...),
		DataType: ptr(int32(t.DType)),
	}
	if t.Name != "" {
		tp.Name = ptr(t.Name)
	}
	if t.DType == ir.String {
		tp.StringData = make([][]byte, len(t.Strings))
		for i, s := range t.Strings {
			tp.StringData[i] = []byte(s)
		}
	} else if t.DType.Bits() < 8 {
		tp.RawData = packSubByte(t.DType, t.Raw)
	} else {
		tp.RawData = append([]byte{}, t.Raw...)
	}
	return tp, nil
}

func ptr[T any](v T) *T { return &v }

// tensor converts an initializer or attribute tensor, charging external
// data to the import budget before it is read.
func (im *importer) tensor(tp *pb.TensorProto) (*ir.Tensor, error) {
	if im.limits.NoExternalData && tp.GetDataLocation() == pb.TensorProto_EXTERNAL {
		return nil, fmt.Errorf("tensor %q: has external data, which the sandbox refuses (only the model file is read)", tp.GetName())
	}
	if dt := ir.DType(tp.GetDataType()); tp.GetDataLocation() == pb.TensorProto_EXTERNAL && dt.Valid() {
		if n, err := checkDims(tp.Dims); err == nil {
			if err := im.spend(ir.DType(tp.GetDataType()).PackedBytes(n), tp.GetName(), "external data"); err != nil {
				return nil, err
			}
		}
	}
	return tensorFromProto(tp, im.dir)
}

// sparse expands a sparse tensor, charging its dense size to the import
// budget first.
func (im *importer) sparse(sp *pb.SparseTensorProto) (*ir.Tensor, error) {
	if sp.Values != nil && ir.DType(sp.Values.GetDataType()).Valid() {
		if n, err := checkDims(sp.Dims); err == nil {
			if err := im.spend(ir.DType(sp.Values.GetDataType()).PackedBytes(n), sp.Values.GetName(), "the dense form of a sparse tensor"); err != nil {
				return nil, err
			}
		}
	}
	dir := im.dir
	if im.limits.NoExternalData {
		dir = "" // refuses external values and indices
	}
	return sparseToDense(sp, dir)
}

// spend takes n bytes from the import budget, or says why not.
func (im *importer) spend(n int64, name, what string) error {
	if im.budget < 0 {
		return nil
	}
	if n > im.budget {
		return fmt.Errorf("tensor %q: %s (%d bytes) would exceed the import limit on external and expanded data (%d bytes left; compile -max-weights raises it)", name, what, n, im.budget)
	}
	im.budget -= n
	return nil
}
