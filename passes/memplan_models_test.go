package passes_test

import (
	"testing"

	"github.com/cuvil/cuvil/passes"
)

// TestMemPlanModels plans the final graph of reference models and checks
// the plan's invariant; sharing makes the arena smaller than the sum.
func TestMemPlanModels(t *testing.T) {
	for _, name := range []string{"mnist_cnn_op13", "bert_dynseq_op13", "squeezenet1_1_op13"} {
		t.Run(name, func(t *testing.T) {
			m := loadModel(t, name)
			if err := passes.Run(m, passes.Options{}); err != nil {
				t.Fatal(err)
			}
			p, err := passes.PlanModel(m)
			if err != nil {
				t.Fatal(err)
			}
			if err := p.Check(); err != nil {
				t.Error(err)
			}
			if p.Total() >= p.Sum() {
				t.Errorf("arena %d bytes, not less than the sum of sizes %d", p.Total(), p.Sum())
			}
			t.Logf("%s: %d values, arena %d bytes, sum %d, %d in place, %d dynamic", name, len(p.Buffers), p.Total(), p.Sum(), p.InPlaceCount(), len(p.Dynamic))
		})
	}
}
