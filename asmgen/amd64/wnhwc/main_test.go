package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGeneratedUpToDate regenerates the assembly and stubs into a temporary
// folder and compares them with the files committed under templates/: a
// change to the generator must come with `go generate ./asmgen/amd64/wnhwc`.
func TestGeneratedUpToDate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the generator with go run")
	}
	dir := t.TempDir()
	files := map[string]string{
		"-out":   "asm_wnhwc_amd64.s",
		"-stubs": "asm_wnhwc_amd64.go",
	}
	args := []string{"run", ".", "-pkg", "templates"}
	for flag, name := range files {
		args = append(args, flag, filepath.Join(dir, name))
	}
	cmd := exec.Command("go", args...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	for _, name := range files {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join("..", "..", "..", "templates", name))
		if err != nil {
			t.Fatal(err)
		}
		// The header names the output paths, which differ here.
		if !bytes.Equal(dropFirstLine(got), dropFirstLine(want)) {
			t.Errorf("templates/%s is stale: run go generate ./asmgen/amd64/wnhwc", name)
		}
	}
}

func dropFirstLine(b []byte) []byte {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return b[i+1:]
	}
	return b
}
