// Package ops holds custom operators for models compiled by cuvil: plain Go
// functions that never import cuvil (see ../README.md for the convention).
package ops

import (
	"fmt"
	"math"
	"slices"
)

// FastGelu is com.acme::FastGelu, the sigmoid approximation of GELU:
// y = x * sigmoid(alpha * x). It reuses y's memory across calls.
func FastGelu(x []float32, xShape []int, alpha float32, y *[]float32, yShape *[]int) error {
	if alpha <= 0 {
		return fmt.Errorf("FastGelu: alpha is %v, want > 0", alpha)
	}
	*y = slices.Grow((*y)[:0], len(x))[:len(x)]
	*yShape = append((*yShape)[:0], xShape...)
	out := *y
	for i, v := range x {
		out[i] = v / (1 + float32(math.Exp(float64(-alpha*v))))
	}
	return nil
}

// FastGelu64 computes FastGelu in float64. Its signature does not fit a
// model whose FastGelu takes float32, which main_test.go uses to check
// cuvil's error.
func FastGelu64(x []float64, xShape []int, alpha float64, y *[]float64, yShape *[]int) error {
	*y = slices.Grow((*y)[:0], len(x))[:len(x)]
	*yShape = append((*yShape)[:0], xShape...)
	for i, v := range x {
		(*y)[i] = v / (1 + math.Exp(-alpha*v))
	}
	return nil
}
