package harness

import (
	"math"
	"testing"

	"github.com/cuvil/cuvil/internal/irbuild"
	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/passes"
)

// TestElementwiseGroupRuns compiles a chain the pipeline fuses into one
// cuvil::Elementwise with an extra output (an intermediate a MatMul also
// reads), runs the generated package and checks both outputs.
func TestElementwiseGroupRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module; skipped in -short mode")
	}
	b := &irbuild.B{G: &ir.Graph{Name: "ew"}}
	x := b.In("x", irbuild.F32(2, 3))
	y := b.In("y", irbuild.F32(2, 3))
	e := b.Op("Mul", nil, x, b.ConstF32(nil, 2))
	s := b.Op("Add", nil, e, y)
	z := b.Op("Sigmoid", nil, s)
	mm := b.Op("MatMul", nil, e, b.ConstF32([]int64{3, 1}, 1, 1, 1))
	m := irbuild.Model(b, z, mm)
	if err := passes.Run(m, passes.Options{}); err != nil {
		t.Fatal(err)
	}
	fused := 0
	for _, n := range m.Graph.Nodes {
		if n.Domain == ir.CuvilDomain && n.Op == "Elementwise" {
			fused++
		}
	}
	if fused != 1 {
		t.Fatalf("want one cuvil::Elementwise after the pipeline, have:\n%v", m)
	}
	xv := []float32{1, -2, 0.5, 3, -0.25, 0}
	yv := []float32{0.5, 1, -1, 2, 0, -3}
	res := runModels(t, map[string]*ir.Model{"ew": m}, map[string][][]*ir.Tensor{
		"ew": {{ir.NewTensorF32([]int64{2, 3}, xv), ir.NewTensorF32([]int64{2, 3}, yv)}},
	})["ew"][0]
	var wz, wm []float64
	for i := range xv {
		wz = append(wz, float64(float32(1/(1+math.Exp(-(2*float64(xv[i])+float64(yv[i])))))))
	}
	for r := 0; r < 2; r++ {
		wm = append(wm, 2*float64(xv[3*r]+xv[3*r+1]+xv[3*r+2]))
	}
	checkTensor(t, "z", res[0], []int64{2, 3}, wz)
	checkTensor(t, "mm", res[1], []int64{2, 1}, wm)
}
