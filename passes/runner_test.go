package passes

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/cuvil/cuvil/ir"
)

func TestParseDebug(t *testing.T) {
	got, err := ParseDebug("shapes/dump, dce/off,constfold/time")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"shapes": "dump", "dce": "off", "constfold": "time"}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
	if m, err := ParseDebug(""); err != nil || len(m) != 0 {
		t.Errorf("empty: %v, %v", m, err)
	}
	for _, tc := range []struct{ in, frag string }{
		{"nosuch/dump", `unknown pass "nosuch" (passes: gradient, inline-flexattention, shapes, constfold, dce, `},
		{"dce/explode", `unknown action "explode" for pass "dce" (actions: dump, off, time)`},
		{"shapes/off", `pass "shapes" is required`},
		{"dce", "want <pass>/<action>"},
		{"dce/off,dce/dump", "two actions"},
	} {
		_, err := ParseDebug(tc.in)
		wantErr(t, err, tc.frag)
	}
}

func TestHelpListsEveryPass(t *testing.T) {
	h := Help()
	for _, p := range Pipeline {
		if !strings.Contains(h, p.Name) || !strings.Contains(h, p.Doc) {
			t.Errorf("help text lacks %s: %s", p.Name, h)
		}
	}
	if !strings.Contains(h, "(required)") {
		t.Error("help does not mark required passes")
	}
}

func smallModel(t *testing.T) *builder {
	b := newBuilder(t, 17)
	x := b.input("x", ir.F32, "N", 4)
	k := b.constant("k", ir.NewTensorF32([]int64{4}, []float32{1, 2, 3, 4}))
	dead := b.out("Neg", "dead", []*ir.Value{x})
	_ = dead
	y := b.out("Add", "y", []*ir.Value{x, k})
	b.g.Outputs = []*ir.Value{y}
	return b
}

func TestRunActions(t *testing.T) {
	b := smallModel(t)
	var dump, log bytes.Buffer
	opts := Options{Verify: true, Debug: map[string]string{"shapes": "dump", "dce": "time"}, Dump: &dump, Log: &log}
	if err := Run(b.m, opts); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(dump.String(), "# after pass shapes") || !strings.Contains(dump.String(), "%y = Add <f32[N,4]> %x %k") {
		t.Errorf("dump:\n%s", dump.String())
	}
	if strings.Contains(dump.String(), "after pass dce") {
		t.Error("dumped a pass not marked dump")
	}
	if !strings.HasPrefix(log.String(), "pass dce") || strings.Count(log.String(), "\n") != 1 {
		t.Errorf("log: %q", log.String())
	}
	if len(b.g.Nodes) != 1 {
		t.Errorf("dce did not run: %d nodes", len(b.g.Nodes))
	}
}

func TestRunOff(t *testing.T) {
	b := smallModel(t)
	if err := Run(b.m, Options{Debug: map[string]string{"dce": "off", "cleanup": "off"}}); err != nil {
		t.Fatal(err)
	}
	if len(b.g.Nodes) != 2 {
		t.Errorf("dce ran although off: %d nodes", len(b.g.Nodes))
	}
	wantErr(t, Run(smallModel(t).m, Options{Debug: map[string]string{"shapes": "off"}}), `pass "shapes" is required`)
}

func TestRunVerifies(t *testing.T) {
	b := smallModel(t)
	b.g.Nodes[0].Version = 99 // not a version of Neg
	wantErr(t, Run(b.m, Options{Verify: true}), "invalid model", `node "dead" (Neg)`)
	// The imported model is verified also without Verify.
	b = smallModel(t)
	b.g.Nodes[0].Version = 99
	wantErr(t, Run(b.m, Options{}), "invalid model", `node "dead" (Neg)`)

	// A pass that breaks the IR is caught right after it.
	b = smallModel(t)
	breaker := &Pass{Name: "breaker", Doc: "drops the node defining the output", Run: func(m *ir.Model) error {
		m.Graph.Nodes = m.Graph.Nodes[:1]
		return nil
	}}
	wantErr(t, runPasses(b.m, []*Pass{Shapes, breaker}, Options{Verify: true}), `after pass "breaker"`, "not defined")
}

func TestRunReportsPassErrorsAndPanics(t *testing.T) {
	b := smallModel(t)
	fails := &Pass{Name: "fails", Run: func(m *ir.Model) error { return errors.New("no good") }}
	wantErr(t, runPasses(b.m, []*Pass{fails}, Options{}), `pass "fails": no good`)

	panics := &Pass{Name: "boom", Run: func(m *ir.Model) error {
		for _, n := range m.Graph.Nodes {
			at(m, n)
			if n.Op == "Add" {
				var s []int
				_ = s[len(n.Inputs)] // index out of range
			}
		}
		return nil
	}}
	err := runPasses(b.m, []*Pass{panics}, Options{})
	wantErr(t, err, `pass "boom": node "y" (Add): runtime error: index out of range [2]`)

	early := &Pass{Name: "early", Run: func(m *ir.Model) error { panic("before any node") }}
	wantErr(t, runPasses(b.m, []*Pass{early}, Options{}), `pass "early": before any node`)
}
