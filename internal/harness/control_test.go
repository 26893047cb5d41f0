package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/cuvil/cuvil/internal/irbuild"
	"github.com/cuvil/cuvil/ir"
)

// Hand-built models with control flow and sequences, generated, built in
// one harness and run; outputs are checked against values computed here.

// ifModel: y = cond ? x+1 : -x, with x captured by both branches.
func ifModel() *ir.Model {
	b := &irbuild.B{G: &ir.Graph{Name: "ifm"}}
	cond := b.In("cond", ir.TensorType(ir.Bool, nil))
	x := b.In("x", irbuild.F32(3))
	then := irbuild.Sub("then", b.G)
	then.G.Outputs = []*ir.Value{then.Op("Add", nil, x, then.ConstF32(nil, 1))}
	els := irbuild.Sub("else", b.G)
	els.G.Outputs = []*ir.Value{els.Op("Neg", nil, x)}
	y := &ir.Value{Name: "y"}
	b.OpN("If", []*ir.Attr{irbuild.GraphAttr("else_branch", els.G), irbuild.GraphAttr("then_branch", then.G)}, []*ir.Value{cond}, y)
	return irbuild.Model(b, y)
}

// loopModel: M iterations of acc += x, a and b swapped each iteration,
// acc stacked as a scan output.
func loopModel() *ir.Model {
	b := &irbuild.B{G: &ir.Graph{Name: "loopm"}}
	trips := b.In("M", ir.TensorType(ir.I64, nil))
	x := b.In("x", irbuild.F32(2))
	acc0, a0, b0 := b.ConstF32([]int64{2}, 0, 0), b.ConstF32(nil, 1), b.ConstF32(nil, 2)
	body := irbuild.Sub("body", b.G)
	iter := body.In("i", ir.TensorType(ir.I64, nil))
	condIn := body.In("c", ir.TensorType(ir.Bool, nil))
	acc := body.In("acc", irbuild.F32(2))
	av := body.In("a", irbuild.F32())
	bv := body.In("b", irbuild.F32())
	_ = iter
	accOut := body.Op("Add", nil, acc, x)
	body.G.Outputs = []*ir.Value{body.Op("Identity", nil, condIn), accOut, bv, av, body.Op("Identity", nil, accOut)}
	outs := []*ir.Value{{Name: "acc"}, {Name: "a"}, {Name: "b"}, {Name: "stack"}}
	b.OpN("Loop", []*ir.Attr{irbuild.GraphAttr("body", body.G)}, []*ir.Value{trips, nil, acc0, a0, b0}, outs...)
	return irbuild.Model(b, outs...)
}

// scanModel: a running sum over the rows of X in reverse, the sums stacked
// along axis 1.
func scanModel() *ir.Model {
	b := &irbuild.B{G: &ir.Graph{Name: "scanm"}}
	x := b.In("X", irbuild.F32(3, 2))
	body := irbuild.Sub("body", b.G)
	s := body.In("s", irbuild.F32(2))
	row := body.In("row", irbuild.F32(2))
	sum := body.Op("Add", nil, s, row)
	body.G.Outputs = []*ir.Value{sum, body.Op("Identity", nil, sum)}
	outs := []*ir.Value{{Name: "sum"}, {Name: "sums"}}
	b.OpN("Scan", []*ir.Attr{irbuild.GraphAttr("body", body.G), irbuild.IntAttr("num_scan_inputs", 1), irbuild.IntsAttr("scan_input_directions", 1), irbuild.IntsAttr("scan_output_axes", 1)},
		[]*ir.Value{b.ConstF32([]int64{2}, 0, 0), x}, outs...)
	return irbuild.Model(b, outs...)
}

