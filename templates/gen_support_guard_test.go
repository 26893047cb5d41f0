package templates

import (
	"encoding/binary"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unsafe"
)

// TestSupportCheckInput: the input guard that every generated Run calls
// refuses nil inputs, wrong dtypes, ranks, fixed dims, symbolic dims that
// disagree with an earlier input and Data of the wrong type or length.
func TestSupportCheckInput(t *testing.T) {
	spec := &cuvilInputSpec{name: "x", dtype: F32, dims: []cuvilDim{{size: 2, sym: -1}, {sym: 0}}}
	good := func(shape ...int) *Tensor { x := &Tensor{}; x.Resize(F32, shape...); return x }
	cases := []struct {
		t    *Tensor
		syms []int
		want string // "" accepts
	}{
		{good(2, 5), []int{-1}, ""},
		{good(2, 5), []int{5}, ""},
		{nil, []int{-1}, "is nil"},
		{good(2, 5), []int{4}, "as set by an earlier input"},
		{good(3, 5), []int{-1}, "dim 0 is 3, want 2"},
		{good(2), []int{-1}, "rank is 1"},
		{&Tensor{DType: I64, Shape: []int{2, 1}, Data: []int64{1, 2}}, []int{-1}, "dtype is"},
		{&Tensor{DType: F32, Shape: []int{2, 2}, Data: []float32{1}}, []int{-1}, "Data has 1 elements"},
		{&Tensor{DType: F32, Shape: []int{2, 1}, Data: []int64{1, 2}}, []int{-1}, "want the Go slice type"},
		{&Tensor{DType: F32, Shape: []int{2, 1}, Data: &Sequence{}}, []int{-1}, "want a tensor's slice"},
	}
	for i, c := range cases {
		err := cuvilCheckInput(spec, c.t, c.syms)
		if (err == nil) != (c.want == "") || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("case %d: %v, want %q", i, err, c.want)
		}
	}
}

// TestSupportDecode: weights.bin constants decode little-endian at their
// offsets, as views of the blob on a little-endian machine where aligned
// and as copies otherwise (big-endian, misaligned, bool, string, copyAll),
// to the same values; a table entry outside the blob or of the wrong size
// is an error, not a panic.
func TestSupportDecode(t *testing.T) {
	words := make([]uint64, 16) // 8-byte aligned
	blob := unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), 8*len(words))
	for i, f := range []float32{1.5, -2, 3.25} {
		binary.LittleEndian.PutUint32(blob[4*i:], math.Float32bits(f))
	}
	binary.LittleEndian.PutUint64(blob[16:], uint64(1<<40+7))
	blob[24], blob[25] = 1, 0
	binary.LittleEndian.PutUint32(blob[32:], 2)
	copy(blob[36:], "hi")
	binary.LittleEndian.PutUint16(blob[40:], 0x3c00)
	s := unsafe.String(&blob[0], len(blob))
	table := []cuvilConst{
		{name: "w", dtype: F32, shape: []int{3}, off: 0, size: 12},
		{name: "k", dtype: I64, shape: []int{}, off: 16, size: 8},
		{name: "b", dtype: Bool, shape: []int{2}, off: 24, size: 2},
		{name: "s", dtype: String, shape: []int{1}, off: 32, size: 6},
		{name: "h", dtype: F16, shape: []int{1}, off: 40, size: 2},
		{name: "e", dtype: F32, shape: []int{0}, off: 48, size: 0},
	}
	check := func(what string, out []Tensor) {
		t.Helper()
		if w := out[0].F32(); len(w) != 3 || w[0] != 1.5 || w[1] != -2 || w[2] != 3.25 {
			t.Errorf("%s: w = %v", what, w)
		}
		if k := out[1].Data.([]int64); k[0] != 1<<40+7 {
			t.Errorf("%s: k = %v", what, k)
		}
		if b := out[2].Data.([]bool); !b[0] || b[1] {
			t.Errorf("%s: b = %v", what, b)
		}
		if x := out[3].Str(); x[0] != "hi" {
			t.Errorf("%s: s = %v", what, x)
		}
		if h := out[4].Data.([]uint16); h[0] != 0x3c00 {
			t.Errorf("%s: h = %v", what, h)
		}
		if out[5].Len() != 0 || cuvilDataLen(&out[5]) != 0 {
			t.Errorf("%s: e = %v", what, out[5].Data)
		}
	}
	inBlob := func(tn *Tensor) bool {
		p := reflect.ValueOf(tn.Data).Pointer()
		return p >= uintptr(unsafe.Pointer(&blob[0])) && p < uintptr(unsafe.Pointer(&blob[0]))+uintptr(len(blob))
	}
	out := make([]Tensor, len(table))
	views, err := cuvilLoad(s, table, out, false)
	if err != nil {
		t.Fatal(err)
	}
	check("views", out)
	if cuvilLittleEndian {
		if views != 3 || !inBlob(&out[0]) || !inBlob(&out[1]) || !inBlob(&out[4]) || inBlob(&out[2]) {
			t.Errorf("%d views (w %v k %v h %v b %v), want w, k and h, not the bools", views, inBlob(&out[0]), inBlob(&out[1]), inBlob(&out[4]), inBlob(&out[2]))
		}
		if cap(out[0].F32()) != 3 {
			t.Errorf("a view has capacity %d beyond its 3 elements", cap(out[0].F32()))
		}
	}
	copies := make([]Tensor, len(table))
	if views, err := cuvilLoad(s, table, copies, true); err != nil || views != 0 {
		t.Fatalf("copyAll: %d views, %v", views, err)
	}
	check("copyAll", copies)
	for i := range copies {
		if inBlob(&copies[i]) {
			t.Errorf("copyAll: %s is a view", table[i].name)
		}
	}
	// The path a big-endian machine takes: every constant copied, decoded
	// little-endian all the same.
	cuvilLittleEndian = false
	big := make([]Tensor, len(table))
	views, err = cuvilLoad(s, table, big, false)
	cuvilLittleEndian = true
	if err != nil || views != 0 {
		t.Fatalf("big-endian: %d views, %v", views, err)
	}
	check("big-endian", big)
	// Misaligned: a constant one byte off cannot be a float32 view.
	copy(blob[65:], blob[:12])
	mis := make([]Tensor, 1)
	if views, err := cuvilLoad(s, []cuvilConst{{name: "m", dtype: F32, shape: []int{3}, off: 65, size: 12}}, mis, false); err != nil || views != 0 {
		t.Fatalf("misaligned: %d views, %v", views, err)
	}
	check("misaligned", append(mis, out[1:]...))
	for _, bad := range []cuvilConst{
		{name: "a", dtype: F32, shape: []int{3}, off: 120, size: 12},
		{name: "b", dtype: F32, shape: []int{2}, off: 0, size: 12},
		{name: "c", dtype: F32, shape: []int{-1}, off: 0, size: 4},
		{name: "d", dtype: F32, shape: []int{1}, off: -4, size: 4},
		{name: "e", dtype: F32, shape: []int{1}, off: 4, size: 1 << 62},
		{name: "f", dtype: String, shape: []int{2}, off: 32, size: 6},
	} {
		if _, err := cuvilLoad(s, []cuvilConst{bad}, make([]Tensor, 1), false); err == nil {
			t.Errorf("%s: decoded", bad.name)
		}
	}
}

