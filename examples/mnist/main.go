//go:generate go run github.com/cuvil/cuvil/cmd/cuvil compile -model ../../testdata/mnist/model.onnx -pkg mnist -out ./mnist
//go:generate go run github.com/cuvil/cuvil/cmd/cuvil convert -raw -in ../../testdata/mnist/test_data_set_0/input_0.pb -out input_0.f32
//go:generate go run github.com/cuvil/cuvil/cmd/cuvil convert -raw -in ../../testdata/mnist/test_data_set_0/output_0.pb -out output_0.f32

// Command mnist classifies a handwritten digit with a small CNN that cuvil
// compiled ahead of time into the package ./mnist. It uses nothing but the
// standard library and that package: the sample image is embedded as raw
// little-endian float32 (1x1x28x28), converted from the model's test data.
package main

import (
	_ "embed"
	"encoding/binary"
	"fmt"
	"math"
	"os"

	"github.com/cuvil/cuvil/examples/mnist/mnist"
)

//go:embed input_0.f32
var sample []byte

// decodeF32 reads packed little-endian float32 values.
func decodeF32(b []byte) ([]float32, error) {
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("%d bytes is not a whole number of float32", len(b))
	}
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out, nil
}

// classify runs the model on one 28x28 image and returns the predicted
// digit and the log-probabilities of all ten.
func classify(m *mnist.Model, img []float32) (int, []float32, error) {
	s := m.NewSession()
	defer s.Close()
	in := &mnist.Tensor{DType: mnist.F32, Shape: []int{1, 1, 28, 28}, Data: img}
	out, err := s.Run(mnist.Input{Input: in})
	if err != nil {
		return 0, nil, err
	}
	logProbs := append([]float32(nil), out.LogProbs.F32()...)
	best := 0
	for i, v := range logProbs {
		if v > logProbs[best] {
			best = i
		}
	}
	return best, logProbs, nil
}

func main() {
	img, err := decodeF32(sample)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mnist: sample:", err)
		os.Exit(1)
	}
	m, err := mnist.New()
	if err != nil {
		fmt.Fprintln(os.Stderr, "mnist:", err)
		os.Exit(1)
	}
	class, logProbs, err := classify(m, img)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mnist:", err)
		os.Exit(1)
	}
	fmt.Printf("predicted class: %d\n", class)
	fmt.Print("log-probs:")
	for _, v := range logProbs {
		fmt.Printf(" %.4f", v)
	}
	fmt.Println()
}