// nestedModel: cond ? (x added M times, by a Loop) : x.
func nestedModel() *ir.Model {
	b := &irbuild.B{G: &ir.Graph{Name: "nestm"}}
	cond := b.In("cond", ir.TensorType(ir.Bool, nil))
	trips := b.In("M", ir.TensorType(ir.I64, nil))
	x := b.In("x", irbuild.F32(2))
	then := irbuild.Sub("then", b.G)
	body := irbuild.Sub("body", then.G)
	body.In("i", ir.TensorType(ir.I64, nil))
	c := body.In("c", ir.TensorType(ir.Bool, nil))
	acc := body.In("acc", irbuild.F32(2))
	body.G.Outputs = []*ir.Value{body.Op("Identity", nil, c), body.Op("Add", nil, acc, x)}
	sum := &ir.Value{Name: "sum"}
	then.OpN("Loop", []*ir.Attr{irbuild.GraphAttr("body", body.G)}, []*ir.Value{trips, nil, then.ConstF32([]int64{2}, 0, 0)}, sum)
	then.G.Outputs = []*ir.Value{sum}
	els := irbuild.Sub("else", b.G)
	els.G.Outputs = []*ir.Value{els.Op("Identity", nil, x)}
	y := &ir.Value{Name: "y"}
	b.OpN("If", []*ir.Attr{irbuild.GraphAttr("else_branch", els.G), irbuild.GraphAttr("then_branch", then.G)}, []*ir.Value{cond}, y)
	return irbuild.Model(b, y)
}

// seqModel: split X (4x2) into rows, insert a row of 9s at 1, erase the
// last, read element 2, count, and concatenate the rest along axis 0.
func seqModel() *ir.Model {
	b := &irbuild.B{G: &ir.Graph{Name: "seqm"}}
	x := b.In("X", irbuild.F32(4, 2))
	seq := b.Op("SplitToSequence", []*ir.Attr{irbuild.IntAttr("axis", 0)}, x, b.ConstI64(nil, 1))
	ins := b.Op("SequenceInsert", nil, seq, b.ConstF32([]int64{1, 2}, 9, 9), b.ConstI64(nil, 1))
	er := b.Op("SequenceErase", nil, ins)
	at := b.Op("SequenceAt", nil, er, b.ConstI64(nil, -2))
	n := b.Op("SequenceLength", nil, er)
	cat := b.Op("ConcatFromSequence", []*ir.Attr{irbuild.IntAttr("axis", 0)}, er)
	opt := b.Op("Optional", nil, at)
	has := b.Op("OptionalHasElement", nil, opt)
	got := b.Op("OptionalGetElement", nil, opt)
	return irbuild.Model(b, got, n, cat, has)
}

