package onnx

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuvil/cuvil/ir"
)

// sampleModel builds, directly in IR, a model that uses every attribute
// kind, non-tensor types, an omitted input and output, and an If whose
// branches capture outer values.
func sampleModel() *ir.Model {
	f32 := func(dims ...ir.Dim) ir.Type { return ir.TensorType(ir.F32, ir.Shape(dims)) }
	x := &ir.Value{Name: "x", Type: f32(ir.S("N"), ir.D(3))}
	c := &ir.Value{Name: "c", Type: ir.TensorType(ir.Bool, nil)}
	seqElem := ir.Type{Kind: ir.TensorKind, DType: ir.F32, Unranked: true}
	seq := &ir.Value{Name: "s", Type: ir.Type{Kind: ir.SequenceKind, Elem: &seqElem}}
	optElem := f32(ir.D(2))
	opt := &ir.Value{Name: "o", Type: ir.Type{Kind: ir.OptionalKind, Elem: &optElem}}
	mapElem := f32()
	mp := &ir.Value{Name: "m", Type: ir.Type{Kind: ir.MapKind, DType: ir.I64, Elem: &mapElem}}
	wt := ir.NewTensorF32([]int64{3}, []float32{1, 2, 3})
	wt.Name = "w"
	w := &ir.Value{Name: "w", Type: wt.Type(), Const: wt}
	st := &ir.Tensor{Name: "labels", DType: ir.String, Shape: []int64{2}, Strings: []string{"cat", "dog"}}
	labels := &ir.Value{Name: "labels", Type: st.Type(), Const: st}

	g := &ir.Graph{Name: "main", Inputs: []*ir.Value{x, c, seq, opt, mp}, Consts: []*ir.Value{w, labels}}
	node := func(op string, v int, ins []*ir.Value, outs []*ir.Value, attrs ...*ir.Attr) *ir.Node {
		n := &ir.Node{Name: op + "_node", Op: op, Version: v, Inputs: ins, Outputs: outs, Attrs: attrs}
		for _, o := range outs {
			if o != nil {
				o.Def = n
			}
		}
		g.Nodes = append(g.Nodes, n)
		return n
	}
	a := &ir.Value{Name: "a", Type: f32(ir.S("N"), ir.D(3))}
	node("Add", 14, []*ir.Value{x, w}, []*ir.Value{a},
		&ir.Attr{Name: "f", Kind: ir.AttrFloat, F: 0.5},
		&ir.Attr{Name: "fs", Kind: ir.AttrFloats, Floats: []float32{1.5, -2}},
		&ir.Attr{Name: "i", Kind: ir.AttrInt, I: -7},
		&ir.Attr{Name: "is", Kind: ir.AttrInts, Ints: []int64{1, 2, 3}},
		&ir.Attr{Name: "s", Kind: ir.AttrString, S: "hello"},
		&ir.Attr{Name: "ss", Kind: ir.AttrStrings, Strings: []string{"a", ""}},
		&ir.Attr{Name: "t", Kind: ir.AttrTensor, T: ir.NewTensorInt64([]int64{2}, []int64{4, 5})},
		&ir.Attr{Name: "ts", Kind: ir.AttrTensors, Tensors: []*ir.Tensor{ir.NewTensorF32(nil, []float32{9}), st}},
		&ir.Attr{Name: "ty", Kind: ir.AttrTypeProto, Types: []ir.Type{f32(ir.D(1))}},
		&ir.Attr{Name: "tys", Kind: ir.AttrTypeProtos, Types: []ir.Type{seq.Type, opt.Type}},
	)
	s1, s2 := &ir.Value{Name: "s1", Type: ir.Type{Unranked: true}}, &ir.Value{Name: "s3", Type: ir.Type{Unranked: true}}
	node("Split", 13, []*ir.Value{a, nil}, []*ir.Value{s1, nil, s2}, &ir.Attr{Name: "axis", Kind: ir.AttrInt, I: 1})

	then := &ir.Graph{Name: "then", Parent: g}
	tOut := &ir.Value{Name: "t_out", Type: f32(ir.S("N"), ir.D(3))}
	neg := &ir.Node{Name: "neg", Op: "Neg", Version: 13, Inputs: []*ir.Value{a}, Outputs: []*ir.Value{tOut}}
	tOut.Def = neg
	then.Nodes, then.Outputs = []*ir.Node{neg}, []*ir.Value{tOut}
	els := &ir.Graph{Name: "else", Parent: g, Outputs: []*ir.Value{x}} // outputs an outer value directly
	y := &ir.Value{Name: "y", Type: f32(ir.S("N"), ir.D(3))}
	node("If", 16, []*ir.Value{c}, []*ir.Value{y},
		&ir.Attr{Name: "else_branch", Kind: ir.AttrGraph, G: els},
		&ir.Attr{Name: "then_branch", Kind: ir.AttrGraph, G: then})
	g.Outputs = []*ir.Value{y, s1, labels}
	return &ir.Model{Graph: g, Opsets: map[string]int64{"": 16}, IRVersion: 8, Producer: "cuvil-test", DocString: "doc",
		Metadata: map[string]string{"b": "2", "a": "1"}}
}