// TestSupportWeightsFile: the -weights file loaders accept the file that
// matches the compiled-in size and checksum and refuse a missing,
// truncated, longer or corrupted one with an error saying so.
func TestSupportWeightsFile(t *testing.T) {
	data := make([]byte, 1000)
	for i := range data {
		data[i] = byte(i * 7)
	}
	sum := cuvilChecksum(string(data))
	path := filepath.Join(t.TempDir(), "weights.bin")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	open := func(p string) error {
		blob, release, err := cuvilOpenWeights(p, int64(len(data)), sum)
		if err == nil {
			if blob != string(data) || uintptr(unsafe.Pointer(unsafe.StringData(blob)))%8 != 0 {
				t.Errorf("%s: wrong or misaligned contents", p)
			}
			release()
		}
		return err
	}
	read := func(r io.ReaderAt, size int64) error {
		blob, err := cuvilReadWeights(r, size, int64(len(data)), sum)
		if err == nil && (blob != string(data) || uintptr(unsafe.Pointer(unsafe.StringData(blob)))%8 != 0) {
			t.Errorf("reader: wrong or misaligned contents")
		}
		return err
	}
	cuvilCheckWeightsFile(t, path, int64(len(data)), open, read)
	if _, err := cuvilReadWeights(nil, 4, 4, 0); err == nil {
		t.Errorf("a nil reader was accepted")
	}
	if blob, release, err := cuvilOpenWeights(filepath.Join(t.TempDir(), "empty"), 0, 0); err == nil || blob != "" {
		t.Errorf("missing empty file: %q, %v", blob, err)
	} else if release != nil {
		t.Errorf("an error came with a release func")
	}
}

// TestSupportCopies: cuvilCopyInto, cuvilClone and cuvilSameTensor agree,
// and cuvilTestTensor is deterministic.
func TestSupportCopies(t *testing.T) {
	for _, dt := range []DType{F32, F64, F16, I8, U8, I32, I64, Bool} {
		a := cuvilTestTensor(dt, []int{3, 5}, 7)
		if b := cuvilTestTensor(dt, []int{3, 5}, 7); !cuvilSameTensor(a, b) {
			t.Errorf("%s: cuvilTestTensor is not deterministic", dt)
		}
		var c Tensor
		cuvilCopyInto(&c, a)
		if !cuvilSameTensor(a, &c) || !cuvilSameTensor(a, cuvilClone(a)) {
			t.Errorf("%s: copies differ from the original", dt)
		}
		if n := cuvilDataLen(a); n != 15 {
			t.Errorf("%s: cuvilDataLen = %d", dt, n)
		}
	}
	out, err := (&Session{}).Run(cuvilTestInput())
	if err != nil {
		t.Fatal(err)
	}
	cuvilCheckOutput(t, "y", out.Y, F32, []int{2, -1})
}
