package gen

import (
	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/passes"
)

// The memory plan is passes.PlanMemory's: every value a node computes
// whose size is known at compile time is a view, at an offset fixed at
// compile time, of its dtype's arena, which NewSession allocates once, so
// no Run ever resizes (or re-boxes) anything. Values share arena memory
// when their lifetimes do not overlap (graph outputs live to the end of
// Run; a value captured by a subgraph lives until the control node runs),
// and an elementwise kernel writes its output over an input that dies at
// it when both have the same dtype and size (its kernel reads element i
// before writing element i), and a Reshape/Flatten/Squeeze/Unsqueeze is
// a view of its input that dies at it (the kernel copies nothing).
// Otherwise a node's outputs never overlap its
// own inputs, so kernels need not support aliasing. Values whose size
// depends on symbolic dims own their memory, grown by Tensor.Resize on the
// first run at a shape.
type memPlan struct {
	*passes.MemPlan
}

// planMemory plans the values defined by nodes of g (in topological
// order); isOutput marks the graph outputs.
func planMemory(g *ir.Graph, isOutput map[*ir.Value]bool) (*memPlan, error) {
	var outs []*ir.Value
	for _, n := range g.Nodes {
		for _, v := range n.Outputs {
			if v != nil && isOutput[v] {
				outs = append(outs, v)
			}
		}
	}
	p, err := passes.PlanMemory(g.Nodes, outs)
	if err != nil {
		return nil, err
	}
	if err := p.Check(); err != nil {
		return nil, err
	}
	return &memPlan{p}, nil
}

// StaticBytes is the size of the arenas, known at compile time.
func (p *memPlan) StaticBytes() int64 { return p.Total() }

// DynamicValues counts the values whose size depends on symbolic dims.
func (p *memPlan) DynamicValues() int { return len(p.Dynamic) }
