package harness

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/ir/onnx"
)

func tdata(t *ir.Tensor) *onnx.Data { return &onnx.Data{Kind: ir.TensorKind, Tensor: t} }

// TestDataRoundTrip writes tensors, sequences and optionals (nested, empty,
// none) in the harness format and reads them back.
func TestDataRoundTrip(t *testing.T) {
	a := ir.NewTensorF32([]int64{2}, []float32{1, 2})
	b := ir.NewTensorF32([]int64{1, 3}, []float32{3, 4, 5})
	seq := func(es ...*onnx.Data) *onnx.Data { return &onnx.Data{Kind: ir.SequenceKind, Seq: es} }
	opt := func(e *onnx.Data) *onnx.Data { return &onnx.Data{Kind: ir.OptionalKind, Opt: e} }
	cases := []struct {
		name string
		d    *onnx.Data
		dt   ir.DType
	}{
		{"tensor", tdata(a), ir.Undefined},
		{"sequence", seq(tdata(a), tdata(b)), ir.F32},
		{"empty sequence", seq(), ir.I64},
		{"optional some", opt(tdata(b)), ir.F32},
		{"optional none", opt(nil), ir.U8},
		{"optional sequence", opt(seq(tdata(a))), ir.Undefined},
		{"sequence of optionals", seq(opt(nil), opt(tdata(a))), ir.F32},
		{"sequence of maps", seq(&onnx.Data{Kind: ir.MapKind, Keys: &ir.Tensor{DType: ir.String, Shape: []int64{2}, Strings: []string{"x", "y"}}, Values: a},
			&onnx.Data{Kind: ir.MapKind, Keys: ir.NewTensorInt64([]int64{0}, nil), Values: ir.NewTensorF32([]int64{0}, nil)}), ir.F32},
	}
	for _, c := range cases {
		var buf bytes.Buffer
		if err := WriteData(&buf, c.d, c.dt); err != nil {
			t.Fatalf("%s: WriteData: %v", c.name, err)
		}
		got, dt, err := ReadData(&buf)
		if err != nil {
			t.Fatalf("%s: ReadData: %v", c.name, err)
		}
		want := c.dt
		if want == ir.Undefined {
			want = ir.F32 // from the first tensor inside
		}
		if dt != want {
			t.Errorf("%s: dtype %s, want %s", c.name, dt, want)
		}
		if !reflect.DeepEqual(normal(got), normal(c.d)) {
			t.Errorf("%s: read back %+v, wrote %+v", c.name, got, c.d)
		}
		if buf.Len() != 0 {
			t.Errorf("%s: %d bytes left unread", c.name, buf.Len())
		}
	}
	// A tensor is written exactly as WriteTensor writes it.
	var x, y bytes.Buffer
	if err := WriteData(&x, tdata(a), ir.Undefined); err != nil {
		t.Fatal(err)
	}
	if err := WriteTensor(&y, a); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(x.Bytes(), y.Bytes()) {
		t.Errorf("tensor as data differs from WriteTensor")
	}
}

// normal makes nil and empty sequences compare equal and drops names.
func normal(d *onnx.Data) *onnx.Data {
	if d == nil {
		return nil
	}
	c := &onnx.Data{Kind: d.Kind, Tensor: d.Tensor, Opt: normal(d.Opt)}
	if d.Kind == ir.SequenceKind {
		c.Seq = []*onnx.Data{}
		for _, e := range d.Seq {
			c.Seq = append(c.Seq, normal(e))
		}
	}
	return c
}

// TestReadDataRejects checks that corrupt version 2 records fail.
func TestReadDataRejects(t *testing.T) {
	bad := [][]byte{
		[]byte("CUVT\x02S\x01\x00\x02\x00\x00\x00"), // sequence of 2, no elements
		[]byte("CUVT\x02O\x01\x00\x02\x00\x00\x00"), // optional holding 2
		[]byte("CUVT\x02X\x01\x00\x00\x00\x00\x00"), // unknown kind
		[]byte("CUVT\x03S\x01\x00\x00\x00\x00\x00"), // unknown version
		[]byte("CUVT\x02S\xff\x00\x00\x00\x00\x00"), // bad dtype
	}
	for _, b := range bad {
		if _, _, err := ReadData(bytes.NewReader(b)); err == nil {
			t.Errorf("ReadData(%q) succeeded", b)
		}
	}
	// Nesting beyond the limit.
	var deep []byte
	for i := 0; i <= maxNesting+1; i++ {
		deep = append(deep, "CUVT\x02O\x01\x00\x01\x00\x00\x00"...)
	}
	if _, _, err := ReadData(bytes.NewReader(deep)); err == nil {
		t.Errorf("ReadData accepted %d nested optionals", maxNesting+2)
	}
}

func TestTensorFileRoundTrip(t *testing.T) {
	cases := []*ir.Tensor{
		ir.NewTensorF32([]int64{2, 3}, []float32{1, -2, 3.5, 0, 1e-30, -7}),
		ir.NewTensorInt64(nil, []int64{-9}),
		{DType: ir.Bool, Shape: []int64{3}, Raw: []byte{1, 0, 1}},
		{DType: ir.String, Shape: []int64{2}, Strings: []string{"", "héllo"}},
		{DType: ir.F16, Shape: []int64{0, 4}, Raw: []byte{}},
	}
	for _, want := range cases {
		var buf bytes.Buffer
		if err := WriteTensor(&buf, want); err != nil {
			t.Fatal(err)
		}
		got, err := ReadTensor(&buf)
		if err != nil {
			t.Fatal(err)
		}
		if got.DType != want.DType || len(got.Shape) != len(want.Shape) || !bytes.Equal(got.Raw, want.Raw) || strings.Join(got.Strings, "|") != strings.Join(want.Strings, "|") {
			t.Errorf("round trip of %s%v: got %s%v raw %v strings %q", want.DType, want.Shape, got.DType, got.Shape, got.Raw, got.Strings)
		}
	}
	for _, bad := range [][]byte{nil, []byte("CUVX\x01\x01\x00\x00\x00\x00\x00\x00"), []byte("CUVT\x01\x01\x00\x00\x01\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00")} {
		if _, err := ReadTensor(bytes.NewReader(bad)); err == nil {
			t.Errorf("ReadTensor(%q) succeeded", bad)
		}
	}
}
