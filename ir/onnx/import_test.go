package onnx

import (
	"bytes"
	"encoding/binary"
	"math"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/cuvil/cuvil/ir"
	pb "github.com/cuvil/cuvil/ir/onnx/onnxpb"
)

func TestImportBasic(t *testing.T) {
	mp := addRelu()
	mp.OpsetImport = append(mp.OpsetImport, &pb.OperatorSetIdProto{Domain: proto.String("ai.onnx.ml"), Version: proto.Int64(3)})
	mp.MetadataProps = []*pb.StringStringEntryProto{{Key: proto.String("k"), Value: proto.String("v")}}
	mp.Graph.Node[0].Attribute = []*pb.AttributeProto{intAttr("zeta", 1), intAttr("alpha", 2)}
	m := mustImport(t, mp)
	g := m.Graph

	if m.Opsets[""] != 13 || m.Opsets["ai.onnx.ml"] != 3 || m.Metadata["k"] != "v" {
		t.Errorf("opsets %v metadata %v", m.Opsets, m.Metadata)
	}
	if len(g.Inputs) != 1 || g.Inputs[0].Name != "x" {
		t.Fatalf("inputs %v, want only x (w is an initializer)", g.Inputs)
	}
	if want := "f32[unk__0,3]"; g.Inputs[0].Type.String() != want {
		t.Errorf("x has type %s, want %s", g.Inputs[0].Type, want)
	}
	if len(g.Consts) != 1 || g.Consts[0].Const == nil || !bytes.Equal(g.Consts[0].Const.Raw, ir.NewTensorF32(nil, []float32{1, 2, 3}).Raw) {
		t.Fatalf("consts %v: want w = [1 2 3] packed", g.Consts)
	}
	add, relu := g.Nodes[0], g.Nodes[1]
	if add.Inputs[0] != g.Inputs[0] || add.Inputs[1] != g.Consts[0] || relu.Inputs[0] != add.Outputs[0] || g.Outputs[0] != relu.Outputs[0] {
		t.Error("values are not linked by pointer")
	}
	if add.Version != 13 || relu.Version != 13 || add.Outputs[0].Def != add {
		t.Errorf("Add@%d Relu@%d, want both 13", add.Version, relu.Version)
	}
	if add.Attrs[0].Name != "alpha" || add.Attrs[1].Name != "zeta" {
		t.Errorf("attributes not sorted: %s, %s", add.Attrs[0].Name, add.Attrs[1].Name)
	}
	if want := "f32[unk__1,3]"; g.Outputs[0].Type.String() != want {
		t.Errorf("y has type %s, want %s", g.Outputs[0].Type, want)
	}
	if !add.Outputs[0].Type.Unranked || add.Outputs[0].Type.DType != ir.Undefined {
		t.Errorf("undeclared value s has type %s, want unknown", add.Outputs[0].Type)
	}
	// Same bytes, same import: unk__N numbering and everything else.
	if a, b := dump(m), dump(mustImport(t, mp)); a != b {
		t.Errorf("import is not deterministic:\n%s", firstDiff(a, b))
	}
}

func TestUnkDoesNotCollide(t *testing.T) {
	mp := addRelu()
	mp.Graph.Input[1] = vi("w", ir.F32, "unk__0")
	m := mustImport(t, mp)
	if got := m.Graph.Inputs[0].Type.Shape[0].Sym; got != "unk__1" {
		t.Errorf("unnamed dim is %q, want unk__1 (the model itself uses unk__0)", got)
	}
}

func le(words ...uint64) []byte {
	var b []byte
	for _, w := range words {
		b = binary.LittleEndian.AppendUint64(b, w)
	}
	return b
}

