package templates

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/ir/onnx"
)

// tioTestRaw packs t's elements little-endian, one byte per element for
// the narrow dtypes (ir.Tensor.Raw's layout).
func tioTestRaw(t *Tensor) []byte {
	var b bytes.Buffer
	switch d := t.Data.(type) {
	case []bool:
		for _, v := range d {
			if v {
				b.WriteByte(1)
			} else {
				b.WriteByte(0)
			}
		}
	default:
		binary.Write(&b, binary.LittleEndian, d)
	}
	return b.Bytes()
}

// tioCompareIR checks t against the compiler's decoding of the same file.
func tioCompareIR(t *testing.T, name string, got *Tensor, want *ir.Tensor) {
	t.Helper()
	if int(got.DType) != int(want.DType) {
		t.Errorf("%s: dtype %s, want %s", name, got.DType, want.DType)
		return
	}
	if fmt.Sprint(got.Shape) != fmt.Sprint(want.Shape) {
		t.Errorf("%s: shape %v, want %v", name, got.Shape, want.Shape)
		return
	}
	if got.DType == String {
		if fmt.Sprintf("%q", got.Data) != fmt.Sprintf("%q", want.Strings) {
			t.Errorf("%s: strings %q, want %q", name, got.Data, want.Strings)
		}
		return
	}
	if g := tioTestRaw(got); !bytes.Equal(g, want.Raw) {
		t.Errorf("%s: %d data bytes differ from the compiler's decoding (%d bytes)", name, len(g), len(want.Raw))
	}
}

