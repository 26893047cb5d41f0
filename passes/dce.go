package passes

import "github.com/cuvil/cuvil/ir"

// DCE removes nodes none of whose outputs is used and constants nobody
// reads, in the graph and its subgraphs.
var DCE = &Pass{
	Name: "dce",
	Doc:  "remove nodes whose outputs are unused and unused constants",
	Run: func(m *ir.Model) error {
		dceGraph(m, m.Graph)
		return nil
	},
}

// pureDomains hold ops without side effects; ops of other (custom) domains
// are kept even when their outputs are unused.
var pureDomains = map[string]bool{"": true, "ai.onnx": true, "ai.onnx.ml": true}

// dceGraph cleans g's subgraphs first, so that reads they drop no longer
// keep outer values alive, then g itself, from the outputs backwards.
func dceGraph(m *ir.Model, g *ir.Graph) {
	for _, n := range g.Nodes {
		for _, a := range n.Attrs {
			if a.G != nil {
				dceGraph(m, a.G)
			}
			for _, s := range a.Graphs {
				dceGraph(m, s)
			}
		}
	}
	live := map[*ir.Value]bool{}
	for _, v := range g.Outputs {
		live[v] = true
	}
	keep := make([]bool, len(g.Nodes))
	for i := len(g.Nodes) - 1; i >= 0; i-- {
		n := g.Nodes[i]
		at(m, n)
		used := hasSideEffects(n)
		for _, o := range n.Outputs {
			if o != nil && live[o] {
				used = true
			}
		}
		if !used {
			continue
		}
		keep[i] = true
		for _, v := range n.Inputs {
			if v != nil {
				live[v] = true
			}
		}
		for _, a := range n.Attrs {
			subs := a.Graphs
			if a.G != nil {
				subs = append([]*ir.Graph{a.G}, subs...)
			}
			for _, s := range subs {
				for _, v := range s.Captures() {
					live[v] = true
				}
			}
		}
	}
	nodes := g.Nodes[:0:0]
	for i, n := range g.Nodes {
		if keep[i] {
			nodes = append(nodes, n)
		}
	}
	g.Nodes = nodes
	consts := g.Consts[:0:0]
	for _, c := range g.Consts {
		if live[c] {
			consts = append(consts, c)
		}
	}
	g.Consts = consts
}

// hasSideEffects reports whether n must stay even when its outputs are
// unused: ops outside the standard domains, and nodes whose subgraphs hold
// such ops.
func hasSideEffects(n *ir.Node) bool {
	if !pureDomains[n.Domain] {
		return true
	}
	for _, a := range n.Attrs {
		subs := a.Graphs
		if a.G != nil {
			subs = append([]*ir.Graph{a.G}, subs...)
		}
		for _, s := range subs {
			for _, sn := range s.Nodes {
				if hasSideEffects(sn) {
					return true
				}
			}
		}
	}
	return false
}
