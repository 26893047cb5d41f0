package cuvil

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/ir/onnx"
)

// mapsModel is what skl2onnx writes for a classifier (LinearClassifier,
// then ZipMap: the probabilities as one map per row, label to score) and
// for a DictVectorizer + LinearRegressor pipeline (a map input).
func mapsModel() *ir.Model {
	attr := func(name string, v any) *ir.Attr {
		switch v := v.(type) {
		case string:
			return &ir.Attr{Name: name, Kind: ir.AttrString, S: v}
		case []float32:
			return &ir.Attr{Name: name, Kind: ir.AttrFloats, Floats: v}
		case []int64:
			return &ir.Attr{Name: name, Kind: ir.AttrInts, Ints: v}
		case []string:
			return &ir.Attr{Name: name, Kind: ir.AttrStrings, Strings: v}
		case int64:
			return &ir.Attr{Name: name, Kind: ir.AttrInt, I: v}
		}
		panic(name)
	}
	f32 := ir.TensorType(ir.F32, nil)
	x := &ir.Value{Name: "x", Type: ir.TensorType(ir.F32, ir.Shape{ir.S("N"), ir.D(2)})}
	dict := &ir.Value{Name: "dict", Type: ir.Type{Kind: ir.MapKind, DType: ir.String, Elem: &f32}}
	// skl2onnx declares the outputs: ZipMap's as a sequence of maps.
	probMap := ir.Type{Kind: ir.MapKind, DType: ir.I64, Elem: &f32}
	label := &ir.Value{Name: "label", Type: ir.TensorType(ir.I64, ir.Shape{ir.S("N")})}
	scores := &ir.Value{Name: "scores"}
	probs := &ir.Value{Name: "probs", Type: ir.Type{Kind: ir.SequenceKind, Elem: &probMap}}
	vec, y := &ir.Value{Name: "vec"}, &ir.Value{Name: "y", Type: ir.TensorType(ir.F32, ir.ShapeOf(1, 1))}
	lin := &ir.Node{Name: "clf", Op: "LinearClassifier", Domain: ir.MLDomain, Version: 1,
		Inputs: []*ir.Value{x}, Outputs: []*ir.Value{label, scores},
		Attrs: []*ir.Attr{attr("classlabels_ints", mapsLabels), attr("coefficients", mapsCoef),
			attr("intercepts", mapsIntercepts), attr("multi_class", int64(1)), attr("post_transform", "SOFTMAX")}}
	zm := &ir.Node{Name: "zipmap", Op: "ZipMap", Domain: ir.MLDomain, Version: 1,
		Inputs: []*ir.Value{scores}, Outputs: []*ir.Value{probs}, Attrs: []*ir.Attr{attr("classlabels_int64s", mapsLabels)}}
	dv := &ir.Node{Name: "dictvec", Op: "DictVectorizer", Domain: ir.MLDomain, Version: 1,
		Inputs: []*ir.Value{dict}, Outputs: []*ir.Value{vec}, Attrs: []*ir.Attr{attr("string_vocabulary", mapsVocab)}}
	reg := &ir.Node{Name: "reg", Op: "LinearRegressor", Domain: ir.MLDomain, Version: 1,
		Inputs: []*ir.Value{vec}, Outputs: []*ir.Value{y},
		Attrs: []*ir.Attr{attr("coefficients", mapsRegCoef), attr("intercepts", []float32{0.5})}}
	label.Def, scores.Def, probs.Def, vec.Def, y.Def = lin, lin, zm, dv, reg
	return &ir.Model{
		Graph: &ir.Graph{Name: "maps", Inputs: []*ir.Value{x, dict}, Outputs: []*ir.Value{label, probs, y},
			Nodes: []*ir.Node{lin, zm, dv, reg}},
		Opsets:    map[string]int64{"": 17, ir.MLDomain: 1},
		IRVersion: 8,
	}
}

var (
	mapsLabels     = []int64{3, 7, 11}
	mapsCoef       = []float32{0.5, -1, -0.25, 0.75, 1, 0.125} // [3 classes, 2 features]
	mapsIntercepts = []float32{0.1, 0, -0.2}
	mapsVocab      = []string{"a", "b", "c", "d"}
	mapsRegCoef    = []float32{1, 10, 100, 1000}
)

