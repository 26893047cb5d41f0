package cuvil

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuvil/cuvil/ir/onnx"
)

// TestWeightsModes compiles real models with their weights embedded (the
// default) and in a file (beside the package, and at -weights-path
// elsewhere), builds them in one module and runs their generated tests:
// TestWeightsInPlace (every run leaves the weights, read-only views of the
// blob, as they were: a kernel writing its weights would fault),
// TestWeightsFile (NewFromFile, NewFromReader, truncated and corrupted
// files) and TestRun. Bad option combinations are refused.
func TestWeightsModes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds generated packages")
	}
	dir := t.TempDir()
	root := filepath.Join(dir, "mod")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module example.com/app\n\ngo 1.24\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := onnx.Encode(mapsModel()) // string and int64 constants
	if err != nil {
		t.Fatal(err)
	}
	maps := filepath.Join(dir, "maps.onnx")
	if err := os.WriteFile(maps, b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []Options{
		{Model: "testdata/mnist/model.onnx", Out: "mnist"},
		{Model: "testdata/digits/model.onnx", Out: "digits"},
		{Model: "testdata/sklearn/model.onnx", Out: "sklearn"},
		{Model: maps, Out: "maps"},
		{Model: "testdata/mnist/model.onnx", Out: "mnistfile", Weights: "file"},
		{Model: "testdata/digits/model.onnx", Out: "digitsfile", Weights: "file", WeightsPath: filepath.Join(root, "assets", "digits.bin")},
	} {
		c.Out = filepath.Join(root, c.Out)
		if err := Compile(c); err != nil {
			t.Fatalf("%s: %v", c.Out, err)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "digitsfile", "weights.bin")); err == nil {
		t.Errorf("-weights-path: weights.bin also written beside the package")
	}
	for _, bad := range []struct {
		opts Options
		want string
	}{
		{Options{Weights: "mmap"}, `weights mode "mmap"`},
		{Options{WeightsPath: "w.bin"}, "needs the file weights mode"},
		{Options{Weights: "file", CShared: true}, "-cshared"},
	} {
		bad.opts.Model, bad.opts.Out = "testdata/mnist/model.onnx", filepath.Join(dir, "bad")
		if err := Compile(bad.opts); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%+v: %v, want an error saying %q", bad.opts, err, bad.want)
		}
	}
	cmd := exec.Command("go", "test", "-count=1", "-v", "-run", "^(TestWeights.*|TestRun)$", "./...")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-buildvcs=false")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go test: %v\n%s", err, out)
	}
	if got, want := strings.Count(string(out), "--- PASS: TestWeightsInPlace "), 6; got != want {
		t.Errorf("TestWeightsInPlace passed in %d packages, want %d:\n%s", got, want, out)
	}
	if got, want := strings.Count(string(out), "--- PASS: TestWeightsFile "), 2; got != want {
		t.Errorf("TestWeightsFile passed in %d packages, want %d:\n%s", got, want, out)
	}
}
