package gen

import (
	"bytes"
	"testing"

	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/templates"
)

// Constant 2-D B operands of MatMul and Gemm are stored prepacked, but not
// where A has one or two rows (the GEMV path reads B as it is) nor where B
// has another reader; Generate leaves the model as it found it and writes
// the same bytes twice.
func TestPrepackGemmB(t *testing.T) {
	seqF32 := func(dims ...ir.Dim) ir.Type { return ir.TensorType(ir.F32, ir.Shape(dims)) }
	vals := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(i%7) - 3
		}
		return v
	}
	build := func() (*ir.Model, []*ir.Value) {
		b := &gb{&ir.Graph{Name: "main"}}
		x := b.in("x", seqF32(ir.S("seq"), ir.D(8)))
		v := b.in("v", f32T(1, 8))
		packedB := b.constF32([]int64{8, 20}, vals(160)...)
		gemvB := b.constF32([]int64{20, 8}, vals(160)...)
		sharedB := b.constF32([]int64{8, 8}, vals(64)...)
		y := b.op("MatMul", nil, x, packedB)                                              // packed
		z := b.op("Gemm", []*ir.Attr{{Name: "transB", Kind: ir.AttrInt, I: 1}}, v, gemvB) // one row: not packed
		s1 := b.op("MatMul", nil, x, sharedB)                                             // B read twice: not packed
		s2 := b.op("MatMul", nil, s1, sharedB)
		return model(b, y, z, s2), []*ir.Value{packedB, gemvB, sharedB}
	}
	m, consts := build()
	files, err := Generate(m, Options{Package: "p", NoTest: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := bytes.Count(files["model.go"], []byte(templates.GemmPackedAttr)); got != 1 {
		t.Errorf("model.go marks %d nodes with %s, want 1 (the first MatMul)", got, templates.GemmPackedAttr)
	}
	for _, c := range consts {
		if len(c.Const.Shape) != 2 || c.Def != nil {
			t.Errorf("Generate left %s with shape %v", c.Name, c.Const.Shape)
		}
	}
	for _, n := range m.Graph.Nodes {
		if n.Attr(templates.GemmPackedAttr) != nil {
			t.Errorf("Generate left %s marked", n.Name)
		}
	}
	m2, _ := build()
	again, err := Generate(m2, Options{Package: "p", NoTest: true})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(files["weights.bin"], again["weights.bin"]) || !bytes.Equal(files["model.go"], again["model.go"]) {
		t.Error("two generations of one model differ")
	}
}