// TestTypedFields checks that every typed data field lands in Raw as
// raw_data would hold it.
func TestTypedFields(t *testing.T) {
	f16one := uint16(0x3c00)
	tests := []struct {
		name string
		tp   *pb.TensorProto
		raw  []byte
	}{
		{"f32", &pb.TensorProto{DataType: proto.Int32(1), Dims: []int64{2}, FloatData: []float32{1, -2}},
			binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, math.Float32bits(1)), math.Float32bits(-2))},
		{"f16 in int32_data", &pb.TensorProto{DataType: proto.Int32(10), Dims: []int64{1}, Int32Data: []int32{int32(f16one)}}, []byte{0x00, 0x3c}},
		{"bf16 in int32_data", &pb.TensorProto{DataType: proto.Int32(16), Dims: []int64{1}, Int32Data: []int32{0x3f80}}, []byte{0x80, 0x3f}},
		{"bool", &pb.TensorProto{DataType: proto.Int32(9), Dims: []int64{3}, Int32Data: []int32{1, 0, 1}}, []byte{1, 0, 1}},
		{"i8", &pb.TensorProto{DataType: proto.Int32(3), Dims: []int64{2}, Int32Data: []int32{-1, 5}}, []byte{0xff, 5}},
		{"u16", &pb.TensorProto{DataType: proto.Int32(4), Dims: []int64{1}, Int32Data: []int32{65535}}, []byte{0xff, 0xff}},
		{"i16", &pb.TensorProto{DataType: proto.Int32(5), Dims: []int64{1}, Int32Data: []int32{-2}}, []byte{0xfe, 0xff}},
		{"i32", &pb.TensorProto{DataType: proto.Int32(6), Dims: []int64{1}, Int32Data: []int32{-2}}, []byte{0xfe, 0xff, 0xff, 0xff}},
		{"i64", &pb.TensorProto{DataType: proto.Int32(7), Dims: []int64{1}, Int64Data: []int64{-3}}, le(uint64(math.MaxUint64 - 2))},
		{"u32", &pb.TensorProto{DataType: proto.Int32(12), Dims: []int64{1}, Uint64Data: []uint64{0xdeadbeef}}, []byte{0xef, 0xbe, 0xad, 0xde}},
		{"u64", &pb.TensorProto{DataType: proto.Int32(13), Dims: []int64{1}, Uint64Data: []uint64{1 << 63}}, le(1 << 63)},
		{"f64", &pb.TensorProto{DataType: proto.Int32(11), Dims: []int64{1}, DoubleData: []float64{0.5}}, le(math.Float64bits(0.5))},
		{"c64", &pb.TensorProto{DataType: proto.Int32(14), Dims: []int64{1}, FloatData: []float32{1, 2}},
			binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, math.Float32bits(1)), math.Float32bits(2))},
		{"c128", &pb.TensorProto{DataType: proto.Int32(15), Dims: []int64{1}, DoubleData: []float64{1, 2}}, le(math.Float64bits(1), math.Float64bits(2))},
		{"scalar raw", &pb.TensorProto{DataType: proto.Int32(2), RawData: []byte{7}}, []byte{7}},
		{"empty", &pb.TensorProto{DataType: proto.Int32(1), Dims: []int64{0, 3}}, []byte{}},
	}
	for _, tc := range tests {
		got, err := tensorFromProto(tc.tp, "")
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if !bytes.Equal(got.Raw, tc.raw) {
			t.Errorf("%s: Raw % x, want % x", tc.name, got.Raw, tc.raw)
		}
		if got.DType != ir.DType(tc.tp.GetDataType()) {
			t.Errorf("%s: dtype %s", tc.name, got.DType)
		}
	}
	s, err := tensorFromProto(&pb.TensorProto{DataType: proto.Int32(8), Dims: []int64{2}, StringData: [][]byte{[]byte("a"), []byte("bc")}}, "")
	if err != nil || len(s.Strings) != 2 || s.Strings[1] != "bc" {
		t.Errorf("strings: %v %v", s, err)
	}
}

func TestSparseConstant(t *testing.T) {
	sp := &pb.SparseTensorProto{
		Dims:    []int64{2, 3},
		Values:  &pb.TensorProto{Name: proto.String("s"), DataType: proto.Int32(1), Dims: []int64{2}, FloatData: []float32{5, 6}},
		Indices: &pb.TensorProto{DataType: proto.Int32(7), Dims: []int64{2, 2}, Int64Data: []int64{0, 1, 1, 2}},
	}
	tt, err := sparseToDense(sp, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := tt.Float64s(); len(got) != 6 || got[1] != 5 || got[5] != 6 || got[0] != 0 {
		t.Errorf("dense %v, want [0 5 0 0 0 6]", got)
	}
	sp.Indices = &pb.TensorProto{DataType: proto.Int32(7), Dims: []int64{2}, Int64Data: []int64{0, 6}}
	if _, err := sparseToDense(sp, ""); err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Errorf("linear index 6 in [2,3]: got %v", err)
	}
}

