package cuvil

import (
	"go/parser"
	"go/token"
	"strings"
	"testing"

	"github.com/cuvil/cuvil/gen"
	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/ir/onnx"
	"github.com/cuvil/cuvil/passes"
)

// fuzzSeeds are small valid models covering the pipeline's paths:
// element-wise chains, convolutions (fusion, layout), GEMM, control flow,
// shape arithmetic and constants.
var fuzzSeeds = []string{
	"opset ai.onnx 17\ngraph main(%x: f32[2,3]) -> (%y) {\n  %w = const f32[3] {1, 2, 3}\n  %a = Add @add <?[?]> %x %w\n  %y = Relu @relu <?[?]> %a\n}",
	"opset ai.onnx 17\ngraph main(%x: f32[1,2,5,5]) -> (%y) {\n  %w = const f32[4,2,3,3] {1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9}\n  %c = Conv @conv <?[?]> %x %w {pads=[1,1,1,1]}\n  %r = Relu @relu <?[?]> %c\n  %y = MaxPool @pool <?[?]> %r {kernel_shape=[2,2] strides=[2,2]}\n}",
	"opset ai.onnx 17\ngraph main(%x: f32[N,4]) -> (%y) {\n  %w = const f32[4,2] {1, 2, 3, 4, 5, 6, 7, 8}\n  %b = const f32[2] {1, -1}\n  %m = Gemm @gemm <?[?]> %x %w %b\n  %y = Softmax @sm <?[?]> %m {axis=1}\n}",
	"opset ai.onnx 17\ngraph main(%c: bool[], %x: f32[3]) -> (%y) {\n  %y = If @if <?[?]> %c {then_branch=graph t() -> (%a) {\n    %a = Neg @neg <?[?]> %x\n  } else_branch=graph e() -> (%x) {\n  }}\n}",
	"opset ai.onnx 17\ngraph main(%x: f32[2,S]) -> (%y) {\n  %s = Shape @shape <?[?]> %x\n  %i = const i64[] {1}\n  %d = Gather @g <?[?]> %s %i\n  %u = const i64[1] {0}\n  %d1 = Unsqueeze @u <?[?]> %d %u\n  %two = const i64[1] {-1}\n  %ns = Concat @cat <?[?]> %two %d1 {axis=0}\n  %y = Reshape @r <?[?]> %x %ns\n}",
}

// FuzzCompile runs arbitrary bytes through the importer (the real op
// table), the pass pipeline and gen: each stage may refuse, but never
// panic (a panic the pipeline recovers is a failure too), and every Go file
// gen writes must parse.
func FuzzCompile(f *testing.F) {
	for _, src := range fuzzSeeds {
		m, err := ir.Parse(src)
		if err != nil {
			f.Fatalf("seed: %v\n%s", err, src)
		}
		b, err := onnx.Encode(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := onnx.DecodeWith(data, "", onnx.LoadOptions{MaxData: 16 << 20, MaxNodes: 4096, MaxDepth: 16})
		if err != nil {
			return
		}
		if err := runPasses(m, passes.Options{}); err != nil {
			if hasAny(err.Error(), panicWords) {
				t.Fatalf("pipeline: %v", err)
			}
			return
		}
		files, err := gen.Generate(m, gen.Options{Package: "p", NoTest: true, MaxArena: 64 << 20, MaxWeights: 16 << 20})
		if err != nil {
			return
		}
		for name, src := range files {
			if strings.HasSuffix(name, ".go") {
				if _, err := parser.ParseFile(token.NewFileSet(), name, src, 0); err != nil {
					t.Fatalf("generated %s does not parse: %v", name, err)
				}
			}
		}
	})
}
