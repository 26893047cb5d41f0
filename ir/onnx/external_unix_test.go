//go:build unix

package onnx

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// External data that is a named pipe is refused before it is opened (an
// open for reading would block until a writer comes).
func TestExternalDataNamedPipe(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Skip("no named pipes here:", err)
	}
	_, err := importProto(t, externalModel("fifo"), dir)
	if err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("got %v, want a refusal", err)
	}
}
