package onnx

import (
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/cuvil/cuvil/ir"
	pb "github.com/cuvil/cuvil/ir/onnx/onnxpb"
)

// Builders for ModelProtos in tests. Most error cases need files Encode
// would never write, so tests build the protobuf directly.

// testOps is the op table unit tests import with, so they do not depend on
// the real table's contents: since_versions as in ONNX.
var testOps = map[string][]int{
	"Add": {1, 6, 7, 13, 14}, "Mul": {1, 6, 7, 13, 14}, "Relu": {1, 6, 13, 14},
	"Identity": {1, 13, 14, 16}, "Neg": {1, 6, 13}, "Constant": {1, 9, 11, 12, 13},
	"If": {1, 11, 13, 16}, "Loop": {1, 11, 13, 16}, "Conv": {1, 11}, "MatMul": {1, 9, 13},
	"GreaterOrEqual": {12, 16}, "Split": {1, 2, 11, 13},
}

func testLookup(domain, op string) *ir.OpSchema {
	if v, ok := testOps[op]; ok && domain == "" {
		return &ir.OpSchema{Name: op, Versions: v}
	}
	return nil
}

func vi(name string, dt ir.DType, dims ...any) *pb.ValueInfoProto {
	sh := &pb.TensorShapeProto{}
	for _, d := range dims {
		dim := &pb.TensorShapeProto_Dimension{}
		switch d := d.(type) {
		case int:
			dim.Value = &pb.TensorShapeProto_Dimension_DimValue{DimValue: int64(d)}
		case string:
			if d != "?" {
				dim.Value = &pb.TensorShapeProto_Dimension_DimParam{DimParam: d}
			}
		}
		sh.Dim = append(sh.Dim, dim)
	}
	return &pb.ValueInfoProto{Name: proto.String(name), Type: &pb.TypeProto{Value: &pb.TypeProto_TensorType{
		TensorType: &pb.TypeProto_Tensor{ElemType: proto.Int32(int32(dt)), Shape: sh}}}}
}

func node(op string, ins, outs []string, attrs ...*pb.AttributeProto) *pb.NodeProto {
	return &pb.NodeProto{OpType: proto.String(op), Name: proto.String(op + "_" + outs[0]), Input: ins, Output: outs, Attribute: attrs}
}

func intAttr(name string, v int64) *pb.AttributeProto {
	return &pb.AttributeProto{Name: proto.String(name), Type: pb.AttributeProto_INT.Enum(), I: proto.Int64(v)}
}

func graphAttr(name string, g *pb.GraphProto) *pb.AttributeProto {
	return &pb.AttributeProto{Name: proto.String(name), Type: pb.AttributeProto_GRAPH.Enum(), G: g}
}

func f32Init(name string, dims []int64, v ...float32) *pb.TensorProto {
	return &pb.TensorProto{Name: proto.String(name), DataType: proto.Int32(int32(ir.F32)), Dims: dims, FloatData: v}
}

func model(g *pb.GraphProto, opset int64) *pb.ModelProto {
	return &pb.ModelProto{IrVersion: proto.Int64(8), Graph: g,
		OpsetImport: []*pb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(opset)}}}
}

func strs(s ...string) []string { return s }

// importProto marshals mp and imports it with the test op table.
func importProto(t *testing.T, mp *pb.ModelProto, dir string) (*ir.Model, error) {
	t.Helper()
	b, err := proto.Marshal(mp)
	if err != nil {
		t.Fatal(err)
	}
	return decode(b, dir, testLookup)
}

func mustImport(t *testing.T, mp *pb.ModelProto) *ir.Model {
	t.Helper()
	m, err := importProto(t, mp, "")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// addRelu is x + w -> Relu -> y with w an initializer also listed as an
// input (old style) and an unnamed batch dim.
func addRelu() *pb.ModelProto {
	return model(&pb.GraphProto{
		Name:        proto.String("main"),
		Input:       []*pb.ValueInfoProto{vi("x", ir.F32, "?", 3), vi("w", ir.F32, 3)},
		Output:      []*pb.ValueInfoProto{vi("y", ir.F32, "?", 3)},
		Initializer: []*pb.TensorProto{f32Init("w", []int64{3}, 1, 2, 3)},
		Node: []*pb.NodeProto{
			node("Add", strs("x", "w"), strs("s")),
			node("Relu", strs("s"), strs("y")),
		},
	}, 13)
}
