package templates

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// templateFiles lists this package's Go and assembly files, tests included.
func templateFiles(t *testing.T) []string {
	t.Helper()
	ents, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		if n := e.Name(); !e.IsDir() && (strings.HasSuffix(n, ".go") || strings.HasSuffix(n, ".s")) {
			names = append(names, n)
		}
	}
	return names
}

// TestReadme: README.md names every file of templates/ (as `name`), and
// every file name it gives in backquotes exists, so the map cannot drift
// from the folder.
func TestReadme(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]bool{}
	for _, m := range regexp.MustCompile("`([A-Za-z][A-Za-z0-9_.]*\\.(?:go|s))`").FindAllStringSubmatch(string(b), -1) {
		named[m[1]] = true
	}
	files := templateFiles(t)
	for _, f := range files {
		if !named[f] {
			t.Errorf("templates/%s is not in templates/README.md: add it to its family's row", f)
		}
	}
	for f := range named {
		if !slices.Contains(files, f) {
			t.Errorf("templates/README.md names %s, which templates/ does not have", f)
		}
	}
}

// TestFileNames checks the naming scheme README.md describes: a source
// file is rt_, k_, asm_ (generated only), compiler_, gen_, registry.go or doc.go;
// a test file is testutil_*_test.go, readme_test.go or named after a source file
// (<source>_test.go or <source>_<aspect>_test.go).
func TestFileNames(t *testing.T) {
	files := templateFiles(t)
	var stems []string
	for _, f := range files {
		if !strings.HasSuffix(f, "_test.go") {
			stems = append(stems, strings.TrimSuffix(strings.TrimSuffix(f, ".go"), ".s"))
		}
	}
	for _, f := range files {
		switch {
		case strings.HasSuffix(f, "_test.go"):
			x := strings.TrimSuffix(f, "_test.go")
			if strings.HasPrefix(x, "testutil_") || x == "readme" { // readme_test.go tests README.md
				continue
			}
			if !slices.ContainsFunc(stems, func(s string) bool { return x == s || strings.HasPrefix(x, s+"_") }) {
				t.Errorf("%s is not named after a source file (<source>_test.go, <source>_<aspect>_test.go or testutil_*_test.go)", f)
			}
		case strings.HasPrefix(f, "asm_"):
			if strings.HasSuffix(f, ".go") {
				b, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				if !strings.HasPrefix(string(b), "// Code generated") {
					t.Errorf("%s is not generated: asm_ names asmgen's pairs only; name a hand-written file k_<family>_*.go", f)
				}
			}
		case strings.HasPrefix(f, "rt_"), strings.HasPrefix(f, "k_"), strings.HasPrefix(f, "compiler_"), strings.HasPrefix(f, "gen_"), f == "registry.go", f == "doc.go":
		default:
			t.Errorf("%s has none of the prefixes rt_, k_, asm_, compiler_, gen_ (README.md)", f)
		}
	}
}
