package passes

import (
	"fmt"
	"strings"

	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/templates"
)

// CompileTrees compiles the ai.onnx.ml tree ensembles (TreeEnsemble,
// TreeEnsembleClassifier, TreeEnsembleRegressor) into flat node arrays at
// compile time: the packed_* tensor attributes of templates.MLPackForest,
// which gen stores in weights.bin and the kernels read in place. The
// trees' own attributes (per-node lists, leaf lists, membership sets) go.
var CompileTrees = &Pass{
	Name: "compile-trees",
	Doc:  "compile ai.onnx.ml tree ensembles into flat node arrays (weights) the kernels read in place",
	Run: func(m *ir.Model) error {
		var err error
		m.Graph.Walk(func(g *ir.Graph) {
			for _, n := range g.Nodes {
				if err == nil && n.Domain == ir.MLDomain && strings.HasPrefix(n.Op, "TreeEnsemble") && n.Attr("packed_nodes") == nil {
					err = compileTrees(n)
				}
			}
		})
		return err
	},
}

// mlTreeAttr reports whether an attribute describes the trees themselves
// (and so is replaced by the packed arrays).
func mlTreeAttr(name string) bool {
	for _, p := range []string{"nodes_", "leaf_", "class_", "target_", "membership_values", "tree_roots"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

func compileTrees(n *ir.Node) error {
	attrs, err := kernelAttrs(n)
	if err != nil {
		return fmt.Errorf("%v: %w", n, err)
	}
	packed, err := templates.MLPackForest(&templates.Node{Name: n.Name, Op: n.Op, Version: n.Version, Attrs: attrs})
	if err != nil {
		return err
	}
	kept := n.Attrs[:0:0]
	for _, a := range n.Attrs {
		if !mlTreeAttr(a.Name) {
			kept = append(kept, a)
		}
	}
	n.Attrs = kept
	for name, t := range packed {
		c, err := FromKernelTensor(t)
		if err != nil {
			return fmt.Errorf("%v: %s: %w", n, name, err)
		}
		c.Name = name
		n.SetAttr(&ir.Attr{Name: name, Kind: ir.AttrTensor, T: c})
	}
	return nil
}
