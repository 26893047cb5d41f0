package passes

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cuvil/cuvil/ir"
)

// The pipeline's cost as graphs grow (issue: every pass near-linear in
// nodes and nesting depth). Compare ns/op across sizes: ten times the
// nodes should cost about ten times the time. docs/hardening.md keeps the
// figures.

func chainText(n int) string {
	var b strings.Builder
	b.WriteString("opset ai.onnx 17\ngraph main(%v0: f32[4,8]) -> (%v" + fmt.Sprint(n) + ") {\n  %k = const f32[8] {1, 2, 3, 4, 5, 6, 7, 8}\n")
	ops := []string{"Relu", "Neg", "Sigmoid", "Add"}
	for i := 1; i <= n; i++ {
		op := ops[i%len(ops)]
		if op == "Add" {
			fmt.Fprintf(&b, "  %%v%d = Add <?[?]> %%v%d %%k\n", i, i-1)
		} else {
			fmt.Fprintf(&b, "  %%v%d = %s <?[?]> %%v%d\n", i, op, i-1)
		}
	}
	b.WriteString("}\n")
	return b.String()
}

func wideText(n int) string {
	var b strings.Builder
	outs := make([]string, n)
	for i := range outs {
		outs[i] = fmt.Sprintf("%%w%d", i)
	}
	b.WriteString("opset ai.onnx 17\ngraph main(%x: f32[4,8]) -> (" + strings.Join(outs, ", ") + ") {\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "  %%a%d = Neg <?[?]> %%x\n  %%w%d = Relu <?[?]> %%a%d\n", i, i, i)
	}
	b.WriteString("}\n")
	return b.String()
}

func ifNestText(depth int) string {
	body := "graph leaf() -> (%x) {\n}"
	for d := 0; d < depth; d++ {
		body = fmt.Sprintf("graph g%d() -> (%%o%d) {\n  %%o%d = If <?[?]> %%c {then_branch=%s else_branch=graph e%d() -> (%%x) {\n}}\n}", d, d, d, body, d)
	}
	// The outermost graph is the main graph: give it the inputs.
	body = strings.Replace(body, fmt.Sprintf("graph g%d()", depth-1), fmt.Sprintf("graph g%d(%%c: bool[], %%x: f32[3])", depth-1), 1)
	return "opset ai.onnx 17\n" + body + "\n"
}

func benchPipeline(b *testing.B, src string) {
	b.Helper()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		m, err := ir.Parse(src)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if err := Run(m, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPipelineChain(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		src := chainText(n)
		b.Run(fmt.Sprint(n), func(b *testing.B) { benchPipeline(b, src) })
	}
}

func BenchmarkPipelineWide(b *testing.B) {
	for _, n := range []int{1000, 10000, 50000} {
		src := wideText(n)
		b.Run(fmt.Sprint(n), func(b *testing.B) { benchPipeline(b, src) })
	}
}

func BenchmarkPipelineIfNest(b *testing.B) {
	for _, d := range []int{100, 1000, 3000} {
		src := ifNestText(d)
		b.Run(fmt.Sprint(d), func(b *testing.B) { benchPipeline(b, src) })
	}
}

// The benchmark graphs must be valid and go through the pipeline.
func TestPipelineBenchGraphs(t *testing.T) {
	for _, src := range []string{chainText(40), wideText(30), ifNestText(20)} {
		m, err := ir.Parse(src)
		if err != nil {
			t.Fatalf("%v\n%s", err, src[:min(len(src), 400)])
		}
		if err := Run(m, Options{Verify: true}); err != nil {
			t.Fatal(err)
		}
	}
}
