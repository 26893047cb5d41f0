// Package onnx imports ONNX models into Cuvil's IR: it decodes the protobuf
// (schema in onnx.proto, generated code in onnxpb), validates the graph
// (SSA, opsets, dtypes, external data) and builds an ir.Model. It also
// reads and writes the TensorProto files of ONNX test data, and encodes an
// ir.Model back to ONNX so that tests elsewhere can build model files.
package onnx

// Regenerating needs protoc and protoc-gen-go v1.36.12 on PATH
// (go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12).
//go:generate protoc --go_out=. --go_opt=module=github.com/cuvil/cuvil/ir/onnx onnx.proto