// TestMapsEndToEnd compiles mapsModel, builds the generated package and
// checks in Go that ZipMap's output reads as []map[int64]float32 of the
// softmax scores and that a Go map feeds DictVectorizer; the generated
// package's own tests (steady state, pooled runs, guards) run too. A
// -cshared compile is refused naming the map-typed value.
func TestMapsEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a generated package")
	}
	dir := t.TempDir()
	b, err := onnx.Encode(mapsModel())
	if err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(dir, "maps.onnx")
	if err := os.WriteFile(model, b, 0o644); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(dir, "mod")
	out := filepath.Join(root, "maps")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module example.com/app\n\ngo 1.22\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err = Compile(Options{Model: model, Out: filepath.Join(root, "csh"), CShared: true})
	if err == nil || !strings.Contains(err.Error(), "-cshared") || !strings.Contains(err.Error(), "map<") {
		t.Errorf("-cshared with map values: %v, want a refusal naming the map type", err)
	}
	os.RemoveAll(filepath.Join(root, "csh"))
	if err := Compile(Options{Model: model, Out: out, Verify: true}); err != nil {
		t.Fatal(err)
	}
	// The expected values, in float64.
	rows := [][2]float64{{1, 2}, {-0.5, 0.25}, {3, -4}}
	var want strings.Builder
	want.WriteString("var wantProbs = []map[int64]float64{\n")
	for _, r := range rows {
		s := make([]float64, 3)
		sum := 0.0
		for c := range s {
			s[c] = math.Exp(float64(mapsIntercepts[c]) + r[0]*float64(mapsCoef[2*c]) + r[1]*float64(mapsCoef[2*c+1]))
			sum += s[c]
		}
		fmt.Fprintf(&want, "\t{%d: %v, %d: %v, %d: %v},\n", mapsLabels[0], s[0]/sum, mapsLabels[1], s[1]/sum, mapsLabels[2], s[2]/sum)
	}
	want.WriteString("}\n")
	test := `package maps

import (
	"math"
	"strings"
	"testing"
)

var x = []float32{1, 2, -0.5, 0.25, 3, -4}

` + want.String() + `
func TestMaps(t *testing.T) {
	m, err := New()
	if err != nil {
		t.Fatal(err)
	}
	s := m.NewSession()
	defer s.Close()
	in := Input{
		X:    &Tensor{DType: F32, Shape: []int{3, 2}, Data: x},
		Dict: NewMap(map[string]float32{"b": 2, "d": -1, "unseen": 9}),
	}
	for run := 0; run < 2; run++ {
		out, err := s.Run(in)
		if err != nil {
			t.Fatal(err)
		}
		probs, err := MapsOf[int64, float32](out.Probs)
		if err != nil {
			t.Fatal(err)
		}
		if len(probs) != len(wantProbs) {
			t.Fatalf("%d maps, want %d", len(probs), len(wantProbs))
		}
		for i, w := range wantProbs {
			if len(probs[i]) != len(w) {
				t.Errorf("row %d: %v, want %v", i, probs[i], w)
			}
			for k, v := range w {
				if g, ok := probs[i][k]; !ok || math.Abs(float64(g)-v) > 1e-6 {
					t.Errorf("row %d label %d: %v, want %v", i, k, g, v)
				}
			}
		}
		// DictVectorizer: [0, 2, 0, -1] · [1, 10, 100, 1000] + 0.5.
		if y := out.Y.F32(); len(y) != 1 || y[0] != 20-1000+0.5 || len(out.Y.Shape) != 2 {
			t.Errorf("y = %v %v, want [[-979.5]]", out.Y.Shape, y)
		}
		if _, err := MapsOf[string, float32](out.Probs); err == nil {
			t.Error("MapsOf with string keys succeeded on int64 labels")
		}
	}
	bad := in
	bad.Dict = NewMap(map[int64]float32{1: 2})
	if _, err := s.Run(bad); err == nil || !strings.Contains(err.Error(), "\"dict\"") {
		t.Errorf("map of the wrong key type: %v", err)
	}
	bad.Dict = &Tensor{DType: F32, Shape: []int{1}, Data: []float32{1}}
	if _, err := s.Run(bad); err == nil || !strings.Contains(err.Error(), "NewMap") {
		t.Errorf("a tensor for a map: %v", err)
	}
}
`
	if err := os.WriteFile(filepath.Join(out, "maps_values_test.go"), []byte(test), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "test", "-count=1", "-v", "./...")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-buildvcs=false")
	res, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go test: %v\n%s", err, res)
	}
	for _, name := range []string{"TestMaps", "TestRun", "TestGuard"} {
		if !strings.Contains(string(res), "--- PASS: "+name) {
			t.Errorf("%s did not pass:\n%s", name, res)
		}
	}
}
