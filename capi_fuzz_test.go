package cuvil

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// FuzzCAPI drives the C API of the symbolic-dim model z = Relu(x) + y
// (x, y, z float32 [N, 3]) with sequences of calls decoded from the fuzz
// input: creates, destroys and forged handles, set_dims_n with any sizes
// (products that wrap included), eval/run_tensors with tensors whose
// nbytes, dtype, rank, dims, data and counts are all fuzzed, result
// queries with any index and buffer length, error reads after other calls.
//
// cgo is not allowed in test files, and a Go process cannot load a Go
// c-shared library, so the calls are made by a small C program built with
// AddressSanitizer and UBSan (cCAPIFuzz) that reads one input per frame on
// stdin and acknowledges it on stdout. Every buffer it passes is allocated
// to exactly the length it claims, so a library that reads or writes past
// a claimed length is caught by ASan; the program also checks the API's
// promises (status codes, a message after every failure, correct outputs
// after a successful run). A sanitizer report, a crash, a broken promise
// or a call that hangs fails the input, which go test keeps as a crasher.
func FuzzCAPI(f *testing.F) {
	if testing.Short() {
		f.Skip("skipping: builds a c-shared library (-short)")
	}
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		f.Skip("skipping: no gcc for the AddressSanitizer driver (Debian: apt-get install gcc libasan8 libubsan1)")
	}
	dir := f.TempDir()
	symModel(f, filepath.Join(dir, "sym.onnx"))
	_, lib := buildCShared(f, filepath.Join(dir, "sym.onnx"), dir, "dyn")
	exe := filepath.Join(dir, "capi_fuzz")
	cfile := exe + ".c"
	if err := os.WriteFile(cfile, []byte(cCAPIFuzz), 0o644); err != nil {
		f.Fatal(err)
	}
	libDir := filepath.Dir(lib)
	cmd := exec.Command(gcc, "-g", "-O1", "-fsanitize=address,undefined", "-fno-sanitize-recover=undefined", "-fno-omit-frame-pointer",
		"-Wall", "-Werror", "-I", libDir, "-o", exe, cfile, "-L", libDir, "-ldyn", "-Wl,-rpath,"+libDir)
	if b, err := cmd.CombinedOutput(); err != nil {
		if strings.Contains(string(b), "asan") || strings.Contains(string(b), "ubsan") {
			f.Skipf("skipping: gcc cannot build with -fsanitize=address,undefined (Debian: apt-get install libasan8 libubsan1):\n%s", b)
		}
		f.Fatalf("gcc: %v\n%s", err, b)
	}

	// Seeds: one run of each call kind, and the sequences that found bugs
	// in the hand-written misuse tests (use after destroy, forged handles,
	// short buffers, wrapping dims).
	f.Add([]byte{0, 0, 4, 0, 2, 1, 2, 8, 2, 1, 24, 8, 2, 1, 24, 1, 1, 0, 8, 0})
	f.Add([]byte{0, 1, 2, 1, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 3, 1, 2, 0, 0, 8, 1})
	f.Add([]byte{0, 0, 1, 0, 3, 0, 2, 8, 2, 1, 24, 8, 2, 1, 24, 9, 0, 16, 8, 0})
	f.Add([]byte{0, 2, 4, 2, 2, 1, 2, 8, 2, 1, 24, 8, 2, 1, 24, 5, 2, 0, 6, 2, 0, 2, 7, 2, 0, 12, 0})
	f.Add([]byte{10, 0, 0, 10, 1, 1, 10, 7, 9, 11, 0, 11, 200, 9, 3, 0, 8, 3})
	f.Add([]byte{0, 3, 4, 3, 2, 1, 3, 0xff, 2, 1, 0xff, 8, 2, 1, 24, 1, 3, 4, 3, 2, 1, 2, 8, 2, 1, 24, 8, 2, 1, 24})

	d := &capiDriver{exe: exe}
	defer d.stop()
	f.Fuzz(func(t *testing.T, prog []byte) {
		if len(prog) > 4096 {
			return
		}
		if msg := d.do(prog); msg != "" {
			t.Fatalf("C API driver on %x:\n%s", prog, msg)
		}
	})
}

