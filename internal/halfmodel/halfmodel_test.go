package halfmodel

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/ir/onnx"
)

// SharedConvModels are the shared conv models the fp16 tests convert.
var sharedConvModels = []string{"mnist_cnn_op13", "squeezenet1_1_op13", "mobilenet_v2_op13", "light_inception_v2", "light_densenet121"}

// TestConvertShared converts each shared conv model, encodes and decodes
// it again and checks what the converter promises: the interface stays
// f32, every other float value and constant is f16, and the Casts sit at
// the edges. With HALFMODEL_OUT=DIR it writes DIR/NAME/model.onnx.
func TestConvertShared(t *testing.T) {
	root := "../../../shared/models"
	if _, err := os.Stat(root); err != nil {
		t.Skipf("no shared models (%v)", err)
	}
	for _, name := range sharedConvModels {
		t.Run(name, func(t *testing.T) {
			m, err := onnx.Load(filepath.Join(root, name, "model.onnx"))
			if err != nil {
				t.Fatal(err)
			}
			if err := Convert(m); err != nil {
				t.Fatal(err)
			}
			b, err := onnx.Encode(m)
			if err != nil {
				t.Fatal(err)
			}
			m2, err := onnx.Decode(b, "")
			if err != nil {
				t.Fatal(err)
			}
			checkHalf(t, m2)
			if out := os.Getenv("HALFMODEL_OUT"); out != "" {
				d := filepath.Join(out, name)
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(d, "model.onnx"), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

func checkHalf(t *testing.T, m *ir.Model) {
	t.Helper()
	g := m.Graph
	io := map[*ir.Value]bool{}
	for _, v := range g.Inputs {
		io[v] = true
		if v.Type.DType != ir.F32 {
			t.Errorf("input %s is %v, want f32", v.Name, v.Type)
		}
	}
	for _, v := range g.Outputs {
		io[v] = true
		if v.Type.DType != ir.F32 {
			t.Errorf("output %s is %v, want f32", v.Name, v.Type)
		}
		if v.Def == nil || v.Def.Op != "Cast" {
			t.Errorf("output %s is not written by a Cast", v.Name)
		}
	}
	for _, v := range g.Consts {
		if v.Const.DType == ir.F32 {
			t.Errorf("constant %s stays f32", v.Name)
		}
	}
	halves := 0
	for _, n := range g.Nodes {
		for _, a := range n.Attrs {
			if a.Kind == ir.AttrTensor && a.T != nil && a.T.DType == ir.F32 {
				t.Errorf("%v: attribute %s is an f32 tensor", n, a.Name)
			}
		}
		for _, o := range n.Outputs {
			if o == nil || io[o] {
				continue
			}
			if o.Type.DType == ir.F32 && !(n.Op == "Cast" && len(n.Inputs) == 1 && n.Inputs[0].Type.DType == ir.F16 && blockReader(g, o)) {
				t.Errorf("%v: output %s stays f32", n, o.Name)
			}
			if o.Type.DType == ir.F16 {
				halves++
			}
		}
	}
	if halves == 0 {
		t.Error("no f16 value")
	}
}

// blockReader: every reader of v is a block-list op (the casts around it).
func blockReader(g *ir.Graph, v *ir.Value) bool {
	for _, n := range g.Nodes {
		for _, x := range n.Inputs {
			if x == v && !blockList[n.Op] {
				return false
			}
		}
	}
	return true
}
