package main

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/ir/onnx"
)

// TestCheckMaps: cuvil check and run exchange map and sequence-of-map
// values as ONNX test data (MapProto, SequenceProto of maps): ZipMap's
// output and a DictVectorizer's map input.
func TestCheckMaps(t *testing.T) {
	if testing.Short() {
		t.Skip("builds generated code; skipped in -short mode")
	}
	f64 := ir.TensorType(ir.F64, nil)
	x := &ir.Value{Name: "x", Type: ir.TensorType(ir.F32, ir.ShapeOf(2, 3))}
	dict := &ir.Value{Name: "dict", Type: ir.Type{Kind: ir.MapKind, DType: ir.I64, Elem: &f64}}
	z, v := &ir.Value{Name: "z"}, &ir.Value{Name: "v"}
	zm := &ir.Node{Name: "zm", Op: "ZipMap", Domain: ir.MLDomain, Version: 1, Inputs: []*ir.Value{x}, Outputs: []*ir.Value{z},
		Attrs: []*ir.Attr{{Name: "classlabels_strings", Kind: ir.AttrStrings, Strings: []string{"a", "b", "c"}}}}
	dv := &ir.Node{Name: "dv", Op: "DictVectorizer", Domain: ir.MLDomain, Version: 1, Inputs: []*ir.Value{dict}, Outputs: []*ir.Value{v},
		Attrs: []*ir.Attr{{Name: "int64_vocabulary", Kind: ir.AttrInts, Ints: []int64{5, 3, 9}}}}
	z.Def, v.Def = zm, dv
	m := &ir.Model{Graph: &ir.Graph{Name: "maps", Inputs: []*ir.Value{x, dict}, Outputs: []*ir.Value{z, v}, Nodes: []*ir.Node{zm, dv}},
		Opsets: map[string]int64{"": 17, ir.MLDomain: 1}, IRVersion: 8}
	b, err := onnx.Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	data := filepath.Join(dir, "test_data_set_0")
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "model.onnx"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	xs := []float32{0.5, 0.25, 0.25, 0.125, 0.75, 0.125}
	rowMap := func(r int, keys []string) *onnx.Data {
		return &onnx.Data{Kind: ir.MapKind, Keys: &ir.Tensor{DType: ir.String, Shape: []int64{3}, Strings: keys},
			Values: ir.NewTensorF32([]int64{3}, xs[3*r:3*r+3])}
	}
	write := func(name string, d *onnx.Data) {
		t.Helper()
		if err := onnx.WriteDataFile(filepath.Join(data, name), d); err != nil {
			t.Fatal(err)
		}
	}
	write("input_0.pb", &onnx.Data{Kind: ir.TensorKind, Tensor: ir.NewTensorF32([]int64{2, 3}, xs)})
	write("input_1.pb", &onnx.Data{Kind: ir.MapKind, Keys: ir.NewTensorInt64([]int64{2}, []int64{9, 5}),
		Values: &ir.Tensor{DType: ir.F64, Shape: []int64{2}, Raw: f64Raw(1.5, -2)}})
	write("output_0.pb", &onnx.Data{Kind: ir.SequenceKind, Seq: []*onnx.Data{rowMap(0, []string{"a", "b", "c"}), rowMap(1, []string{"a", "b", "c"})}})
	write("output_1.pb", &onnx.Data{Kind: ir.TensorKind, Tensor: &ir.Tensor{DType: ir.F64, Shape: []int64{1, 3}, Raw: f64Raw(-2, 0, 1.5)}})
	code, stdout, stderr := cuvil(t, "check", "-model", filepath.Join(dir, "model.onnx"), "-data", dir)
	if code != 0 || !strings.Contains(stdout, `output 0 "z": ok`) || !strings.Contains(stdout, `output 1 "v": ok`) {
		t.Fatalf("check: exit %d\n%s%s", code, stdout, stderr)
	}

	// run writes the sequence of maps back as ONNX test data.
	out := filepath.Join(dir, "out")
	if code, stdout, stderr := cuvil(t, "run", "-model", filepath.Join(dir, "model.onnx"), "-data", data, "-out", out); code != 0 {
		t.Fatalf("run: exit %d\n%s%s", code, stdout, stderr)
	}
	got, err := onnx.ReadDataFile(filepath.Join(out, "output_0.pb"), ir.SequenceKind)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Seq) != 2 || got.Seq[1].Kind != ir.MapKind || got.Seq[1].Keys.Strings[2] != "c" || got.Seq[1].Values.Float64s()[1] != 0.75 {
		t.Errorf("run output_0: %+v", got.Seq)
	}

	// A reference with another key fails, naming the map.
	write("output_0.pb", &onnx.Data{Kind: ir.SequenceKind, Seq: []*onnx.Data{rowMap(0, []string{"a", "b", "c"}), rowMap(1, []string{"a", "b", "d"})}})
	code, stdout, _ = cuvil(t, "check", "-model", filepath.Join(dir, "model.onnx"), "-data", dir)
	if code != 1 || !strings.Contains(stdout, "sequence element 1, map: key sd is missing") {
		t.Errorf("check against a wrong key: exit %d\n%s", code, stdout)
	}
}

func f64Raw(vs ...float64) []byte {
	var b []byte
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	return b
}