// capiDriver keeps one driver process running across fuzz inputs and
// restarts it after a failure.
type capiDriver struct {
	exe    string
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	stderr *bytes.Buffer
}

func (d *capiDriver) start() error {
	d.cmd = exec.Command(d.exe)
	d.stderr = &bytes.Buffer{}
	d.cmd.Stderr = d.stderr
	// Fuzzed sequences create contexts they never destroy: leaks are
	// expected. Everything else halts.
	d.cmd.Env = append(os.Environ(), "ASAN_OPTIONS=halt_on_error=1:detect_leaks=0", "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")
	var err error
	if d.in, err = d.cmd.StdinPipe(); err != nil {
		return err
	}
	stdout, err := d.cmd.StdoutPipe()
	if err != nil {
		return err
	}
	d.out = bufio.NewReader(stdout)
	return d.cmd.Start()
}

func (d *capiDriver) stop() {
	if d.cmd != nil {
		d.in.Close()
		done := make(chan struct{})
		go func() { d.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			d.cmd.Process.Kill()
			<-done
		}
		d.cmd = nil
	}
}

// do runs one program; it returns "" or what went wrong (the driver's
// stderr: a sanitizer report or a broken promise).
func (d *capiDriver) do(prog []byte) string {
	if d.cmd == nil {
		if err := d.start(); err != nil {
			return err.Error()
		}
	}
	frame := binary.LittleEndian.AppendUint32(nil, uint32(len(prog)))
	if _, err := d.in.Write(append(frame, prog...)); err != nil {
		return d.fail(fmt.Sprintf("write: %v", err))
	}
	ack := make(chan error, 1)
	go func() {
		b, err := d.out.ReadByte()
		if err == nil && b != '.' {
			err = fmt.Errorf("ack %q", b)
		}
		ack <- err
	}()
	select {
	case err := <-ack:
		if err != nil {
			return d.fail(fmt.Sprintf("driver: %v", err))
		}
		return ""
	case <-time.After(20 * time.Second):
		d.cmd.Process.Kill()
		return d.fail("hung: no answer in 20 s")
	}
}

func (d *capiDriver) fail(what string) string {
	d.in.Close()
	d.cmd.Wait()
	d.cmd = nil
	return what + "\n" + d.stderr.String()
}

