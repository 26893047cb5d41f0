package onnx

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/cuvil/cuvil/ir"
)

const sharedDir = "/work/shared"

// corpusModels lists the model.onnx files of the shared ONNX backend tests
// and reference models, or skips when they are not on this machine.
func corpusModels(t *testing.T) []string {
	t.Helper()
	var paths []string
	for _, pat := range []string{"onnx-tests/*/*/model.onnx", "models/*/model.onnx"} {
		m, _ := filepath.Glob(filepath.Join(sharedDir, pat))
		paths = append(paths, m...)
	}
	if len(paths) == 0 {
		t.Skipf("no models under %s: the shared ONNX test corpus is not on this machine", sharedDir)
	}
	sort.Strings(paths)
	return paths
}

// TestCorpus imports every shared model with the real op table. Models
// whose ops the table does not know are counted, not failed: that is the
// op table's coverage, not an importer bug. Every other error fails. Each
// imported model must also survive Encode and re-Decode unchanged, and its
// test data must read with the kinds the model declares.
func TestCorpus(t *testing.T) {
	paths := corpusModels(t)
	ok := 0
	unknown := map[string][]string{} // op -> tests
	for _, p := range paths {
		rel, _ := filepath.Rel(sharedDir, filepath.Dir(p))
		m, err := Load(p)
		var uerr *UnknownOpError
		if errors.As(err, &uerr) {
			key := uerr.Op
			if uerr.Domain != "" {
				key = uerr.Domain + "." + uerr.Op
			}
			unknown[key] = append(unknown[key], rel)
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			continue
		}
		ok++
		if m.SourceHash == "" || m.Path != p {
			t.Errorf("%s: SourceHash %q, Path %q", rel, m.SourceHash, m.Path)
		}
		if fi, _ := os.Stat(p); fi != nil && fi.Size() < 4<<20 {
			checkRoundTrip(t, rel, m)
		}
		checkTestData(t, rel, filepath.Dir(p), m)
	}
	var ops []string
	for op, tests := range unknown {
		ops = append(ops, op+" ("+strings.Join(tests, ", ")+")")
	}
	sort.Strings(ops)
	skipped := 0
	for _, tests := range unknown {
		skipped += len(tests)
	}
	t.Logf("imported %d of %d models; %d use ops the op table does not know:\n  %s",
		ok, len(paths), skipped, strings.Join(ops, "\n  "))
}

func checkRoundTrip(t *testing.T, rel string, m *ir.Model) {
	t.Helper()
	b, err := Encode(m)
	if err != nil {
		t.Errorf("%s: Encode: %v", rel, err)
		return
	}
	m2, err := Decode(b, "")
	if err != nil {
		t.Errorf("%s: Decode(Encode(m)): %v", rel, err)
		return
	}
	if a, b := dump(m), dump(m2); a != b {
		t.Errorf("%s: round trip differs:\n%s", rel, firstDiff(a, b))
	}
	// The IR's own text form must agree too.
	var p1, p2 strings.Builder
	if err := ir.Print(&p1, m); err != nil {
		t.Errorf("%s: ir.Print: %v", rel, err)
	} else if err := ir.Print(&p2, m2); err != nil || p1.String() != p2.String() {
		t.Errorf("%s: ir.Print differs after round trip (%v):\n%s", rel, err, firstDiff(p1.String(), p2.String()))
	}
}

func checkTestData(t *testing.T, rel, dir string, m *ir.Model) {
	t.Helper()
	sets, _ := filepath.Glob(filepath.Join(dir, "test_data_set_*"))
	for _, set := range sets {
		for _, io := range []struct {
			prefix string
			vals   []*ir.Value
		}{{"input", m.Graph.Inputs}, {"output", m.Graph.Outputs}} {
			files, _ := filepath.Glob(filepath.Join(set, io.prefix+"_*.pb"))
			for _, f := range files {
				var k int
				if _, err := fmt.Sscanf(filepath.Base(f), io.prefix+"_%d.pb", &k); err != nil || k >= len(io.vals) {
					t.Errorf("%s: %s does not match a model %s", rel, filepath.Base(f), io.prefix)
					continue
				}
				want := io.vals[k].Type
				d, err := ReadDataFile(f, want.Kind)
				if err != nil {
					t.Errorf("%s: %v", rel, err)
					continue
				}
				// ONNX 1.12 stores bf16 test data as u16 bits (numpy has no
				// bf16); anything else must match the declaration.
				bf16AsU16 := want.DType == ir.BF16 && d.Tensor.DType == ir.U16
				if want.Kind == ir.TensorKind && want.DType != ir.Undefined && d.Tensor.DType != want.DType && !bf16AsU16 {
					t.Errorf("%s: %s has dtype %s, the model declares %s", rel, f, d.Tensor.DType, want.DType)
				}
			}
		}
	}
}

// TestReferenceModels checks details of a few reference models: old-style
// initializer inputs are dropped, symbolic dims keep their names, and
// captures in real Loop/If bodies resolve.
func TestReferenceModels(t *testing.T) {
	load := func(rel string) *ir.Model {
		p := filepath.Join(sharedDir, rel, "model.onnx")
		if _, err := os.Stat(p); err != nil {
			t.Skipf("%s is not on this machine", p)
		}
		m, err := Load(p)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	inc := load("models/light_inception_v2")
	if len(inc.Graph.Inputs) != 1 || len(inc.Graph.Consts) == 0 {
		t.Errorf("light_inception_v2: %d inputs, %d consts; want 1 run-time input, initializers as consts", len(inc.Graph.Inputs), len(inc.Graph.Consts))
	}
	bert := load("models/bert_dynseq_op13")
	if in := bert.Graph.Inputs[0]; in.Type.String() != "i64[1,seq]" {
		t.Errorf("bert input %s: %s, want i64[1,seq]", in.Name, in.Type)
	}
	loop := load("onnx-tests/node/test_loop11")
	var body *ir.Graph
	for _, n := range loop.Graph.Nodes {
		if n.Op == "Loop" {
			body = n.Attr("body").G
		}
	}
	if body == nil || body.Parent != loop.Graph {
		t.Fatal("test_loop11: no Loop body linked to the main graph")
	}
	for _, v := range body.Captures() {
		found := false
		for _, w := range append(append([]*ir.Value{}, loop.Graph.Inputs...), loop.Graph.Consts...) {
			found = found || v == w
		}
		for _, n := range loop.Graph.Nodes {
			for _, w := range n.Outputs {
				found = found || v == w
			}
		}
		if !found {
			t.Errorf("test_loop11: body captures %s, which is not a value of the main graph", v)
		}
	}
}