// TestReadTensorProtoFiles reads real TensorProto files (the shared
// models' test inputs and outputs, the ONNX node tests of every dtype:
// Cast, the string and sub-byte tests) and compares with ir/onnx.
func TestReadTensorProtoFiles(t *testing.T) {
	var files []string
	for _, pat := range []string{
		"../../shared/models/*/test_data_set_0/*.pb",
		"../../shared/onnx-tests-1.22/node/test_cast_*/test_data_set_0/*.pb",
		"../../shared/onnx-tests-1.22/node/test_dequantizelinear*/test_data_set_0/*.pb",
		"../../shared/onnx-tests-1.22/node/test_string*/test_data_set_0/*.pb",
		"../../shared/onnx-tests/node/test_cast_*/test_data_set_0/*.pb",
		"../testdata/mnist/test_data_set_0/*.pb",
		"../testdata/digits/test_data_set_0/*.pb",
		"../testdata/digits/labels.pb",
	} {
		m, _ := filepath.Glob(pat)
		files = append(files, m...)
	}
	if len(files) < 5 {
		t.Fatalf("only %d TensorProto files found", len(files))
	}
	dtypes := map[DType]bool{}
	for _, f := range files {
		want, err := onnx.ReadTensorFile(f)
		if err != nil {
			continue // complex dtypes and the like
		}
		got, err := LoadTensorFile(f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		dtypes[got.DType] = true
		tioCompareIR(t, f, got, want)
	}
	t.Logf("%d files, dtypes %v", len(files), dtypes)
	if !testing.Short() && len(files) > 50 && len(dtypes) < 15 {
		t.Errorf("only dtypes %v among %d files", dtypes, len(files))
	}
}

// TestReadTensorProtoForms covers the typed fields and wire forms the
// exporters write (packed and not), checked against ir/onnx's encoder and
// decoder.
func TestReadTensorProtoForms(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		t    *ir.Tensor
	}{
		{"f32", ir.NewTensorF32([]int64{2, 3}, []float32{1, -2, 3.5, 0, float32(math.Inf(1)), 1e-30})},
		{"scalar", ir.NewTensorF32(nil, []float32{7})},
		{"empty", ir.NewTensorF32([]int64{0, 4}, nil)},
		{"i64", &ir.Tensor{DType: ir.I64, Shape: []int64{3}, Raw: binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, 1), ^uint64(0)), 1<<62)}},
		{"string", &ir.Tensor{DType: ir.String, Shape: []int64{2}, Strings: []string{"a", "héllo"}}},
		{"i4", &ir.Tensor{DType: ir.I4, Shape: []int64{3}, Raw: []byte{7, 0xf8, 0xff}}},
		{"u2", &ir.Tensor{DType: ir.U2, Shape: []int64{5}, Raw: []byte{0, 1, 2, 3, 1}}},
		{"bool", &ir.Tensor{DType: ir.Bool, Shape: []int64{3}, Raw: []byte{1, 0, 1}}},
	} {
		p := filepath.Join(dir, c.name+".pb")
		if err := onnx.WriteTensorFile(p, c.t); err != nil {
			t.Fatal(err)
		}
		got, err := LoadTensorFile(p)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		tioCompareIR(t, c.name, got, c.t)
	}

	// Hand-encoded typed fields: float_data packed and unpacked,
	// int32_data with negative values (10-byte varints), uint64_data,
	// double_data, int64_data unpacked, dims unpacked.
	var pbuf []byte
	key := func(field, typ int) { pbuf = binary.AppendUvarint(pbuf, uint64(field<<3|typ)) }
	msg := func(build func()) []byte {
		pbuf = nil
		build()
		return pbuf
	}
	packed := func(field int, vals []byte) {
		key(field, 2)
		pbuf = binary.AppendUvarint(pbuf, uint64(len(vals)))
		pbuf = append(pbuf, vals...)
	}
	varints := func(vs ...int64) []byte {
		var b []byte
		for _, v := range vs {
			b = binary.AppendUvarint(b, uint64(v))
		}
		return b
	}
	for _, c := range []struct {
		name string
		b    []byte
		want string
	}{
		{"float_data packed", msg(func() {
			packed(1, varints(2))
			key(2, 0)
			pbuf = append(pbuf, 1)
			packed(4, binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, math.Float32bits(1.5)), math.Float32bits(-2)))
		}), "f32[2] [1.5 -2]"},
		{"float_data unpacked, dims unpacked", msg(func() {
			key(1, 0)
			pbuf = append(pbuf, 1)
			key(1, 0)
			pbuf = append(pbuf, 2)
			key(2, 0)
			pbuf = append(pbuf, 1)
			key(4, 5)
			pbuf = binary.LittleEndian.AppendUint32(pbuf, math.Float32bits(3))
			key(4, 5)
			pbuf = binary.LittleEndian.AppendUint32(pbuf, math.Float32bits(4))
			key(8, 2) // name
			pbuf = append(pbuf, 1, 'x')
		}), "f32[1 2] [3 4]"},
		{"int32_data negative int8", msg(func() {
			packed(1, varints(3))
			key(2, 0)
			pbuf = append(pbuf, 3)
			packed(5, varints(-1, 127, -128))
		}), "i8[3] [-1 127 -128]"},
		{"int32_data f16 bits", msg(func() {
			packed(1, varints(1))
			key(2, 0)
			pbuf = append(pbuf, 10)
			packed(5, varints(0x3c00))
		}), "f16[1] [15360]"},
		{"uint64_data u32", msg(func() {
			packed(1, varints(2))
			key(2, 0)
			pbuf = append(pbuf, 12)
			packed(11, varints(1, 0xffffffff))
		}), "u32[2] [1 4294967295]"},
		{"double_data", msg(func() {
			packed(1, varints(1))
			key(2, 0)
			pbuf = append(pbuf, 11)
			packed(10, binary.LittleEndian.AppendUint64(nil, math.Float64bits(0.1)))
		}), "f64[1] [0.1]"},
		{"int64_data unpacked", msg(func() {
			packed(1, varints(2))
			key(2, 0)
			pbuf = append(pbuf, 7)
			key(7, 0)
			neg := int64(-5)
			pbuf = binary.AppendUvarint(pbuf, uint64(neg))
			key(7, 0)
			pbuf = binary.AppendUvarint(pbuf, 9)
		}), "i64[2] [-5 9]"},
	} {
		got, err := ReadTensor(bytes.NewReader(c.b))
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if s := fmt.Sprintf("%s%v %v", got.DType, got.Shape, got.Data); s != c.want {
			t.Errorf("%s: %s, want %s", c.name, s, c.want)
		}
	}
}

