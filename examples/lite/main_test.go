package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/cuvil/cuvil/internal/harness"
)

func TestSpot(t *testing.T) {
	got, worst, err := spot()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 12 {
		t.Fatalf("%d logits, want 12", len(got))
	}
	t.Logf("logits within %.2g of PyTorch's", worst)
	if n := testing.AllocsPerRun(3, func() {
		if _, _, err := spot(); err != nil {
			t.Fatal(err)
		}
	}); n > 4 { // New's Model, NewSession's Session and spot's two decoded slices
		t.Errorf("spot allocates %v times, want at most 4 (none in Run)", n)
	}
}

// TestARM builds this command for GOARCH=arm GOARM=7 and runs it under
// qemu-arm (internal/harness Target, as cuvil check -goarch arm does): it
// must match PyTorch's logits there too. Skipped without qemu-arm.
func TestARM(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-builds and emulates; skipped in -short mode")
	}
	if runtime.GOARCH == "arm" {
		t.Skip("this test runs on arm already (TestSpot is the check)")
	}
	tgt := harness.Target{GOARCH: "arm", GOARM: "7"}
	dir := t.TempDir()
	run, err := tgt.ExecArgs(dir)
	if err != nil {
		t.Skipf("skipping: %v", err)
	}
	exe := filepath.Join(dir, "lite")
	build := exec.Command("go", "build", "-o", exe, ".")
	build.Env = append(os.Environ(), tgt.Env()...)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build %v: %v\n%s", tgt.Env(), err, out)
	}
	argv := append(run, exe)
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %v\n%s", argv, err, out)
	}
	if !strings.Contains(string(out), "of PyTorch's") {
		t.Errorf("output:\n%s", out)
	}
	t.Logf("qemu-arm: %s", strings.TrimSpace(string(out)))
}
