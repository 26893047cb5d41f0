//go:generate go run github.com/cuvil/cuvil/cmd/cuvil compile -profile lite -v -ram-budget 512KB -model ../../testdata/kws/model.onnx -pkg kws -out ./kws
//go:generate go run github.com/cuvil/cuvil/cmd/cuvil convert -raw -in ../../testdata/kws/test_data_set_0/input_0.pb -out input_0.f32
//go:generate go run github.com/cuvil/cuvil/cmd/cuvil convert -raw -in ../../testdata/kws/test_data_set_0/output_0.pb -out output_0.f32

// Command lite spots a keyword with a DS-CNN (49 frames x 10 MFCCs, 12
// classes) that cuvil compiled with -profile lite into ./kws: pure Go, one
// arena of kws.ArenaLen float32s (a package-level array here, so nothing
// is allocated for it at run time) and the weights read in place from a
// string constant. It runs the embedded sample, compares the logits with
// PyTorch's and exits 1 when they differ. make lite builds it for
// GOARCH=arm GOARM=7 and runs it under qemu-arm (docs/lite.md).
package main

import (
	_ "embed"
	"encoding/binary"
	"fmt"
	"math"
	"os"

	"github.com/cuvil/cuvil/examples/lite/kws"
)

// input_0.f32 and output_0.f32 are the sample MFCCs and PyTorch eager's
// logits, raw little-endian float32, from testdata/kws/test_data_set_0.
var (
	//go:embed input_0.f32
	sample []byte
	//go:embed output_0.f32
	reference []byte
)

var arena [kws.ArenaLen]float32

func decodeF32(b []byte) []float32 {
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

// spot runs the model on the sample in the package's arena and returns
// the logits (a view of the arena) and the largest difference from the
// reference.
func spot() ([]float32, float64, error) {
	m, err := kws.New()
	if err != nil {
		return nil, 0, err
	}
	s, err := m.NewSession(arena[:])
	if err != nil {
		return nil, 0, err
	}
	in, want := decodeF32(sample), decodeF32(reference)
	if len(in) != len(s.Input(0)) || len(want) != len(s.Output(0)) {
		return nil, 0, fmt.Errorf("sample has %d values and the reference %d; the model takes %d and gives %d", len(in), len(want), len(s.Input(0)), len(s.Output(0)))
	}
	copy(s.Input(0), in)
	s.Run()
	got := s.Output(0)
	worst := 0.0
	for i := range got {
		d := math.Abs(float64(got[i]) - float64(want[i]))
		if d > 1e-4*(1+math.Abs(float64(want[i]))) {
			return got, d, fmt.Errorf("logit %d = %v, PyTorch %v", i, got[i], want[i])
		}
		worst = math.Max(worst, d)
	}
	return got, worst, nil
}

func main() {
	got, worst, err := spot()
	if err != nil {
		fmt.Fprintln(os.Stderr, "lite:", err)
		os.Exit(1)
	}
	best := 0
	for i, v := range got {
		if v > got[best] {
			best = i
		}
	}
	fmt.Printf("keyword class %d (logit %.4f); logits within %.2g of PyTorch's\n", best, got[best], worst)
	fmt.Printf("weights %d bytes (flash), arena %d bytes (RAM)\n", kws.WeightsBytes, kws.ArenaBytes)
}
