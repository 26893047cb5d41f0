package passes

import (
	"bytes"
	"flag"
	"math"
	"math/rand"
	"os"
	"testing"

	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/ir/onnx"
	"github.com/cuvil/cuvil/templates"
)

// An skl2onnx-style model (what skl2onnx writes for a StandardScaler +
// LogisticRegression pipeline and for a RandomForestClassifier, without the
// ZipMap that maps_test.go covers), built here with the encoder and
// committed as testdata/sklearn/model.onnx (go test ./passes -run
// TestSklearnModel -update rewrites it). The test imports it, infers
// types, runs each node's kernel and compares with a float64 evaluation
// of the same model written out by hand.

const sklearnModelPath = "../testdata/sklearn/model.onnx"

var (
	skOffset = []float32{0.5, -1, 0.25, 2}
	skScale  = []float32{2, 0.5, 1.5, 0.25}
	skCoef   = []float32{ // [3 classes, 4 features]
		0.8, -0.3, 0.1, 0.5,
		-0.6, 0.9, -0.2, 0.05,
		0.1, 0.2, 0.7, -0.9,
	}
	skIntercepts = []float32{0.1, -0.2, 0.05}
	skLabels     = []int64{10, 20, 30}
	skClasses    = []string{"setosa", "versicolor", "virginica"}
)

