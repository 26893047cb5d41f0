package onnx

import (
	"testing"

	"google.golang.org/protobuf/proto"
)

// FuzzDecode feeds arbitrary bytes to the importer: it may reject them,
// but must never panic or hang. Seeds are small valid models, so the
// mutator starts from real structure (subgraphs, functions, initializers).
func FuzzDecode(f *testing.F) {
	if b, err := Encode(sampleModel()); err == nil {
		f.Add(b)
	}
	for _, mp := range []any{addRelu(), externalModel("w.bin", "offset", "4")} {
		if b, err := proto.Marshal(mp.(proto.Message)); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := decode(data, "", testLookup)
		if err != nil {
			return
		}
		// Whatever imports must encode and import again.
		b, err := Encode(m)
		if err != nil {
			t.Fatalf("Encode of an imported model: %v", err)
		}
		if _, err := decode(b, "", testLookup); err != nil {
			t.Fatalf("re-import: %v", err)
		}
	})
}