func runModels(t *testing.T, models map[string]*ir.Model, jobs map[string][][]*ir.Tensor) map[string][][]*ir.Tensor {
	t.Helper()
	h, err := New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	for name, m := range models {
		if err := h.Add(name, m); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	ctx := context.Background()
	exe, err := h.Build(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for name, reason := range h.Failed {
		t.Fatalf("%s: %s", name, reason)
	}
	var list []Job
	var keys []string
	for name, sets := range jobs {
		for k, ins := range sets {
			dir := filepath.Join(h.Dir, fmt.Sprintf("%s_%d", name, k))
			job := Job{Model: name, Out: dir}
			for i, in := range ins {
				p := filepath.Join(h.Dir, fmt.Sprintf("%s_%d_in%d.cuvt", name, k, i))
				if err := WriteTensorFile(p, in); err != nil {
					t.Fatal(err)
				}
				job.Inputs = append(job.Inputs, p)
			}
			if err := makeDir(dir); err != nil {
				t.Fatal(err)
			}
			list = append(list, job)
			keys = append(keys, name)
		}
	}
	res, err := h.Run(ctx, exe, list, 1)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][][]*ir.Tensor{}
	for i, r := range res {
		if r.Err != "" {
			t.Fatalf("%s: %s", keys[i], r.Err)
		}
		var ts []*ir.Tensor
		for k := 0; k < r.Outputs; k++ {
			tt, err := ReadTensorFile(filepath.Join(list[i].Out, fmt.Sprintf("output_%d.cuvt", k)))
			if err != nil {
				t.Fatal(err)
			}
			ts = append(ts, tt)
		}
		out[keys[i]] = append(out[keys[i]], ts)
	}
	return out
}

func boolT(v bool) *ir.Tensor {
	b := byte(0)
	if v {
		b = 1
	}
	return &ir.Tensor{DType: ir.Bool, Raw: []byte{b}}
}

func checkTensor(t *testing.T, what string, got *ir.Tensor, shape []int64, want []float64) {
	t.Helper()
	if fmt.Sprint(got.Shape) != fmt.Sprint(shape) {
		t.Errorf("%s: shape %v, want %v", what, got.Shape, shape)
		return
	}
	if g := got.Float64s(); fmt.Sprint(g) != fmt.Sprint(want) {
		t.Errorf("%s = %v, want %v", what, g, want)
	}
}

func TestControlFlowAndSequences(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module; skipped in -short mode")
	}
	x3 := []float32{1, -2, 0.5}
	x2 := []float32{1.5, -3}
	X := []float32{1, 2, 3, 4, 5, 6} // 3x2
	Y := []float32{1, 2, 3, 4, 5, 6, 7, 8}
	res := runModels(t, map[string]*ir.Model{
		"if": ifModel(), "loop": loopModel(), "scan": scanModel(), "nest": nestedModel(), "seq": seqModel(),
	}, map[string][][]*ir.Tensor{
		"if":   {{boolT(true), ir.NewTensorF32([]int64{3}, x3)}, {boolT(false), ir.NewTensorF32([]int64{3}, x3)}},
		"loop": {{ir.NewTensorInt64(nil, []int64{3}), ir.NewTensorF32([]int64{2}, x2)}, {ir.NewTensorInt64(nil, []int64{0}), ir.NewTensorF32([]int64{2}, x2)}},
		"scan": {{ir.NewTensorF32([]int64{3, 2}, X)}},
		"nest": {{boolT(true), ir.NewTensorInt64(nil, []int64{4}), ir.NewTensorF32([]int64{2}, x2)}, {boolT(false), ir.NewTensorInt64(nil, []int64{4}), ir.NewTensorF32([]int64{2}, x2)}},
		"seq":  {{ir.NewTensorF32([]int64{4, 2}, Y)}},
	})

	// If.
	var plus, neg []float64
	for _, v := range x3 {
		plus, neg = append(plus, float64(v)+1), append(neg, -float64(v))
	}
	checkTensor(t, "if(true)", res["if"][0][0], []int64{3}, plus)
	checkTensor(t, "if(false)", res["if"][1][0], []int64{3}, neg)

	// Loop: 3 iterations, then none.
	var acc, stack []float64
	accs := []float64{0, 0}
	for i := 0; i < 3; i++ {
		for j := range accs {
			accs[j] += float64(x2[j])
		}
		stack = append(stack, accs...)
	}
	acc = accs
	r := res["loop"][0]
	checkTensor(t, "loop acc", r[0], []int64{2}, acc)
	checkTensor(t, "loop a", r[1], nil, []float64{2}) // swapped 3 times
	checkTensor(t, "loop b", r[2], nil, []float64{1})
	checkTensor(t, "loop stack", r[3], []int64{3, 2}, stack)
	r = res["loop"][1]
	checkTensor(t, "loop acc (0 trips)", r[0], []int64{2}, []float64{0, 0})
	checkTensor(t, "loop a (0 trips)", r[1], nil, []float64{1})
	checkTensor(t, "loop stack (0 trips)", r[3], []int64{0, 2}, nil)

	// Scan in reverse: sums after rows 2, 1, 0, stacked along axis 1.
	s := []float64{0, 0}
	sums := make([]float64, 6) // [2, 3]
	for step, row := 0, 2; row >= 0; step, row = step+1, row-1 {
		for j := 0; j < 2; j++ {
			s[j] += float64(X[row*2+j])
			sums[j*3+step] = s[j]
		}
	}
	checkTensor(t, "scan sum", res["scan"][0][0], []int64{2}, s)
	checkTensor(t, "scan sums", res["scan"][0][1], []int64{2, 3}, sums)

	// Loop nested in If.
	checkTensor(t, "nest(true)", res["nest"][0][0], []int64{2}, []float64{4 * float64(x2[0]), 4 * float64(x2[1])})
	checkTensor(t, "nest(false)", res["nest"][1][0], []int64{2}, []float64{float64(x2[0]), float64(x2[1])})

	// Sequences: rows r0..r3 -> r0, 9s, r1, r2, r3 -> erase last -> r0, 9s, r1, r2.
	rows := [][]float64{{1, 2}, {9, 9}, {3, 4}, {5, 6}}
	var cat []float64
	for _, row := range rows {
		cat = append(cat, row...)
	}
	r = res["seq"][0]
	checkTensor(t, "SequenceAt(-2)", r[0], []int64{1, 2}, rows[2])
	checkTensor(t, "SequenceLength", r[1], nil, []float64{4})
	checkTensor(t, "ConcatFromSequence", r[2], []int64{4, 2}, cat)
	if r[3].Raw[0] != 1 {
		t.Errorf("OptionalHasElement = %v, want true", r[3].Raw)
	}
}

func makeDir(dir string) error { return os.MkdirAll(dir, 0o755) }
