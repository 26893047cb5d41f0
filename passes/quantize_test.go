package passes

import (
	"fmt"
	"slices"
	"testing"

	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/ir/irtest"
)

// TestQuantizeGolden runs the quantize pass with fixed ranges (as
// calibration would give) on testdata/quantize (skip: skipme) and
// testdata/quantize-errors and testdata/quantize-chain (no skip) and testdata/quantize-skip (skip:
// the op Conv), and testdata/quantize-reduce with ReduceRange (7-bit weights).
func TestQuantizeGolden(t *testing.T) {
	ranges := map[string][2]float32{"x": {-1, 3}, "a": {0.5, 2}, "bm": {-2, 2}, "bad": {1, -1}, "h": {0, 4}, "h2": {-2, 2}, "f": {-2, 2}}
	for _, c := range []struct {
		dir    string
		skip   []string
		reduce bool
	}{{"quantize", []string{"skipme"}, false}, {"quantize-errors", nil, false}, {"quantize-chain", nil, false}, {"quantize-skip", []string{"Conv"}, false}, {"quantize-reduce", nil, true}} {
		t.Run(c.dir, func(t *testing.T) {
			irtest.Golden(t, "testdata/"+c.dir+"/*.txtar", func(m *ir.Model) error {
				if err := QuantizeModel(m, &QuantConfig{Ranges: ranges, Skip: c.skip, ReduceRange: c.reduce}); err != nil {
					return err
				}
				return DCE.Run(m)
			})
		})
	}
}

// TestQuantizeObserve: observe mode lists the inputs of the nodes it would
// quantize, once each, and makes the intermediate ones graph outputs.
func TestQuantizeObserve(t *testing.T) {
	m, err := ir.Parse(`opset ai.onnx 13
graph main(%x: f32[1,2,5,5]) -> (%y) {
  %w = const f32[2,2,1,1] {1, 2, 3, 4}
  %h = Conv @c1 <f32[1,2,5,5]> %x %w
  %r = Relu <f32[1,2,5,5]> %h
  %y = Conv @c2 <f32[1,2,5,5]> %r %w
  %z = Conv @c3 <f32[1,2,5,5]> %r %w
  %s = Sigmoid <f32[1,2,5,5]> %z
}
`)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &QuantConfig{Observe: true}
	if err := QuantizeModel(m, cfg); err != nil {
		t.Fatal(err)
	}
	if want := []string{"x", "r"}; !slices.Equal(cfg.Observed, want) {
		t.Fatalf("observed %v, want %v", cfg.Observed, want)
	}
	var outs []string
	for _, v := range m.Graph.Outputs {
		outs = append(outs, v.Name)
	}
	if want := []string{"y", "r"}; !slices.Equal(outs, want) {
		t.Fatalf("outputs %v, want %v", outs, want)
	}
	for _, n := range m.Graph.Nodes {
		if n.Domain == ir.CuvilDomain {
			t.Fatalf("observe mode rewrote %s", n)
		}
	}
}

// TestPrepackQ: prepack stores a QGemm's and QConv's constant s8 weights as
// the integer GEMM's panels (packed_q_shape: their ONNX shape); a u8 B and
// a B read twice stay.
func TestPrepackQ(t *testing.T) {
	m, err := ir.Parse(`opset ai.onnx 13
opset cuvil 1
graph main(%a: u8[2,5], %x: u8[1,3,4,4]) -> (%y1, %y2, %y3, %y4, %y5) {
  %s = const f32[] {0.5}
  %b = const i8[5,3] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}
  %bu = const u8[5,3] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}
  %b2 = const i8[5,3] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 16}
  %w = const i8[2,3,1,1] {1, 2, 3, 4, 5, 6}
  %y1 = cuvil.QGemm <f32[2,3]> %a %s _ %b %s
  %y2 = cuvil.QGemm <f32[2,3]> %a %s _ %bu %s
  %y3 = cuvil.QGemm <f32[2,3]> %a %s _ %b2 %s
  %y4 = cuvil.QGemm <f32[2,3]> %a %s _ %b2 %s
  %y5 = cuvil.QConv <f32[1,2,4,4]> %x %s _ %w %s
}
`)
	if err != nil {
		t.Fatal(err)
	}
	if err := Prepack.Run(m); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"y1": "[5 3]", "y2": "", "y3": "", "y4": "", "y5": "[2 3 1 1]"}
	for _, n := range m.Graph.Nodes {
		got := ""
		if s := n.AttrInts("packed_q_shape", nil); s != nil {
			got = fmt.Sprint(s)
			if w := n.Inputs[3]; w.Const.DType != ir.I8 || len(w.Const.Shape) != 1 || w.Const.Shape[0] != 64*2 && w.Const.Shape[0] != 64 {
				t.Errorf("%s: packed B %s %v", n.Outputs[0].Name, w.Const.DType, w.Const.Shape)
			}
		}
		if got != want[n.Outputs[0].Name] {
			t.Errorf("%s: packed_q_shape %q, want %q", n.Outputs[0].Name, got, want[n.Outputs[0].Name])
		}
	}
	if err := ir.Verify(m); err != nil {
		t.Fatal(err)
	}
}
