package onnx

import (
	"reflect"
	"testing"

	pb "github.com/cuvil/cuvil/ir/onnx/onnxpb"
	"google.golang.org/protobuf/proto"

	"github.com/cuvil/cuvil/ir"
)

// Map test data: a MapProto as numpy_helper.from_dict writes it (one
// scalar tensor per value) decodes to keys and values; maps and sequences
// of maps round-trip through EncodeData.
func TestMapData(t *testing.T) {
	scalar := func(v float32) *pb.TensorProto {
		tp, err := tensorToProto(ir.NewTensorF32(nil, []float32{v}))
		if err != nil {
			t.Fatal(err)
		}
		return tp
	}
	mp := &pb.MapProto{Name: proto.String("m"), KeyType: proto.Int32(int32(ir.String)), StringKeys: [][]byte{[]byte("b"), []byte("a")},
		Values: &pb.SequenceProto{ElemType: proto.Int32(int32(pb.SequenceProto_TENSOR)), TensorValues: []*pb.TensorProto{scalar(2.5), scalar(-1)}}}
	b, _ := proto.Marshal(mp)
	d, err := DecodeData(b, ir.MapKind)
	if err != nil {
		t.Fatal(err)
	}
	if d.Kind != ir.MapKind || !reflect.DeepEqual(d.Keys.Strings, []string{"b", "a"}) || !reflect.DeepEqual(d.Values.Float64s(), []float64{2.5, -1}) {
		t.Fatalf("decoded %+v keys %v values %v", d, d.Keys, d.Values)
	}
	im := &Data{Kind: ir.MapKind, Keys: ir.NewTensorInt64([]int64{3}, []int64{7, 1, 4}), Values: ir.NewTensorF32([]int64{3}, []float32{0.5, 0.25, 0.125})}
	seq := &Data{Kind: ir.SequenceKind, Seq: []*Data{d, im}}
	b, err = EncodeData(seq)
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeData(b, ir.SequenceKind)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Seq) != 2 || !reflect.DeepEqual(back.Seq[1].Keys.Int64s(), []int64{7, 1, 4}) ||
		!reflect.DeepEqual(back.Seq[1].Values.Float64s(), []float64{0.5, 0.25, 0.125}) || !reflect.DeepEqual(back.Seq[0].Keys.Strings, []string{"b", "a"}) {
		t.Errorf("round trip: %+v", back.Seq)
	}
	bad := &pb.MapProto{KeyType: proto.Int32(int32(ir.I64)), Keys: []int64{1, 2},
		Values: &pb.SequenceProto{ElemType: proto.Int32(int32(pb.SequenceProto_TENSOR)), TensorValues: []*pb.TensorProto{scalar(1)}}}
	b, _ = proto.Marshal(bad)
	if _, err := DecodeData(b, ir.MapKind); err == nil {
		t.Error("2 keys and 1 value decoded")
	}
}
