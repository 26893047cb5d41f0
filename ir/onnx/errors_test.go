package onnx

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/cuvil/cuvil/ir"
	pb "github.com/cuvil/cuvil/ir/onnx/onnxpb"
)

// TestImportErrors: each bad model gives an error that names what is wrong
// (and the node, where there is one).
func TestImportErrors(t *testing.T) {
	sub := func(nodes []*pb.NodeProto, outs ...string) *pb.GraphProto {
		g := &pb.GraphProto{Name: proto.String("body"), Node: nodes}
		for _, o := range outs {
			g.Output = append(g.Output, vi(o, ir.F32, 1))
		}
		return g
	}
	tests := []struct {
		name   string
		mutate func(mp *pb.ModelProto)
		want   string
	}{
		{"cycle", func(mp *pb.ModelProto) {
			mp.Graph.Node = []*pb.NodeProto{
				node("Add", strs("x", "r"), strs("s")),
				node("Relu", strs("s"), strs("r")),
				node("Identity", strs("s"), strs("y")),
			}
		}, `graph has a cycle: node "Add_s" (Add) -> node "Relu_r" (Relu) -> node "Add_s" (Add)`},
		{"self loop", func(mp *pb.ModelProto) {
			mp.Graph.Node = []*pb.NodeProto{node("Add", strs("x", "y"), strs("y"))}
		}, `graph has a cycle: node "Add_y" (Add) reads its own output "y"`},
		{"undefined value", func(mp *pb.ModelProto) {
			mp.Graph.Node[1].Input[0] = "nowhere"
		}, `node "Relu_y" (Relu): input 0 "nowhere" is not defined`},
		{"missing initializer", func(mp *pb.ModelProto) {
			mp.Graph.Initializer = nil
			mp.Graph.Input = mp.Graph.Input[:1]
		}, `node "Add_s" (Add): input 1 "w" is not defined: no node output, graph input or initializer has that name`},
		{"undefined in subgraph", func(mp *pb.ModelProto) {
			body := sub([]*pb.NodeProto{node("Neg", strs("ghost"), strs("o"))}, "o")
			mp.Graph.Node[1] = node("If", strs("x"), strs("y"), graphAttr("then_branch", body), graphAttr("else_branch", sub(nil, "s")))
		}, `node "If_y" (If): attribute "then_branch": node "Neg_o" (Neg): input 0 "ghost" is not defined`},
		{"dangling output", func(mp *pb.ModelProto) {
			mp.Graph.Output = append(mp.Graph.Output, vi("z", ir.F32, 1))
		}, `graph output "z" is not produced by any node, graph input or initializer`},
		{"dangling subgraph output", func(mp *pb.ModelProto) {
			mp.Graph.Node[1] = node("If", strs("x"), strs("y"), graphAttr("then_branch", sub(nil, "zz")), graphAttr("else_branch", sub(nil, "s")))
		}, `attribute "then_branch": graph output "zz" is not produced`},
		{"unknown op", func(mp *pb.ModelProto) {
			mp.Graph.Node[1].OpType = proto.String("Frobnicate")
		}, `node "Relu_y" (Frobnicate): op Frobnicate of domain "ai.onnx" is not known at opset 13; custom ops are not yet supported`},
		{"op too new for opset", func(mp *pb.ModelProto) {
			mp.Graph.Node[1].OpType = proto.String("GreaterOrEqual")
		}, `node "Relu_y" (GreaterOrEqual): op GreaterOrEqual of domain "ai.onnx" does not exist at opset 11`},
		{"opset too new", func(mp *pb.ModelProto) {
			mp.OpsetImport[0].Version = proto.Int64(99)
		}, `node "Add_s" (Add): opset 99 of ai.onnx is newer than Cuvil supports (up to 27)`},
		{"domain not imported", func(mp *pb.ModelProto) {
			mp.Graph.Node[1].Domain = proto.String("com.acme")
		}, `node "Relu_y" (Relu): domain "com.acme" is not in the model's opset_import (it imports "ai.onnx")`},
		{"invalid dtype in initializer", func(mp *pb.ModelProto) {
			mp.Graph.Initializer[0].DataType = proto.Int32(42)
		}, `initializer: tensor "w": invalid dtype 42`},
		{"invalid dtype in input", func(mp *pb.ModelProto) {
			mp.Graph.Input[0] = vi("x", ir.DType(200), 1)
		}, `graph input "x": invalid dtype 200`},
		{"undefined dtype in initializer", func(mp *pb.ModelProto) {
			mp.Graph.Initializer[0].DataType = proto.Int32(0)
		}, `tensor "w": invalid dtype 0`},
		{"negative dim in initializer", func(mp *pb.ModelProto) {
			mp.Graph.Initializer[0].Dims = []int64{-3}
		}, `tensor "w": negative dim -3 in shape [-3]`},
		{"negative dim in input", func(mp *pb.ModelProto) {
			mp.Graph.Input[0] = vi("x", ir.F32, 2, -1)
		}, `graph input "x": negative dim -1 at axis 1`},
		{"absurd dims", func(mp *pb.ModelProto) {
			mp.Graph.Initializer[0].Dims = []int64{1 << 40, 1 << 40}
			mp.Graph.Initializer[0].FloatData = nil
		}, `tensor "w": shape [1099511627776 1099511627776] has too many elements`},
		{"absurd declared dims", func(mp *pb.ModelProto) {
			mp.Graph.Input[0] = vi("x", ir.F32, 1<<30, 1<<30, 1<<30)
		}, `graph input "x": dim 1073741824 at axis 1 makes the shape too large`},
		{"typed data length", func(mp *pb.ModelProto) {
			mp.Graph.Initializer[0].FloatData = []float32{1, 2}
		}, `tensor "w": has 2 values in float_data, shape [3] of f32 wants 3`},
		{"raw data length", func(mp *pb.ModelProto) {
			mp.Graph.Initializer[0].FloatData = nil
			mp.Graph.Initializer[0].RawData = make([]byte, 11)
		}, `tensor "w": has 11 bytes of data, shape [3] of f32 wants 12`},
		{"duplicate node outputs", func(mp *pb.ModelProto) {
			mp.Graph.Node = append(mp.Graph.Node, node("Neg", strs("x"), strs("s")))
		}, `value "s" is defined twice: as output of node "Add_s" (Add) and of node "Neg_s" (Neg)`},
		{"output redefines input", func(mp *pb.ModelProto) {
			mp.Graph.Node[1].Output[0] = "x"
			mp.Graph.Output[0] = vi("x", ir.F32, 3)
		}, `node "Relu_y" (Relu): output 0: value "x" is defined twice: as a graph input and as output of node "Relu_y" (Relu)`},
		{"subgraph redefines outer value", func(mp *pb.ModelProto) {
			body := sub([]*pb.NodeProto{node("Neg", strs("x"), strs("s"))}, "s")
			mp.Graph.Node = []*pb.NodeProto{
				node("Add", strs("x", "w"), strs("s")),
				node("If", strs("x"), strs("y"), graphAttr("then_branch", body), graphAttr("else_branch", sub(nil, "s"))),
			}
		}, `attribute "then_branch": node "Neg_s" (Neg): output 0: value "s" is defined twice`},
		{"duplicate initializer", func(mp *pb.ModelProto) {
			mp.Graph.Initializer = append(mp.Graph.Initializer, mp.Graph.Initializer[0])
		}, `value "w" is defined twice: as an initializer and as an initializer`},
		{"duplicate attribute", func(mp *pb.ModelProto) {
			mp.Graph.Node[0].Attribute = []*pb.AttributeProto{intAttr("a", 1), intAttr("a", 2)}
		}, `node "Add_s" (Add): attribute "a" is given twice`},
		{"attribute without value", func(mp *pb.ModelProto) {
			mp.Graph.Node[0].Attribute = []*pb.AttributeProto{{Name: proto.String("a")}}
		}, `node "Add_s" (Add): attribute "a": has no value`},
		{"ref_attr_name outside function", func(mp *pb.ModelProto) {
			mp.Graph.Node[0].Attribute = []*pb.AttributeProto{{Name: proto.String("a"), RefAttrName: proto.String("b")}}
		}, `attribute "a" refers to attribute "b" of a calling function, but the node is not inside a function`},
		{"segmented tensor", func(mp *pb.ModelProto) {
			mp.Graph.Initializer[0].Segment = &pb.TensorProto_Segment{Begin: proto.Int64(0), End: proto.Int64(1)}
		}, `tensor "w": segmented tensors`},
		{"sparse value type", func(mp *pb.ModelProto) {
			mp.Graph.Input[0].Type = &pb.TypeProto{Value: &pb.TypeProto_SparseTensorType{SparseTensorType: &pb.TypeProto_SparseTensor{ElemType: proto.Int32(1)}}}
		}, `graph input "x": sparse tensor values are not supported`},
		{"recursive function", func(mp *pb.ModelProto) {
			mp.OpsetImport = append(mp.OpsetImport, &pb.OperatorSetIdProto{Domain: proto.String("my"), Version: proto.Int64(1)})
			mp.Functions = []*pb.FunctionProto{{Name: proto.String("F"), Domain: proto.String("my"), Input: strs("a"), Output: strs("b"),
				Node: []*pb.NodeProto{{OpType: proto.String("F"), Domain: proto.String("my"), Input: strs("a"), Output: strs("b")}}}}
			mp.Graph.Node[1] = &pb.NodeProto{Name: proto.String("f"), OpType: proto.String("F"), Domain: proto.String("my"), Input: strs("s"), Output: strs("y")}
		}, `node "f/F_0" (F): function "F" of domain "my" calls itself`},
		{"function reads outside", func(mp *pb.ModelProto) {
			mp.OpsetImport = append(mp.OpsetImport, &pb.OperatorSetIdProto{Domain: proto.String("my"), Version: proto.Int64(1)})
			mp.Functions = []*pb.FunctionProto{{Name: proto.String("F"), Domain: proto.String("my"), Input: strs("a"), Output: strs("b"),
				Node: []*pb.NodeProto{node("Add", strs("a", "w"), strs("b"))}}}
			mp.Graph.Node[1] = &pb.NodeProto{Name: proto.String("f"), OpType: proto.String("F"), Domain: proto.String("my"), Input: strs("s"), Output: strs("y")}
		}, `node "f" (F): inlining function "F": node "f/Add_b" (Add): function "F" reads "w", which is neither one of its inputs nor defined in it`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mp := addRelu()
			mp.Graph.Input[0] = vi("x", ir.F32, 3)
			tc.mutate(mp)
			if tc.name == "op too new for opset" {
				mp.OpsetImport[0].Version = proto.Int64(11)
			}
			_, err := importProto(t, mp, "")
			if err == nil {
				t.Fatalf("no error, want %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error\n  %v\nwant it to contain\n  %s", err, tc.want)
			}
		})
	}
}

