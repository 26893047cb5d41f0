package passes

import (
	"testing"

	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/ir/irtest"
)

func TestShapesGolden(t *testing.T) {
	irtest.Golden(t, "testdata/shapes/*.txtar", func(m *ir.Model) error {
		_, err := InferShapes(m)
		return err
	})
}
