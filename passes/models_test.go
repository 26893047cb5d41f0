package passes_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/ir/onnx"
	"github.com/cuvil/cuvil/passes"
)

const modelsDir = "/work/shared/models"

func loadModel(t *testing.T, name string) *ir.Model {
	t.Helper()
	path := filepath.Join(modelsDir, name, "model.onnx")
	if _, err := os.Stat(path); err != nil {
		t.Skipf("reference models are not here (%v): /work/shared is absent on this machine", err)
	}
	m, err := onnx.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func modelNames(t *testing.T) []string {
	ents, err := os.ReadDir(modelsDir)
	if err != nil {
		t.Skipf("reference models are not here (%v): /work/shared is absent on this machine", err)
	}
	var names []string
	for _, e := range ents {
		if _, err := os.Stat(filepath.Join(modelsDir, e.Name(), "model.onnx")); err == nil {
			names = append(names, e.Name())
		}
	}
	return names
}

// TestPipelineOnModels runs the whole pipeline, verifying after each pass,
// on every reference model and checks that every value ends up with a
// known dtype and rank.
func TestPipelineOnModels(t *testing.T) {
	for _, name := range modelNames(t) {
		t.Run(name, func(t *testing.T) {
			m := loadModel(t, name)
			if err := passes.Run(m, passes.Options{Verify: true}); err != nil {
				t.Fatal(err)
			}
			m.Graph.Walk(func(g *ir.Graph) {
				check := func(v *ir.Value) {
					if v != nil && v.Type.Kind == ir.TensorKind && !v.Type.Known() {
						t.Errorf("value %s in graph %q has type %v", v.Name, g.Name, v.Type)
					}
				}
				for _, v := range g.Inputs {
					check(v)
				}
				for _, v := range g.Consts {
					check(v)
				}
				for _, n := range g.Nodes {
					for _, v := range n.Outputs {
						check(v)
					}
					// Shape chains over constant dims must have folded away.
					if in := n.Input(0); (n.Op == "Shape" || n.Op == "Size") && in != nil {
						if _, ok := in.Type.Shape.Consts(); ok {
							t.Errorf("%v reads %s of constant shape %v and was not folded", n, in.Name, in.Type)
						}
					}
				}
			})
		})
	}
}

func TestBertOutputs(t *testing.T) {
	m := loadModel(t, "bert_dynseq_op13")
	if err := passes.Run(m, passes.Options{Verify: true}); err != nil {
		t.Fatal(err)
	}
	want := []string{"f32[1,seq,256]", "f32[1,256]"}
	if len(m.Graph.Outputs) != len(want) {
		t.Fatalf("%d outputs, want %d", len(m.Graph.Outputs), len(want))
	}
	for i, v := range m.Graph.Outputs {
		if got := v.Type.String(); got != want[i] {
			t.Errorf("output %d (%s) is %s, want %s", i, v.Name, got, want[i])
		}
	}
}
