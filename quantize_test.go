package cuvil

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuvil/cuvil/gen"
	"github.com/cuvil/cuvil/internal/harness"
	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/ir/onnx"
)

// TestQuantizeDigits compiles testdata/digits (two convs with Relu, two
// Gemms) in float and int8, calibrated on the first 32 of its 360 images
// (4 data sets of 8, minmax and percentile observers), and runs all three
// on the other 328, with the QDQ model WriteQDQ writes for the same
// calibration (run in float): int8 must agree with fp32's top-1 on at least 99% of
// them, and every conv and Gemm must have become QConv/QGemm with
// prepacked weights.
func TestQuantizeDigits(t *testing.T) {
	if testing.Short() {
		t.Skip("builds generated packages")
	}
	const model = "testdata/digits/model.onnx"
	d, err := onnx.ReadDataFile("testdata/digits/test_data_set_0/input_0.pb", ir.TensorKind)
	if err != nil {
		t.Fatal(err)
	}
	img := d.Tensor
	n := int(img.Shape[0])
	per := len(img.Raw) / n
	slice := func(from, to int) *ir.Tensor {
		s := *img
		s.Shape = append([]int64{int64(to - from)}, img.Shape[1:]...)
		s.Raw = img.Raw[from*per : to*per]
		return &s
	}
	calib := t.TempDir()
	for s := 0; s < 4; s++ {
		dir := filepath.Join(calib, fmt.Sprintf("test_data_set_%d", s))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := onnx.WriteDataFile(filepath.Join(dir, "input_0.pb"), &onnx.Data{Kind: ir.TensorKind, Tensor: slice(8*s, 8*s+8)}); err != nil {
			t.Fatal(err)
		}
	}
	eval := slice(32, n)

	models := map[string]*ir.Model{}
	for _, c := range []struct {
		name, quant, observer string
		reduce                bool
	}{{"fp32", "", "", false}, {"int8", "int8", "", false}, {"int8p", "int8", ObserverPercentile, false}, {"int8r", "int8", "", true}} {
		m, _, err := Load(Options{Model: model, Quantize: c.quant, Calibrate: []string{calib}, Observer: c.observer, QuantizeReduceRange: c.reduce})
		if c.quant == "" {
			m, _, err = Load(Options{Model: model})
		}
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		ops := map[string]int{}
		for _, nd := range m.Graph.Nodes {
			ops[nd.Op]++
			if nd.Attr("packed_q_shape") != nil {
				ops["packed"]++
			}
		}
		if c.quant != "" && (ops["QConv"] != 2 || ops["QGemm"] != 2 || ops["packed"] != 4 || ops["FusedConv"]+ops["Conv"]+ops["Gemm"]+ops["FusedGemm"] != 0) {
			t.Fatalf("%s: ops %v, want 2 QConv and 2 QGemm, their weights prepacked", c.name, ops)
		}
		if c.quant != "" {
			if mx, want := quantWeightMaxAbs(m), map[bool]int{false: 127, true: 64}[c.reduce]; mx != want {
				t.Fatalf("%s: the s8 weights reach %d, want %d", c.name, mx, want)
			}
		}
		models[c.name] = m
	}
	// -quantize-reduce-range as a QDQ model: 7-bit weights too.
	qdqr, err := WriteQDQ(Options{Model: model, Calibrate: []string{calib}, QuantizeReduceRange: true})
	if err != nil {
		t.Fatal(err)
	}
	qdqrPath := filepath.Join(t.TempDir(), "digits.int8r.onnx")
	if err := os.WriteFile(qdqrPath, qdqr, 0o644); err != nil {
		t.Fatal(err)
	}
	if rawr, err := onnx.LoadWith(qdqrPath, onnx.LoadOptions{}); err != nil {
		t.Fatal(err)
	} else if mx := quantWeightMaxAbs(rawr); mx != 64 {
		t.Fatalf("reduce-range QDQ model: s8 weights reach %d, want 64", mx)
	}
	if models["qdqr"], _, err = Load(Options{Model: qdqrPath}); err != nil {
		t.Fatal(err)
	}
	// The same decisions as a QDQ model (cuvil quantize), run in float.
	qdq, err := WriteQDQ(Options{Model: model, Calibrate: []string{calib}})
	if err != nil {
		t.Fatal(err)
	}
	qdqPath := filepath.Join(t.TempDir(), "digits.int8.onnx")
	if err := os.WriteFile(qdqPath, qdq, 0o644); err != nil {
		t.Fatal(err)
	}
	raw, err := onnx.LoadWith(qdqPath, onnx.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ops := map[string]int{}
	for _, nd := range raw.Graph.Nodes {
		ops[nd.Op]++
	}
	// 4 activations quantized; 4 weights and 4 biases dequantized.
	if ops["QuantizeLinear"] != 4 || ops["DequantizeLinear"] != 12 || ops["Conv"] != 2 || ops["Gemm"] != 2 {
		t.Fatalf("QDQ model ops %v", ops)
	}
	if models["qdq"], _, err = Load(Options{Model: qdqPath}); err != nil {
		t.Fatal(err)
	}
	got := runModels(t, models, eval)
	ref := got["fp32"]
	for _, name := range []string{"int8", "int8p", "qdq", "int8r", "qdqr"} {
		agree := 0
		var num, den float64
		for i := 0; i < len(ref)/10; i++ {
			if argmax(ref[i*10:i*10+10]) == argmax(got[name][i*10:i*10+10]) {
				agree++
			}
		}
		for i := range ref {
			e := got[name][i] - ref[i]
			num += e * e
			den += ref[i] * ref[i]
		}
		frac := float64(agree) / float64(len(ref)/10)
		if q, i8 := name, map[string]string{"qdq": "int8", "qdqr": "int8r"}[name]; i8 != "" { // cuvil's int8 and the QDQ model in float: one quantization step apart at most
			var d float64
			for i := range ref {
				d = math.Max(d, math.Abs(got[q][i]-got[i8][i]))
			}
			t.Logf("%s vs %s: max abs log-prob difference %.5f", q, i8, d)
		}
		t.Logf("%s: top-1 agreement with fp32 %d/%d (%.2f%%), log-prob relative L2 %.4f", name, agree, len(ref)/10, 100*frac, math.Sqrt(num/den))
		if frac < 0.99 {
			t.Errorf("%s: top-1 agreement %.4f, want at least 0.99", name, frac)
		}
	}
}

// quantWeightMaxAbs is the largest |v| of the model's s8 constants (the
// quantized weights, prepacked or as DequantizeLinear inputs).
func quantWeightMaxAbs(m *ir.Model) int {
	mx := 0
	for _, v := range m.Graph.Consts {
		if v.Const == nil || v.Const.DType != ir.I8 {
			continue
		}
		for _, b := range v.Const.Raw {
			mx = max(mx, int(int8(b)), -int(int8(b)))
		}
	}
	return mx
}

func argmax(v []float64) int {
	best := 0
	for i := range v {
		if v[i] > v[best] {
			best = i
		}
	}
	return best
}

// runModels builds the models in one harness and runs each on input x,
// returning their first outputs.
func runModels(t *testing.T, models map[string]*ir.Model, x *ir.Tensor) map[string][]float64 {
	t.Helper()
	h, err := harness.New()
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	for name, m := range models {
		if err := h.Add(name, m); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	exe, err := h.Build(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Failed) > 0 {
		t.Fatalf("build failures: %v", h.Failed)
	}
	in := filepath.Join(h.Dir, "input_0.cuvt")
	if err := harness.WriteDataFile(in, &onnx.Data{Kind: ir.TensorKind, Tensor: x}, gen.ElemDType(models["fp32"].Graph.Inputs[0].Type)); err != nil {
		t.Fatal(err)
	}
	var jobs []harness.Job
	var names []string
	for name := range models {
		dir := filepath.Join(h.Dir, "out-"+name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, harness.Job{Model: name, Inputs: []string{in}, Out: dir})
		names = append(names, name)
	}
	res, err := h.Run(context.Background(), exe, jobs, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]float64{}
	for i, r := range res {
		if r.Err != "" {
			t.Fatalf("%s: %s", names[i], r.Err)
		}
		d, _, err := harness.ReadDataFile(filepath.Join(jobs[i].Out, "output_0.cuvt"))
		if err != nil {
			t.Fatal(err)
		}
		out[names[i]] = d.Tensor.Float64s()
	}
	return out
}

// TestQuantizeOptionErrors: bad quantization options are errors, not
// silently float models.
func TestQuantizeOptionErrors(t *testing.T) {
	const model = "testdata/digits/model.onnx"
	for _, c := range []struct {
		opts Options
		want string
	}{
		{Options{Quantize: "int4", Calibrate: []string{"testdata/digits"}}, "only int8"},
		{Options{Quantize: "int8"}, "needs calibration data"},
		{Options{Calibrate: []string{"testdata/digits"}}, "without -quantize int8"},
		{Options{QuantizeReduceRange: true}, "without -quantize int8"},
		{Options{Quantize: "int8", Calibrate: []string{"testdata/nosuch*"}}, "no such folder"},
		{Options{Quantize: "int8", Calibrate: []string{"testdata/digits"}, Observer: "entropy"}, "observer"},
		{Options{Quantize: "int8", Calibrate: []string{"testdata/digits"}, Observer: ObserverPercentile, Percentile: 20}, "percentile"},
		{Options{Quantize: "int8", Calibrate: []string{"testdata/digits"}, QuantizeSkip: []string{"NoSuchOp"}}, "names no node"},
	} {
		c.opts.Model = model
		_, _, err := Load(c.opts)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one containing %q", c.opts, err, c.want)
		}
	}
}
