package onnx

import (
	"strings"
	"testing"

	pb "github.com/cuvil/cuvil/ir/onnx/onnxpb"
	"google.golang.org/protobuf/proto"

	"github.com/cuvil/cuvil/ir"
)

// Models of today's exporters: IR version 11, ai.onnx opset 27 and
// ai.onnx.ml opset 5 imported, and domains imported but never used.
func TestImportRecentVersionsAndUnusedDomains(t *testing.T) {
	mp := model(&pb.GraphProto{
		Input:  []*pb.ValueInfoProto{vi("x", ir.F32, 2, 3)},
		Output: []*pb.ValueInfoProto{vi("y", ir.F32, 2, 1)},
		Node: []*pb.NodeProto{{Name: proto.String("te"), OpType: proto.String("TreeEnsemble"), Domain: proto.String("ai.onnx.ml"),
			Input: strs("x"), Output: strs("y")}},
	}, ir.MaxOpset)
	mp.IrVersion = proto.Int64(11)
	for d, v := range map[string]int64{"ai.onnx.ml": 5, "com.microsoft": 1, "ai.onnx.preview.training": 1, "pkg.onnxscript.torch_lib": 1} {
		mp.OpsetImport = append(mp.OpsetImport, &pb.OperatorSetIdProto{Domain: proto.String(d), Version: proto.Int64(v)})
	}
	b, _ := proto.Marshal(mp)
	m, err := Decode(b, "")
	if err != nil {
		t.Fatal(err)
	}
	if n := m.Graph.Nodes[0]; n.Domain != ir.MLDomain || n.Version != 5 || m.IRVersion != 11 {
		t.Errorf("TreeEnsemble imported as %s@%d (IR %d), want ai.onnx.ml@5 (IR 11)", n.Domain, n.Version, m.IRVersion)
	}

	// An ai.onnx.ml opset newer than Cuvil knows is refused by name.
	for _, imp := range mp.OpsetImport {
		if imp.GetDomain() == "ai.onnx.ml" {
			imp.Version = proto.Int64(ir.MaxMLOpset + 1)
		}
	}
	b, _ = proto.Marshal(mp)
	if _, err := Decode(b, ""); err == nil || !strings.Contains(err.Error(), "opset 6 of ai.onnx.ml is newer than Cuvil supports (up to 5)") {
		t.Errorf("ai.onnx.ml opset 6: %v", err)
	}
}

// ZipMap (what skl2onnx puts after a classifier) imports, with its
// declared sequence-of-maps output type, and a map input imports too.
func TestImportZipMapAndMaps(t *testing.T) {
	mapType := func(key ir.DType, val ir.DType) *pb.TypeProto {
		return &pb.TypeProto{Value: &pb.TypeProto_MapType{MapType: &pb.TypeProto_Map{KeyType: proto.Int32(int32(key)),
			ValueType: &pb.TypeProto{Value: &pb.TypeProto_TensorType{TensorType: &pb.TypeProto_Tensor{ElemType: proto.Int32(int32(val)), Shape: &pb.TensorShapeProto{}}}}}}}
	}
	seqMap := &pb.TypeProto{Value: &pb.TypeProto_SequenceType{SequenceType: &pb.TypeProto_Sequence{ElemType: mapType(ir.String, ir.F32)}}}
	mp := model(&pb.GraphProto{
		Input: []*pb.ValueInfoProto{vi("x", ir.F32, 2, 3), {Name: proto.String("m"), Type: mapType(ir.I64, ir.F64)}},
		Output: []*pb.ValueInfoProto{{Name: proto.String("y"), Type: seqMap},
			{Name: proto.String("v"), Type: &pb.TypeProto{Value: &pb.TypeProto_TensorType{TensorType: &pb.TypeProto_Tensor{ElemType: proto.Int32(int32(ir.F64))}}}}},
		Node: []*pb.NodeProto{{Name: proto.String("zm"), OpType: proto.String("ZipMap"), Domain: proto.String("ai.onnx.ml"),
			Input: strs("x"), Output: strs("y"), Attribute: []*pb.AttributeProto{{Name: proto.String("classlabels_strings"),
				Type: pb.AttributeProto_STRINGS.Enum(), Strings: [][]byte{[]byte("a"), []byte("b"), []byte("c")}}}},
			{Name: proto.String("dv"), OpType: proto.String("DictVectorizer"), Domain: proto.String("ai.onnx.ml"),
				Input: strs("m"), Output: strs("v"), Attribute: []*pb.AttributeProto{{Name: proto.String("int64_vocabulary"),
					Type: pb.AttributeProto_INTS.Enum(), Ints: []int64{4, 2}}}}},
	}, 17)
	mp.OpsetImport = append(mp.OpsetImport, &pb.OperatorSetIdProto{Domain: proto.String("ai.onnx.ml"), Version: proto.Int64(1)})
	b, _ := proto.Marshal(mp)
	m, err := Decode(b, "")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := m.Graph.Outputs[0].Type.String(), "seq<map<string,f32[]>>"; got != want {
		t.Errorf("ZipMap output type %s, want %s", got, want)
	}
	if got, want := m.Graph.Inputs[1].Type.String(), "map<i64,f64[]>"; got != want {
		t.Errorf("map input type %s, want %s", got, want)
	}
	if err := ir.Verify(m); err != nil {
		t.Errorf("verify: %v", err)
	}
}
