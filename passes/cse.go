package passes

import (
	"fmt"
	"strings"

	"github.com/cuvil/cuvil/ir"
)

// CSE merges nodes that compute the same thing (same op, version, inputs
// and attributes) and small constants with equal contents, so shared
// subexpressions (BERT's repeated shape arithmetic, identical Unsqueezes)
// run once.
var CSE = &Pass{
	Name: "cse",
	Doc:  "merge duplicate nodes (same op, inputs, attributes) and equal small constants",
	Run: func(m *ir.Model) error {
		return forGraphs(m, func(g *ir.Graph) error {
			r := newRewriter(m, g)
			// Replacements are collected and applied in one walk at the
			// end (a walk per merge would make the pass quadratic); nodes
			// come in topological order, so each node's inputs are
			// redirected before its key is computed.
			repl := map[*ir.Value]*ir.Value{}
			cseConsts(r, repl)
			seen := map[string]*ir.Node{}
			for _, n := range g.Nodes {
				at(m, n)
				for i, v := range n.Inputs {
					if w, ok := repl[v]; ok {
						n.Inputs[i] = w
					}
				}
				key, ok := cseKey(n)
				if !ok {
					continue
				}
				first, dup := seen[key]
				if !dup {
					seen[key] = n
					continue
				}
				if cseRedirect(r, n, first, repl) {
					r.kill(n)
				}
			}
			r.replaceAll(repl)
			r.sweep()
			return nil
		})
	},
}

// cseMaxConst bounds the constants CSE compares (larger ones are weights,
// rarely duplicated, and costly to compare).
const cseMaxConst = 1024

func cseConsts(r *rewriter, repl map[*ir.Value]*ir.Value) {
	seen := map[string]*ir.Value{}
	keep := r.g.Consts[:0]
	for _, c := range r.g.Consts {
		t := c.Const
		if t == nil || t.DType == ir.String || t.NumElements() > cseMaxConst || r.outs[c] {
			keep = append(keep, c)
			continue
		}
		key := fmt.Sprintf("%d%v%x", t.DType, t.Shape, t.Raw)
		if first, ok := seen[key]; ok {
			repl[c] = first
			continue
		}
		seen[key] = c
		keep = append(keep, c)
	}
	r.g.Consts = keep
}

// cseRedirect records that the readers of dup's outputs are to read
// first's.
func cseRedirect(r *rewriter, dup, first *ir.Node, repl map[*ir.Value]*ir.Value) bool {
	for i, o := range dup.Outputs {
		if o != nil && r.outs[o] {
			return false
		}
		if o != nil && (i >= len(first.Outputs) || first.Outputs[i] == nil) {
			return false
		}
	}
	for i, o := range dup.Outputs {
		if o != nil {
			repl[o] = first.Outputs[i]
		}
	}
	return true
}

// cseKey describes what n computes; ok is false for nodes that must not
// merge (random ops, custom domains, subgraphs).
func cseKey(n *ir.Node) (string, bool) {
	if !pureDomains[n.Domain] && n.Domain != ir.CuvilDomain {
		return "", false
	}
	if strings.HasPrefix(n.Op, "Random") || n.Op == "Bernoulli" || n.Op == "Multinomial" {
		return "", false
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s::%s:%d(", n.Domain, n.Op, n.Version)
	for _, v := range n.Inputs {
		fmt.Fprintf(&b, "%p,", v)
	}
	fmt.Fprintf(&b, ")%d{", len(n.Outputs))
	for _, o := range n.Outputs {
		b.WriteString(fmt.Sprint(o != nil))
	}
	for _, a := range n.Attrs {
		switch a.Kind {
		case ir.AttrGraph, ir.AttrGraphs:
			return "", false
		case ir.AttrTensor:
			if a.T == nil || a.T.NumElements() > cseMaxConst {
				return "", false
			}
			fmt.Fprintf(&b, "%s=%d%v%x%q;", a.Name, a.T.DType, a.T.Shape, a.T.Raw, a.T.Strings)
		default:
			fmt.Fprintf(&b, "%s=%d:%v%v%q%v%v%q;", a.Name, a.Kind, a.F, a.I, a.S, a.Floats, a.Ints, a.Strings)
		}
	}
	b.WriteString("}")
	return b.String(), true
}
