package passes

import "github.com/cuvil/cuvil/ir"

// Cleanup is DCE once more at the end of the pipeline, under its own name
// so -d can address it apart from the first DCE: folding replaced weights
// (the old constants are dead) and fusion dropped nodes.
var Cleanup = &Pass{
	Name: "cleanup",
	Doc:  "remove what folding and fusion left unused (DCE again)",
	Run: func(m *ir.Model) error {
		dceGraph(m, m.Graph)
		return nil
	},
}