// TestSubgraphCaptures: an If whose branches read outer values, one of
// them produced by a node that comes later in the file.
func TestSubgraphCaptures(t *testing.T) {
	then := &pb.GraphProto{Name: proto.String("then"),
		Node:   []*pb.NodeProto{node("Neg", strs("late"), strs("t_out"))},
		Output: []*pb.ValueInfoProto{vi("t_out", ir.F32, 2)}}
	// The else branch outputs an outer value directly.
	els := &pb.GraphProto{Name: proto.String("else"), Output: []*pb.ValueInfoProto{vi("x", ir.F32, 2)}}
	mp := model(&pb.GraphProto{
		Input:  []*pb.ValueInfoProto{vi("c", ir.Bool), vi("x", ir.F32, 2)},
		Output: []*pb.ValueInfoProto{vi("y", ir.F32, 2)},
		Node: []*pb.NodeProto{
			node("If", strs("c"), strs("y"), graphAttr("then_branch", then), graphAttr("else_branch", els)),
			node("Relu", strs("x"), strs("late")),
		},
	}, 16)
	m := mustImport(t, mp)
	g := m.Graph
	if len(g.Nodes) != 2 || g.Nodes[0].Op != "Relu" || g.Nodes[1].Op != "If" {
		t.Fatalf("nodes not sorted: %v", g.Nodes)
	}
	ifn := g.Nodes[1]
	if ifn.Version != 16 {
		t.Errorf("If@%d, want 16", ifn.Version)
	}
	tg, eg := ifn.Attr("then_branch").G, ifn.Attr("else_branch").G
	if tg.Parent != g || eg.Parent != g {
		t.Error("subgraph Parent is not the main graph")
	}
	if tg.Nodes[0].Inputs[0] != g.Nodes[0].Outputs[0] {
		t.Error("then branch does not read the outer value by pointer")
	}
	if eg.Outputs[0] != g.Inputs[1] {
		t.Error("else branch output is not the outer x")
	}
	if caps := tg.Captures(); len(caps) != 1 || caps[0].Name != "late" {
		t.Errorf("then captures %v", caps)
	}
}

func TestTopologicalSortIsStable(t *testing.T) {
	mp := model(&pb.GraphProto{
		Input:  []*pb.ValueInfoProto{vi("x", ir.F32, 1)},
		Output: []*pb.ValueInfoProto{vi("d", ir.F32, 1), vi("e", ir.F32, 1)},
		Node: []*pb.NodeProto{
			node("Relu", strs("c"), strs("d")),
			node("Neg", strs("x"), strs("a")),
			node("Add", strs("a", "b"), strs("c")),
			node("Relu", strs("x"), strs("b")),
			node("Neg", strs("x"), strs("e")),
		},
	}, 13)
	m := mustImport(t, mp)
	var got []string
	for _, n := range m.Graph.Nodes {
		got = append(got, n.Outputs[0].Name)
	}
	if want := "a b c d e"; strings.Join(got, " ") != want {
		t.Errorf("order %v, want %s", got, want)
	}
}

