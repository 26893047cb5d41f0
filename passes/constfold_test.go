package passes

import (
	"testing"

	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/ir/irtest"
	"github.com/cuvil/cuvil/templates"
)

func TestConstFoldGolden(t *testing.T) {
	irtest.Golden(t, "testdata/constfold/*.txtar", ConstFold.Run)
}

// swapKernel replaces a kernel for one test.
func swapKernel(t *testing.T, op string, k templates.Kernel) {
	old, had := templates.Kernels[op]
	if k == nil {
		delete(templates.Kernels, op)
	} else {
		templates.Kernels[op] = k
	}
	t.Cleanup(func() {
		if had {
			templates.Kernels[op] = old
		} else {
			delete(templates.Kernels, op)
		}
	})
}

func negModel(t *testing.T) (*builder, *ir.Value) {
	b := newBuilder(t, 17)
	a := b.constant("a", ir.NewTensorF32([]int64{2}, []float32{1, -2}))
	y := b.out("Neg", "neg", []*ir.Value{a})
	b.g.Outputs = []*ir.Value{y}
	return b, y
}

func TestConstFoldMissingKernelIsNotAnError(t *testing.T) {
	swapKernel(t, "Neg", nil)
	b, y := negModel(t)
	if err := ConstFold.Run(b.m); err != nil {
		t.Fatal(err)
	}
	if y.Const != nil || len(b.g.Nodes) != 1 {
		t.Fatalf("Neg folded without a kernel")
	}
	if got := y.Type.String(); got != "f32[2]" {
		t.Errorf("type %s after folding, want f32[2]", got)
	}
}

func TestConstFoldKernelDisagreeingWithInference(t *testing.T) {
	swapKernel(t, "Neg", func(n *templates.Node) error {
		n.Out[0].Resize(templates.F32, 3) // one element too many
		return nil
	})
	b, _ := negModel(t)
	wantErr(t, ConstFold.Run(b.m), `node "neg" (Neg)`, "folded output 0", "f32[3]", "f32[2]")
}

func TestConstFoldKernelPanicIsReportedWithTheNode(t *testing.T) {
	swapKernel(t, "Neg", func(n *templates.Node) error { panic("index out of range [7]") })
	b, _ := negModel(t)
	err := runPasses(b.m, []*Pass{Shapes, ConstFold}, Options{})
	wantErr(t, err, `pass "constfold": node "neg" (Neg): index out of range [7]`)
}

func TestConstFoldLeavesLargeResults(t *testing.T) {
	b := newBuilder(t, 17)
	row := b.constant("row", ir.NewTensorF32([]int64{2048}, make([]float32, 2048)))
	col := b.constant("col", ir.NewTensorF32([]int64{1024, 1}, make([]float32, 1024)))
	big := b.out("Add", "big", []*ir.Value{row, col}) // 2M elements
	small := b.out("Add", "small", []*ir.Value{row, row})
	b.g.Outputs = []*ir.Value{big, small}
	if err := ConstFold.Run(b.m); err != nil {
		t.Fatal(err)
	}
	if big.Const != nil {
		t.Errorf("a %v result was folded", big.Type)
	}
	if small.Const == nil {
		t.Errorf("a 2048-element result was not folded")
	}
}

// Folding runs the real kernels: check values, not just that a constant
// appeared.
func TestConstFoldValues(t *testing.T) {
	b := newBuilder(t, 17)
	a := b.constant("a", ir.NewTensorF32([]int64{3}, []float32{1, 4, 9}))
	s := b.out("Sqrt", "sq", []*ir.Value{a})
	c := b.out("Cast", "c", []*ir.Value{s}, aInt("to", int64(ir.I64)))
	b.g.Outputs = []*ir.Value{s, c}
	if err := ConstFold.Run(b.m); err != nil {
		t.Fatal(err)
	}
	if s.Const == nil {
		t.Fatal("Sqrt of a constant was not folded")
	}
	got := s.Const.Float64s()
	for i, want := range []float64{1, 2, 3} {
		if got[i] != want {
			t.Fatalf("sqrt = %v, want [1 2 3]", got)
		}
	}
	if _, ok := templates.Kernels["Cast"]; ok && c.Const == nil {
		t.Error("Cast of a folded constant was not folded in the same run")
	}
}