func TestEncodeRoundTrip(t *testing.T) {
	m := sampleModel()
	b, err := Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	m2, err := decode(b, "", testLookup)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := dump(m), dump(m2); a != b {
		t.Errorf("Decode(Encode(m)) differs:\n%s\nfull dump:\n%s", firstDiff(a, b), b)
	}
	var p1, p2 strings.Builder
	if err := ir.Print(&p1, m); err != nil {
		t.Fatal(err)
	}
	if err := ir.Print(&p2, m2); err != nil || p1.String() != p2.String() {
		t.Errorf("ir.Print differs after round trip (%v):\n%s", err, firstDiff(p1.String(), p2.String()))
	}
	if m2.Producer != m.Producer || m2.DocString != m.DocString || m2.Metadata["b"] != "2" || m2.IRVersion != 8 {
		t.Errorf("model fields lost: %+v", m2)
	}
	// Encoding is deterministic (sorted opsets and metadata).
	again, _ := Encode(m)
	if !bytes.Equal(b, again) {
		t.Error("Encode is not deterministic")
	}
}

// TestEncodeNames: unnamed and clashing values get unique names, and the
// result imports.
func TestEncodeNames(t *testing.T) {
	m := sampleModel()
	g := m.Graph
	g.Nodes[0].Outputs[0].Name = ""             // a
	g.Nodes[1].Outputs[0].Name = "x"            // s1 clashes with input x
	g.Nodes[2].Attrs[1].G.Outputs[0].Name = "x" // then's t_out clashes too
	b, err := Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	m2, err := decode(b, "", testLookup)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	m2.Graph.Walk(func(g *ir.Graph) {
		for _, n := range g.Nodes {
			for _, v := range n.Outputs {
				if v != nil {
					if names[v.Name] || v.Name == "" {
						t.Errorf("name %q is not unique", v.Name)
					}
					names[v.Name] = true
				}
			}
		}
	})
	if !names["v"] || !names["x__1"] || !names["x__2"] {
		t.Errorf("names %v: want v, x__1, x__2", names)
	}
}

func TestEncodeErrors(t *testing.T) {
	m := sampleModel()
	stray := &ir.Value{Name: "stray"}
	m.Graph.Nodes[0].Inputs[1] = stray
	if _, err := Encode(m); err == nil || !strings.Contains(err.Error(), `node "Add_node" (Add): input 1: value "stray" is used but no graph input, constant or node defines it`) {
		t.Errorf("got %v", err)
	}
	if _, err := Encode(&ir.Model{}); err == nil {
		t.Error("no error for a model without graph")
	}
}

