package passes

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/ir/onnx"
)

// TestLayoutDiag prints, for the model named by CUVIL_LAYOUT_DIAG (an
// .onnx path), every convolution the layout pass leaves NCHW (or cannot
// take) with its shape and the rule that kept it out: no NHWC kind
// (layoutKindOf: op, rank, group), or a chain whose cost-model gain is not
// positive (with the chain's size and the ops at its edges that have no
// NHWC kind). A diagnostic for issue 21, skipped without the variable.
func TestLayoutDiag(t *testing.T) {
	path := os.Getenv("CUVIL_LAYOUT_DIAG")
	if path == "" {
		t.Skip("set CUVIL_LAYOUT_DIAG=model.onnx")
	}
	m, err := onnx.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var before []*Pass
	for _, p := range Pipeline {
		if p == Layout {
			break
		}
		before = append(before, p)
	}
	if err := runPasses(m, before, Options{}); err != nil {
		t.Fatal(err)
	}
	fmt.Print(layoutDiag(m))
}

func layoutDiag(m *ir.Model) string {
	g := m.Graph
	r := newRewriter(m, g)
	kinds := map[*ir.Node]layoutKind{}
	for _, n := range g.Nodes {
		if k := layoutKindOf(n); k != lkNone {
			kinds[n] = k
		}
	}
	parent := map[*ir.Node]*ir.Node{}
	find := func(n *ir.Node) *ir.Node {
		for parent[n] != nil && parent[n] != n {
			n = parent[n]
		}
		return n
	}
	for _, n := range g.Nodes {
		if kinds[n] == lkNone {
			continue
		}
		if parent[n] == nil {
			parent[n] = n
		}
		for _, v := range n.Inputs {
			if v != nil && v.Def != nil && kinds[v.Def] != lkNone {
				if a, b := find(n), find(v.Def); a != b {
					parent[a] = b
				}
			}
		}
	}
	chains := map[*ir.Node][]*ir.Node{}
	for _, n := range g.Nodes {
		if kinds[n] != lkNone {
			chains[find(n)] = append(chains[find(n)], n)
		}
	}
	var b strings.Builder
	counts := map[string]int{}
	total := 0
	for _, n := range g.Nodes {
		isConv := isOp(n, "Conv") || isOp(n, "ConvTranspose") || n.Domain == ir.CuvilDomain && n.Op == "FusedConv"
		if !isConv || len(n.Inputs) < 2 || n.Inputs[1] == nil {
			continue
		}
		total++
		ws, _ := n.Inputs[1].Type.Shape.Consts()
		var C int64
		if n.Inputs[0].Type.Known() && n.Inputs[0].Type.Rank() > 1 {
			C = n.Inputs[0].Type.Shape[1].Size
		}
		shape := fmt.Sprintf("%s W%v C=%d k=%v s=%v d=%v p=%v g=%d", n.Op, ws, C, n.AttrInts("kernel_shape", nil),
			n.AttrInts("strides", nil), n.AttrInts("dilations", nil), n.AttrInts("pads", nil), n.AttrInt("group", 1))
		var why string
		switch {
		case isOp(n, "ConvTranspose"):
			why = "op: layoutKindOf has no ConvTranspose"
		case n.Inputs[0].Type.Rank() != 4:
			why = fmt.Sprintf("rank %d: layout takes 4-D only", n.Inputs[0].Type.Rank())
		case kinds[n] == lkNone:
			why = "group: layoutKindOf takes group 1 or depthwise only"
		default:
			root := find(n)
			members := chains[root]
			in := map[*ir.Node]bool{}
			for _, u := range members {
				in[u] = true
			}
			gain := layoutGain(r, members, in)
			if gain > 0 {
				continue // NHWC
			}
			edge := map[string]int{}
			for _, u := range members {
				for _, v := range u.Inputs {
					if v != nil && v.Def != nil && !in[v.Def] && is4DF32(v) && layoutDataInput(u, v) {
						edge[opName(v.Def)]++
					}
				}
				for _, w := range r.uses[u.Outputs[0]] {
					if !in[w] {
						edge[opName(w)]++
					}
				}
			}
			var es []string
			for k, c := range edge {
				es = append(es, fmt.Sprintf("%s x%d", k, c))
			}
			sort.Strings(es)
			why = fmt.Sprintf("chain: gain %.0f ns <= 0 (%d members; edges %s)", gain, len(members), strings.Join(es, ", "))
		}
		key := why
		if i := strings.Index(key, " ("); i > 0 {
			key = key[:i]
		}
		if strings.HasPrefix(key, "chain") {
			key = "chain: gain <= 0"
		}
		counts[key]++
		fmt.Fprintf(&b, "  %-40s %s\n      -> %s\n", n.Name, shape, why)
	}
	var ks []string
	for k, c := range counts {
		ks = append(ks, fmt.Sprintf("%d %s", c, k))
	}
	sort.Strings(ks)
	return fmt.Sprintf("convolutions: %d; kept out of NHWC: %s\n", total, strings.Join(ks, "; ")) + b.String()
}

func opName(n *ir.Node) string {
	if n.Domain == ir.CuvilDomain {
		return "cuvil::" + n.Op
	}
	return n.Op
}
