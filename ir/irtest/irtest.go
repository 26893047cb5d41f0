// Package irtest runs golden tests written in the IR text form: each
// txtar file holds an input model and the model (or error) a function
// should turn it into.
package irtest

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuvil/cuvil/ir"
	"golang.org/x/tools/txtar"
)

var update = flag.Bool("update", false, "rewrite the want and error sections of golden files")

// Golden runs f on the input of every txtar file matching pattern (for
// instance "testdata/fold-batchnorm/*.txtar"). Each file has an "input"
// section and either a "want" section, the printed model after f and a
// passing Verify, or an "error" section, the text of the error f or Verify
// returns. With -update the want or error section is rewritten to what
// the run gave.
func Golden(t *testing.T, pattern string, f func(m *ir.Model) error) {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no golden files match %s", pattern)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			runGolden(t, file, f)
		})
	}
}

func runGolden(t *testing.T, file string, f func(m *ir.Model) error) {
	t.Helper()
	if err := check(file, f, *update); err != nil {
		t.Error(err)
	}
}

// check runs one golden file; with update it rewrites the file instead of
// comparing.
func check(file string, f func(m *ir.Model) error, update bool) error {
	ar, err := txtar.ParseFile(file)
	if err != nil {
		return err
	}
	input, hasInput := section(ar, "input")
	if !hasInput {
		return fmt.Errorf("%s: no -- input -- section", file)
	}
	want, hasWant := section(ar, "want")
	wantErr, hasErr := section(ar, "error")
	if hasWant == hasErr && !update {
		return fmt.Errorf("%s: want exactly one of the -- want -- and -- error -- sections", file)
	}
	m, err := ir.Parse(input)
	if err != nil {
		return fmt.Errorf("%s: input: %v", file, err)
	}
	if err := ir.Verify(m); err != nil {
		return fmt.Errorf("%s: input does not verify: %v", file, err)
	}
	got, gotErr := run(m, f)

	if update {
		setSection(ar, "want", got, gotErr == "")
		setSection(ar, "error", gotErr+"\n", gotErr != "")
		return os.WriteFile(file, txtar.Format(ar), 0o666)
	}
	wantErr = strings.TrimSpace(wantErr)
	switch {
	case hasErr && gotErr == "":
		return fmt.Errorf("%s: got no error, want:\n%s\nmodel after the run:\n%s", file, wantErr, got)
	case hasErr && gotErr != wantErr:
		return fmt.Errorf("%s: error differs\n--- got\n%s\n--- want\n%s", file, gotErr, wantErr)
	case hasWant && gotErr != "":
		return fmt.Errorf("%s: unexpected error: %s", file, gotErr)
	case hasWant && got != want:
		return fmt.Errorf("%s: output differs (run go test -update to accept)\n--- got\n%s--- want\n%s", file, got, want)
	}
	return nil
}

// run applies f and verifies the result; it returns the printed model or
// the error text.
func run(m *ir.Model, f func(m *ir.Model) error) (printed, errText string) {
	if err := f(m); err != nil {
		return "", err.Error()
	}
	if err := ir.Verify(m); err != nil {
		return "", "verify: " + err.Error()
	}
	var b bytes.Buffer
	if err := ir.Print(&b, m); err != nil {
		return "", err.Error()
	}
	return b.String(), ""
}

func section(ar *txtar.Archive, name string) (string, bool) {
	for _, f := range ar.Files {
		if f.Name == name {
			return string(f.Data), true
		}
	}
	return "", false
}

// setSection writes or (keep false) drops a section.
func setSection(ar *txtar.Archive, name, data string, keep bool) {
	for i, f := range ar.Files {
		if f.Name == name {
			if keep {
				ar.Files[i].Data = []byte(data)
			} else {
				ar.Files = append(ar.Files[:i], ar.Files[i+1:]...)
			}
			return
		}
	}
	if keep {
		ar.Files = append(ar.Files, txtar.File{Name: name, Data: []byte(data)})
	}
}