func TestTensorFiles(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []*ir.Tensor{
		ir.NewTensorF32([]int64{2, 2}, []float32{1, 2, 3, 4}),
		ir.NewTensorInt64(nil, []int64{-9}),
		{Name: "b", DType: ir.Bool, Shape: []int64{3}, Raw: []byte{1, 0, 1}},
		{Name: "s", DType: ir.String, Shape: []int64{2}, Strings: []string{"x", "yz"}},
	} {
		path := filepath.Join(dir, "t.pb")
		if err := WriteTensorFile(path, tt); err != nil {
			t.Fatal(err)
		}
		got, err := ReadTensorFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if tensorSummary(got) != tensorSummary(tt) {
			t.Errorf("read back %s, wrote %s", tensorSummary(got), tensorSummary(tt))
		}
	}
	if _, err := EncodeTensor(&ir.Tensor{DType: ir.F32, Shape: []int64{2}, Raw: []byte{1}}); err == nil {
		t.Error("EncodeTensor accepted a tensor whose data does not match its shape")
	}
	if _, err := DecodeTensor([]byte{0xff, 0xff}); err == nil {
		t.Error("DecodeTensor accepted garbage")
	}
	if err := os.WriteFile(filepath.Join(dir, "bad.pb"), []byte{0x10, 0x01, 0x0a, 0x01, 0x05, 0x4a, 0x02, 0, 0}, 0o644); err != nil {
		t.Fatal(err)
	}
	// dtype f32, dims [5], 2 bytes of raw data.
	if _, err := ReadTensorFile(filepath.Join(dir, "bad.pb")); err == nil || !strings.Contains(err.Error(), "has 2 bytes of data, shape [5] of f32 wants 20") {
		t.Errorf("got %v", err)
	}
}

func TestDataFiles(t *testing.T) {
	tensor := func(v ...float32) *Data {
		return &Data{Kind: ir.TensorKind, Tensor: ir.NewTensorF32([]int64{int64(len(v))}, v)}
	}
	cases := []*Data{
		tensor(1, 2),
		{Kind: ir.SequenceKind, Name: "seq", Seq: []*Data{tensor(1), tensor(2, 3)}},
		{Kind: ir.SequenceKind, Name: "empty", Seq: []*Data{}},
		{Kind: ir.OptionalKind, Name: "none"},
		{Kind: ir.OptionalKind, Name: "some", Opt: tensor(4)},
		{Kind: ir.OptionalKind, Name: "some seq", Opt: &Data{Kind: ir.SequenceKind, Seq: []*Data{tensor(5)}}},
		{Kind: ir.SequenceKind, Name: "nested", Seq: []*Data{{Kind: ir.SequenceKind, Seq: []*Data{tensor(6)}}}},
	}
	dir := t.TempDir()
	for _, d := range cases {
		path := filepath.Join(dir, "d.pb")
		if err := WriteDataFile(path, d); err != nil {
			t.Fatal(err)
		}
		got, err := ReadDataFile(path, d.Kind)
		if err != nil {
			t.Fatalf("%s: %v", d.Name, err)
		}
		if a, b := dataString(d), dataString(got); a != b {
			t.Errorf("read back %s, wrote %s", b, a)
		}
	}
	bad := &Data{Kind: ir.SequenceKind, Seq: []*Data{tensor(1), {Kind: ir.OptionalKind}}}
	if _, err := EncodeData(bad); err == nil {
		t.Error("EncodeData accepted a sequence of mixed kinds")
	}
	if _, err := DecodeData(nil, ir.MapKind); err == nil {
		t.Error("DecodeData accepted a map")
	}
}

func dataString(d *Data) string {
	if d == nil {
		return "none"
	}
	switch d.Kind {
	case ir.TensorKind:
		return tensorSummary(d.Tensor)
	case ir.SequenceKind:
		parts := []string{}
		for _, e := range d.Seq {
			parts = append(parts, dataString(e))
		}
		return d.Name + "[" + strings.Join(parts, ", ") + "]"
	}
	return d.Name + "?(" + dataString(d.Opt) + ")"
}
