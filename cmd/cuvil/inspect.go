package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	cuvilapi "github.com/cuvil/cuvil"
	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/ir/onnx"
	"github.com/cuvil/cuvil/passes"
)

func cmdInspect(args []string, stdout io.Writer) error {
	fs := newFlags("inspect")
	model := fs.String("model", "", "ONNX model file")
	all := fs.Bool("print-after-all", false, "print the IR after every pass")
	ops := fs.Bool("ops", false, "list the custom ops the model needs, with their signatures, hashes and Go function types")
	stats := fs.Bool("stats", false, "print the final graph's node count per op type, then the total, instead of the IR")
	memplan := fs.Bool("memplan", false, "print the memory plan of the final graph instead of the IR")
	memSVG := fs.String("memplan-svg", "", "write an SVG timeline of the memory plan to `FILE`")
	graph := fs.String("graph", "", "write the final graph in Graphviz dot to `FILE` (and FILE's .svg when dot is on PATH)")
	graphPic := fs.String("graph-svg", "", "write a picture of the final graph to `FILE` laid out without Graphviz: SVG, or an HTML page that pans and zooms when FILE ends in .html")
	allowList := fs.Bool("allow-list", false, "print the ops the model uses as an allow-list for compile -allow-ops (domain:op:version per line)")
	var pf pipelineFlags
	fs.BoolVar(&pf.verify, "verify", false, "verify the IR before and after every pass")
	fs.StringVar(&pf.debug, "d", "", "pass debugging: pass/off|dump|time, comma separated")
	fs.Var(&pf.winograd, "winograd", winogradUsage)
	types := fs.Bool("types", false, "the type-inference debugger: every value's dtype after the precision pass, and a warning at each precision break (with -precision bf16|fp16, -keep-f32)")
	pf.precisionFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected arguments %q", fs.Args())
	}
	if *ops {
		return printOps(*model, stdout)
	}
	if *allowList {
		m, err := onnx.Load(*model) // the imported ops, before any pass fuses them
		if err != nil {
			return err
		}
		fmt.Fprint(stdout, cuvilapi.OpsAllowList(m))
		return nil
	}
	if *types {
		if err := pf.check(*model); err != nil {
			return err
		}
		opts := cuvilapi.Options{Model: *model, Dump: stdout}
		pf.apply(&opts)
		return cuvilapi.InspectTypes(opts, stdout)
	}
	if *all {
		dumps := ""
		for _, p := range passNamesFor(pf.debug) {
			if dumps != "" {
				dumps += ","
			}
			dumps += p + "/dump"
		}
		if pf.debug != "" && dumps != "" {
			pf.debug += ","
		}
		pf.debug += dumps
	}
	m, _, err := load(*model, pf, stdout)
	if err != nil {
		return err
	}
	quiet := false // an analysis flag replaces the final IR
	if *stats {
		quiet = true
		for _, c := range passes.Stats(m) {
			fmt.Fprintf(stdout, "%s %d\n", statsName(c.Op), c.Count)
		}
		fmt.Fprintf(stdout, "nodes %d\n", passes.NodeCount(m))
	}
	if *memplan || *memSVG != "" {
		p, err := passes.PlanModel(m)
		if err != nil {
			return err
		}
		if *memplan {
			quiet = true
			if err := p.Print(stdout); err != nil {
				return err
			}
		}
		if *memSVG != "" {
			quiet = true
			if err := os.WriteFile(*memSVG, []byte(memPlanSVG(p)), 0o644); err != nil {
				return err
			}
		}
	}
	if *graph != "" {
		quiet = true
		if err := writeGraph(m, *graph); err != nil {
			return err
		}
	}
	if *graphPic != "" {
		quiet = true
		pic := graphSVG(m)
		if strings.HasSuffix(strings.ToLower(*graphPic), ".html") {
			pic = graphHTML(*model, pic)
		}
		if err := os.WriteFile(*graphPic, []byte(pic), 0o644); err != nil {
			return err
		}
	}
	if quiet {
		return nil
	}
	fmt.Fprintln(stdout, "# final IR")
	return ir.Print(stdout, m)
}

// statsName prints fused ops under their own names (FusedConv, not
// cuvil::FusedConv); other domains keep theirs.
func statsName(op string) string {
	if d, name, ok := strings.Cut(op, "::"); ok && d == ir.CuvilDomain {
		return name
	}
	return op
}

// passNamesFor lists the pipeline's passes that the -d value does not
// mention yet.
func passNamesFor(debug string) []string {
	set, err := passes.ParseDebug(debug)
	if err != nil {
		return nil // load reports the error
	}
	var out []string
	for _, name := range passes.PassNames() {
		if _, ok := set[name]; !ok {
			out = append(out, name)
		}
	}
	return out
}

