// Package onnx imports ONNX models into Cuvil's IR: it decodes the protobuf
// (schema in onnx.proto, generated code in onnxpb), validates the graph
// (SSA, opsets, dtypes, external data) and builds an ir.Model. It also
// reads and writes the TensorProto files of ONNX test data, and encodes an
// ir.Model back to ONNX so that tests elsewhere can build model files.
//
// What an imported model looks like, beyond the contracts of package ir:
//   - nodes are in topological order (files merely out of order are
//     sorted, stably); unnamed nodes are named <op>_<index>;
//   - model-local functions are inlined: their nodes are named
//     <call>/<node> and their values get fresh names;
//   - every dim is a size or a symbol: unnamed dims become unk__N,
//     numbered in import order and never clashing with the file's names;
//   - values ONNX declares nothing about have an unranked tensor type of
//     undefined dtype, for shape inference to fill in;
//   - sparse constants (Constant's sparse_value, sparse initializers) are
//     expanded to dense tensors.
package onnx

// Regenerating needs protoc and protoc-gen-go v1.36.12 on PATH
// (go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12).
//go:generate protoc --go_out=. --go_opt=module=github.com/cuvil/cuvil/ir/onnx onnx.proto
