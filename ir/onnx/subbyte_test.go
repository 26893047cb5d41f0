package onnx

import (
	"bytes"
	"testing"

	"github.com/cuvil/cuvil/ir"
	pb "github.com/cuvil/cuvil/ir/onnx/onnxpb"
)

// TestSubByteTensors checks the packed wire forms of the 4-bit and 2-bit
// dtypes (raw_data and int32_data, low bits first) against one byte per
// element in ir.Tensor.Raw, odd lengths included, and the encoder's
// inverse.
func TestSubByteTensors(t *testing.T) {
	cases := []struct {
		dt     ir.DType
		packed []byte
		want   []byte // unpacked
	}{
		{ir.U4, []byte{0x21, 0x0f}, []byte{1, 2, 15}},
		{ir.I4, []byte{0x87, 0x0f}, []byte{7, 0xf8, 0xff}},
		{ir.F4E2M1, []byte{0x9a, 0x07}, []byte{0xa, 0x9, 0x7}},
		{ir.U2, []byte{0xe4, 0x01}, []byte{0, 1, 2, 3, 1}},
		{ir.I2, []byte{0xe4, 0x02}, []byte{0, 1, 0xfe, 0xff, 0xfe}},
	}
	for _, c := range cases {
		n := int64(len(c.want))
		dt := int32(c.dt)
		raw := &pb.TensorProto{Dims: []int64{n}, DataType: &dt, RawData: c.packed}
		got, err := tensorFromProto(raw, "")
		if err != nil {
			t.Fatalf("%s raw_data: %v", c.dt, err)
		}
		if !bytes.Equal(got.Raw, c.want) {
			t.Errorf("%s raw_data %x: got %v, want %v", c.dt, c.packed, got.Raw, c.want)
		}
		var i32 []int32
		for _, b := range c.packed {
			i32 = append(i32, int32(b))
		}
		typed := &pb.TensorProto{Dims: []int64{n}, DataType: &dt, Int32Data: i32}
		got2, err := tensorFromProto(typed, "")
		if err != nil {
			t.Fatalf("%s int32_data: %v", c.dt, err)
		}
		if !bytes.Equal(got2.Raw, c.want) {
			t.Errorf("%s int32_data: got %v, want %v", c.dt, got2.Raw, c.want)
		}
		back, err := tensorToProto(got)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(back.RawData, c.packed) {
			t.Errorf("%s encodes to %x, want %x", c.dt, back.RawData, c.packed)
		}
		short := &pb.TensorProto{Dims: []int64{n}, DataType: &dt, RawData: c.packed[:1]}
		if _, err := tensorFromProto(short, ""); err == nil {
			t.Errorf("%s: short raw_data accepted", c.dt)
		}
	}
	// float8 in int32_data: one element per entry
	dt := int32(ir.F8E4M3FN)
	tp := &pb.TensorProto{Dims: []int64{2}, DataType: &dt, Int32Data: []int32{0x38, 0xb8}}
	got, err := tensorFromProto(tp, "")
	if err != nil {
		t.Fatal(err)
	}
	if f := got.Float64s(); f[0] != 1 || f[1] != -1 {
		t.Errorf("f8e4m3fn int32_data decodes to %v, want [1 -1]", f)
	}
}
