package passes

import (
	"sort"

	"github.com/cuvil/cuvil/ir"
)

// OpCount is how many nodes of one op a graph holds. Op is the op name for
// ai.onnx ops and "domain::Op" for others (cuvil::FusedConv), the way
// templates.Kernels keys them.
type OpCount struct {
	Op    string
	Count int
}

// Stats counts the nodes of m's graph and its subgraphs by op, most
// frequent first (ties by name), for `cuvil inspect -stats`.
func Stats(m *ir.Model) []OpCount {
	counts := map[string]int{}
	m.Graph.Walk(func(g *ir.Graph) {
		for _, n := range g.Nodes {
			counts[opKey(n)]++
		}
	})
	out := make([]OpCount, 0, len(counts))
	for op, c := range counts {
		out = append(out, OpCount{op, c})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Op < out[j].Op
	})
	return out
}

// NodeCount is the number of nodes in m's graph and its subgraphs.
func NodeCount(m *ir.Model) int {
	total := 0
	m.Graph.Walk(func(g *ir.Graph) { total += len(g.Nodes) })
	return total
}

// opKey names n's op as templates.Kernels does.
func opKey(n *ir.Node) string {
	if n.Domain != "" && n.Domain != "ai.onnx" {
		return n.Domain + "::" + n.Op
	}
	return n.Op
}