func TestReadTensorErrors(t *testing.T) {
	ok, err := os.ReadFile("../testdata/digits/labels.pb")
	if err != nil {
		t.Fatal(err)
	}
	var pbuf []byte
	key := func(field, typ int) { pbuf = binary.AppendUvarint(pbuf, uint64(field<<3|typ)) }
	msg := func(build func()) []byte {
		pbuf = nil
		build()
		return pbuf
	}
	dims := func(ds ...uint64) {
		var b []byte
		for _, d := range ds {
			b = binary.AppendUvarint(b, d)
		}
		key(1, 2)
		pbuf = binary.AppendUvarint(pbuf, uint64(len(b)))
		pbuf = append(pbuf, b...)
	}
	dtype := func(d byte) { key(2, 0); pbuf = append(pbuf, d) }
	raw := func(b []byte) {
		key(9, 2)
		pbuf = binary.AppendUvarint(pbuf, uint64(len(b)))
		pbuf = append(pbuf, b...)
	}
	npy := func(header string, data []byte) []byte {
		h := []byte(header)
		b := []byte("\x93NUMPY\x01\x00")
		b = binary.LittleEndian.AppendUint16(b, uint16(len(h)))
		return append(append(b, h...), data...)
	}
	for _, c := range []struct {
		name string
		b    []byte
		want string
	}{
		{"truncated", ok[:len(ok)-3], "truncated"},
		{"no dtype", msg(func() { dims(2) }), "no data_type"},
		{"complex", msg(func() { dims(1); dtype(14); raw(make([]byte, 8)) }), "data_type 14 is not supported"},
		{"short raw_data", msg(func() { dims(2, 2); dtype(1); raw(make([]byte, 12)) }), "raw_data: 12 bytes of data"},
		{"long raw_data", msg(func() { dims(2); dtype(1); raw(make([]byte, 12)) }), "raw_data: 12 bytes of data"},
		{"no data", msg(func() { dims(3); dtype(1) }), "0 values in float_data"},
		{"huge shape, tiny data", msg(func() { dims(1<<40, 1<<40); dtype(1); raw(make([]byte, 4)) }), "more than 2^48 elements"},
		{"large shape, tiny data", msg(func() { dims(1<<20, 1<<20); dtype(1); raw(make([]byte, 4)) }), "4 bytes of data"},
		{"negative dim", msg(func() { dims(^uint64(0)); dtype(1) }), "dim 0 is -1"},
		{"external", msg(func() { dims(1); dtype(1); key(14, 0); pbuf = append(pbuf, 1) }), "external data"},
		{"segment", msg(func() { dims(1); dtype(1); key(3, 2); pbuf = append(pbuf, 0); raw(make([]byte, 4)) }), "segmented"},
		{"bad wire type", msg(func() { key(20, 7) }), "wire type 7"},
		{"npy object", npy("{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", make([]byte, 8)), "not supported"},
		{"npy complex", npy("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", make([]byte, 8)), "not supported"},
		{"npy short", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", make([]byte, 8)), "8 bytes of data"},
		{"npy no shape", npy("{'descr': '<f4', 'fortran_order': False}", nil), `no "shape"`},
		{"npy bad header", npy("['descr']", nil), "not a dict"},
		{"npy bad dim", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (x,), }", nil), `dim "x"`},
		{"npy strings, overflowing size", npy("{'descr': '<U1048576', 'fortran_order': False, 'shape': (17592186044416,), }", make([]byte, 4)), "not 17592186044416 strings"},
		{"npy header past end", []byte("\x93NUMPY\x01\x00\xff\x00{}"), "truncated header"},
		{"npy version", []byte("\x93NUMPY\x09\x00\x00\x00"), "format version 9.0"},
	} {
		_, err := ReadTensor(bytes.NewReader(c.b))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
	if _, err := LoadTensorFile(filepath.Join(t.TempDir(), "missing.npy")); err == nil {
		t.Error("a missing file read")
	}
}

// npyScript writes the .npy cases of TestReadNpy (numpy.save and
// numpy.lib.format.write_array) into the folder given as argv[1]. The
// values follow tioNpyWant. Committed output: testdata/npy/.
const npyScript = `
import sys, numpy as np
out = sys.argv[1]
def vals(kind, n):
    i = np.arange(n)
    if kind == 'f': return i * 0.25 - 3.0
    if kind == 'i': return (i * 37) % 251 - 125
    if kind == 'u': return (i * 37) % 251
    if kind == 'b': return i % 3 == 0
    if kind == 'U': return np.array(['\u00e9%d' % k for k in i])
    if kind == 'S': return np.array([b'b%d' % k for k in i])
cases = [
    ('f4_234', '<f4', (2, 3, 4), 'C'), ('f4_be', '>f4', (5,), 'C'), ('f8_fortran', '<f8', (3, 2), 'F'),
    ('f2', '<f2', (7,), 'C'), ('b1', '|b1', (2, 2), 'C'), ('i1', '|i1', (9,), 'C'), ('u1_fortran', '|u1', (4, 4), 'F'),
    ('i2', '<i2', (2, 5), 'C'), ('u2', '<u2', (3,), 'C'), ('i4_scalar', '<i4', (), 'C'), ('u4_empty', '<u4', (0, 3), 'C'),
    ('i8_fortran', '<i8', (3, 5, 2), 'F'), ('i8_be', '>i8', (4,), 'C'), ('u8', '<u8', (2,), 'C'),
    ('U', '<U3', (2, 3), 'C'), ('S', '|S4', (3,), 'C'), ('f4_v2', '<f4', (3, 2), 'C'),
]
for name, dt, shape, order in cases:
    n = int(np.prod(shape))
    a = np.array(vals(dt[1], n)).astype(dt).reshape(shape, order='C')
    if order == 'F': a = np.asfortranarray(a)
    with open('%s/%s.npy' % (out, name), 'wb') as f:
        if name.endswith('_v2'):
            np.lib.format.write_array(f, a, version=(2, 0))
        else:
            np.save(f, a)
`

// tioNpyWant is element i of a case of npyScript, as a string.
func tioNpyWant(t *Tensor, i int) string {
	switch t.DType {
	case F32, F64, F16:
		return fmt.Sprint(float64(i)*0.25 - 3.0)
	case I8, I16, I32, I64:
		return fmt.Sprint((i*37)%251 - 125)
	case U8, U16, U32, U64:
		return fmt.Sprint((i * 37) % 251)
	case Bool:
		return fmt.Sprint(i%3 == 0)
	}
	return "?"
}

func tioElemString(t *Tensor, i int) string {
	switch d := t.Data.(type) {
	case []uint16:
		if t.DType == F16 {
			return fmt.Sprint(float64(F16ToF32(d[i])))
		}
		return fmt.Sprint(d[i])
	case []float32:
		return fmt.Sprint(float64(d[i]))
	case []string:
		return d[i]
	case []float64:
		return fmt.Sprint(d[i])
	}
	return fmt.Sprint(reflectIndex(t.Data, i))
}

func reflectIndex(data any, i int) any {
	switch d := data.(type) {
	case []int8:
		return d[i]
	case []uint8:
		return d[i]
	case []int16:
		return d[i]
	case []int32:
		return d[i]
	case []uint32:
		return d[i]
	case []int64:
		return d[i]
	case []uint64:
		return d[i]
	case []bool:
		return d[i]
	}
	return nil
}

// TestReadNpy reads .npy files that numpy wrote: fresh ones when
// /usr/bin/python3 has numpy, and the committed testdata/npy/ always.
func TestReadNpy(t *testing.T) {
	dirs := []string{"testdata/npy"}
	if py, err := exec.LookPath("/usr/bin/python3"); err == nil {
		dir := t.TempDir()
		cmd := exec.Command(py, "-c", npyScript, dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Logf("numpy not usable (%v: %s); committed files only", err, out)
		} else {
			dirs = append(dirs, dir)
		}
	}
	for _, dir := range dirs {
		files, _ := filepath.Glob(filepath.Join(dir, "*.npy"))
		if len(files) != 17 {
			t.Errorf("%s: %d .npy files, want 17", dir, len(files))
		}
		for _, f := range files {
			name := strings.TrimSuffix(filepath.Base(f), ".npy")
			got, err := LoadTensorFile(f)
			if err != nil {
				t.Errorf("%s: %v", f, err)
				continue
			}
			wantShape := map[string]string{"f4_234": "[2 3 4]", "f4_be": "[5]", "f8_fortran": "[3 2]", "f2": "[7]", "b1": "[2 2]",
				"i1": "[9]", "u1_fortran": "[4 4]", "i2": "[2 5]", "u2": "[3]", "i4_scalar": "[]", "u4_empty": "[0 3]",
				"i8_fortran": "[3 5 2]", "i8_be": "[4]", "u8": "[2]", "U": "[2 3]", "S": "[3]", "f4_v2": "[3 2]"}[name]
			if s := fmt.Sprint(got.Shape); s != wantShape {
				t.Errorf("%s: shape %s, want %s", f, s, wantShape)
				continue
			}
			if dataLen(got.Data) != got.Len() {
				t.Errorf("%s: %d elements for shape %v", f, dataLen(got.Data), got.Shape)
				continue
			}
			for i := 0; i < got.Len(); i++ {
				want := tioNpyWant(got, i)
				switch name {
				case "U":
					want = fmt.Sprintf("é%d", i)
				case "S":
					want = fmt.Sprintf("b%d", i)
				}
				if g := tioElemString(got, i); g != want {
					t.Errorf("%s: element %d is %s, want %s", f, i, g, want)
					break
				}
			}
		}
	}
}

// FuzzReadTensor: ReadTensor never panics, and what it returns has as
// many elements as its shape says.
func FuzzReadTensor(f *testing.F) {
	for _, pat := range []string{"../testdata/digits/labels.pb", "../testdata/mnist/test_data_set_0/output_0.pb", "testdata/npy/*.npy"} {
		files, _ := filepath.Glob(pat)
		for _, p := range files {
			if b, err := os.ReadFile(p); err == nil && len(b) < 4096 {
				f.Add(b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := ReadTensor(bytes.NewReader(b))
		if err != nil {
			return
		}
		if dataLen(got.Data) != got.Len() {
			t.Fatalf("%s%v with %d elements", got.DType, got.Shape, dataLen(got.Data))
		}
	})
}
