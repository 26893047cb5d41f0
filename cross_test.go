package cuvil

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuvil/cuvil/internal/harness"
)

// crossTargets are the platforms TestCross runs generated packages on:
// 32-bit ARM, big-endian s390x, riscv64 under qemu-user, and wasip1 under
// Node.js's WASI (internal/harness Target, as cuvil check -goarch uses).
var crossTargets = []harness.Target{
	{GOARCH: "arm", GOARM: "7"},
	{GOARCH: "s390x"},
	{GOARCH: "riscv64"},
	{GOOS: "wasip1", GOARCH: "wasm"},
}

// crossMore are the further targets TestCross runs with CUVIL_CROSS_ALL=1
// (make cross CROSS_ALL=1): little- and big-endian POWER, LoongArch and
// ARMv6 (soft float in the Go toolchain's sense: GOARM=6 has VFPv2 only).
var crossMore = []harness.Target{
	{GOARCH: "arm", GOARM: "6"},
	{GOARCH: "ppc64le"},
	{GOARCH: "ppc64"},
	{GOARCH: "loong64"},
}

// crossName names a target in subtests and messages.
func crossName(t harness.Target) string {
	if t.GOOS != "" {
		return t.GOOS + "_" + t.GOARCH
	}
	return t.GOARCH + t.GOARM
}

// TestCross compiles the mnist model and, for each crossTargets entry,
// runs the generated package's own tests (go test -exec under the
// target's emulator) and cuvil check against the reference outputs
// (cuvil check -goarch, through the harness's Target). A target whose
// emulator (qemu-<arch>-static, node) is missing is skipped, saying so.
// make cross runs it; CUVIL_CROSS_ALL=1 adds crossMore.
func TestCross(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and emulates four packages; skipped in -short mode")
	}
	model, data := mnistModel(t)
	dir := t.TempDir()
	pkgDir := filepath.Join(dir, "mnist")
	if err := Compile(Options{Model: model, Out: pkgDir}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module crossmnist\n\ngo 1.22\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cuvilBin := filepath.Join(dir, "cuvil")
	if out, err := exec.Command("go", "build", "-o", cuvilBin, "./cmd/cuvil").CombinedOutput(); err != nil {
		t.Fatalf("building cuvil: %v\n%s", err, out)
	}
	targets := crossTargets
	if os.Getenv("CUVIL_CROSS_ALL") != "" {
		targets = append(targets[:len(targets):len(targets)], crossMore...)
	}
	for _, tgt := range targets {
		tgt := tgt
		t.Run(crossName(tgt), func(t *testing.T) {
			run, err := tgt.ExecArgs(t.TempDir())
			if err != nil {
				t.Skipf("skipping %s: %v", crossName(tgt), err)
			}
			cmd := exec.Command("go", "test", "-count=1", "-exec", strings.Join(run, " "), "./mnist")
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-buildvcs=false")
			cmd.Env = append(cmd.Env, tgt.Env()...)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("go test %v: %v\n%s", tgt.Env(), err, out)
			}
			t.Logf("go test %v: %s", tgt.Env(), strings.TrimSpace(string(out)))

			check := exec.Command(cuvilBin, "check", "-model", model, "-data", data, "-goarch", tgt.GOARCH)
			check.Env = os.Environ()
			if tgt.GOARM != "" {
				check.Env = append(check.Env, "GOARM="+tgt.GOARM)
			}
			out, err = check.CombinedOutput()
			if err != nil {
				t.Fatalf("cuvil check -goarch %s: %v\n%s", tgt.GOARCH, err, out)
			}
			t.Logf("cuvil check -goarch %s: %s", tgt.GOARCH, strings.TrimSpace(string(out)))
		})
	}
}
