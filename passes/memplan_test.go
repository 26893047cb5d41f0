package passes

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuvil/cuvil/ir"
	"golang.org/x/tools/txtar"
)

// TestMemPlanGolden plans the input model of each testdata/memplan file and
// compares the printed plan with the want section (-update rewrites it).
func TestMemPlanGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/memplan/*.txtar")
	if len(files) == 0 {
		t.Fatal("no testdata/memplan files")
	}
	update := false
	if f := flag.Lookup("update"); f != nil {
		update = f.Value.String() == "true"
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var input string
			want := -1
			for i, f := range ar.Files {
				switch f.Name {
				case "input":
					input = string(f.Data)
				case "want":
					want = i
				}
			}
			m, err := ir.Parse(input)
			if err != nil {
				t.Fatal(err)
			}
			p, err := PlanModel(m)
			if err != nil {
				t.Fatal(err)
			}
			if err := p.Check(); err != nil {
				t.Error(err)
			}
			var b strings.Builder
			if err := p.Print(&b); err != nil {
				t.Fatal(err)
			}
			got := b.String()
			if update {
				if want < 0 {
					ar.Files = append(ar.Files, txtar.File{Name: "want"})
					want = len(ar.Files) - 1
				}
				ar.Files[want].Data = []byte(got)
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if want < 0 || string(ar.Files[want].Data) != got {
				t.Errorf("plan differs\n--- got ---\n%s", got)
			}
		})
	}
}
