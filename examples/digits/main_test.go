package main

import (
	_ "embed"
	"math"
	"testing"

	"github.com/cuvil/cuvil/examples/digits/digits"
)

// pytorch.pb is PyTorch's log-probabilities on the same images
// (testdata/digits/test_data_set_0/output_0.pb, from tools/train_digits.py).
//
//go:embed pytorch.pb
var pytorchPB []byte

// minAccuracy is the bar for the held-back images: the trained model gets
// 97.78% (352 of 360) under PyTorch and under cuvil.
const minAccuracy = 0.95

func TestAccuracy(t *testing.T) {
	img, labels, err := testSet()
	if err != nil {
		t.Fatal(err)
	}
	if len(labels) != 360 {
		t.Fatalf("%d held-back images, want 360", len(labels))
	}
	m, err := digits.New()
	if err != nil {
		t.Fatal(err)
	}
	pred, logProbs, err := classify(m, img, len(labels))
	if err != nil {
		t.Fatal(err)
	}
	acc := accuracy(pred, labels)
	t.Logf("accuracy %.2f%% on %d images", 100*acc, len(labels))
	if acc < minAccuracy {
		t.Errorf("accuracy %.4f, want at least %.2f", acc, minAccuracy)
	}

	ref, err := readTensor(pytorchPB, digits.F32)
	if err != nil {
		t.Fatal(err)
	}
	want := ref.F32()
	if len(want) != len(logProbs) {
		t.Fatalf("PyTorch reference has %d values, cuvil %d", len(want), len(logProbs))
	}
	for i := range want {
		if d := math.Abs(float64(logProbs[i] - want[i])); d > 1e-4+1e-3*math.Abs(float64(want[i])) {
			t.Errorf("image %d log-prob %d = %v, PyTorch %v", i/10, i%10, logProbs[i], want[i])
		}
	}
	for i, p := range argmax10(want) {
		if p != pred[i] {
			t.Errorf("image %d: predicted %d, PyTorch %d", i, pred[i], p)
		}
	}
}

// One image at a time gives the same predictions as the whole batch.
func TestSingleImages(t *testing.T) {
	img, labels, err := testSet()
	if err != nil {
		t.Fatal(err)
	}
	m, err := digits.New()
	if err != nil {
		t.Fatal(err)
	}
	all, _, err := classify(m, img, len(labels))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		p, _, err := classify(m, img[64*i:64*i+64], 1)
		if err != nil {
			t.Fatal(err)
		}
		if p[0] != all[i] {
			t.Errorf("image %d alone: %d, in the batch: %d", i, p[0], all[i])
		}
	}
}
