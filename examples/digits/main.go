//go:generate go run github.com/cuvil/cuvil/cmd/cuvil compile -model ../../testdata/digits/model.onnx -pkg digits -out ./digits
//go:generate go run github.com/cuvil/cuvil/cmd/cuvil convert -in ../../testdata/digits/test_data_set_0/input_0.pb -out images.pb
//go:generate go run github.com/cuvil/cuvil/cmd/cuvil convert -in ../../testdata/digits/labels.pb -out labels.pb
//go:generate go run github.com/cuvil/cuvil/cmd/cuvil convert -in ../../testdata/digits/test_data_set_0/output_0.pb -out pytorch.pb

// Command digits classifies the handwritten digits that training held back
// with a small CNN trained on scikit-learn's digits (8x8 images; see
// tools/train_digits.py) and compiled ahead of time by cuvil into the package
// ./digits. It prints the predicted digit next to the true one for a few
// images and the accuracy on all of them. With -ort DIR it also compares
// with ONNX Runtime's log-probabilities for the same images, read from
// DIR/output_0.pb (what ../shared/tools/ort/bench.sh --outdir writes;
// `make demo` runs it when ONNX Runtime is installed).
//
// It uses nothing but the standard library and that package: the images
// (float32 [360,1,8,8], pixels scaled to [0,1]) and their labels (int64
// [360]) are embedded as ONNX TensorProto files, copied from testdata/digits
// by go generate, and decoded with the generated package's ReadTensor.
package main

import (
	"bytes"
	_ "embed"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/cuvil/cuvil/examples/digits/digits"
)

//go:embed images.pb
var imagesPB []byte

//go:embed labels.pb
var labelsPB []byte

