package gen

import (
	"strings"
	"testing"

	"github.com/cuvil/cuvil/internal/irbuild"
	"github.com/cuvil/cuvil/ir"
)

// liteResidual is x -> Conv -> Relu -> (Conv -> Relu) + the first Relu ->
// Flatten -> Gemm -> Softmax: a value live across nodes, an in-place Relu
// and an alias.
func liteResidual() *ir.Model {
	b := &irbuild.B{G: &ir.Graph{Name: "res"}}
	x := b.In("x", irbuild.F32(1, 2, 6, 5))
	w1 := b.ConstF32([]int64{4, 2, 3, 3}, make([]float32, 72)...)
	w2 := b.ConstF32([]int64{4, 4, 3, 3}, make([]float32, 144)...)
	pads := irbuild.IntsAttr("pads", 1, 1, 1, 1)
	r1 := b.Op("Relu", nil, b.Op("Conv", []*ir.Attr{pads}, x, w1))
	r2 := b.Op("Relu", nil, b.Op("Conv", []*ir.Attr{pads}, r1, w2))
	f := b.Op("Flatten", nil, b.Op("Add", nil, r2, r1))
	g := b.Op("Gemm", []*ir.Attr{irbuild.IntAttr("transB", 1)}, f, b.ConstF32([]int64{3, 120}, make([]float32, 360)...))
	return irbuild.Model(b, b.Op("Softmax", nil, g))
}

// TestLitePlan: buffers whose lives overlap do not overlap in the arena,
// the arena ends at the last buffer, Relu after a dying value works in
// place, Flatten shares its input's buffer, and a graph input is never
// written over by an in-place op.
func TestLitePlan(t *testing.T) {
	p, err := planLite(liteResidual())
	if err != nil {
		t.Fatal(err)
	}
	p.place()
	var end int64
	for i, a := range p.bufs {
		if a.off+a.size > end {
			end = a.off + a.size
		}
		if a.off%4 != 0 {
			t.Errorf("buffer of %s at %d: not 16-byte aligned", a.vals[0].Name, a.off)
		}
		for _, b := range p.bufs[i+1:] {
			if a.def <= b.last && b.def <= a.last && a.off < b.off+b.size && b.off < a.off+a.size {
				t.Errorf("%s [%d,%d) and %s [%d,%d) overlap while both live", a.vals[0].Name, a.off, a.off+a.size, b.vals[0].Name, b.off, b.off+b.size)
			}
		}
	}
	if end != p.arena || p.report.ArenaBytes != 4*end {
		t.Errorf("arena %d floats (%d bytes), buffers end at %d", p.arena, p.report.ArenaBytes, end)
	}
	if p.report.LiveBytes > p.report.ArenaBytes || p.report.LiveBytes == 0 {
		t.Errorf("live peak %d bytes, arena %d", p.report.LiveBytes, p.report.ArenaBytes)
	}
	nodes := p.nodes
	sameBuf := func(i int) bool { return p.buf[nodes[i].Outputs[0]] == p.buf[nodes[i].Inputs[0]] }
	for i, n := range nodes {
		switch n.Op {
		case "Relu", "Flatten":
			if !sameBuf(i) {
				t.Errorf("%s %s has a buffer of its own", n.Op, n.Name)
			}
		case "Conv", "Add", "Gemm", "Softmax":
			if sameBuf(i) {
				t.Errorf("%s %s writes over its input", n.Op, n.Name)
			}
		}
	}
	// A Relu of the graph input gets its own buffer.
	b := &irbuild.B{G: &ir.Graph{Name: "in"}}
	x := b.In("x", irbuild.F32(4))
	p, err = planLite(irbuild.Model(b, b.Op("Relu", nil, x)))
	if err != nil {
		t.Fatal(err)
	}
	p.place()
	if p.buf[p.nodes[0].Outputs[0]] == p.buf[x] {
		t.Error("Relu writes over the graph input")
	}
}

func TestLiteGenerate(t *testing.T) {
	files, rep, err := GenerateLite(liteResidual(), LiteOptions{Package: "res"})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"model.go", "kernels.go", "weights.go", "doc.go", "model_test.go"} {
		if files[f] == nil {
			t.Errorf("no %s", f)
		}
	}
	if rep.WeightsBytes != 4*(72+144+360) {
		t.Errorf("weights %d bytes", rep.WeightsBytes)
	}
	model := string(files["model.go"])
	for _, want := range []string{"conv2d(", "unary(", "binary(", "gemm(", "softmax(", "func (m *Model) NewSession(arena []float32)"} {
		if !strings.Contains(model, want) {
			t.Errorf("model.go has no %q", want)
		}
	}
	if !strings.HasPrefix(string(files["kernels.go"]), "// Code generated") || !strings.Contains(string(files["kernels.go"]), "\npackage res\n") {
		t.Error("kernels.go: header or package clause")
	}
	if _, _, err := GenerateLite(liteResidual(), LiteOptions{Package: "res", RAMBudget: 100}); err == nil || !strings.Contains(err.Error(), "over the 100 B RAM budget") {
		t.Errorf("budget: err = %v", err)
	}
}

func TestParseSize(t *testing.T) {
	for s, want := range map[string]int64{"512KB": 512 << 10, "512kb": 512 << 10, "2MB": 2 << 20, "1.5MiB": 3 << 19, "65536": 65536, "10 K": 10 << 10, "100B": 100} {
		if got, err := ParseSize(s); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "KB", "-1KB", "12XB"} {
		if _, err := ParseSize(s); err == nil {
			t.Errorf("ParseSize(%q) took it", s)
		}
	}
}
