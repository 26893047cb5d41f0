package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/ir/onnx"
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

// writeIRModel writes the IR text src as an .onnx file in a temporary
// folder and returns its path.
func writeIRModel(t *testing.T, src string) string {
	t.Helper()
	m, err := ir.Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	b, err := onnx.Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "m.onnx")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// inspect -types on an all-fp16 model: every value's dtype after the
// precision pass, the Softmax's inserted casts, and the warning with the
// issue's wording; -keep-f32 pins a node by op; negative cases: no
// -precision (no casts, no warnings), a bad -precision, a -keep-f32 naming
// nothing.
func TestInspectTypes(t *testing.T) {
	model := writeIRModel(t, `opset ai.onnx 13
graph main(%x: f16[1024,512], %w: f16[512,512]) -> (%y) {
  %h = MatMul @mm <f16[1024,512]> %x %w
  %s = Softmax @softmax_42 <f16[1024,512]> %h {axis=-1}
  %y = Relu @relu <f16[1024,512]> %s
}
`)
	code, out, errOut := cuvil(t, "inspect", "-types", "-model", model, "-precision", "fp16")
	want := `# value types after the precision pass (-precision fp16)
%x f16[1024,512] input
%w f16[512,512] input
%h f16[1024,512] MatMul @mm
%h_f32 f32[1024,512] Cast @softmax_42_cast_in
%s_f32 f32[1024,512] Softmax @softmax_42
%s f16[1024,512] Cast @softmax_42_cast_out
%y f16[1024,512] Relu @relu
warning: node softmax_42 (Softmax): input f16 [1024,512]: exp overflows f16 above 11.1; computed in f32 (cast inserted)
# 1 node(s) computed in f32 with casts inserted; 0 weight(s) stored f16
`
	if code != 0 || out != want {
		t.Errorf("inspect -types -precision fp16: exit %d, %s\n%s\nwant\n%s", code, errOut, out, want)
	}
	code, out, errOut = cuvil(t, "inspect", "-types", "-model", model, "-precision", "fp16", "-keep-f32", "Relu")
	if code != 0 || !strings.Contains(out, "warning: node relu (Relu): input f16 [1024,512]: pinned by -keep-f32; computed in f32 (cast inserted)\n") ||
		!strings.Contains(out, "%y_f32 f32[1024,512] Relu @relu\n") || strings.Contains(out, "@relu_cast_in") {
		t.Errorf("inspect -types -keep-f32 Relu: exit %d, %s\n%s", code, errOut, out)
	}
	code, out, errOut = cuvil(t, "inspect", "-types", "-model", model)
	if code != 0 || strings.Contains(out, "warning:") || strings.Contains(out, "Cast") || !strings.Contains(out, "%s f16[1024,512] Softmax @softmax_42\n") {
		t.Errorf("inspect -types without -precision: exit %d, %s\n%s", code, errOut, out)
	}
	code, _, errOut = cuvil(t, "inspect", "-types", "-model", model, "-precision", "fp8")
	if code != 2 || !strings.Contains(errOut, `-precision "fp8": want bf16 or fp16`) {
		t.Errorf("inspect -types -precision fp8: exit %d, %s", code, errOut)
	}
	code, _, errOut = cuvil(t, "inspect", "-types", "-model", model, "-precision", "bf16", "-keep-f32", "Conv")
	if code != 1 || !strings.Contains(errOut, `precision: -keep-f32 "Conv" names no node or op of the graph`) {
		t.Errorf("inspect -types -keep-f32 Conv: exit %d, %s", code, errOut)
	}
}