// TestFunctionInlining calls a model-local function twice; its body uses
// an attribute reference and a nested function call.
func TestFunctionInlining(t *testing.T) {
	refAttr := &pb.AttributeProto{Name: proto.String("alpha"), RefAttrName: proto.String("scale"), Type: pb.AttributeProto_INT.Enum()}
	inner := &pb.FunctionProto{Name: proto.String("Double"), Domain: proto.String("my"),
		Input: strs("a"), Output: strs("b"),
		Node:        []*pb.NodeProto{node("Add", strs("a", "a"), strs("b"))},
		OpsetImport: []*pb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(7)}}}
	outer := &pb.FunctionProto{Name: proto.String("DoubleRelu"), Domain: proto.String("my"),
		Input: strs("x"), Output: strs("y"), Attribute: strs("scale"),
		Node: []*pb.NodeProto{
			{OpType: proto.String("Double"), Domain: proto.String("my"), Input: strs("x"), Output: strs("t")},
			node("Relu", strs("t"), strs("y"), refAttr),
		},
		OpsetImport: []*pb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(13)}, {Domain: proto.String("my"), Version: proto.Int64(1)}}}
	call := func(in, out string, attrs ...*pb.AttributeProto) *pb.NodeProto {
		return &pb.NodeProto{Name: proto.String("call_" + out), OpType: proto.String("DoubleRelu"), Domain: proto.String("my"), Input: strs(in), Output: strs(out), Attribute: attrs}
	}
	mp := model(&pb.GraphProto{
		Input:  []*pb.ValueInfoProto{vi("x", ir.F32, 2)},
		Output: []*pb.ValueInfoProto{vi("z", ir.F32, 2)},
		Node:   []*pb.NodeProto{call("x", "y", intAttr("scale", 3)), call("y", "z")},
	}, 13)
	mp.OpsetImport = append(mp.OpsetImport, &pb.OperatorSetIdProto{Domain: proto.String("my"), Version: proto.Int64(1)})
	mp.Functions = []*pb.FunctionProto{outer, inner}
	m := mustImport(t, mp)
	g := m.Graph
	var ops []string
	names := map[string]bool{}
	for _, n := range g.Nodes {
		ops = append(ops, n.Op)
		for _, v := range n.Outputs {
			if names[v.Name] {
				t.Errorf("value name %q is used twice", v.Name)
			}
			names[v.Name] = true
		}
	}
	if want := "Add Relu Add Relu"; strings.Join(ops, " ") != want {
		t.Fatalf("ops %v, want %s", ops, want)
	}
	if g.Nodes[0].Inputs[0] != g.Inputs[0] || g.Nodes[1].Outputs[0].Name != "y" || g.Nodes[2].Inputs[0] != g.Nodes[1].Outputs[0] || g.Outputs[0] != g.Nodes[3].Outputs[0] {
		t.Error("inlined bodies are not wired to the call sites")
	}
	if g.Nodes[0].Version != 7 || g.Nodes[1].Version != 13 {
		t.Errorf("Add@%d Relu@%d: want the functions' opsets (7, 13)", g.Nodes[0].Version, g.Nodes[1].Version)
	}
	if a := g.Nodes[1].Attr("alpha"); a == nil || a.I != 3 {
		t.Errorf("first call: alpha = %v, want 3 from the call's scale", a)
	}
	if a := g.Nodes[3].Attr("alpha"); a != nil {
		t.Errorf("second call sets no scale, yet alpha = %v", a)
	}
	if !strings.HasPrefix(g.Nodes[0].Name, "call_y/") {
		t.Errorf("inlined node named %q, want it under the call's name", g.Nodes[0].Name)
	}
}

func TestOldModelsWithoutOpsetImport(t *testing.T) {
	mp := addRelu()
	mp.IrVersion = proto.Int64(2)
	mp.OpsetImport = nil
	m := mustImport(t, mp)
	if m.Opsets[""] != 1 || m.Graph.Nodes[0].Version != 1 {
		t.Errorf("IR v2 without opset_import: opsets %v, Add@%d; want opset 1", m.Opsets, m.Graph.Nodes[0].Version)
	}
}

// TestRealOpTable checks the public Decode against ir's own table: ops of
// custom domains import as custom ops at their domain's opset.
func TestRealOpTable(t *testing.T) {
	mp := model(&pb.GraphProto{
		Input:  []*pb.ValueInfoProto{vi("x", ir.F32, 1)},
		Output: []*pb.ValueInfoProto{vi("y", ir.F32, 1)},
		Node:   []*pb.NodeProto{{Name: proto.String("x"), OpType: proto.String("FooOp"), Domain: proto.String("com.acme"), Input: strs("x"), Output: strs("y")}},
	}, 13)
	mp.OpsetImport = append(mp.OpsetImport, &pb.OperatorSetIdProto{Domain: proto.String("com.acme"), Version: proto.Int64(3)})
	b, _ := proto.Marshal(mp)
	m, err := Decode(b, "")
	if err != nil {
		t.Fatalf("a custom op of domain com.acme: %v", err)
	}
	if n := m.Graph.Nodes[0]; n.Domain != "com.acme" || n.Version != 3 {
		t.Errorf("custom op imported as domain %q version %d, want com.acme 3", n.Domain, n.Version)
	}
}
