package passes

import (
	"testing"

	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/ir/irtest"
)

// TestPipelineGolden runs the whole pipeline on small graphs in the
// spellings exporters use, to prove the passes compose: an old-style
// (opset 9) ResNet block's BN folds and its residual Sum and Relu reach
// the conv's epilogue.
func TestPipelineGolden(t *testing.T) {
	irtest.Golden(t, "testdata/pipeline/*.txtar", func(m *ir.Model) error {
		return Run(m, Options{Verify: true})
	})
}
