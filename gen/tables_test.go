package gen

import (
	"bytes"
	"regexp"
	"testing"

	"github.com/cuvil/cuvil/internal/irbuild"
	"github.com/cuvil/cuvil/ir"
)

// A main graph and an If branch longer than runChunk run as parts; the
// generated tests (every node profiled, cancellation after the first
// node, no allocation per run) and the values still hold: 2*225 Negs, then
// an If whose branches are 2*130 Negs and an Identity, give x back.
func TestChunkedRun(t *testing.T) {
	b := &irbuild.B{G: &ir.Graph{Name: "chunks"}}
	x := b.In("x", irbuild.F32(2, 3))
	flag := b.In("flag", ir.TensorType(ir.Bool, ir.ShapeOf()))
	v := x
	for range 2 * 225 {
		v = b.Op("Neg", nil, v)
	}
	then := irbuild.Sub("then", b.G)
	w := v
	for range 2 * 130 {
		w = then.Op("Neg", []*ir.Attr{}, w)
	}
	then.G.Outputs = []*ir.Value{w}
	els := irbuild.Sub("else", b.G)
	els.G.Outputs = []*ir.Value{els.Op("Identity", nil, v)}
	v = b.Op("If", []*ir.Attr{irbuild.GraphAttr("then_branch", then.G), irbuild.GraphAttr("else_branch", els.G)}, flag)
	v = b.Op("Reshape", []*ir.Attr{irbuild.IntAttr("allowzero", 0)}, v, b.ConstI64([]int64{2}, 3, 2))
	files, err := Generate(irbuild.Model(b, v), Options{Package: "chunks"})
	if err != nil {
		t.Fatal(err)
	}
	src := files["model.go"]
	for _, want := range []string{"func (s *Session) cuvilRun2() error", "s.prof.Mark(451)", "_1() error"} {
		if !bytes.Contains(src, []byte(want)) {
			t.Errorf("model.go lacks %q", want)
		}
	}
	if bytes.Contains(src, []byte("cuvilRun3")) {
		t.Errorf("452 main-graph nodes in more than 3 parts")
	}
	field := regexp.MustCompile(`type Output struct \{\n\t// (\w+) is`).FindSubmatch(src)
	if field == nil {
		t.Fatalf("no output field in model.go")
	}
	files["values_test.go"] = []byte(`package chunks

import (
	"fmt"
	"testing"
)

func TestValues(t *testing.T) {
	m, err := New()
	if err != nil {
		t.Fatal(err)
	}
	s := m.NewSession()
	x := &Tensor{DType: F32, Shape: []int{2, 3}, Data: []float32{1, -2, 3, -4, 5, -6}}
	for _, f := range []bool{true, false} {
		out, err := s.Run(Input{X: x, Flag: &Tensor{DType: Bool, Data: []bool{f}}})
		if err != nil {
			t.Fatal(err)
		}
		if got := out.` + string(field[1]) + `; fmt.Sprint(got.Shape) != "[3 2]" || fmt.Sprint(got.F32()) != fmt.Sprint(x.F32()) {
			t.Errorf("flag %v: %v %v, want [3 2] %v", f, got.Shape, got.F32(), x.F32())
		}
	}
}
`)
	out := goTest(t, "chunks", files)
	for _, want := range []string{"--- PASS: TestValues", "--- PASS: TestProfile", "--- PASS: TestRunContext"} {
		if !bytes.Contains([]byte(out), []byte(want)) {
			t.Errorf("go test output lacks %q:\n%s", want, out)
		}
	}
}
