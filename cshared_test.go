package cuvil

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuvil/cuvil/ir/onnx"
)

// mnistModel is the shared mnist model, or the repo's copy without ../shared.
func mnistModel(t *testing.T) (model, data string) {
	for _, dir := range []string{"../shared/models/mnist_cnn_op13", "testdata/mnist"} {
		if _, err := os.Stat(filepath.Join(dir, "model.onnx")); err == nil {
			abs, _ := filepath.Abs(dir)
			return filepath.Join(abs, "model.onnx"), filepath.Join(abs, "test_data_set_0")
		}
	}
	t.Fatal("no mnist model: neither ../shared/models/mnist_cnn_op13 nor testdata/mnist")
	return "", ""
}

// pythonWithNumpy returns a python3 that imports numpy, or skips.
func pythonWithNumpy(t *testing.T) string {
	for _, py := range []string{"python3", "/usr/bin/python3"} {
		path, err := exec.LookPath(py)
		if err != nil {
			continue
		}
		if exec.Command(path, "-c", "import numpy").Run() == nil {
			return path
		}
	}
	t.Skip("skipping: no python3 with numpy (Debian: apt-get install python3 python3-numpy)")
	return ""
}

func writeRaw(t *testing.T, pb, out string) {
	t.Helper()
	tn, err := onnx.ReadTensorFile(pb)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, tn.Raw, 0o644); err != nil {
		t.Fatal(err)
	}
}

const pyCheck = `
import sys, threading
import numpy as np
sys.path.insert(0, sys.argv[1])
import mnist
lib, xin, xout = sys.argv[2:5]
x = np.fromfile(xin, dtype=np.float32).reshape(1, 1, 28, 28)
ref = np.fromfile(xout, dtype=np.float32).reshape(1, 10)
errors = []

def check(out, who):
    if out.shape != ref.shape or not np.allclose(out, ref, rtol=1e-4, atol=1e-5):
        errors.append("%s: got %s, want %s" % (who, out, ref))

def worker(k, shared):
    try:
        m = shared or mnist.Model(lib)
        for i in range(25):
            check(m.run(x)[0], "thread %d run %d" % (k, i))
            check(m.run({"input": x * 1.0})["log_probs"], "thread %d named run %d" % (k, i))
        if not shared:
            m.close()
    except Exception as e:
        errors.append("thread %d: %r" % (k, e))

for shared in (None, mnist.Model(lib)):
    threads = [threading.Thread(target=worker, args=(k, shared)) for k in range(4)]
    for th in threads: th.start()
    for th in threads: th.join()

with mnist.Model(lib) as m:
    try:
        m.run(np.zeros((1, 1, 28, 27), np.float32))
        errors.append("wrong shape: no error")
    except mnist.Error as e:
        if "dim 3 is 27, want 28" not in str(e):
            errors.append("wrong shape: error %r" % e)
try:
    m.run(x)
    errors.append("closed model ran")
except mnist.Error as e:
    pass
if errors:
    print("\n".join(errors[:10]))
    sys.exit(1)
print("ok")
`

// TestCSharedPython compiles mnist with -cshared, builds the shared
// library and runs it from Python on four threads at once.
func TestCSharedPython(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping: builds a c-shared library (-short)")
	}
	py := pythonWithNumpy(t)
	cc := strings.TrimSpace(goEnv(t, "CC"))
	if cc == "" {
		cc = "gcc"
	}
	if _, err := exec.LookPath(strings.Fields(cc)[0]); err != nil {
		t.Skipf("skipping: no C compiler (%s) for cgo", cc)
	}
	model, data := mnistModel(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/app\n\ngo 1.24\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "mnist")
	if err := Compile(Options{Model: model, Out: out, CShared: true}); err != nil {
		t.Fatal(err)
	}
	lib := filepath.Join(out, "capi", "libmnist.so")
	build := exec.Command("go", "build", "-buildmode=c-shared", "-o", lib, ".")
	build.Dir = filepath.Join(out, "capi")
	build.Env = append(os.Environ(), "CGO_ENABLED=1", "GOFLAGS=-mod=mod")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build -buildmode=c-shared: %v\n%s", err, b)
	}
	if _, err := os.Stat(filepath.Join(out, "capi", "libmnist.h")); err != nil {
		t.Errorf("no C header next to the library: %v", err)
	}
	writeRaw(t, filepath.Join(data, "input_0.pb"), filepath.Join(dir, "in.f32"))
	writeRaw(t, filepath.Join(data, "output_0.pb"), filepath.Join(dir, "out.f32"))
	script := filepath.Join(dir, "check.py")
	if err := os.WriteFile(script, []byte(pyCheck), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, script, filepath.Join(out, "python"), lib, filepath.Join(dir, "in.f32"), filepath.Join(dir, "out.f32"))
	b, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(b), "ok") {
		t.Fatalf("python: %v\n%s", err, b)
	}

	// Compiling again changes nothing, and keeps the built library.
	st, _ := os.Stat(filepath.Join(out, "model.go"))
	if err := Compile(Options{Model: model, Out: out, CShared: true}); err != nil {
		t.Fatal(err)
	}
	st2, err := os.Stat(filepath.Join(out, "model.go"))
	if err != nil || !st2.ModTime().Equal(st.ModTime()) {
		t.Errorf("recompiling touched model.go (%v)", err)
	}
	if _, err := os.Stat(lib); err != nil {
		t.Errorf("recompiling removed the built library: %v", err)
	}
}

func goEnv(t *testing.T, key string) string {
	b, err := exec.Command("go", "env", key).Output()
	if err != nil {
		t.Fatalf("go env %s: %v", key, err)
	}
	return string(b)
}
