package main

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuvil/cuvil/ir/onnx"
)

const mnist = "../../testdata/mnist"

func cuvil(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{nil, 2, "usage: cuvil"},
		{[]string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{[]string{"compile", "-nope"}, 2, "flag provided but not defined"},
		{[]string{"compile", "-model", "x.onnx"}, 2, "-out is required"},
		{[]string{"compile", "-model", "x.onnx", "-out", "x", "-weights", "mmap"}, 2, `-weights "mmap": want embed or file`},
		{[]string{"compile", "-model", "x.onnx", "-out", "x", "-weights-path", "w.bin"}, 2, "-weights-path needs -weights file"},
		{[]string{"check", "-model", "does-not-exist.onnx", "-data", "."}, 1, "does-not-exist.onnx"},
		{[]string{"compile", "-model", mnist + "/model.onnx", "-out", t.TempDir(), "-pkg", "type"}, 1, "not a valid Go package name"},
		{[]string{"bench", "-model", mnist + "/model.onnx", "-dim", "seq=x"}, 2, "not a size"},
	} {
		code, _, stderr := cuvil(t, tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("cuvil %q: exit %d, stderr %q; want %d and %q", tc.args, code, stderr, tc.code, tc.want)
		}
	}
}

// copyDir copies the mnist test folder so a test can change it.
func copyMnist(t *testing.T, dst string) {
	t.Helper()
	for _, f := range []string{"model.onnx", "test_data_set_0/input_0.pb", "test_data_set_0/output_0.pb"} {
		b, err := os.ReadFile(filepath.Join(mnist, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dst, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestCheckAndRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds generated code; skipped in -short mode")
	}
	code, stdout, stderr := cuvil(t, "check", "-model", mnist+"/model.onnx", "-data", mnist, "-atol", "1e-4")
	if code != 0 || !strings.Contains(stdout, `test_data_set_0: output 0 "log_probs": ok, max abs`) {
		t.Fatalf("check: exit %d\n%s%s", code, stdout, stderr)
	}

	// A reference nudged by 0.01 must fail the check.
	dir := t.TempDir()
	copyMnist(t, dir)
	ref := filepath.Join(dir, "test_data_set_0", "output_0.pb")
	want, err := onnx.ReadTensorFile(ref)
	if err != nil {
		t.Fatal(err)
	}
	v := math.Float32frombits(binary.LittleEndian.Uint32(want.Raw[12:]))
	binary.LittleEndian.PutUint32(want.Raw[12:], math.Float32bits(v+0.01))
	if err := onnx.WriteTensorFile(ref, want); err != nil {
		t.Fatal(err)
	}
	code, stdout, _ = cuvil(t, "check", "-model", filepath.Join(dir, "model.onnx"), "-data", dir, "-atol", "1e-4")
	if code != 1 || !strings.Contains(stdout, "FAIL") || !strings.Contains(stdout, "element 3") {
		t.Errorf("check against a wrong reference: exit %d\n%s", code, stdout)
	}

	// run writes output_0.pb matching the reference.
	out := filepath.Join(dir, "out")
	if code, stdout, stderr := cuvil(t, "run", "-model", mnist+"/model.onnx", "-data", mnist+"/test_data_set_0", "-out", out); code != 0 {
		t.Fatalf("run: exit %d\n%s%s", code, stdout, stderr)
	}
	got, err := onnx.ReadTensorFile(filepath.Join(out, "output_0.pb"))
	if err != nil {
		t.Fatal(err)
	}
	orig, _ := onnx.ReadTensorFile(filepath.Join(mnist, "test_data_set_0", "output_0.pb"))
	if d, err := compare(got, orig, 1e-3, 1e-4); err != nil || d.bad > 0 {
		t.Errorf("run output differs from the reference: %v %+v", err, d)
	}
}

func TestConformanceCounts(t *testing.T) {
	if testing.Short() {
		t.Skip("builds generated code; skipped in -short mode")
	}
	top := t.TempDir()
	root := filepath.Join(top, "rel-a", "node")
	copyMnist(t, filepath.Join(root, "test_good"))
	copyMnist(t, filepath.Join(root, "test_broken"))
	if err := os.WriteFile(filepath.Join(root, "test_broken", "model.onnx"), []byte("not a model"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "test_nodata"), 0o755); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(mnist, "model.onnx"))
	os.WriteFile(filepath.Join(root, "test_nodata", "model.onnx"), b, 0o644)
	report := filepath.Join(top, "report.md")
	code, stdout, stderr := cuvil(t, "conformance", "-atol", "1e-4", "-report", report, root)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if code != 1 || lines[len(lines)-1] != "1 passed, 1 failed, 1 skipped" || !strings.Contains(stdout, "FAIL rel-a/node/test_broken: import:") {
		t.Fatalf("conformance: exit %d\n%s%s", code, stdout, stderr)
	}
	md, err := os.ReadFile(report)
	if err != nil || !strings.Contains(string(md), "| rel-a/node | test_good | pass |") || !strings.Contains(string(md), "| rel-a/node | test_broken | FAIL |") {
		t.Errorf("report:\n%s", md)
	}
	xfail := filepath.Join(top, "xfail.txt")
	os.WriteFile(xfail, []byte("# known\ntest_broken\n"), 0o644)
	if code, stdout, _ := cuvil(t, "conformance", "-atol", "1e-4", "-xfail", xfail, "-run", "broken|good", root); code != 0 {
		t.Errorf("with test_broken expected to fail: exit %d\n%s", code, stdout)
	}

	// A second release: test_good unchanged (judged from the first suite's
	// run, not built again), test_broken fixed, test_new failing. Lists
	// name one suite's test as SUITE/test.
	root2 := filepath.Join(top, "rel-b", "node")
	copyMnist(t, filepath.Join(root2, "test_good"))
	copyMnist(t, filepath.Join(root2, "test_broken"))
	copyMnist(t, filepath.Join(root2, "test_new"))
	os.WriteFile(filepath.Join(root2, "test_new", "model.onnx"), []byte("still not a model"), 0o644)
	os.WriteFile(xfail, []byte("rel-a/node/test_broken # only the first release's\n"), 0o644)
	code, stdout, stderr = cuvil(t, "conformance", "-atol", "1e-4", "-xfail", xfail, "-run", "broken|good|new", "-report", report, root, root2)
	lines = strings.Split(strings.TrimSpace(stdout), "\n")
	if code != 1 || lines[len(lines)-1] != "3 passed, 2 failed, 0 skipped" ||
		!strings.Contains(stdout, "rel-b/node: 2 passed, 1 failed, 0 skipped") ||
		!strings.Contains(stdout, "FAIL rel-b/node/test_new: import:") || !strings.Contains(stdout, "1 failures not listed") {
		t.Fatalf("two suites: exit %d\n%s%s", code, stdout, stderr)
	}
	md, _ = os.ReadFile(report)
	if !strings.Contains(string(md), "| rel-b/node | test_good | pass |") || !strings.Contains(string(md), "| same files as rel-a/node/test_good: not built again |") {
		t.Errorf("report does not show the unchanged test as judged from the first suite:\n%s", md)
	}
}

// TestSharedModels checks the reference models of ../shared/models.
func TestSharedModels(t *testing.T) {
	if testing.Short() {
		t.Skip("builds generated code; skipped in -short mode")
	}
	root := "../../../shared/models"
	if _, err := os.Stat(root); err != nil {
		t.Skipf("skipped: %s not found (the shared reference models are not on this machine)", root)
	}
	for _, m := range []string{"mnist_cnn_op13", "squeezenet1_1_op13", "mobilenet_v2_op13", "bert_dynseq_op13", "light_inception_v2", "light_densenet121"} {
		code, stdout, stderr := cuvil(t, "check", "-model", filepath.Join(root, m, "model.onnx"), "-data", filepath.Join(root, m), "-rtol", "1e-3", "-atol", "1e-4")
		if code != 0 {
			t.Errorf("%s: exit %d\n%s%s", m, code, stdout, stderr)
		}
	}
}