// printOps prints one block per custom op signature the model needs.
func printOps(model string, stdout io.Writer) error {
	if model == "" {
		return usagef("-model is required")
	}
	sigs, err := cuvilapi.CustomOps(model)
	if err != nil {
		return err
	}
	if len(sigs) == 0 {
		fmt.Fprintf(stdout, "%s: every op has a built-in kernel\n", model)
		return nil
	}
	for _, s := range sigs {
		fmt.Fprintf(stdout, "%s\n\thash %s\n\t%s\n\tregister: -op %s=IMPORT/PATH.Func\n", s.Text, s.Hash, s.GoSignature, s.Key)
	}
	return nil
}

// writeGraph writes m's top-level graph as Graphviz dot: one box per node,
// fused nodes (domain cuvil, or any node a pass merged others into) filled
// and boxed in a cluster of their own with the imported ops they absorbed,
// constants left out, edges labelled with types. With dot on PATH it also
// writes FILE's .svg.
func writeGraph(m *ir.Model, file string) error {
	g := m.Graph
	var b strings.Builder
	b.WriteString("digraph cuvil {\n  rankdir=TB;\n  node [shape=box, fontname=\"Helvetica\", fontsize=10];\n  edge [fontname=\"Helvetica\", fontsize=8];\n")
	id := map[*ir.Node]string{}
	for i, n := range g.Nodes {
		id[n] = fmt.Sprintf("n%d", i)
	}
	q := func(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), `"`, `\"`) }
	for i, v := range g.Inputs {
		fmt.Fprintf(&b, "  in%d [label=\"%s\\n%s\", shape=ellipse, style=filled, fillcolor=\"#dddddd\"];\n", i, q(v.Name), q(v.Type.String()))
	}
	for i, v := range g.Outputs {
		fmt.Fprintf(&b, "  out%d [label=\"%s\\n%s\", shape=ellipse, style=filled, fillcolor=\"#dddddd\"];\n", i, q(v.Name), q(v.Type.String()))
	}
	for _, n := range g.Nodes {
		label := q(n.Op) + "\\n" + q(n.Name)
		if len(n.Fused) == 0 || (n.Domain != ir.CuvilDomain && len(n.Fused) < 2) {
			fmt.Fprintf(&b, "  %s [label=\"%s\"];\n", id[n], label)
			continue
		}
		// A fused group: a cluster box labelled with the op, holding the
		// node (edges attach to it) and, below it, the imported ops it
		// absorbed (ir.Node.Fused) in graph order.
		op := n.Op
		if n.Domain != "" && n.Domain != "ai.onnx" {
			op = n.Domain + "." + op
		}
		if a := n.Attr("activation"); a != nil && a.S != "" {
			label += "\\n+" + q(a.S)
		}
		fmt.Fprintf(&b, "  subgraph cluster_%s {\n    label=\"fused %s (%d ops)\"; style=\"rounded,dashed\"; color=\"#c0392b\";\n", id[n], q(op), len(n.Fused))
		fmt.Fprintf(&b, "    %s [label=\"%s\", style=\"filled,bold\", fillcolor=\"#f9d5cf\", color=\"#c0392b\"];\n", id[n], label)
		prev := id[n]
		for j, o := range n.Fused {
			oid := fmt.Sprintf("%s_f%d", id[n], j)
			fmt.Fprintf(&b, "    %s [label=\"%s\\n%s\", shape=box, style=\"rounded,dashed\", color=\"#7f8c8d\", fontsize=8];\n", oid, q(o.Op), q(o.Name))
			fmt.Fprintf(&b, "    %s -> %s [style=invis];\n", prev, oid)
			prev = oid
		}
		b.WriteString("  }\n")
	}
	src := map[*ir.Value]string{}
	for i, v := range g.Inputs {
		src[v] = fmt.Sprintf("in%d", i)
	}
	var edges []string
	for _, n := range g.Nodes {
		for _, v := range n.Outputs {
			if v != nil {
				src[v] = id[n]
			}
		}
		for _, v := range n.Inputs {
			if s, ok := src[v]; ok && v != nil {
				edges = append(edges, fmt.Sprintf("  %s -> %s [label=\"%s\"];\n", s, id[n], q(v.Type.String())))
			}
		}
	}
	for i, v := range g.Outputs {
		if s, ok := src[v]; ok {
			edges = append(edges, fmt.Sprintf("  %s -> out%d;\n", s, i))
		}
	}
	for _, e := range edges {
		b.WriteString(e)
	}
	b.WriteString("}\n")
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		return err
	}
	dot, err := exec.LookPath("dot")
	if err != nil {
		return nil // no Graphviz: the .dot file is the result
	}
	svg := strings.TrimSuffix(file, ".dot") + ".svg"
	if out, err := exec.Command(dot, "-Tsvg", "-o", svg, file).CombinedOutput(); err != nil {
		return fmt.Errorf("dot: %v: %s", err, out)
	}
	return nil
}
