package passes_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/ir/onnx"
	"github.com/cuvil/cuvil/passes"
)

func TestStats(t *testing.T) {
	m, err := ir.Parse(`opset ai.onnx 13
opset cuvil 1
graph main(%x: f32[1,2,3,3]) -> (%z) {
  %w = const f32[2,2,1,1] {1, 2, 3, 4}
  %y = cuvil.FusedConv <f32[1,2,3,3]> %x %w {activation="Relu"}
  %r = Relu <f32[1,2,3,3]> %y
  %z = Relu <f32[1,2,3,3]> %r
}
`)
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(passes.Stats(m))
	if want := "[{Relu 2} {cuvil::FusedConv 1}]"; got != want {
		t.Errorf("Stats = %s, want %s", got, want)
	}
	if n := passes.NodeCount(m); n != 3 {
		t.Errorf("NodeCount = %d, want 3", n)
	}
}

// resnet50Path is where tools/export/model.sh puts the headline model.
const resnet50Path = "/root/.cache/cuvil-models/resnet50_op13/model.onnx"

// TestStatsModels logs, for every reference model, the node count and op
// counts before and after the pipeline (the table in docs/passes.md):
// go test ./passes -run StatsModels -v.
func TestStatsModels(t *testing.T) {
	if testing.Short() {
		t.Skip("loads every reference model")
	}
	paths := map[string]string{}
	for _, name := range modelNames(t) {
		paths[name] = modelsDir + "/" + name + "/model.onnx"
	}
	if _, err := os.Stat(resnet50Path); err == nil {
		paths["resnet50_op13"] = resnet50Path
	}
	var b strings.Builder
	for _, name := range sortedKeys(paths) {
		m, err := onnx.Load(paths[name])
		if err != nil {
			t.Fatal(err)
		}
		before := passes.NodeCount(m)
		beforeStats := passes.Stats(m)
		if err := passes.Run(m, passes.Options{Verify: true}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %s | %s |\n", name, before, passes.NodeCount(m), statsString(beforeStats), statsString(passes.Stats(m)))
	}
	t.Logf("\n| model | nodes before | nodes after | ops before | ops after |\n|---|---|---|---|---|\n%s", b.String())
}

func statsString(s []passes.OpCount) string {
	parts := make([]string, len(s))
	for i, c := range s {
		parts[i] = fmt.Sprintf("%s %d", c.Op, c.Count)
	}
	return strings.Join(parts, ", ")
}

func sortedKeys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}
