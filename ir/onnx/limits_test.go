package onnx

import (
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/cuvil/cuvil/ir"
	pb "github.com/cuvil/cuvil/ir/onnx/onnxpb"
)

// importWith is importProto with load options.
func importWith(t *testing.T, mp *pb.ModelProto, opt LoadOptions) (*ir.Model, error) {
	t.Helper()
	b, err := proto.Marshal(mp)
	if err != nil {
		t.Fatal(err)
	}
	return decodeWith(b, "", testLookup, opt)
}

// doublingModel: F0 is Relu, F(k) calls F(k-1) twice, the graph calls
// F(depth-1): 2^(depth-1) Relus from a few hundred bytes.
func doublingModel(depth int) *pb.ModelProto {
	var funcs []*pb.FunctionProto
	imports := []*pb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(13)}, {Domain: proto.String("my"), Version: proto.Int64(1)}}
	for k := 0; k < depth; k++ {
		f := &pb.FunctionProto{Name: proto.String("F" + strconv.Itoa(k)), Domain: proto.String("my"), Input: strs("a"), Output: strs("b"), OpsetImport: imports}
		if k == 0 {
			f.Node = []*pb.NodeProto{node("Relu", strs("a"), strs("b"))}
		} else {
			callee := "F" + strconv.Itoa(k-1)
			f.Node = []*pb.NodeProto{
				{OpType: proto.String(callee), Domain: proto.String("my"), Input: strs("a"), Output: strs("t")},
				{OpType: proto.String(callee), Domain: proto.String("my"), Input: strs("t"), Output: strs("b")},
			}
		}
		funcs = append(funcs, f)
	}
	mp := model(&pb.GraphProto{
		Input:  []*pb.ValueInfoProto{vi("x", ir.F32, 2)},
		Output: []*pb.ValueInfoProto{vi("y", ir.F32, 2)},
		Node:   []*pb.NodeProto{{Name: proto.String("top"), OpType: proto.String("F" + strconv.Itoa(depth-1)), Domain: proto.String("my"), Input: strs("x"), Output: strs("y")}},
	}, 13)
	mp.OpsetImport = append(mp.OpsetImport, &pb.OperatorSetIdProto{Domain: proto.String("my"), Version: proto.Int64(1)})
	mp.Functions = funcs
	return mp
}

// Functions that double at each level are refused once the inlined node
// count passes the limit, before the nodes are made.
func TestImportMaxNodes(t *testing.T) {
	m, err := importWith(t, doublingModel(8), LoadOptions{})
	if err != nil || len(m.Graph.Nodes) != 128 {
		t.Fatalf("2^7 nodes: %v", err)
	}
	_, err = importWith(t, doublingModel(8), LoadOptions{MaxNodes: 100})
	if err == nil || !strings.Contains(err.Error(), "more than 100 nodes with its functions inlined") {
		t.Fatalf("limit 100: got %v", err)
	}
	_, err = importWith(t, doublingModel(41), LoadOptions{}) // 2^40 nodes
	if err == nil || !strings.Contains(err.Error(), "-max-nodes") {
		t.Fatalf("2^40 nodes: got %v", err)
	}
}

// nestedIfs nests depth Ifs, each then-branch holding the next If.
func nestedIfs(depth int) *pb.ModelProto {
	leaf := &pb.GraphProto{Name: proto.String("leaf"), Output: []*pb.ValueInfoProto{vi("x", ir.F32, 2)}}
	g := leaf
	for d := 0; d < depth; d++ {
		out := "o" + strconv.Itoa(d)
		g = &pb.GraphProto{Name: proto.String("g" + strconv.Itoa(d)),
			Node:   []*pb.NodeProto{node("If", strs("c"), strs(out), graphAttr("then_branch", g), graphAttr("else_branch", leaf))},
			Output: []*pb.ValueInfoProto{vi(out, ir.F32, 2)}}
	}
	g.Input = []*pb.ValueInfoProto{vi("c", ir.Bool), vi("x", ir.F32, 2)}
	return model(g, 13)
}

// Subgraphs nested past the limit are refused naming the graph.
func TestImportMaxDepth(t *testing.T) {
	if _, err := importWith(t, nestedIfs(20), LoadOptions{}); err != nil {
		t.Fatalf("20 deep: %v", err)
	}
	_, err := importWith(t, nestedIfs(20), LoadOptions{MaxDepth: 10})
	if err == nil || !strings.Contains(err.Error(), "subgraphs nest more than 10 deep") {
		t.Fatalf("limit 10: got %v", err)
	}
	if _, err := importWith(t, nestedIfs(3000), LoadOptions{}); err == nil || !strings.Contains(err.Error(), "-max-depth") {
		t.Fatalf("3000 deep: got %v", err)
	}
}