func skAttr(name string, v any) *ir.Attr {
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

func buildSklearnModel() *ir.Model {
	n := ir.S("N")
	x := &ir.Value{Name: "X", Type: ir.TensorType(ir.F32, ir.Shape{n, ir.D(4)})}
	xs := &ir.Value{Name: "variable"}
	label := &ir.Value{Name: "label"}
	prob := &ir.Value{Name: "probabilities"}
	label2 := &ir.Value{Name: "forest_label"}
	prob2 := &ir.Value{Name: "forest_probabilities"}
	scaler := &ir.Node{Name: "Scaler", Op: "Scaler", Domain: ir.MLDomain, Version: 1,
		Inputs: []*ir.Value{x}, Outputs: []*ir.Value{xs},
		Attrs: []*ir.Attr{skAttr("offset", skOffset), skAttr("scale", skScale)}}
	linear := &ir.Node{Name: "LinearClassifier", Op: "LinearClassifier", Domain: ir.MLDomain, Version: 1,
		Inputs: []*ir.Value{xs}, Outputs: []*ir.Value{label, prob},
		Attrs: []*ir.Attr{skAttr("classlabels_ints", skLabels), skAttr("coefficients", skCoef),
			skAttr("intercepts", skIntercepts), skAttr("multi_class", int64(1)), skAttr("post_transform", "SOFTMAX")}}
	// Two trees. Tree 0: f0 <= 0.1 (NaN goes true) ? leaf1 : (f2 > -0.3 ?
	// leaf3 : leaf4). Tree 1: f1 < 0.5 ? leaf1 : leaf2. Each leaf votes
	// for all three classes, as a random forest's leaves do.
	forest := &ir.Node{Name: "TreeEnsembleClassifier", Op: "TreeEnsembleClassifier", Domain: ir.MLDomain, Version: 3,
		Inputs: []*ir.Value{x}, Outputs: []*ir.Value{label2, prob2},
		Attrs: []*ir.Attr{
			skAttr("classlabels_strings", skClasses),
			skAttr("nodes_treeids", []int64{0, 0, 0, 0, 0, 1, 1, 1}),
			skAttr("nodes_nodeids", []int64{0, 1, 2, 3, 4, 0, 1, 2}),
			skAttr("nodes_featureids", []int64{0, 0, 2, 0, 0, 1, 0, 0}),
			skAttr("nodes_modes", []string{"BRANCH_LEQ", "LEAF", "BRANCH_GT", "LEAF", "LEAF", "BRANCH_LT", "LEAF", "LEAF"}),
			skAttr("nodes_values", []float32{0.1, 0, -0.3, 0, 0, 0.5, 0, 0}),
			skAttr("nodes_truenodeids", []int64{1, 0, 3, 0, 0, 1, 0, 0}),
			skAttr("nodes_falsenodeids", []int64{2, 0, 4, 0, 0, 2, 0, 0}),
			skAttr("nodes_missing_value_tracks_true", []int64{1, 0, 0, 0, 0, 0, 0, 0}),
			skAttr("class_treeids", []int64{0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1}),
			skAttr("class_nodeids", []int64{1, 1, 1, 3, 3, 3, 4, 4, 4, 1, 1, 1, 2, 2, 2}),
			skAttr("class_ids", []int64{0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2}),
			skAttr("class_weights", []float32{0.45, 0.05, 0, 0, 0.35, 0.15, 0.05, 0.1, 0.35, 0.3, 0.2, 0, 0, 0.15, 0.35}),
			skAttr("post_transform", "NONE"),
		}}
	xs.Def, label.Def, prob.Def, label2.Def, prob2.Def = scaler, linear, linear, forest, forest
	return &ir.Model{
		Graph: &ir.Graph{Name: "sklearn_pipeline", Inputs: []*ir.Value{x},
			Outputs: []*ir.Value{label, prob, label2, prob2}, Nodes: []*ir.Node{scaler, linear, forest}},
		Opsets:    map[string]int64{"": 17, ir.MLDomain: 3},
		IRVersion: 8,
		Producer:  "cuvil passes/ml_model_test.go (skl2onnx-style)",
	}
}

// skReference evaluates the model on one row in float64.
func skReference(x []float64) (label int64, prob []float64, label2 string, prob2 []float64) {
	s := make([]float64, 3)
	for c := 0; c < 3; c++ {
		v := float64(skIntercepts[c])
		for j := 0; j < 4; j++ {
			v += (x[j] - float64(skOffset[j])) * float64(skScale[j]) * float64(skCoef[c*4+j])
		}
		s[c] = v
	}
	m := math.Max(s[0], math.Max(s[1], s[2]))
	sum := 0.0
	for c := range s {
		s[c] = math.Exp(s[c] - m)
		sum += s[c]
	}
	best := 0
	for c := range s {
		s[c] /= sum
		if s[c] > s[best] {
			best = c
		}
	}
	votes := make([]float64, 3)
	add := func(w ...float64) {
		for c := range w {
			votes[c] += w[c]
		}
	}
	switch {
	case x[0] <= 0.1 || math.IsNaN(x[0]):
		add(0.45, 0.05, 0)
	case x[2] > -0.3:
		add(0, 0.35, 0.15)
	default:
		add(0.05, 0.1, 0.35)
	}
	if x[1] < 0.5 {
		add(0.3, 0.2, 0)
	} else {
		add(0, 0.15, 0.35)
	}
	b2 := 0
	for c := range votes {
		if votes[c] > votes[b2] {
			b2 = c
		}
	}
	return skLabels[best], s, skClasses[b2], votes
}

func TestSklearnModel(t *testing.T) {
	b, err := onnx.Encode(buildSklearnModel())
	if err != nil {
		t.Fatal(err)
	}
	if f := flag.Lookup("update"); f != nil && f.Value.String() == "true" {
		if err := os.WriteFile(sklearnModelPath, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	have, err := os.ReadFile(sklearnModelPath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, b) {
		t.Fatalf("%s differs from buildSklearnModel's encoding; run go test ./passes -run TestSklearnModel -update", sklearnModelPath)
	}
	m, err := onnx.Decode(have, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := InferShapes(m); err != nil {
		t.Fatal(err)
	}
	if err := ir.Verify(m); err != nil {
		t.Fatal(err)
	}
	want := []string{"i64[N]", "f32[N,3]", "string[N]", "f32[N,3]"}
	for i, v := range m.Graph.Outputs {
		if got := v.Type.String(); got != want[i] {
			t.Errorf("output %s: %s, want %s", v.Name, got, want[i])
		}
	}

	// Run the kernels node by node on awkward inputs (7 rows, one NaN),
	// on the imported graph and after the pipeline (trees compiled into
	// packed arrays by compile-trees).
	const rows = 7
	r := rand.New(rand.NewSource(3))
	xt := &templates.Tensor{}
	xt.Resize(templates.F32, rows, 4)
	for i := range xt.F32() {
		xt.F32()[i] = float32(r.NormFloat64())
	}
	xt.F32()[5*4] = float32(math.NaN())
	skCheck(t, m, xt, rows)
	if err := Run(m, Options{Verify: true}); err != nil {
		t.Fatal(err)
	}
	for _, n := range m.Graph.Nodes {
		if n.Op == "TreeEnsembleClassifier" && (n.Attr("packed_nodes") == nil || n.Attr("nodes_modes") != nil) {
			t.Errorf("after the pipeline, %v still has its tree attributes", n)
		}
	}
	if _, err := InferShapes(m); err != nil {
		t.Fatal(err)
	}
	for i, v := range m.Graph.Outputs {
		if got := v.Type.String(); got != want[i] {
			t.Errorf("after the pipeline, output %s: %s, want %s", v.Name, got, want[i])
		}
	}
	skCheck(t, m, xt, rows)
}

func skCheck(t *testing.T, m *ir.Model, xt *templates.Tensor, rows int) {
	t.Helper()
	env := map[*ir.Value]*templates.Tensor{m.Graph.Inputs[0]: xt}
	for _, n := range m.Graph.Nodes {
		attrs, err := kernelAttrs(n)
		if err != nil {
			t.Fatal(err)
		}
		kn := &templates.Node{Name: n.Name, Op: n.Op, Version: n.Version, Attrs: attrs}
		for _, v := range n.Inputs {
			kn.In = append(kn.In, env[v])
		}
		for _, v := range n.Outputs {
			o := &templates.Tensor{}
			kn.Out = append(kn.Out, o)
			env[v] = o
		}
		if err := templates.Kernels[n.Domain+"::"+n.Op](kn); err != nil {
			t.Fatal(err)
		}
	}
	out := m.Graph.Outputs
	for i := 0; i < rows; i++ {
		x := make([]float64, 4)
		for j := range x {
			x[j] = float64(xt.F32()[i*4+j])
		}
		l, p, l2, p2 := skReference(x)
		if got := env[out[0]].I64()[i]; got != l {
			t.Errorf("row %d: label %d, want %d", i, got, l)
		}
		if got := env[out[2]].Str()[i]; got != l2 {
			t.Errorf("row %d: forest label %q, want %q", i, got, l2)
		}
		for c := 0; c < 3; c++ {
			if got := float64(env[out[1]].F32()[i*3+c]); math.Abs(got-p[c]) > 1e-6 {
				t.Errorf("row %d: probability %d = %g, want %g", i, c, got, p[c])
			}
			if got := float64(env[out[3]].F32()[i*3+c]); math.Abs(got-p2[c]) > 1e-6 {
				t.Errorf("row %d: forest score %d = %g, want %g", i, c, got, p2[c])
			}
		}
	}
}