// readTensor decodes an embedded TensorProto and checks its dtype.
func readTensor(b []byte, dt digits.DType) (*digits.Tensor, error) {
	t, err := digits.ReadTensor(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	if t.DType != dt {
		return nil, fmt.Errorf("a %s tensor, want %s", t.DType, dt)
	}
	return t, nil
}

// testSet returns the embedded held-back images (64 pixels each) and labels.
func testSet() ([]float32, []int64, error) {
	img, err := readTensor(imagesPB, digits.F32)
	if err != nil {
		return nil, nil, fmt.Errorf("images: %w", err)
	}
	labels, err := readTensor(labelsPB, digits.I64)
	if err != nil {
		return nil, nil, fmt.Errorf("labels: %w", err)
	}
	if len(img.F32()) != 64*len(labels.I64()) {
		return nil, nil, fmt.Errorf("%d pixels for %d labels, want 64 per label", len(img.F32()), len(labels.I64()))
	}
	return img.F32(), labels.I64(), nil
}

// argmax10 returns, for each row of ten values, the index of the largest.
func argmax10(v []float32) []int {
	out := make([]int, len(v)/10)
	for r := range out {
		row := v[10*r : 10*r+10]
		for i := range row {
			if row[i] > row[out[r]] {
				out[r] = i
			}
		}
	}
	return out
}

// classify runs the model on n images in one batch and returns the
// predicted digits and the log-probabilities ([n,10], a copy).
func classify(m *digits.Model, img []float32, n int) ([]int, []float32, error) {
	s := m.NewSession()
	defer s.Close()
	in := &digits.Tensor{DType: digits.F32, Shape: []int{n, 1, 8, 8}, Data: img}
	out, err := s.Run(digits.Input{Image: in})
	if err != nil {
		return nil, nil, err
	}
	logProbs := append([]float32(nil), out.LogProbs.F32()...)
	if len(logProbs) != 10*n {
		return nil, nil, fmt.Errorf("%d log-probabilities for %d images", len(logProbs), n)
	}
	return argmax10(logProbs), logProbs, nil
}

// accuracy is the fraction of predictions equal to their labels.
func accuracy(pred []int, labels []int64) float64 {
	ok := 0
	for i, p := range pred {
		if int64(p) == labels[i] {
			ok++
		}
	}
	return float64(ok) / float64(len(labels))
}

// picture draws an 8x8 image with one character per pixel.
func picture(img []float32) []string {
	const ramp = " .:-=+*#%@"
	rows := make([]string, 8)
	for y := range rows {
		var b strings.Builder
		for x := 0; x < 8; x++ {
			v := img[8*y+x]
			i := int(v * float32(len(ramp)-1))
			i = max(0, min(i, len(ramp)-1))
			b.WriteByte(ramp[i])
			b.WriteByte(ramp[i])
		}
		rows[y] = b.String()
	}
	return rows
}

// compareORT compares cuvil's log-probabilities with ONNX Runtime's, from
// dir/output_0.pb, and prints how many predictions agree.
func compareORT(dir string, pred []int, logProbs []float32) error {
	t, err := digits.LoadTensorFile(filepath.Join(dir, "output_0.pb"))
	if err != nil {
		return err
	}
	if t.DType != digits.F32 || len(t.F32()) != len(logProbs) {
		return fmt.Errorf("ONNX Runtime wrote %s%v, cuvil f32[%d %d]", t.DType, t.Shape, len(pred), 10)
	}
	ort := t.F32()
	maxAbs := 0.0
	for i := range ort {
		maxAbs = max(maxAbs, math.Abs(float64(ort[i]-logProbs[i])))
	}
	ortPred := argmax10(ort)
	same := 0
	for i := range pred {
		if pred[i] == ortPred[i] {
			same++
		}
	}
	fmt.Printf("ONNX Runtime: same prediction on %d of %d images; log-probabilities differ by at most %.2g\n",
		same, len(pred), maxAbs)
	if same != len(pred) {
		return fmt.Errorf("%d predictions differ from ONNX Runtime's", len(pred)-same)
	}
	return nil
}

func main() {
	ortDir := flag.String("ort", "", "folder with ONNX Runtime's outputs for the same images (output_0.pb) to compare with")
	show := flag.Int("show", 8, "images to draw with their predicted and true digits")
	flag.Parse()
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "digits:", err)
		os.Exit(1)
	}
	img, labels, err := testSet()
	if err != nil {
		fail(err)
	}
	m, err := digits.New()
	if err != nil {
		fail(err)
	}
	pred, logProbs, err := classify(m, img, len(labels))
	if err != nil {
		fail(err)
	}
	// Draw the first images side by side, with the predicted and true digit.
	for start := 0; start < min(*show, len(labels)); start += 4 {
		end := min(start+4, *show, len(labels))
		lines := make([]string, 9)
		for i := start; i < end; i++ {
			mark := "ok"
			if int64(pred[i]) != labels[i] {
				mark = "WRONG"
			}
			lines[0] += fmt.Sprintf("%-20s", fmt.Sprintf("#%d: %d (true %d) %s", i, pred[i], labels[i], mark))
			for y, row := range picture(img[64*i : 64*i+64]) {
				lines[1+y] += "|" + row + "|  "
			}
		}
		for _, l := range lines {
			fmt.Println(strings.TrimRight(l, " "))
		}
		fmt.Println()
	}
	var wrong []string
	for i := range pred {
		if int64(pred[i]) != labels[i] {
			wrong = append(wrong, fmt.Sprintf("#%d: %d (true %d)", i, pred[i], labels[i]))
		}
	}
	fmt.Printf("accuracy on the %d held-back images: %.2f%% (%d wrong", len(labels), 100*accuracy(pred, labels), len(wrong))
	if len(wrong) > 0 {
		fmt.Printf(": %s", strings.Join(wrong, ", "))
	}
	fmt.Println(")")
	if *ortDir != "" {
		if err := compareORT(*ortDir, pred, logProbs); err != nil {
			fail(fmt.Errorf("ONNX Runtime: %w", err))
		}
	}
}
