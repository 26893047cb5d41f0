package cuvil

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestNEONDispatchGenerated: a generated package whose kernels have NEON
// versions (mnist: NHWC convolutions, Winograd, the SGEMM) holds
// dispatch_arm64_test.go checking each of them. With qemu-aarch64-static
// the package is built for arm64 and the test must pass (the NEON kernels
// chosen) and, with -tags purego, not be built at all.
func TestNEONDispatchGenerated(t *testing.T) {
	out := filepath.Join(t.TempDir(), "mnist")
	if err := Compile(Options{Model: "testdata/mnist/model.onnx", Out: out, Pkg: "mnist"}); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join(out, "dispatch_arm64_test.go"))
	if err != nil {
		t.Fatalf("no arm64 dispatch test: %v", err)
	}
	for _, want := range []string{"//go:build arm64 && !purego", "func TestNEONDispatch", "wnNEON(2) && wnNEON(4)", "nhwcPWFast", "cpuHasASIMD"} {
		if !strings.Contains(string(src), want) {
			t.Errorf("dispatch_arm64_test.go lacks %q:\n%s", want, src)
		}
	}
	if testing.Short() {
		return
	}
	qemu, err := exec.LookPath("qemu-aarch64-static")
	if err != nil {
		t.Skip("qemu-aarch64-static not found: the arm64 run is skipped")
	}
	if err := os.WriteFile(filepath.Join(out, "go.mod"), []byte("module mnist\n\ngo 1.22\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tags := range []string{"", "purego"} {
		cmd := exec.Command("go", "test", "-tags", tags, "-exec", qemu, "-run", "^(TestNEONDispatch|TestRun)$", "-v", ".")
		cmd.Dir = out
		cmd.Env = append(os.Environ(), "GOARCH=arm64", "CGO_ENABLED=0", "GOWORK=off", "GOFLAGS=-buildvcs=false")
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("tags %q: %v\n%s", tags, err, b)
		}
		ran := strings.Contains(string(b), "--- PASS: TestNEONDispatch")
		if ran != (tags == "") {
			t.Errorf("tags %q: TestNEONDispatch ran %v, want %v:\n%s", tags, ran, tags == "", b)
		}
	}
}
