package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuvil/cuvil/ir/onnx"
)

// TestPrecisionFlags: run, check, bench and conformance take -precision
// and -keep-f32 as compile does. testdata/digits (batch 360) has two
// Gemms -precision bf16 makes bf16 (its log-probs move by ~0.2, f32 by
// 1.5e-5), so at tolerance 1e-4: check and conformance pass in f32, fail
// with -precision bf16 and pass again with -keep-f32 pinning the Gemms; run
// -precision bf16 writes other bits than run does; bench -precision bf16
// runs; a bad -precision is a usage error (exit 2) everywhere; -keep-f32
// naming nothing is an error for one model (check) but not across a
// conformance suite (each entry applies where it names something).
func TestPrecisionFlags(t *testing.T) {
	if testing.Short() {
		t.Skip("builds generated code; skipped in -short mode")
	}
	const digits = "../../testdata/digits"
	model, data := digits+"/model.onnx", digits+"/test_data_set_0"
	tol := []string{"-rtol", "1e-4", "-atol", "1e-4"}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"check"}, 0, `"log_probs": ok`},
		{[]string{"check", "-precision", "bf16"}, 1, `"log_probs": FAIL`},
		{[]string{"check", "-precision", "bf16", "-keep-f32", "Gemm,cuvil::FusedGemm"}, 0, `"log_probs": ok`},
		{[]string{"check", "-precision", "bf16", "-keep-f32", "NoSuchOp"}, 1, `-keep-f32 "NoSuchOp" names no node or op`},
	} {
		args := append(append(append([]string(nil), c.args...), "-model", model, "-data", data), tol...)
		code, out, errOut := cuvil(t, args...)
		if code != c.code || !strings.Contains(out+errOut, c.want) {
			t.Errorf("%v: exit %d, want %d and %q\n%s%s", c.args, code, c.code, c.want, out, errOut)
		}
	}

	dir := t.TempDir()
	outs := map[string][]byte{}
	for _, p := range []string{"", "bf16"} {
		out := filepath.Join(dir, "out"+p)
		args := []string{"run", "-model", model, "-data", data, "-out", out}
		if p != "" {
			args = append(args, "-precision", p)
		}
		if code, stdout, stderr := cuvil(t, args...); code != 0 {
			t.Fatalf("%v: exit %d\n%s%s", args, code, stdout, stderr)
		}
		b, err := os.ReadFile(filepath.Join(out, "output_0.pb"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := onnx.ReadTensorFile(filepath.Join(out, "output_0.pb")); err != nil {
			t.Fatal(err)
		}
		outs[p] = b
	}
	if string(outs[""]) == string(outs["bf16"]) {
		t.Error("run -precision bf16 wrote the f32 run's bits")
	}
	if code, out, errOut := cuvil(t, "bench", "-model", model, "-runs", "2", "-warmup", "0", "-threads", "1", "-precision", "bf16", "-keep-f32", "Gemm"); code != 0 || !strings.Contains(out, "median") {
		t.Errorf("bench -precision bf16: exit %d\n%s%s", code, out, errOut)
	}

	root := filepath.Join(dir, "suite", "node")
	for _, f := range []string{"model.onnx", "test_data_set_0/input_0.pb", "test_data_set_0/output_0.pb"} {
		b, err := os.ReadFile(filepath.Join(digits, f))
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(root, "test_digits", f)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{nil, 0, "1 passed, 0 failed, 0 skipped"},
		{[]string{"-precision", "bf16"}, 1, "0 passed, 1 failed, 0 skipped"},
		{[]string{"-precision", "bf16", "-keep-f32", "Gemm,cuvil::FusedGemm,NoSuchOp"}, 0, "1 passed, 0 failed, 0 skipped"},
	} {
		args := append(append(append([]string{"conformance"}, tol...), c.args...), root)
		code, out, errOut := cuvil(t, args...)
		if code != c.code || !strings.Contains(out, c.want) {
			t.Errorf("conformance %v: exit %d, want %d and %q\n%s%s", c.args, code, c.code, c.want, out, errOut)
		}
	}
	for _, cmd := range [][]string{
		{"run", "-model", model, "-data", data, "-out", dir},
		{"check", "-model", model, "-data", data},
		{"bench", "-model", model},
		{"conformance", root},
	} {
		args := append(append([]string(nil), cmd[0], "-precision", "fp8"), cmd[1:]...)
		if code, _, errOut := cuvil(t, args...); code != 2 || !strings.Contains(errOut, `-precision "fp8": want bf16 or fp16`) {
			t.Errorf("%v: exit %d, %s", args, code, errOut)
		}
	}
}
