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

// reluModel is y = Relu(x) for x of shape [2, 3]: one input, one output,
// no symbolic dims, so its C API has the pooled inference calls.
func reluModel(t *testing.T, path string) {
	t.Helper()
	f32 := ir.TensorType(ir.F32, ir.Shape{ir.D(2), ir.D(3)})
	x := &ir.Value{Name: "x", Type: f32}
	y := &ir.Value{Name: "y", Type: f32}
	relu := &ir.Node{Name: "relu", Op: "Relu", Version: 14, Inputs: []*ir.Value{x}, Outputs: []*ir.Value{y}}
	y.Def = relu
	m := &ir.Model{
		Graph:     &ir.Graph{Name: "relu", Inputs: []*ir.Value{x}, Outputs: []*ir.Value{y}, Nodes: []*ir.Node{relu}},
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

// python3 returns a python3, one with numpy where there is one, or skips.
func python3(t *testing.T) string {
	first := ""
	for _, py := range []string{"python3", "/usr/bin/python3"} {
		path, err := exec.LookPath(py)
		if err != nil {
			continue
		}
		if hasNumpy(path) {
			return path
		}
		if first == "" {
			first = path
		}
	}
	if first == "" {
		t.Skip("skipping: no python3 (Debian: apt-get install python3)")
	}
	return first
}

func hasNumpy(py string) bool { return exec.Command(py, "-c", "import numpy").Run() == nil }

// pyThreads drives the symbolic-dim model z = Relu(x) + y (x, y [N, 3])
// from 16 threads: through the wrapper (own and shared Models) and through
// ctypes directly, checking that every error message is exactly the one
// its own call caused, never another thread's and never garbage.
const pyThreads = `
import array, ctypes, sys, threading
sys.path.insert(0, sys.argv[1])
import dyn
libpath, use_numpy = sys.argv[2], sys.argv[3] == "1"
lib = ctypes.CDLL(libpath)
u, i32, i64p = ctypes.c_size_t, ctypes.c_int32, ctypes.POINTER(ctypes.c_int64)
class T(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("nbytes", ctypes.c_int64), ("dtype", ctypes.c_int32),
                ("rank", ctypes.c_int32), ("dims", i64p)]
lib.dyn_create.restype = u
lib.dyn_destroy.argtypes = [u]
lib.dyn_last_error.argtypes = [u]
lib.dyn_last_error.restype = ctypes.c_char_p
lib.dyn_error_message.argtypes = [u, ctypes.c_char_p, ctypes.c_size_t]
lib.dyn_error_message.restype = ctypes.c_int64
lib.dyn_set_dims_n.argtypes = [u, i64p, i32]
lib.dyn_eval_tensors.argtypes = [u, ctypes.POINTER(T), i32]
errors = []
lock = threading.Lock()
sys.setswitchinterval(1e-6)  # switch threads often, between any two calls

def fail(msg):
    with lock:
        errors.append(msg)

def mv(vals, shape, fmt="f"):
    return memoryview(array.array(fmt, vals)).cast("B").cast(fmt, shape)

def want_z(x, y):
    return [max(a, 0.0) + b for a, b in zip(x, y)]

def flat(out):
    if hasattr(out, "ravel"):
        return [float(v) for v in out.ravel()]
    return [v for row in out.tolist() for v in row]

def expect_error(what, fn, want):
    try:
        fn()
    except dyn.Error as e:
        if want not in str(e):
            fail("%s: error %r, want %r" % (what, str(e), want))
        return
    fail("%s: no error" % what)

def direct(k):
    # The C API by hand: a per-context message that names this thread's
    # sizes, and this thread's own message for a made-up handle.
    ctx = lib.dyn_create()
    if not ctx:
        fail("thread %d: create: %r" % (k, lib.dyn_last_error(0)))
        return
    n, m = k + 1, k + 2
    xs = (ctypes.c_float * (3 * m))()
    dx, dy = (ctypes.c_int64 * 2)(n, 3), (ctypes.c_int64 * 2)(m, 3)
    ts = (T * 2)(T(ctypes.addressof(xs), 12 * n, 1, 2, dx), T(ctypes.addressof(xs), 12 * m, 1, 2, dy))
    want = 'input "y": dim 0 (N) is %d, want %d as set by an earlier input' % (m, n)
    forged = 0x5eed0000 + k
    forged_msg = "context handle %#x: no such context (destroyed, or never created)" % forged
    buf = ctypes.create_string_buffer(512)
    for it in range(200):
        if lib.dyn_eval_tensors(ctx, ts, 2) != 2:
            fail("thread %d: mismatched N accepted" % k)
        got = lib.dyn_last_error(ctx).decode()
        if got != want:
            fail("thread %d it %d: last_error(ctx) %r, want %r" % (k, it, got, want))
        full = lib.dyn_error_message(ctx, buf, len(buf))
        if buf.value.decode() != want or full != len(want):
            fail("thread %d it %d: error_message %r (%d)" % (k, it, buf.value, full))
        if lib.dyn_set_dims_n(forged, (ctypes.c_int64 * 1)(1), 1) != 1:
            fail("thread %d: forged handle accepted" % k)
        got = lib.dyn_last_error(0).decode()
        if got != forged_msg:
            fail("thread %d it %d: last_error(0) %r, want %r" % (k, it, got, forged_msg))
    lib.dyn_destroy(ctx)
    if lib.dyn_set_dims_n(ctx, (ctypes.c_int64 * 1)(1), 1) != 1:
        fail("thread %d: destroyed context accepted" % k)
    if lib.dyn_last_error(ctx) != b"no such context (destroyed, or never created)":
        fail("thread %d: last_error(destroyed) %r" % (k, lib.dyn_last_error(ctx)))

def wrapper(k, shared):
    m = shared or dyn.Model(libpath, numpy=use_numpy)
    for it in range(30):
        n = 1 + (k + it) % 5
        x = [float(v - 7) for v in range(3 * n)]
        y = [float(k * 100 + it)] * (3 * n)
        out = m.run({"x": mv(x, [n, 3]), "y": mv(y, [n, 3])})["z"]
        if tuple(out.shape) != (n, 3) or flat(out) != want_z(x, y):
            fail("thread %d it %d: got %s" % (k, it, flat(out)))
        expect_error("wrong dtype", lambda: m.run([mv(x, [n, 3], "d"), mv(y, [n, 3])]), "does not hold float32")
        expect_error("wrong rank", lambda: m.run([mv(x, [3 * n]), mv(y, [n, 3])]), "rank is 1")
        expect_error("wrong shape", lambda: m.run([mv(x, [n, 3]), mv(y + y, [2 * n, 3])]),
                     "is %d, want %d as set by an earlier input" % (2 * n, n))
        if n > 1:  # (one row of every other row is contiguous)
            expect_error("non-contiguous", lambda: m.run([mv(x + x, [2 * n, 3])[::2], mv(y, [n, 3])]), "not C-contiguous")
        expect_error("not an array", lambda: m.run([x, y]), "is not an array" if not use_numpy else "")
        # Buffer gives a flat buffer its shape, zero-size ones included.
        out = m.run([dyn.Buffer(array.array("f", x), (n, 3)), dyn.Buffer(array.array("f", y), [n, 3])])[0]
        if flat(out) != want_z(x, y):
            fail("thread %d it %d: Buffer: got %s" % (k, it, flat(out)))
        out = m.run([dyn.Buffer(array.array("f"), (0, 3)), dyn.Buffer(array.array("f"), (0, 3))])[0]
        if tuple(out.shape) not in ((0, 3), (0,)) or len(out) != 0:
            fail("thread %d it %d: zero-size: got shape %s" % (k, it, out.shape))
        expect_error("Buffer size", lambda: m.run([dyn.Buffer(array.array("f", x), (n, 4)), mv(y, [n, 3])]),
                     "Buffer of %d bytes, shape (%d, 4) of float32 needs %d" % (12 * n, n, 16 * n))
        expect_error("Buffer of bytes", lambda: m.run([dyn.Buffer(bytes(12 * n), (n, 3)), mv(y, [n, 3])]), "format 'B'")
    if not shared:
        m.close()
        expect_error("closed", lambda: m.run([mv(x, [n, 3]), mv(y, [n, 3])]), "model is closed")

def guarded(fn, *args):
    try:
        fn(*args)
    except Exception as e:
        fail("%s%r: %r" % (fn.__name__, args[:1], e))

shared = dyn.Model(libpath, numpy=use_numpy)
threads = []
for k in range(16):
    threads.append(threading.Thread(target=guarded, args=(direct, k)))
    threads.append(threading.Thread(target=guarded, args=(wrapper, k, shared if k % 2 else None)))
for th in threads: th.start()
for th in threads: th.join()
shared.close()

if use_numpy:
    import numpy as np
    with dyn.Model(libpath) as m:
        x = np.arange(-6, 6, dtype=np.float32).reshape(4, 3)
        y = np.ones((4, 3), np.float32)
        z = m.run([x.T.copy().T, y])[0]   # a non-contiguous array is copied
        if not np.array_equal(z, np.maximum(x, 0) + y):
            fail("numpy: got %s" % z)
        expect_error("numpy wrong dtype kind", lambda: m.run([x.astype(np.int32), y]), "dtype is int32, want float32")
        expect_error("numpy wrong shape", lambda: m.run([x, y[:, :2]]), "dim 1 is 2, want 3")
if errors:
    print("\n".join(errors[:20]))
    print("%d errors" % len(errors))
    sys.exit(1)
print("ok")
`

// cDynMisuse misuses the C API of symModel: destroy then use, forged
// handles, short buffers, NULL pointers, wrong dtype and rank, dims whose
// product overflows, error strings kept past the next call, and 16
// threads checking that their messages are their own.
const cDynMisuse = `// Misuse of the C API of z = Relu(x) + y (x, y, z float32 [N, 3]).
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "libdyn.h"

static int failures;
#define CHECK(cond, ...) do { if (!(cond)) { failures++; fprintf(stderr, "%s:%d: ", __FILE__, __LINE__); fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

static void expect(const char *what, uintptr_t ctx, int status, int want, const char *msg) {
	const char *got = dyn_last_error(status == 1 ? 0 : ctx);
	CHECK(status == want, "%s: status %d, want %d (%s)", what, status, want, got);
	CHECK(got != NULL && strstr(got, msg) != NULL, "%s: error %s, want %s", what, got ? got : "(null)", msg);
}

static dyn_tensor tensor(void *data, int64_t nbytes, int32_t dtype, int32_t rank, const int64_t *dims) {
	dyn_tensor t = {data, nbytes, dtype, rank, dims};
	return t;
}

static void *worker(void *arg) {
	int k = (int)(intptr_t)arg;
	char want[128], forged_msg[128];
	uintptr_t forged = (uintptr_t)0x77770000u + (uintptr_t)k;
	snprintf(forged_msg, sizeof forged_msg, "context handle %#" PRIxPTR ": no such context", forged);
	for (int round = 0; round < 20; round++) {
		uintptr_t ctx = dyn_create();
		CHECK(ctx != 0, "thread %d: create: %s", k, dyn_last_error(0));
		int64_t n = k % 4 + 1, m = n + 1;
		float x[15], y[15], z[15];
		for (int i = 0; i < 15; i++) { x[i] = (float)(i - 5); y[i] = (float)k; }
		int64_t dx[2] = {n, 3}, dy[2] = {n, 3}, dz[2] = {n, 3}, bad[2] = {m, 3};
		dyn_tensor ins[2] = {tensor(x, sizeof x, 1, 2, dx), tensor(y, sizeof y, 1, 2, dy)};
		dyn_tensor outs[1] = {tensor(z, sizeof z, 1, 2, dz)};
		int st = dyn_run_tensors(ctx, ins, 2, outs, 1);
		CHECK(st == 0, "thread %d: run_tensors %d: %s", k, st, dyn_last_error(ctx));
		for (int i = 0; i < 3 * n; i++)
			CHECK(z[i] == (x[i] > 0 ? x[i] : 0) + y[i], "thread %d: z[%d] = %g", k, i, z[i]);
		ins[1].dims = bad;
		snprintf(want, sizeof want, "input \"y\": dim 0 (N) is %" PRId64 ", want %" PRId64 " as set by an earlier input", m, n);
		for (int i = 0; i < 500; i++) {
			CHECK(dyn_eval_tensors(ctx, ins, 2) == 2, "thread %d: mismatch accepted", k);
			const char *e = dyn_last_error(ctx);
			CHECK(strcmp(e, want) == 0, "thread %d: last_error(ctx) %s, want %s", k, e, want);
			CHECK(dyn_set_dims_n(forged, &n, 1) == 1, "thread %d: forged handle accepted", k);
			e = dyn_last_error(0);
			CHECK(strncmp(e, forged_msg, strlen(forged_msg)) == 0, "thread %d: last_error(0) %s, want %s", k, e, forged_msg);
		}
		CHECK(dyn_destroy(ctx) == 0, "thread %d: destroy", k);
		CHECK(dyn_eval_tensors(ctx, ins, 2) == 1, "thread %d: destroyed context used", k);
	}
	return NULL;
}

int main(void) {
	CHECK(dyn_sym_count() == 1 && strcmp(dyn_sym_name(0), "N") == 0, "sym");
	CHECK(dyn_sym_name(1) == NULL && dyn_sym_name(-1) == NULL, "sym_name out of range");
	CHECK(dyn_input_name(2) == NULL && dyn_input_rank(-1) == -1 && dyn_input_shape(0, NULL) == -1, "queries out of range");

	uintptr_t ctx = dyn_create();
	CHECK(ctx != 0, "create: %s", dyn_last_error(0));
	CHECK(strcmp(dyn_last_error(ctx), "") == 0, "fresh context has an error");
	float x[6] = {-1, 2, -3, 4, -5, 6}, y[6] = {1, 1, 1, 1, 1, 1}, z[6 + 4];
	int64_t d2[2] = {2, 3};
	dyn_tensor ins[2] = {tensor(x, sizeof x, 1, 2, d2), tensor(y, sizeof y, 1, 2, d2)};
	dyn_tensor outs[1] = {tensor(z, 6 * 4, 1, 2, d2)};
	expect("run_tensors", ctx, dyn_run_tensors(ctx, ins, 2, outs, 1), 0, "");
	for (int i = 0; i < 6; i++) CHECK(z[i] == (x[i] > 0 ? x[i] : 0) + 1, "z[%d] = %g", i, z[i]);

	// Short buffers, NULL pointers, wrong dtype, rank and counts.
	ins[0].nbytes = 23;
	expect("short input", ctx, dyn_eval_tensors(ctx, ins, 2), 2, "input \"x\": buffer has 23 bytes");
	ins[0].nbytes = sizeof x;
	ins[1].data = NULL;
	expect("NULL input", ctx, dyn_eval_tensors(ctx, ins, 2), 2, "input \"y\": buffer is NULL");
	ins[1].data = y;
	expect("NULL array", ctx, dyn_eval_tensors(ctx, NULL, 2), 2, "the array is NULL");
	expect("nin", ctx, dyn_eval_tensors(ctx, ins, 1), 2, "n is 1, the model has 2");
	ins[0].dtype = 7;
	expect("dtype", ctx, dyn_eval_tensors(ctx, ins, 2), 2, "dtype is 7, want 1 (f32)");
	ins[0].dtype = 1;
	ins[0].rank = 1;
	expect("rank", ctx, dyn_eval_tensors(ctx, ins, 2), 2, "rank is 1, want 2");
	ins[0].rank = 2;
	ins[0].dims = NULL;
	expect("NULL dims", ctx, dyn_eval_tensors(ctx, ins, 2), 2, "dims is NULL");
	ins[0].dims = d2;
	int64_t d3[2] = {2, 4};
	ins[1].dims = d3;
	expect("constant dim", ctx, dyn_eval_tensors(ctx, ins, 2), 2, "dim 1 is 4, want 3");
	ins[1].dims = d2;
	float big[8] = {0};
	ins[0].data = (char *)big + 1;
	expect("misaligned", ctx, dyn_eval_tensors(ctx, ins, 2), 2, "is not aligned to its f32 elements (4 bytes)");
	ins[0].data = x;

	// Zero-size inputs (N = 0, legal ONNX) run, with or without data.
	int64_t d0[2] = {0, 3};
	dyn_tensor empty[2] = {tensor(NULL, 0, 1, 2, d0), tensor(y, 0, 1, 2, d0)};
	expect("N = 0", ctx, dyn_eval_tensors(ctx, empty, 2), 0, "");
	int64_t s0[2] = {-1, -1};
	expect("N = 0 shape", ctx, dyn_result_shape_n(ctx, 0, s0, 2), 0, "");
	CHECK(s0[0] == 0 && s0[1] == 3, "N = 0: result shape %" PRId64 " %" PRId64, s0[0], s0[1]);
	expect("N = 0 copy", ctx, dyn_result_copy(ctx, 0, NULL, 0), 0, "");

	// A short output buffer is refused and left untouched.
	memset(z, 0x5a, sizeof z);
	outs[0].nbytes = 6 * 4 - 1;
	expect("short output", ctx, dyn_run_tensors(ctx, ins, 2, outs, 1), 2, "has 24 bytes (shape [2 3]), the buffer 23");
	for (size_t i = 0; i < sizeof z; i++) CHECK(((unsigned char *)z)[i] == 0x5a, "short output: byte %zu written", i);
	outs[0].nbytes = sizeof z;
	outs[0].dtype = 11;
	expect("output dtype", ctx, dyn_run_tensors(ctx, ins, 2, outs, 1), 2, "output \"z\": dtype is 11");
	outs[0].dtype = 1;
	int64_t d1[2] = {1, 3};
	outs[0].dims = d1;
	expect("output shape", ctx, dyn_run_tensors(ctx, ins, 2, outs, 1), 2, "buffer shape [1 3], the output's is [2 3]");
	outs[0].dims = d2;
	outs[0].data = NULL;
	expect("NULL output", ctx, dyn_run_tensors(ctx, ins, 2, outs, 1), 2, "output \"z\": buffer is NULL");
	outs[0].data = z;
	expect("nout", ctx, dyn_run_tensors(ctx, ins, 2, outs, 2), 2, "n is 2, the model has 1");

	// Results of eval.
	expect("eval_tensors", ctx, dyn_eval_tensors(ctx, ins, 2), 0, "");
	CHECK(dyn_result_rank(ctx, 0) == 2 && dyn_result_rank(ctx, 1) == -1, "result_rank");
	int64_t shape[2];
	expect("result_shape_n short", ctx, dyn_result_shape_n(ctx, 0, shape, 1), 2, "has rank 2, dims holds 1");
	expect("result_shape_n NULL", ctx, dyn_result_shape_n(ctx, 0, NULL, 2), 2, "dims is NULL");
	expect("result_shape_n", ctx, dyn_result_shape_n(ctx, 0, shape, 2), 0, "");
	CHECK(shape[0] == 2 && shape[1] == 3, "result shape %" PRId64 " %" PRId64, shape[0], shape[1]);
	expect("result_copy short", ctx, dyn_result_copy(ctx, 0, z, 20), 2, "has 24 bytes");
	expect("result_copy NULL", ctx, dyn_result_copy(ctx, 0, NULL, 24), 2, "dst is NULL");
	expect("result_copy", ctx, dyn_result_copy(ctx, 0, z, 24), 0, "");

	// Huge dims: products that overflow are errors, never an abort.
	int64_t huge = (int64_t)1 << 46;
	expect("set_dims_n overflow", ctx, dyn_set_dims_n(ctx, &huge, 1), 2, "overflow");
	huge = INT64_MAX;
	expect("set_dims_n INT64_MAX", ctx, dyn_set_dims_n(ctx, &huge, 1), 2, "want >= 0");
	huge = -1;
	expect("set_dims_n negative", ctx, dyn_set_dims_n(ctx, &huge, 1), 2, "want >= 0");
	expect("set_dims_n NULL", ctx, dyn_set_dims_n(ctx, NULL, 1), 2, "sizes is NULL");
	expect("set_dims_n count", ctx, dyn_set_dims_n(ctx, &huge, 3), 2, "n is 3, the model has 1 symbolic dims");
	int64_t dh[2] = {(int64_t)1 << 45, 3};
	ins[0].dims = dh;
	ins[1].dims = dh;
	ins[0].nbytes = ins[1].nbytes = INT64_MAX;
	expect("eval_tensors overflow", ctx, dyn_eval_tensors(ctx, ins, 2), 2, "overflow");
	int64_t dneg[2] = {-2, 3};
	ins[0].dims = ins[1].dims = dneg;
	expect("eval_tensors negative dim", ctx, dyn_eval_tensors(ctx, ins, 2), 2, "dim 0 is -2");
	ins[0].dims = ins[1].dims = d2;
	ins[0].nbytes = ins[1].nbytes = sizeof x;

	// The unchecked form still works with buffers of the right size.
	int64_t two = 2;
	expect("set_dims", ctx, dyn_set_dims(ctx, &two), 0, "");
	expect("run", ctx, dyn_run(ctx, x, y, z), 0, "");
	CHECK(z[1] == 3, "run: z[1] = %g", z[1]);
	expect("run NULL", ctx, dyn_run(ctx, x, NULL, z), 2, "input \"y\": buffer is NULL");

	// Error strings: owned by the context, copied whole on request.
	expect("set_dims_n negative", ctx, dyn_set_dims_n(ctx, &huge, 1), 2, "want >= 0");
	const char *old = dyn_last_error(ctx);
	char full[256], small[8];
	int64_t len = dyn_error_message(ctx, full, sizeof full);
	CHECK(len == (int64_t)strlen(old) && strcmp(full, old) == 0, "error_message %s (%" PRId64 ")", full, len);
	CHECK(dyn_error_message(ctx, small, sizeof small) == len && strlen(small) == 7 && strncmp(small, old, 7) == 0, "error_message truncated: %s", small);
	CHECK(dyn_error_message(ctx, NULL, 0) == len, "error_message length only");
	expect("success clears", ctx, dyn_set_dims(ctx, &two), 0, "");
	CHECK(strlen(old) == 0, "the context's string after a success: %s", old); // still readable memory

	// Destroy, then use: refused, and the old string stays readable.
	CHECK(dyn_destroy(ctx) == 0, "destroy");
	CHECK(strlen(old) < 4096, "old string unreadable");
	expect("set_dims_n after destroy", ctx, dyn_set_dims_n(ctx, &two, 1), 1, "no such context");
	expect("eval after destroy", ctx, dyn_eval_tensors(ctx, ins, 2), 1, "no such context");
	expect("run after destroy", ctx, dyn_run(ctx, x, y, z), 1, "no such context");
	expect("result_copy after destroy", ctx, dyn_result_copy(ctx, 0, z, 24), 1, "no such context");
	CHECK(dyn_result_rank(ctx, 0) == -1, "result_rank after destroy");
	CHECK(dyn_destroy(ctx) == 1, "double destroy accepted");
	CHECK(strcmp(dyn_last_error(ctx), "no such context (destroyed, or never created)") == 0, "last_error(destroyed): %s", dyn_last_error(ctx));
	uintptr_t again = dyn_create();
	CHECK(again != 0 && again != ctx, "a new context reuses the destroyed handle");
	expect("old handle after a new create", ctx, dyn_set_dims_n(ctx, &two, 1), 1, "no such context");
	uintptr_t forged[] = {1, 12345, ~(uintptr_t)0, again + 1, again ^ ((uintptr_t)1 << 40)};
	for (size_t i = 0; i < sizeof forged / sizeof forged[0]; i++)
		expect("forged handle", forged[i], dyn_set_dims_n(forged[i], &two, 1), 1, "no such context");
	CHECK(dyn_destroy(again) == 0, "destroy again");

	// 16 threads at once, each checking its own messages.
	pthread_t th[16];
	for (int k = 0; k < 16; k++) pthread_create(&th[k], NULL, worker, (void *)(intptr_t)k);
	for (int k = 0; k < 16; k++) pthread_join(th[k], NULL);

	if (failures) {
		fprintf(stderr, "%d failures\n", failures);
		return 1;
	}
	printf("ok\n");
	return 0;
}
`

// cReluMisuse misuses the pooled inference calls of reluModel, from one
// thread and then 16.
const cReluMisuse = `// Misuse of the pooled inference calls of y = Relu(x) (float32 [2, 3]).
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "librelu.h"

static int failures;
#define CHECK(cond, ...) do { if (!(cond)) { failures++; fprintf(stderr, "%s:%d: ", __FILE__, __LINE__); fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

static void expect(const char *what, int status, int want, const char *msg) {
	const char *got = relu_last_error(0);
	CHECK(status == want, "%s: status %d, want %d (%s)", what, status, want, got);
	CHECK(strstr(got, msg) != NULL, "%s: error %s, want %s", what, got, msg);
}

static void *worker(void *arg) {
	int k = (int)(long)arg;
	float x[6], y[6];
	char want[64];
	for (int i = 0; i < 6; i++) x[i] = (float)(i - k);
	snprintf(want, sizeof want, "buffer has %d bytes", k);
	for (int it = 0; it < 50; it++) {
		expect("inference_n", relu_inference_n(x, sizeof x, y, sizeof y), 0, "");
		for (int i = 0; i < 6; i++) CHECK(y[i] == (x[i] > 0 ? x[i] : 0), "thread %d: y[%d] = %g", k, i, y[i]);
		expect("short input", relu_inference_n(x, k, y, sizeof y), 2, want);
	}
	return NULL;
}

int main(void) {
	float x[6] = {-1, 2, -3, 4, -5, 6}, y[6 + 2];
	expect("inference_n", relu_inference_n(x, sizeof x, y, sizeof y), 0, "");
	CHECK(y[0] == 0 && y[1] == 2, "inference_n: %g %g", y[0], y[1]);
	expect("inference", relu_inference(x, y), 0, "");
	expect("short input", relu_inference_n(x, 23, y, sizeof y), 2, "input \"x\": buffer has 23 bytes");
	memset(y, 0x5a, sizeof y);
	expect("short output", relu_inference_n(x, sizeof x, y, 20), 2, "has 24 bytes (shape [2 3]), the buffer 20");
	for (size_t i = 0; i < sizeof y; i++) CHECK(((unsigned char *)y)[i] == 0x5a, "short output: byte %zu written", i);
	expect("NULL input", relu_inference_n(NULL, 24, y, 24), 2, "buffer is NULL");
	expect("NULL output", relu_inference_n(x, 24, NULL, 24), 2, "output \"y\": buffer is NULL");
	expect("negative", relu_inference_n(x, -1, y, 24), 2, "negative size");
	expect("inference NULL", relu_inference(x, NULL), 2, "buffer is NULL");
	pthread_t th[16];
	for (long k = 0; k < 16; k++) pthread_create(&th[k], NULL, worker, (void *)k);
	for (int k = 0; k < 16; k++) pthread_join(th[k], NULL);
	if (failures) {
		fprintf(stderr, "%d failures\n", failures);
		return 1;
	}
	printf("ok\n");
	return 0;
}
`

// TestCAPI builds the C API of two small models (one with a symbolic dim,
// one with the pooled inference calls) and misuses it: from 16 Python
// threads (through ctypes and the wrapper, checking every error string
// against the call that caused it), and from C programs built with
// AddressSanitizer and UndefinedBehaviorSanitizer, which must exit cleanly.
func TestCAPI(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping: builds c-shared libraries (-short)")
	}
	dir := t.TempDir()
	symModel(t, filepath.Join(dir, "sym.onnx"))
	reluModel(t, filepath.Join(dir, "relu.onnx"))
	dynOut, dynLib := buildCShared(t, filepath.Join(dir, "sym.onnx"), dir, "dyn")
	_, reluLib := buildCShared(t, filepath.Join(dir, "relu.onnx"), dir, "relu")

	t.Run("PythonThreads", func(t *testing.T) {
		py := python3(t)
		script := filepath.Join(dir, "threads.py")
		if err := os.WriteFile(script, []byte(pyThreads), 0o644); err != nil {
			t.Fatal(err)
		}
		run := func(t *testing.T, mode string) {
			b, err := exec.Command(py, script, filepath.Join(dynOut, "python"), dynLib, mode).CombinedOutput()
			if err != nil || !strings.Contains(string(b), "ok") {
				t.Fatalf("python: %v\n%s", err, b)
			}
		}
		t.Run("buffers", func(t *testing.T) { run(t, "0") })
		t.Run("numpy", func(t *testing.T) {
			if !hasNumpy(py) {
				t.Skip("skipping the wrapper's numpy path: numpy is not installed (Debian: apt-get install python3-numpy)")
			}
			run(t, "1")
		})
	})

	t.Run("ASan", func(t *testing.T) {
		for _, c := range []struct{ name, src, lib string }{
			{"dyn", cDynMisuse, dynLib},
			{"relu", cReluMisuse, reluLib},
		} {
			t.Run(c.name, func(t *testing.T) { runASan(t, c.src, c.lib) })
		}
	})
}

// runASan compiles src against lib with gcc -fsanitize=address,undefined
// and runs it; it must print ok and exit 0 with no sanitizer report.
func runASan(t *testing.T, src, lib string) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("skipping: no gcc for the AddressSanitizer test (Debian: apt-get install gcc, which brings libasan8 and libubsan1)")
	}
	libDir := filepath.Dir(lib)
	name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(lib), "lib"), ".so")
	tmp := t.TempDir()
	cfile, exe := filepath.Join(tmp, name+"_misuse.c"), filepath.Join(tmp, name+"_misuse")
	if err := os.WriteFile(cfile, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(gcc, "-g", "-O1", "-fsanitize=address,undefined", "-fno-sanitize-recover=undefined", "-fno-omit-frame-pointer",
		"-Wall", "-Werror", "-I", libDir, "-o", exe, cfile, "-L", libDir, "-l"+name, "-lpthread", "-Wl,-rpath,"+libDir)
	if b, err := cmd.CombinedOutput(); err != nil {
		if strings.Contains(string(b), "asan") || strings.Contains(string(b), "ubsan") {
			t.Skipf("skipping: gcc cannot build with -fsanitize=address,undefined (Debian: apt-get install libasan8 libubsan1):\n%s", b)
		}
		t.Fatalf("gcc: %v\n%s", err, b)
	}
	run := func(asanOpts string) (string, error) {
		cmd := exec.Command(exe)
		cmd.Env = append(os.Environ(), "ASAN_OPTIONS="+asanOpts, "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")
		b, err := cmd.CombinedOutput()
		return string(b), err
	}
	out, err := run("halt_on_error=1:detect_leaks=1")
	if err != nil && strings.Contains(out, "LeakSanitizer has encountered a fatal error") {
		// LeakSanitizer needs ptrace, which some containers refuse.
		t.Log("LeakSanitizer cannot run here; running without leak detection")
		out, err = run("halt_on_error=1:detect_leaks=0")
	}
	if err != nil || !strings.Contains(out, "ok") || strings.Contains(out, "Sanitizer") || strings.Contains(out, "runtime error") {
		t.Fatalf("%s: %v\n%s", filepath.Base(exe), err, out)
	}
}
