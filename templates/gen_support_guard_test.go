package templates

import (
	"encoding/binary"
	"math"
	"strings"
	"testing"
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
// offsets, and a table entry outside the blob or of the wrong size is an
// error, not a panic.
func TestSupportDecode(t *testing.T) {
	blob := make([]byte, 4*3+8)
	for i, f := range []float32{1.5, -2, 3.25} {
		binary.LittleEndian.PutUint32(blob[4*i:], math.Float32bits(f))
	}
	binary.LittleEndian.PutUint64(blob[12:], uint64(1<<40+7))
	out := make([]Tensor, 2)
	table := []cuvilConst{{name: "w", dtype: F32, shape: []int{3}, off: 0, size: 12}, {name: "k", dtype: I64, shape: []int{}, off: 12, size: 8}}
	if err := cuvilDecode(blob, table, out); err != nil {
		t.Fatal(err)
	}
	if w := out[0].F32(); w[0] != 1.5 || w[1] != -2 || w[2] != 3.25 {
		t.Errorf("w = %v", w)
	}
	if k := out[1].Data.([]int64); k[0] != 1<<40+7 {
		t.Errorf("k = %v", k)
	}
	for _, bad := range []cuvilConst{{name: "a", dtype: F32, shape: []int{3}, off: 16, size: 12}, {name: "b", dtype: F32, shape: []int{2}, off: 0, size: 12}} {
		if err := cuvilDecode(blob, []cuvilConst{bad}, make([]Tensor, 1)); err == nil {
			t.Errorf("%s: decoded", bad.name)
		}
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
