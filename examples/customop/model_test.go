package main

import (
	"bytes"
	"flag"
	"os"
	"testing"

	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/ir/onnx"
)

var update = flag.Bool("update", false, "rewrite ../../testdata/customop/model.onnx")

const modelPath = "../../testdata/customop/model.onnx"

// buildModel is the model of this example: z = Neg(com.acme::FastGelu(x,
// alpha=1.702)) for x of shape [N, 4]. FastGelu's output type is declared
// (value_info), which is what gives a custom op its signature.
func buildModel() *ir.Model {
	f32 := ir.TensorType(ir.F32, ir.Shape{ir.S("N"), ir.D(4)})
	x := &ir.Value{Name: "x", Type: f32}
	g := &ir.Value{Name: "g", Type: f32}
	z := &ir.Value{Name: "z", Type: f32}
	gelu := &ir.Node{Name: "gelu", Op: "FastGelu", Domain: "com.acme", Version: 1,
		Inputs: []*ir.Value{x}, Outputs: []*ir.Value{g},
		Attrs: []*ir.Attr{{Name: "alpha", Kind: ir.AttrFloat, F: 1.702}}}
	neg := &ir.Node{Name: "neg", Op: "Neg", Version: 13, Inputs: []*ir.Value{g}, Outputs: []*ir.Value{z}}
	g.Def, z.Def = gelu, neg
	return &ir.Model{
		Graph:     &ir.Graph{Name: "customop", Inputs: []*ir.Value{x}, Outputs: []*ir.Value{z}, Nodes: []*ir.Node{gelu, neg}},
		Opsets:    map[string]int64{"": 13, "com.acme": 1},
		IRVersion: 8,
		Producer:  "cuvil examples/customop",
	}
}

// TestModelFile checks that the committed model is what buildModel makes
// (go test -update rewrites it).
func TestModelFile(t *testing.T) {
	b, err := onnx.Encode(buildModel())
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(modelPath, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	have, err := os.ReadFile(modelPath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, b) {
		t.Errorf("%s differs from buildModel's encoding; run go test -update", modelPath)
	}
}
