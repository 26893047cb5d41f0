package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestInspectAnalyses(t *testing.T) {
	model := filepath.Join(mnist, "model.onnx")
	code, out, errOut := cuvil(t, "inspect", "-model", model, "-stats")
	if code != 0 {
		t.Fatalf("inspect -stats: exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if !strings.HasPrefix(lines[len(lines)-1], "nodes ") || !strings.Contains(out, "FusedConv 2\n") || strings.Contains(out, "cuvil::") {
		t.Errorf("inspect -stats printed\n%s", out)
	}

	code, out, errOut = cuvil(t, "inspect", "-model", model, "-memplan")
	if code != 0 || !strings.Contains(out, "arena f32 ") || !strings.Contains(out, "\ntotal ") {
		t.Errorf("inspect -memplan: exit %d\n%s%s", code, out, errOut)
	}

	dir := t.TempDir()
	svg, dot := filepath.Join(dir, "plan.svg"), filepath.Join(dir, "g.dot")
	if code, _, errOut := cuvil(t, "inspect", "-model", model, "-memplan-svg", svg, "-graph", dot); code != 0 {
		t.Fatalf("inspect -memplan-svg -graph: exit %d: %s", code, errOut)
	}
	b, err := os.ReadFile(svg)
	if err != nil || !strings.HasPrefix(string(b), "<svg") || strings.Count(string(b), "<rect") < 2 || !strings.Contains(string(b), "<title>") {
		t.Errorf("memplan svg: %v\n%.300s", err, b)
	}
	b, err = os.ReadFile(dot)
	if err != nil || !strings.HasPrefix(string(b), "digraph") || !strings.Contains(string(b), "subgraph cluster_") || !strings.Contains(string(b), "->") {
		t.Errorf("graph dot: %v\n%.300s", err, b)
	}
	// mnist's first FusedConv is boxed with the Conv and Relu it absorbed.
	if !strings.Contains(string(b), `label="fused cuvil.FusedConv (2 ops)"`) ||
		!strings.Contains(string(b), `_f0 [label="Conv\n/conv1/Conv"`) || !strings.Contains(string(b), `_f1 [label="Relu\n/Relu"`) {
		t.Errorf("graph dot does not box the absorbed ops:\n%s", b)
	}

	pic, page := filepath.Join(dir, "g.svg"), filepath.Join(dir, "g.html")
	for _, f := range []string{pic, page} {
		if code, _, errOut := cuvil(t, "inspect", "-model", model, "-graph-svg", f); code != 0 {
			t.Fatalf("inspect -graph-svg %s: exit %d: %s", f, code, errOut)
		}
	}
	if b, err := os.ReadFile(pic); err != nil || !strings.HasPrefix(string(b), "<svg") || !strings.Contains(string(b), "FusedConv +Relu") {
		t.Errorf("graph svg: %v\n%.300s", err, b)
	}
	if b, err := os.ReadFile(page); err != nil || !strings.HasPrefix(string(b), "<!DOCTYPE html>") || !strings.Contains(string(b), "<svg") || !strings.Contains(string(b), "<script>") {
		t.Errorf("graph html: %v\n%.300s", err, b)
	}

	code, out, _ = cuvil(t, "inspect", "-model", model, "-d=fuse-conv/dump")
	if code != 0 || strings.Count(out, "# after pass ") != 1 || !strings.Contains(out, "# after pass fuse-conv") {
		t.Errorf("inspect -d=fuse-conv/dump printed %d dumps", strings.Count(out, "# after pass "))
	}
}

// inspect -allow-list prints the model's imported ops as a list that
// compile -allow-ops takes back.
func TestInspectAllowList(t *testing.T) {
	model := "../../testdata/digits/model.onnx"
	code, out, errOut := cuvil(t, "inspect", "-model", model, "-allow-list")
	want := "ai.onnx:Conv:11\nai.onnx:Flatten:13\nai.onnx:Gemm:13\nai.onnx:LogSoftmax:13\nai.onnx:MaxPool:12\nai.onnx:Relu:13\n"
	if code != 0 || !strings.HasPrefix(out, "# ops of ") || !strings.HasSuffix(out, want) {
		t.Fatalf("inspect -allow-list: exit %d\n%s%s", code, out, errOut)
	}
	dir := t.TempDir()
	list := filepath.Join(dir, "ops.txt")
	if err := os.WriteFile(list, []byte(strings.Replace(out, "ai.onnx:Relu:13\n", "", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = cuvil(t, "compile", "-sandbox", "-allow-ops", list, "-model", model, "-pkg", "d", "-out", filepath.Join(dir, "d"))
	if code != 1 || !strings.Contains(errOut, "(Relu) in the main graph: op ai.onnx:Relu:13 is not allowed by "+list) {
		t.Errorf("compile with the list less Relu: exit %d, %s", code, errOut)
	}
	code, _, errOut = cuvil(t, "compile", "-allow-ops", "Conv:x:y:z", "-model", model, "-pkg", "d", "-out", filepath.Join(dir, "d"))
	if code != 2 || !strings.Contains(errOut, "-allow-ops: the -allow-ops list:1:") {
		t.Errorf("compile with a bad list: exit %d, %s", code, errOut)
	}
}
