// Package genfresh checks that an assembly generator's output committed
// under templates/ is what the generator writes today, so a change to a
// generator cannot land without its `go generate`.
package genfresh

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Check runs the generator in the current folder (`go run . -pkg
// templates -out DIR/<base>.s -stubs DIR/<base>.go` into a temporary DIR)
// and compares both files with templates/<base>.{s,go}, apart from their
// first line (the header names the output paths). It skips under -short.
func Check(t *testing.T, base string) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the generator with go run")
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root := wd
	for {
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			break
		}
		up := filepath.Dir(root)
		if up == root {
			t.Fatalf("no go.mod above %s", wd)
		}
		root = up
	}
	dir := t.TempDir()
	args := []string{"run", ".", "-pkg", "templates",
		"-out", filepath.Join(dir, base+".s"), "-stubs", filepath.Join(dir, base+".go")}
	if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	rel, _ := filepath.Rel(root, wd)
	for _, name := range []string{base + ".s", base + ".go"} {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join(root, "templates", name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(dropFirstLine(got), dropFirstLine(want)) {
			t.Errorf("templates/%s is stale: run go generate ./%s", name, filepath.ToSlash(rel))
		}
	}
}

func dropFirstLine(b []byte) []byte {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return b[i+1:]
	}
	return b
}