// cCAPIFuzz interprets programs of C API calls on libdyn. A program is
// bytes: an opcode, then its operands, each read from the program (past
// its end everything reads 0). Handles come from four slots (or are forged
// or 0); every pointer the program passes points at exactly the bytes or
// elements it claims.
const cCAPIFuzz = `#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "libdyn.h"

static const uint8_t *prog;
static size_t plen, pos;

static uint8_t u8(void) { return pos < plen ? prog[pos++] : 0; }
static int64_t i64(void) {
	uint64_t v = 0;
	for (int i = 0; i < 8; i++) v |= (uint64_t)u8() << (8 * i);
	return (int64_t)v;
}
// small is a size: mostly small, sometimes huge or negative.
static int64_t small(void) {
	uint8_t b = u8();
	if (b == 0xff) return i64();
	return (int64_t)b;
}

static void bad(const char *what, const char *detail) {
	fprintf(stderr, "broken promise: %s: %s\n", what, detail ? detail : "(null)");
	exit(3);
}

static uintptr_t slots[4];
static int creates;

static uintptr_t handle(void) {
	uint8_t b = u8();
	switch (b & 7) {
	case 4: return 0;
	case 5: return (uintptr_t)i64();
	case 6: return slots[b >> 3 & 3] + 1;
	}
	return slots[b & 3];
}

// status checks a call's status: 0 ok, 1 bad handle, 2 bad argument,
// 3 caught panic; anything else, or a failure without a message, is a
// broken promise.
static void status(const char *what, uintptr_t ctx, int st) {
	if (st < 0 || st > 3) {
		char b[32];
		snprintf(b, sizeof b, "status %d", st);
		bad(what, b);
	}
	if (st == 3) bad(what, dyn_last_error(ctx));
	if (st != 0) {
		const char *e = dyn_last_error(st == 1 ? 0 : ctx);
		if (e == NULL || e[0] == 0) bad(what, "failed without a message");
		(void)strlen(e);
	}
}

// Tensors of one call; freed after it.
static void *allocs[64];
static int nallocs;
static void *grab(size_t n) {
	void *p = malloc(n ? n : 1);
	if (nallocs < 64) allocs[nallocs++] = p;
	return p;
}

static int32_t cnt(void) {
	uint8_t b = u8();
	return b >= 0xf0 ? (int32_t)(b - 0x100) : (int32_t)(b % 5);
}

// tensors builds n tensors: per tensor a flag byte (bit 0: NULL data,
// bit 1: NULL dims), nbytes, dtype, rank and rank dims.
static dyn_tensor *tensors(int32_t n) {
	if (n <= 0) return u8() & 1 ? NULL : grab(sizeof(dyn_tensor));
	dyn_tensor *t = grab(sizeof(dyn_tensor) * (size_t)n);
	for (int32_t i = 0; i < n; i++) {
		uint8_t flag = u8();
		int64_t nbytes = (int64_t)((uint64_t)small() * 4);
		int32_t dtype = (int32_t)(u8() % 18);
		int32_t rank = (int32_t)(u8() % 9);
		int64_t *dims = grab(sizeof(int64_t) * (size_t)(rank ? rank : 1));
		for (int32_t d = 0; d < rank; d++) dims[d] = small();
		size_t alloc = nbytes > 0 && nbytes <= 1 << 16 ? (size_t)nbytes : 0;
		float *data = grab(alloc);
		for (size_t k = 0; k < alloc / 4; k++) data[k] = (float)((int)(k % 11) - 5);
		t[i].data = flag & 1 ? NULL : data;
		t[i].nbytes = nbytes > 0 && nbytes <= 1 << 16 ? nbytes : (nbytes > 0 ? 0 : nbytes);
		t[i].dtype = dtype;
		t[i].rank = rank;
		t[i].dims = flag & 2 ? NULL : dims;
	}
	return t;
}

static void run_one(void) {
	nallocs = 0;
	uint8_t op = u8() % 12;
	switch (op) {
	case 0: {
		int s = u8() & 3;
		if (creates >= 64) break;
		creates++;
		uintptr_t h = dyn_create();
		if (h == 0) bad("create", dyn_last_error(0));
		slots[s] = h;
		if (strcmp(dyn_last_error(h), "") != 0) bad("create", "fresh context has an error");
		break;
	}
	case 1: {
		uintptr_t h = handle();
		status("destroy", h, dyn_destroy(h));
		break;
	}
	case 2: {
		uintptr_t h = handle();
		int32_t n = cnt();
		int64_t *sizes = grab(sizeof(int64_t) * (size_t)(n > 0 ? n : 1));
		for (int32_t i = 0; i < n; i++) sizes[i] = small();
		status("set_dims_n", h, dyn_set_dims_n(h, u8() & 1 ? NULL : sizes, n));
		break;
	}
	case 3: case 4: {
		uintptr_t h = handle();
		int32_t nin = cnt();
		dyn_tensor *ins = tensors(nin);
		int32_t nout = 0;
		dyn_tensor *outs = NULL;
		int st;
		if (op == 3) {
			st = dyn_eval_tensors(h, ins, nin);
			status("eval_tensors", h, st);
		} else {
			nout = cnt();
			outs = tensors(nout);
			st = dyn_run_tensors(h, ins, nin, outs, nout);
			status("run_tensors", h, st);
		}
		if (st == 0 && (nin != 2 || ins == NULL)) bad("run", "accepted a wrong input count");
		if (st == 0 && op == 4 && nout == 1 && outs != NULL) {
			int64_t n = ins[0].dims[0];
			const float *x = ins[0].data, *y = ins[1].data, *z = outs[0].data;
			for (int64_t i = 0; i < 3 * n; i++) {
				float want = (x[i] > 0 ? x[i] : 0) + y[i];
				if (z[i] != want) bad("run_tensors", "wrong output");
			}
		}
		break;
	}
	case 5: {
		uintptr_t h = handle();
		int r = dyn_result_rank(h, (int)small());
		if (r < -1 || r > 8) bad("result_rank", "rank out of range");
		break;
	}
	case 6: {
		uintptr_t h = handle();
		int i = (int)small();
		int32_t n = cnt();
		int64_t *dims = grab(sizeof(int64_t) * (size_t)(n > 0 ? n : 1));
		status("result_shape_n", h, dyn_result_shape_n(h, i, u8() & 1 ? NULL : dims, n));
		break;
	}
	case 7: {
		uintptr_t h = handle();
		int i = (int)small();
		int64_t nbytes = (int64_t)((uint64_t)small() * 4);
		size_t alloc = nbytes > 0 && nbytes <= 1 << 16 ? (size_t)nbytes : 0;
		void *dst = grab(alloc);
		if (alloc == 0 && nbytes > 0) nbytes = 0;
		status("result_copy", h, dyn_result_copy(h, i, u8() & 1 ? NULL : dst, nbytes));
		break;
	}
	case 8: {
		const char *e = dyn_last_error(handle());
		if (e != NULL) {
			char *copy = strdup(e);
			free(copy);
		}
		break;
	}
	case 9: {
		uintptr_t h = handle();
		size_t n = (size_t)(u8() % 64);
		char *buf = grab(n);
		int64_t len = dyn_error_message(h, n ? buf : NULL, n);
		if (len < -1) bad("error_message", "length below -1");
		if (n > 0 && len >= 0 && memchr(buf, 0, n) == NULL) bad("error_message", "no NUL in the buffer");
		break;
	}
	case 10: {
		int i = (int)((uint32_t)small() - 1u), d = (int)((uint32_t)small() - 1u);
		const char *s = dyn_input_name(i);
		if (s) (void)strlen(s);
		s = dyn_output_name(i);
		if (s) (void)strlen(s);
		s = dyn_input_dim_name(i, d);
		if (s) (void)strlen(s);
		s = dyn_output_dim_name(i, d);
		if (s) (void)strlen(s);
		(void)dyn_input_dtype(i);
		(void)dyn_output_dtype(i);
		int r = dyn_input_rank(i);
		if (r >= 0) {
			int64_t *dims = grab(sizeof(int64_t) * (size_t)(r ? r : 1));
			if (dyn_input_shape(i, dims) != r) bad("input_shape", "refused a valid index");
		}
		r = dyn_output_rank(i);
		if (r >= 0) {
			int64_t *dims = grab(sizeof(int64_t) * (size_t)(r ? r : 1));
			if (dyn_output_shape(i, dims) != r) bad("output_shape", "refused a valid index");
		}
		break;
	}
	case 11: {
		const char *s = dyn_sym_name((int)((uint32_t)small() - 1u));
		if (s) (void)strlen(s);
		break;
	}
	}
	for (int i = 0; i < nallocs; i++) free(allocs[i]);
}

int main(void) {
	static uint8_t buf[4096];
	for (;;) {
		uint8_t hdr[4];
		if (fread(hdr, 1, 4, stdin) != 4) return 0;
		uint32_t n = (uint32_t)hdr[0] | (uint32_t)hdr[1] << 8 | (uint32_t)hdr[2] << 16 | (uint32_t)hdr[3] << 24;
		if (n > sizeof buf || fread(buf, 1, n, stdin) != n) return 2;
		prog = buf, plen = n, pos = 0;
		while (pos < plen) run_one();
		fputc('.', stdout);
		fflush(stdout);
	}
}
`
