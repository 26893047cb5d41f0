package passes

import (
	"slices"
	"testing"

	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/ir/irtest"
)

// TestQuantizeGolden runs the quantize pass with fixed ranges (as
// calibration would give) on testdata/quantize (skip: skipme) and
// testdata/quantize-errors (no skip) and testdata/quantize-skip (skip:
// the op Conv).
func TestQuantizeGolden(t *testing.T) {
	ranges := map[string][2]float32{"x": {-1, 3}, "a": {0.5, 2}, "bm": {-2, 2}, "bad": {1, -1}}
	for _, c := range []struct {
		dir  string
		skip []string
	}{{"quantize", []string{"skipme"}}, {"quantize-errors", nil}, {"quantize-skip", []string{"Conv"}}} {
		t.Run(c.dir, func(t *testing.T) {
			irtest.Golden(t, "testdata/"+c.dir+"/*.txtar", func(m *ir.Model) error {
				if err := QuantizeModel(m, &QuantConfig{Ranges: ranges, Skip: c.skip}); err != nil {
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
