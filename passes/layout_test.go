package passes_test

import (
	"testing"

	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/passes"
)

// TestLayoutShapes checks shape inference for the nodes the layout pass
// leaves (NHWC FusedConv, PoolNHWC, ScaleShift): after the pipeline, their
// output types are forgotten and inferred again, and must come back equal.
func TestLayoutShapes(t *testing.T) {
	for _, name := range []string{"mobilenet_v2_op13", "squeezenet1_1_op13", "light_densenet121", "light_inception_v2"} {
		t.Run(name, func(t *testing.T) {
			m := loadModel(t, name)
			if err := passes.Run(m, passes.Options{Verify: true}); err != nil {
				t.Fatal(err)
			}
			want := map[*ir.Value]ir.Type{}
			for _, n := range m.Graph.Nodes {
				if n.Domain == ir.CuvilDomain && (n.Op == "FusedConv" || n.Op == "PoolNHWC" || n.Op == "ScaleShift") {
					want[n.Outputs[0]] = n.Outputs[0].Type
					n.Outputs[0].Type = ir.Type{}
				}
			}
			if len(want) == 0 {
				t.Fatal("no layout nodes")
			}
			if err := passes.Shapes.Run(m); err != nil {
				t.Fatal(err)
			}
			for v, ty := range want {
				if !v.Type.Equal(ty) {
					t.Errorf("%s: inferred %v, want %v", v.Name, v.Type, ty)
				}
			}
		})
	}
}
