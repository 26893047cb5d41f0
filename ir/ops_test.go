package ir

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestOpVersions compares the table with since_versions transcribed
// separately from ONNX's operator_sets.h.
func TestOpVersions(t *testing.T) {
	b, err := os.ReadFile("testdata/onnx_op_versions.txt")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, vs, _ := strings.Cut(line, " ")
		want[name] = vs
	}
	for _, s := range Ops() {
		if s.Domain != "" {
			continue
		}
		got := strings.Trim(fmt.Sprint(s.Versions), "[]")
		if want[s.Name] != got {
			t.Errorf("%s: versions %q, want %q", s.Name, got, want[s.Name])
		}
		delete(want, s.Name)
	}
	for name := range want {
		t.Errorf("op %s is missing from the table", name)
	}
}

func TestVersionFor(t *testing.T) {
	for _, c := range []struct {
		op    string
		opset int64
		want  int
		ok    bool
	}{
		{"Reshape", 4, 1, true},
		{"Reshape", 5, 5, true},
		{"Reshape", 12, 5, true},
		{"Reshape", 17, 14, true},
		{"Reshape", 18, 14, true},
		{"Reshape", 19, 19, true},
		{"Reshape", 22, 21, true},
		{"Reshape", 27, 25, true},
		{"ReduceMax", 18, 18, true},
		{"ReduceMax", 19, 18, true},
		{"ReduceMax", 27, 20, true},
		{"ReduceSum", 27, 13, true},
		{"Pad", 20, 19, true},
		{"Pad", 26, 25, true},
		{"TopK", 23, 11, true},
		{"TopK", 24, 24, true},
		{"Range", 26, 11, true},
		{"Range", 27, 27, true},
		{"Reshape", 28, 0, false},
		{"Resize", 9, 0, false},
		{"Resize", 10, 10, true},
		{"LayerNormalization", 16, 0, false},
		{"LayerNormalization", 17, 17, true},
		{"Upsample", 17, 10, true},
	} {
		v, ok := LookupOp("ai.onnx", c.op).VersionFor(c.opset)
		if v != c.want || ok != c.ok {
			t.Errorf("%s.VersionFor(%d) = %d, %v; want %d, %v", c.op, c.opset, v, ok, c.want, c.ok)
		}
	}
	if LookupOp("", "NoSuchOp") != nil {
		t.Error("LookupOp found NoSuchOp")
	}
}

func TestArity(t *testing.T) {
	for _, c := range []struct {
		op                           string
		version                      int
		minIn, maxIn, minOut, maxOut int
	}{
		{"Conv", 11, 2, 3, 1, 1},
		{"Reshape", 1, 1, 1, 1, 1},
		{"Reshape", 14, 2, 2, 1, 1},
		{"Clip", 6, 1, 1, 1, 1},
		{"Clip", 13, 1, 3, 1, 1},
		{"Concat", 13, 1, -1, 1, 1},
		{"Loop", 16, 0, -1, 1, -1},
		{"Split", 13, 1, 2, 1, -1},
		{"Constant", 13, 0, 0, 1, 1},
		{"BatchNormalization", 9, 5, 5, 1, 5},
		{"BatchNormalization", 15, 5, 5, 1, 3},
		{"Resize", 13, 1, 4, 1, 1},
	} {
		minIn, maxIn, minOut, maxOut, _ := LookupOp("", c.op).Arity(c.version)
		got := [4]int{minIn, maxIn, minOut, maxOut}
		if want := [4]int{c.minIn, c.maxIn, c.minOut, c.maxOut}; got != want {
			t.Errorf("%s-%d arity %v, want %v", c.op, c.version, got, want)
		}
	}
}

func TestAttrFor(t *testing.T) {
	cast := LookupOp("", "Cast")
	if a := cast.AttrFor("to", 1); a == nil || a.Kind != AttrString {
		t.Errorf("Cast-1 to: %+v, want a string attribute", a)
	}
	if a := cast.AttrFor("to", 13); a == nil || a.Kind != AttrInt || !a.Required {
		t.Errorf("Cast-13 to: %+v, want a required int attribute", a)
	}
	sm := LookupOp("", "Softmax")
	if a := sm.AttrFor("axis", 11); a == nil || a.Default != int64(1) {
		t.Errorf("Softmax-11 axis: %+v, want default 1", a)
	}
	if a := sm.AttrFor("axis", 13); a == nil || a.Default != int64(-1) {
		t.Errorf("Softmax-13 axis: %+v, want default -1", a)
	}
	if a := LookupOp("", "Reshape").AttrFor("shape", 5); a != nil {
		t.Errorf("Reshape-5 has attribute shape: %+v", a)
	}
}

func TestOpDefErrors(t *testing.T) {
	for _, c := range []struct {
		def  opDef
		want string
	}{
		{opDef{name: "X", versions: "1 1"}, `op table: X: bad version list "1 1"`},
		{opDef{name: "X", versions: "1", in: "a:T"}, `op table: X: inputs: formal "a" uses undeclared constraint "T"`},
		{opDef{name: "X", versions: "1", in: "a:T... b:T", types: "T=f32"}, `op table: X: inputs: variadic formal "a" is not last`},
		{opDef{name: "X", versions: "1", types: "T=f33"}, `op table: X: bad dtype "f33" in "T=f33"`},
		{opDef{name: "X", versions: "1", attrs: "a:integer"}, `op table: X: attribute "a:integer": bad kind "integer"`},
		{opDef{name: "X", versions: "1", attrs: "a:graph=1"}, `op table: X: attribute "a:graph=1": no default for kind graph`},
		{opDef{name: "X", versions: "1", flags: "fast"}, `op table: X: bad flag "fast"`},
	} {
		_, err := parseOpDef(c.def)
		if err == nil || err.Error() != c.want {
			t.Errorf("parseOpDef(%+v) = %v, want %s", c.def, err, c.want)
		}
	}
}

// TestSchemasConsistent checks what parseOpDef cannot see row by row.
func TestSchemasConsistent(t *testing.T) {
	for _, s := range Ops() {
		if s.Doc == "" || !strings.HasSuffix(s.Doc, ".") {
			t.Errorf("%s: doc %q is not a sentence", s.Name, s.Doc)
		}
		used := map[string]bool{}
		for _, a := range append(append([]ArgSpec{}, s.Inputs...), s.Outputs...) {
			used[a.Type] = true
		}
		for l := range s.Types {
			if !used[l] {
				t.Errorf("%s: constraint %s is used by no formal", s.Name, l)
			}
		}
		for _, o := range s.Older {
			if o.Until <= s.Versions[0] || o.Until > s.Versions[len(s.Versions)-1] {
				t.Errorf("%s: older arity until %d is outside versions %v", s.Name, o.Until, s.Versions)
			}
		}
		for i, a := range s.Attrs {
			for _, b := range s.Attrs[i+1:] {
				if a.Name == b.Name {
					for _, v := range s.Versions {
						if a.InVersion(v) && b.InVersion(v) {
							t.Errorf("%s: attribute %q declared twice for version %d", s.Name, a.Name, v)
						}
					}
				}
			}
		}
		if s.Commutative && !s.Elementwise {
			t.Errorf("%s: commutative but not elementwise", s.Name)
		}
	}
}
