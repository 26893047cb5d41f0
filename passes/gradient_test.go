package passes

import (
	"testing"

	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/ir/irtest"
)

// TestGradientGolden runs the gradient pass, then DCE, on its txtar files.
func TestGradientGolden(t *testing.T) {
	irtest.Golden(t, "testdata/gradient/*.txtar", func(m *ir.Model) error {
		if err := Gradient.Run(m); err != nil {
			return err
		}
		return DCE.Run(m)
	})
}
