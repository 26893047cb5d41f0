package irtest

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cuvil/cuvil/ir"
)

// dropIdentity is a small pass for the tests: it removes Identity nodes,
// rewiring their readers, and refuses when one defines a graph output.
func dropIdentity(m *ir.Model) error {
	g := m.Graph
	repl := map[*ir.Value]*ir.Value{}
	var keep []*ir.Node
	for _, n := range g.Nodes {
		for i, x := range n.Inputs {
			if r, ok := repl[x]; ok {
				n.Inputs[i] = r
			}
		}
		if n.Op != "Identity" {
			keep = append(keep, n)
			continue
		}
		if slices.Contains(g.Outputs, n.Outputs[0]) {
			return fmt.Errorf("%s: output %s is a graph output", n, n.Outputs[0])
		}
		repl[n.Outputs[0]] = n.Inputs[0]
	}
	g.Nodes = keep
	return nil
}

func TestGolden(t *testing.T) {
	Golden(t, "testdata/identity/*.txtar", dropIdentity)
}

func writeCase(t *testing.T, text string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "case.txtar")
	if err := os.WriteFile(file, []byte(text), 0o666); err != nil {
		t.Fatal(err)
	}
	return file
}

const input = `-- input --
opset ai.onnx 17
graph main(%x: f32[2]) -> (%z) {
  %y = Identity <f32[2]> %x
  %z = Relu <f32[2]> %y
}
`

func TestCheckReportsDifferences(t *testing.T) {
	for _, c := range []struct{ name, text, want string }{
		{"output differs", input + "-- want --\nopset ai.onnx 17\n", "output differs"},
		{"unexpected error", input + "-- want --\n", ""},
		{"error expected", input + "-- error --\nboom\n", "got no error, want:\nboom"},
		{"no input", "-- want --\n", "no -- input -- section"},
		{"both sections", input + "-- want --\n-- error --\n", "want exactly one of"},
		{"bad input", "-- input --\ngraph\n-- want --\n", "input: 1:6: want a name, have end of line"},
	} {
		file := writeCase(t, c.text)
		f := dropIdentity
		if c.name == "unexpected error" {
			f = func(*ir.Model) error { return fmt.Errorf("pass failed") }
			c.want = "unexpected error: pass failed"
		}
		err := check(file, f, false)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: check = %v, want an error containing %q", c.name, err, c.want)
		}
	}
}

func TestCheckReportsVerifyFailures(t *testing.T) {
	// A pass that leaves a dangling use fails verification after the run.
	file := writeCase(t, input+"-- want --\n")
	breakIt := func(m *ir.Model) error {
		m.Graph.Nodes = m.Graph.Nodes[1:]
		return nil
	}
	err := check(file, breakIt, false)
	want := `unexpected error: verify: node "z" (Relu): input 0 %y is not defined before use`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("check = %v, want %q", err, want)
	}
}

func TestUpdateRewrites(t *testing.T) {
	file := writeCase(t, "comment kept\n"+input+"-- error --\nstale\n")
	if err := check(file, dropIdentity, true); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(file)
	want := "comment kept\n" + input + `-- want --
opset ai.onnx 17
graph main(%x: f32[2]) -> (%z) {
  %z = Relu <f32[2]> %x
}
`
	if string(b) != want {
		t.Errorf("updated file:\n%s\nwant:\n%s", b, want)
	}
	if err := check(file, dropIdentity, false); err != nil {
		t.Errorf("updated file does not pass: %v", err)
	}
}
