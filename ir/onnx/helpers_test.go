package onnx

import (
	"crypto/sha256"
	"fmt"
	"sort"
	"strings"

	"github.com/cuvil/cuvil/ir"
)

// dump prints a model in a fixed text form for comparing imports: every
// value by name and type, constants by a hash of their data, subgraphs
// indented under their node.
func dump(m *ir.Model) string {
	var b strings.Builder
	var domains []string
	for d := range m.Opsets {
		domains = append(domains, d)
	}
	sort.Strings(domains)
	for _, d := range domains {
		fmt.Fprintf(&b, "opset %q %d\n", d, m.Opsets[d])
	}
	dumpGraph(&b, m.Graph, "")
	return b.String()
}

func dumpGraph(b *strings.Builder, g *ir.Graph, indent string) {
	fmt.Fprintf(b, "%sgraph %q\n", indent, g.Name)
	for _, v := range g.Inputs {
		fmt.Fprintf(b, "%s  in %s: %s\n", indent, v, v.Type)
	}
	for _, v := range g.Consts {
		fmt.Fprintf(b, "%s  const %s: %s = %s\n", indent, v, v.Type, tensorSummary(v.Const))
	}
	ref := func(vs []*ir.Value) string {
		parts := make([]string, len(vs))
		for i, v := range vs {
			if v == nil {
				parts[i] = "_"
			} else {
				parts[i] = v.String()
			}
		}
		return strings.Join(parts, " ")
	}
	for _, n := range g.Nodes {
		var outs []string
		for _, v := range n.Outputs {
			if v == nil {
				outs = append(outs, "_")
			} else {
				outs = append(outs, fmt.Sprintf("%s: %s", v, v.Type))
			}
		}
		fmt.Fprintf(b, "%s  %s = %s.%s@%d %q (%s)", indent, strings.Join(outs, ", "), n.Domain, n.Op, n.Version, n.Name, ref(n.Inputs))
		for _, a := range n.Attrs {
			fmt.Fprintf(b, " %s:%s=", a.Name, a.Kind)
			switch a.Kind {
			case ir.AttrFloat:
				fmt.Fprint(b, a.F)
			case ir.AttrInt:
				fmt.Fprint(b, a.I)
			case ir.AttrString:
				fmt.Fprintf(b, "%q", a.S)
			case ir.AttrFloats:
				fmt.Fprint(b, a.Floats)
			case ir.AttrInts:
				fmt.Fprint(b, a.Ints)
			case ir.AttrStrings:
				fmt.Fprintf(b, "%q", a.Strings)
			case ir.AttrTensor:
				fmt.Fprint(b, tensorSummary(a.T))
			case ir.AttrTensors:
				for _, t := range a.Tensors {
					fmt.Fprint(b, tensorSummary(t), ";")
				}
			case ir.AttrTypeProto, ir.AttrTypeProtos:
				fmt.Fprint(b, a.Types)
			case ir.AttrGraph, ir.AttrGraphs:
				fmt.Fprintf(b, "(below)")
			}
		}
		b.WriteString("\n")
		for _, a := range n.Attrs {
			for _, sg := range attrGraphs(a) {
				if sg.Parent != g {
					fmt.Fprintf(b, "%s  !! subgraph %q of attribute %s has the wrong Parent\n", indent, sg.Name, a.Name)
				}
				dumpGraph(b, sg, indent+"    ")
			}
		}
	}
	fmt.Fprintf(b, "%s  out %s\n", indent, ref(g.Outputs))
}

func tensorSummary(t *ir.Tensor) string {
	h := sha256.New()
	h.Write(t.Raw)
	for _, s := range t.Strings {
		fmt.Fprintf(h, "%d:%s", len(s), s)
	}
	return fmt.Sprintf("%q %s%v #%x", t.Name, t.DType, t.Shape, h.Sum(nil)[:6])
}

// firstDiff shows the first differing line of two dumps.
func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return fmt.Sprintf("line %d:\n  have %s\n  want %s", i+1, y, x)
		}
	}
	return "(no difference)"
}
