//go:generate go run github.com/cuvil/cuvil/cmd/cuvil compile -model ../../testdata/customop/model.onnx -pkg gelu -out ./gelu -op com.acme::FastGelu=github.com/cuvil/cuvil/examples/customop/ops.FastGelu

// Command customop runs a model with a custom operator: the node
// com.acme::FastGelu, which no ONNX kernel implements, runs the Go function
// ops.FastGelu, registered on cuvil's command line (the go:generate line
// above). The generated package ./gelu imports ./ops and calls it.
package main

import (
	"fmt"
	"os"

	"github.com/cuvil/cuvil/examples/customop/gelu"
)

// run computes z = -FastGelu(x) for x of shape [n, 4].
func run(x []float32) ([]float32, error) {
	m, err := gelu.New()
	if err != nil {
		return nil, err
	}
	s := m.NewSession()
	defer s.Close()
	out, err := s.Run(gelu.Input{X: &gelu.Tensor{DType: gelu.F32, Shape: []int{len(x) / 4, 4}, Data: x}})
	if err != nil {
		return nil, err
	}
	return append([]float32(nil), out.Z.F32()...), nil
}

func main() {
	z, err := run([]float32{-2, -1, -0.5, 0, 0.5, 1, 2, 3})
	if err != nil {
		fmt.Fprintln(os.Stderr, "customop:", err)
		os.Exit(1)
	}
	fmt.Println("z = -FastGelu(x):", z)
}
