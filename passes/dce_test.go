package passes

import (
	"testing"

	"github.com/cuvil/cuvil/ir/irtest"
)

func TestDCEGolden(t *testing.T) {
	irtest.Golden(t, "testdata/dce/*.txtar", DCE.Run)
}
