package passes

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestPassOrder(t *testing.T) {
	at := map[*Pass]int{}
	names := map[string]bool{}
	for i, p := range Pipeline {
		if _, dup := at[p]; dup || names[p.Name] {
			t.Errorf("pass %s is in the pipeline twice", p.Name)
		}
		at[p] = i
		names[p.Name] = true
	}
	for _, c := range passOrder {
		i, ok1 := at[c.before]
		j, ok2 := at[c.after]
		switch {
		case !ok1 || !ok2:
			t.Errorf("passOrder names %s before %s, but one of them is not in the pipeline", c.before.Name, c.after.Name)
		case i >= j:
			t.Errorf("pass %s must run before %s: %s", c.before.Name, c.after.Name, c.why)
		}
	}
}

// TestPassesDoc: docs/passes.md's table lists every pass of the pipeline,
// in pipeline order, so the document cannot drift from the code.
func TestPassesDoc(t *testing.T) {
	b, err := os.ReadFile("../docs/passes.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `([a-z-]+)` \\|")
	var doc []string
	for _, m := range row.FindAllStringSubmatch(string(b), -1) {
		doc = append(doc, m[1])
	}
	var want []string
	for _, p := range Pipeline {
		want = append(want, p.Name)
	}
	if !slices.Equal(doc, want) {
		t.Errorf("docs/passes.md's table lists\n  %s\nthe pipeline is\n  %s", strings.Join(doc, " "), strings.Join(want, " "))
	}
}
