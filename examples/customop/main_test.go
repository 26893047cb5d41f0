package main

import (
	"math"
	"strings"
	"testing"

	"github.com/cuvil/cuvil"
)

// TestRun checks the generated package, which calls ops.FastGelu, against
// -x*sigmoid(1.702x) computed here in float64.
func TestRun(t *testing.T) {
	x := []float32{-3.5, -1, -0.25, 0, 0.125, 0.7, 1.9, 4.2, 6, -6, 2.5, -0.01}
	z, err := run(x)
	if err != nil {
		t.Fatal(err)
	}
	if len(z) != len(x) {
		t.Fatalf("got %d values, want %d", len(z), len(x))
	}
	for i, v := range x {
		want := -float64(v) / (1 + math.Exp(-1.702*float64(v)))
		if math.Abs(float64(z[i])-want) > 1e-6*math.Max(1, math.Abs(want)) {
			t.Errorf("z[%d] = %v, want %v (x = %v)", i, z[i], want, v)
		}
	}
}

// TestWrongSignature registers a function whose types do not fit the
// model's FastGelu: compile must refuse, naming both signatures.
func TestWrongSignature(t *testing.T) {
	err := cuvil.Compile(cuvil.Options{
		Model: "../../testdata/customop/model.onnx",
		Out:   "never-written/gelu",
		Ops:   []cuvil.Op{{Domain: "com.acme", Type: "FastGelu", Func: "github.com/cuvil/cuvil/examples/customop/ops.FastGelu64"}},
	})
	if err == nil {
		t.Fatal("compiled with a float64 function for a float32 op")
	}
	for _, want := range []string{
		"function github.com/cuvil/cuvil/examples/customop/ops.FastGelu64 has type func(x []float64, xShape []int, alpha float64, y *[]float64, yShape *[]int) error",
		"signature com.acme::FastGelu(f32) -> (f32) {alpha: float}",
		"needs func(x0 []float32, x0Shape []int, alpha float32, y0 *[]float32, y0Shape *[]int) error",
		"parameter 1 (x) is []float64, want []float32",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q\ndoes not say %q", err, want)
		}
	}
}

// TestUnregistered compiles without -op: the error names the node, the
// signature and the flag that registers it.
func TestUnregistered(t *testing.T) {
	err := cuvil.Compile(cuvil.Options{Model: "../../testdata/customop/model.onnx", Out: "never-written/gelu"})
	if err == nil {
		t.Fatal("compiled a model with an unregistered custom op")
	}
	for _, want := range []string{`node "gelu"`, "com.acme::FastGelu(f32) -> (f32) {alpha: float}", "-op com.acme::FastGelu="} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q\ndoes not say %q", err, want)
		}
	}
}
