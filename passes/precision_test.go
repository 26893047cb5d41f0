package passes

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/ir/irtest"
	"golang.org/x/tools/txtar"
)

// TestPrecisionGolden runs the precision pass on testdata/precision: each
// file's config section gives the mode ("mode fp16") and the -keep-f32
// entries ("keep a,b"), its warnings section the breaks the pass reports,
// one per line, in order.
func TestPrecisionGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/precision/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, file := range files {
		ar, err := txtar.ParseFile(file)
		if err != nil {
			t.Fatal(err)
		}
		cfg := &PrecisionConfig{}
		var want string
		haveWarnings := false
		for _, f := range ar.Files {
			switch f.Name {
			case "config":
				for _, line := range strings.Split(string(f.Data), "\n") {
					k, v, _ := strings.Cut(strings.TrimSpace(line), " ")
					switch k {
					case "mode":
						cfg.Mode = v
					case "keep":
						cfg.KeepF32 = strings.Split(v, ",")
					case "":
					default:
						t.Fatalf("%s: config line %q", file, line)
					}
				}
			case "warnings":
				want, haveWarnings = string(f.Data), true
			}
		}
		if !haveWarnings {
			t.Fatalf("%s: no warnings section", file)
		}
		irtest.Golden(t, file, func(m *ir.Model) error {
			cfg.Breaks = nil
			if err := PrecisionModel(m, cfg); err != nil {
				return err
			}
			return DCE.Run(m)
		})
		var got strings.Builder
		for _, b := range cfg.Breaks {
			got.WriteString(b.String() + "\n")
		}
		if got.String() != want {
			t.Errorf("%s: warnings\n%s\nwant\n%s", file, got.String(), want)
		}
	}
}

// TestPrecisionOff: without a config the pipeline's precision pass leaves
// an f16 Softmax alone (the conformance suites' f16 tests run as before).
func TestPrecisionOff(t *testing.T) {
	m, err := ir.Parse(`opset ai.onnx 13
graph main(%x: f16[2,8]) -> (%y) {
  %y = Softmax @sm <f16[2,8]> %x {axis=-1}
}
`)
	if err != nil {
		t.Fatal(err)
	}
	if err := Precision.WithOptions(m, Options{}); err != nil {
		t.Fatal(err)
	}
	if len(m.Graph.Nodes) != 1 {
		t.Errorf("precision without options changed the graph: %d nodes", len(m.Graph.Nodes))
	}
	if _, err := ParsePrecision("fp8"); err == nil || !strings.Contains(err.Error(), `-precision "fp8": want bf16 or fp16`) {
		t.Errorf("ParsePrecision(fp8): %v", err)
	}
}
