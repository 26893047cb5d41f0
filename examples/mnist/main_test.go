package main

import (
	_ "embed"
	"math"
	"testing"

	"github.com/cuvil/cuvil/examples/mnist/mnist"
)

// output_0.f32 is the reference log-probabilities (PyTorch eager), from
// testdata/mnist/test_data_set_0/output_0.pb.
//
//go:embed output_0.f32
var reference []byte

func TestMatchesReference(t *testing.T) {
	want, err := decodeF32(reference)
	if err != nil {
		t.Fatal(err)
	}
	img, err := decodeF32(sample)
	if err != nil {
		t.Fatal(err)
	}
	if len(img) != 28*28 || len(want) != 10 {
		t.Fatalf("sample has %d values, reference %d; want 784 and 10", len(img), len(want))
	}
	m, err := mnist.New()
	if err != nil {
		t.Fatal(err)
	}
	class, got, err := classify(m, img)
	if err != nil {
		t.Fatal(err)
	}
	wantClass := 0
	for i := range want {
		if want[i] > want[wantClass] {
			wantClass = i
		}
		if d := math.Abs(float64(got[i] - want[i])); d > 1e-4+1e-3*math.Abs(float64(want[i])) {
			t.Errorf("log-prob %d = %v, want %v", i, got[i], want[i])
		}
	}
	if class != wantClass {
		t.Errorf("class %d, want %d", class, wantClass)
	}
}
