package cuvil

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuvil/cuvil/ir"
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
	model, data := mnistModel(t)
	dir := t.TempDir()
	out, lib := buildCShared(t, model, dir, "mnist")
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

// buildCShared compiles model with -cshared into dir/pkg, a package of a
// new module in dir, and builds its shared library. It returns the package
// folder and the library, or skips when there is no C compiler for cgo.
func buildCShared(t testing.TB, model, dir, pkg string) (out, lib string) {
	t.Helper()
	cc := strings.TrimSpace(goEnv(t, "CC"))
	if cc == "" {
		cc = "gcc"
	}
	if _, err := exec.LookPath(strings.Fields(cc)[0]); err != nil {
		t.Skipf("skipping: no C compiler (%s) for cgo", cc)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/app\n\ngo 1.24\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out = filepath.Join(dir, pkg)
	if err := Compile(Options{Model: model, Out: out, CShared: true}); err != nil {
		t.Fatal(err)
	}
	lib = filepath.Join(out, "capi", "lib"+pkg+".so")
	build := exec.Command("go", "build", "-buildmode=c-shared", "-o", lib, ".")
	build.Dir = filepath.Join(out, "capi")
	build.Env = append(os.Environ(), "CGO_ENABLED=1", "GOFLAGS=-mod=mod")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build -buildmode=c-shared: %v\n%s", err, b)
	}
	return out, lib
}

func goEnv(t testing.TB, key string) string {
	b, err := exec.Command("go", "env", key).Output()
	if err != nil {
		t.Fatalf("go env %s: %v", key, err)
	}
	return string(b)
}

// symModel is z = Relu(x) + y for x and y of shape [N, 3], N symbolic.
func symModel(t testing.TB, path string) {
	t.Helper()
	f32 := ir.TensorType(ir.F32, ir.Shape{ir.S("N"), ir.D(3)})
	x := &ir.Value{Name: "x", Type: f32}
	y := &ir.Value{Name: "y", Type: f32}
	r := &ir.Value{Name: "r", Type: f32}
	z := &ir.Value{Name: "z", Type: f32}
	relu := &ir.Node{Name: "relu", Op: "Relu", Version: 14, Inputs: []*ir.Value{x}, Outputs: []*ir.Value{r}}
	add := &ir.Node{Name: "add", Op: "Add", Version: 14, Inputs: []*ir.Value{r, y}, Outputs: []*ir.Value{z}}
	r.Def, z.Def = relu, add
	m := &ir.Model{
		Graph:     &ir.Graph{Name: "sym", Inputs: []*ir.Value{x, y}, Outputs: []*ir.Value{z}, Nodes: []*ir.Node{relu, add}},
		Opsets:    map[string]int64{"": 14},
		IRVersion: 8,
	}
	b, err := onnx.Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// pySym calls the C API of symModel through ctypes, then through the
// generated wrapper.
const pySym = `
import ctypes, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import dyn
lib = ctypes.CDLL(sys.argv[2])
errors = []
P, I64P = ctypes.c_void_p, ctypes.POINTER(ctypes.c_int64)
lib.dyn_create.restype = ctypes.c_size_t
lib.dyn_last_error.argtypes = [ctypes.c_size_t]
lib.dyn_last_error.restype = ctypes.c_char_p
lib.dyn_set_dims.argtypes = [ctypes.c_size_t, I64P]
lib.dyn_run.argtypes = [ctypes.c_size_t, P, P, P]
lib.dyn_sym_name.restype = ctypes.c_char_p
lib.dyn_input_shape.argtypes = [ctypes.c_int, I64P]
lib.dyn_result_copy.argtypes = [ctypes.c_size_t, ctypes.c_int, P, ctypes.c_int64]
lib.dyn_eval.argtypes = [ctypes.c_size_t, P, P]

def expect(what, status, want_status, want_err=""):
    msg = lib.dyn_last_error(ctx).decode()
    if status != want_status or want_err not in msg:
        errors.append("%s: status %d (%r), want %d and %r" % (what, status, msg, want_status, want_err))

def ptr(a):
    return a.ctypes.data_as(P)

if lib.dyn_sym_count() != 1 or lib.dyn_sym_name(0) != b"N":
    errors.append("syms: %d %r, want 1 N" % (lib.dyn_sym_count(), lib.dyn_sym_name(0)))
dims = (ctypes.c_int64 * 2)()
lib.dyn_input_shape(0, dims)
if list(dims) != [-1, 3]:
    errors.append("input 0 shape %s, want [-1, 3]" % list(dims))

ctx = lib.dyn_create()
rng = np.random.default_rng(1)
x = rng.standard_normal((4, 3)).astype(np.float32)
y = rng.standard_normal((4, 3)).astype(np.float32)
z = np.zeros((4, 3), np.float32)
expect("run with N unset", lib.dyn_run(ctx, ptr(x), ptr(y), ptr(z)), 2, "whose size is not set")
expect("set_dims N=-1", lib.dyn_set_dims(ctx, (ctypes.c_int64 * 1)(-1)), 2, "want >= 0")
for n in (4, 2, 4):
    expect("set_dims N=%d" % n, lib.dyn_set_dims(ctx, (ctypes.c_int64 * 1)(n)), 0)
    z[:] = -7
    expect("run N=%d" % n, lib.dyn_run(ctx, ptr(x), ptr(y), ptr(z)), 0)
    want = np.maximum(x[:n], 0) + y[:n]
    if not np.allclose(z[:n], want) or (n < 4 and not (z[n:] == -7).all()):
        errors.append("run N=%d: got %s, want %s" % (n, z, want))
expect("eval N=4", lib.dyn_eval(ctx, ptr(x), ptr(y)), 0)
expect("result_copy with 2 rows of room", lib.dyn_result_copy(ctx, 0, ptr(z), 2 * 3 * 4), 2, "has 48 bytes")
lib.dyn_destroy(ctx)

with dyn.Model(sys.argv[2]) as m:
    for n in (1, 5):
        a = rng.standard_normal((n, 3)).astype(np.float32)
        b = rng.standard_normal((n, 3)).astype(np.float32)
        got = m.run({"x": a, "y": b})["z"]
        if got.shape != (n, 3) or not np.allclose(got, np.maximum(a, 0) + b):
            errors.append("wrapper N=%d: got %s" % (n, got))
    try:
        m.run([x, y[:2]])
        errors.append("inconsistent N: no error")
    except dyn.Error as e:
        if "is 2, want 4 as set by an earlier input" not in str(e):
            errors.append("inconsistent N: error %r" % e)
if errors:
    print("\n".join(errors))
    sys.exit(1)
print("ok")
`

// TestCSharedSymbolicDims runs a model with a symbolic dim through the C
// API: set_dims then run at several sizes, run with the dim unset, a
// negative size, a result buffer of the wrong size, and inputs that
// disagree on the dim (the Python wrapper's check).
func TestCSharedSymbolicDims(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping: builds a c-shared library (-short)")
	}
	py := pythonWithNumpy(t)
	dir := t.TempDir()
	model := filepath.Join(dir, "sym.onnx")
	symModel(t, model)
	out, lib := buildCShared(t, model, dir, "dyn")
	script := filepath.Join(dir, "sym.py")
	if err := os.WriteFile(script, []byte(pySym), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := exec.Command(py, script, filepath.Join(out, "python"), lib).CombinedOutput()
	if err != nil || !strings.Contains(string(b), "ok") {
		t.Fatalf("python: %v\n%s", err, b)
	}
}