func TestUnknownOpErrorIsTyped(t *testing.T) {
	mp := addRelu()
	mp.Graph.Node[1].OpType = proto.String("Frobnicate")
	_, err := importProto(t, mp, "")
	var u *UnknownOpError
	if !errors.As(err, &u) || u.Op != "Frobnicate" || u.Opset != 13 || u.Node != "Relu_y" {
		t.Errorf("got %#v, want an *UnknownOpError for Frobnicate", err)
	}
}

func TestNotONNX(t *testing.T) {
	good, err := proto.Marshal(addRelu())
	if err != nil {
		t.Fatal(err)
	}
	tensorFile, _ := EncodeTensor(ir.NewTensorF32([]int64{2}, []float32{1, 2}))
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "not an ONNX model: the file is empty"},
		{"text", []byte("hello, this is a text file\n"), "not an ONNX model: the file starts with protobuf field"},
		{"png", []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), "not an ONNX model"},
		{"tensor file", tensorFile, "not an ONNX model"},
		{"truncated", good[:len(good)-7], "truncated or corrupt ONNX model"},
		{"truncated in the middle", good[:len(good)/2], "truncated or corrupt ONNX model"},
		{"no graph", []byte{0x08, 0x07}, "not an ONNX model: it has no graph"},
	}
	for _, tc := range tests {
		_, err := decode(tc.data, "", testLookup)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
	// Load names the file.
	path := filepath.Join(t.TempDir(), "notes.onnx")
	if err := os.WriteFile(path, []byte("just text"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err == nil || !strings.HasPrefix(err.Error(), path+": not an ONNX model") {
		t.Errorf("Load: got %v, want it to start with the path", err)
	}
}
