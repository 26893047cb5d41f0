package onnx

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	pb "github.com/cuvil/cuvil/ir/onnx/onnxpb"
)

// externalModel is addRelu with w stored in an external file.
func externalModel(location string, kv ...string) *pb.ModelProto {
	mp := addRelu()
	w := mp.Graph.Initializer[0]
	w.FloatData = nil
	w.DataLocation = pb.TensorProto_EXTERNAL.Enum()
	w.ExternalData = []*pb.StringStringEntryProto{{Key: proto.String("location"), Value: proto.String(location)}}
	for i := 0; i+1 < len(kv); i += 2 {
		w.ExternalData = append(w.ExternalData, &pb.StringStringEntryProto{Key: proto.String(kv[i]), Value: proto.String(kv[i+1])})
	}
	return mp
}

func writeWeights(t *testing.T, path string, pad int, v ...float32) {
	t.Helper()
	b := make([]byte, pad)
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestExternalData(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "model")
	writeWeights(t, filepath.Join(dir, "weights", "w.bin"), 8, 7, 8, 9, 10)
	writeWeights(t, filepath.Join(root, "secret.bin"), 0, 1, 2, 3)
	if err := os.Symlink(filepath.Join(root, "secret.bin"), filepath.Join(dir, "link.bin")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "weights", "w.bin"), filepath.Join(dir, "inside.bin")); err != nil {
		t.Fatal(err)
	}

	m, err := importProto(t, externalModel("weights/w.bin", "offset", "8", "length", "12"), dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Graph.Consts[0].Const.Float64s(); len(got) != 3 || got[0] != 7 || got[2] != 9 {
		t.Errorf("w = %v, want [7 8 9]", got)
	}
	// A symlink that stays inside the folder is fine.
	if _, err := importProto(t, externalModel("inside.bin", "offset", "12"), dir); err != nil {
		t.Errorf("symlink inside the folder: %v", err)
	}

	// Through Load, relative to the model file.
	b, _ := proto.Marshal(externalModel("weights/w.bin", "offset", "8", "length", "12"))
	path := filepath.Join(dir, "m.onnx")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err != nil {
		t.Errorf("Load: %v", err)
	}

	bad := []struct {
		name string
		mp   *pb.ModelProto
		dir  string
		want string
	}{
		{"no folder", externalModel("weights/w.bin"), "", "no model folder is known"},
		{"absolute", externalModel(filepath.Join(root, "secret.bin")), dir, "leaves the model folder"},
		{"dot dot", externalModel("../secret.bin"), dir, `location "../secret.bin" leaves the model folder`},
		{"dot dot inside", externalModel("weights/../../secret.bin"), dir, "leaves the model folder"},
		{"symlink out", externalModel("link.bin"), dir, "outside the model folder"},
		{"missing file", externalModel("nope.bin"), dir, "no such file"},
		{"no location", externalModel(""), dir, "external data has no location"},
		{"offset past end", externalModel("weights/w.bin", "offset", "100"), dir, "offset 100 is past the end"},
		{"length past end", externalModel("weights/w.bin", "offset", "8", "length", "100"), dir, "wants 100 bytes at offset 8"},
		{"length vs shape", externalModel("weights/w.bin", "offset", "4"), dir, "external data has 20 bytes, shape [3] of f32 wants 12"},
		{"bad offset", externalModel("weights/w.bin", "offset", "-4"), dir, `offset "-4" is not a non-negative integer`},
		{"folder", externalModel("weights"), dir, "not a regular file"},
	}
	for _, tc := range bad {
		_, err := importProto(t, tc.mp, tc.dir)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		} else if !strings.Contains(err.Error(), `tensor "w"`) {
			t.Errorf("%s: error %q does not name the tensor", tc.name, err)
		}
	}
}

// TestExternalDataLarge checks offsets beyond 32 bits are parsed as such
// (checked against the file size, so no large file is needed).
func TestExternalDataLarge(t *testing.T) {
	dir := t.TempDir()
	writeWeights(t, filepath.Join(dir, "w.bin"), 0, 1, 2, 3)
	off := strconv.FormatInt(1<<33, 10)
	_, err := importProto(t, externalModel("w.bin", "offset", off), dir)
	if err == nil || !strings.Contains(err.Error(), "offset 8589934592 is past the end") {
		t.Errorf("got %v", err)
	}
}

// External data and expanded sparse tensors share one import budget: a
// tiny file cannot make the importer allocate past it.
func TestImportDataBudget(t *testing.T) {
	dir := t.TempDir()
	writeWeights(t, filepath.Join(dir, "w.bin"), 0, 1, 2, 3)
	b, _ := proto.Marshal(externalModel("w.bin"))
	if _, err := decodeWith(b, dir, testLookup, LoadOptions{MaxData: 12}); err != nil {
		t.Fatalf("12 bytes within a 12-byte budget: %v", err)
	}
	_, err := decodeWith(b, dir, testLookup, LoadOptions{MaxData: 8})
	if err == nil || !strings.Contains(err.Error(), `tensor "w": external data (12 bytes) would exceed the import limit`) {
		t.Fatalf("over budget: got %v", err)
	}
	if _, err := decodeWith(b, dir, testLookup, LoadOptions{MaxData: -1}); err != nil {
		t.Fatalf("no limit: %v", err)
	}

	// Sparse initializers of 2^20 f32 each (4 MiB dense): the third is
	// refused under an 8 MiB budget before it is allocated.
	mp := addRelu()
	for i := 0; i < 3; i++ {
		mp.Graph.SparseInitializer = append(mp.Graph.SparseInitializer, &pb.SparseTensorProto{
			Dims:    []int64{1 << 20},
			Values:  &pb.TensorProto{Name: proto.String("s" + strconv.Itoa(i)), DataType: proto.Int32(1), Dims: []int64{1}, FloatData: []float32{1}},
			Indices: &pb.TensorProto{DataType: proto.Int32(7), Dims: []int64{1}, Int64Data: []int64{5}},
		})
	}
	b, _ = proto.Marshal(mp)
	_, err = decodeWith(b, "", testLookup, LoadOptions{MaxData: 8 << 20})
	if err == nil || !strings.Contains(err.Error(), `tensor "s2": the dense form of a sparse tensor`) {
		t.Fatalf("sparse over budget: got %v", err)
	}
}
