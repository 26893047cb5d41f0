package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMain lets a test run this binary as the cuvil command (the signal
// test needs a process of its own to interrupt).
func TestMain(m *testing.M) {
	if os.Getenv("CUVIL_TEST_AS_MAIN") == "1" {
		os.Args = append([]string{"cuvil"}, strings.Fields(os.Getenv("CUVIL_TEST_ARGS"))...)
		main()
		return
	}
	os.Exit(m.Run())
}

// An interrupted `cuvil run` removes its build module (and any staging
// folder) before it exits with 130.
func TestInterruptRemovesTempDirs(t *testing.T) {
	if testing.Short() || runtime.GOOS == "windows" {
		t.Skip("builds generated code; needs Unix signals")
	}
	tmp := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "CUVIL_TEST_AS_MAIN=1", "TMPDIR="+tmp,
		"CUVIL_TEST_ARGS=run -model "+mnist+"/model.onnx -data "+mnist+"/test_data_set_0 -out "+filepath.Join(tmp, "out"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait for the build module to appear, then interrupt.
	deadline := time.Now().Add(60 * time.Second)
	for {
		if m, _ := filepath.Glob(filepath.Join(tmp, "cuvilrun-*")); len(m) > 0 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no cuvilrun-* folder appeared in %s; stderr:\n%s", tmp, stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Fatalf("exit: %v, want status 130; stderr:\n%s", err, stderr.String())
	}
	if m, _ := filepath.Glob(filepath.Join(tmp, "cuvilrun-*")); len(m) > 0 {
		t.Errorf("left behind: %v", m)
	}
	if !strings.Contains(stderr.String(), "temporary files removed") {
		t.Errorf("stderr does not say it cleaned up:\n%s", stderr.String())
	}
}
