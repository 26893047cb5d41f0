package halfmodel

import (
	"os"
	"path/filepath"
	"strings"
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

// TestConvertSpecial: Resize's scales stay f32 (roi becomes f16), Max (on
// the block list) runs in f32 between Casts, a Constant's tensor becomes
// f16 (value_float becomes an f16 value tensor), an integer input is untouched, and an output that later nodes also
// read is read by them in f16.
func TestConvertSpecial(t *testing.T) {
	m, err := ir.Parse(`opset ai.onnx 13
graph main(%x: f32[1,1,2,2], %i: i64[2]) -> (%y, %r, %s) {
  %roi = const f32[0] {}
  %sc = const f32[4] {1, 1, 2, 2}
  %c = Constant <f32[]> {value_float=0.5}
  %y = Add <f32[1,1,2,2]> %x %c
  %m = Max <f32[1,1,2,2]> %y %x
  %r = Resize <f32[1,1,4,4]> %m %roi %sc
  %s = Shape <i64[4]> %r
}
`)
	if err != nil {
		t.Fatal(err)
	}
	if err := Convert(m); err != nil {
		t.Fatal(err)
	}
	g := m.Graph
	var sb strings.Builder
	ir.Print(&sb, m)
	got := sb.String()
	for _, v := range g.Consts {
		switch v.Name {
		case "sc":
			if v.Const.DType != ir.F32 {
				t.Errorf("Resize scales became %v", v.Const.DType)
			}
		case "roi":
			if v.Const.DType != ir.F16 {
				t.Errorf("roi is %v, want f16", v.Const.DType)
			}
		}
	}
	var maxNode, resize *ir.Node
	for _, n := range g.Nodes {
		switch n.Op {
		case "Max":
			maxNode = n
		case "Resize":
			resize = n
		case "Constant":
			if a := n.Attr("value"); a == nil || a.T.DType != ir.F16 {
				t.Errorf("Constant value not f16: %v", a)
			}
		}
	}
	for _, v := range maxNode.Inputs {
		if v.Type.DType != ir.F32 || v.Def == nil || v.Def.Op != "Cast" {
			t.Errorf("Max input %s (%v) is not an f32 Cast", v.Name, v.Type)
		}
	}
	if o := maxNode.Outputs[0]; o.Type.DType != ir.F32 {
		t.Errorf("Max output %v", o.Type)
	}
	if in := resize.Inputs[0]; in.Type.DType != ir.F16 || in.Def == nil || in.Def.Op != "Cast" {
		t.Errorf("Resize reads %s (%v), want the f16 Cast of Max's result", in.Name, in.Type)
	}
	// y is a graph output that Max also reads: the Add writes f16, a Cast
	// writes y, and Max's cast reads the f16 value.
	if d := g.Outputs[0].Def; d == nil || d.Op != "Cast" || d.Inputs[0].Type.DType != ir.F16 {
		t.Errorf("output y not written by a Cast of an f16 value:\n%s", got)
	}
	if src := maxNode.Inputs[0].Def.Inputs[0]; src == g.Outputs[0] {
		t.Errorf("Max reads the f32 output y, not its f16 value:\n%s", got)
	}
	if g.Inputs[1].Type.DType != ir.I64 {
		t.Errorf("integer input changed: %v", g.Inputs[1].Type)
	}
}
