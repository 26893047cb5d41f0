package cuvil

import (
	"fmt"
	"io"
	"strings"

	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/passes"
)

// precisionConfig is the precision pass's config for opts, nil when
// neither Precision nor KeepF32 is set.
func precisionConfig(opts Options) (*passes.PrecisionConfig, error) {
	mode, err := passes.ParsePrecision(opts.Precision)
	if err != nil {
		return nil, fmt.Errorf("cuvil: %v", err)
	}
	if mode == "" && len(opts.KeepF32) == 0 {
		return nil, nil
	}
	return &passes.PrecisionConfig{Mode: mode, KeepF32: opts.KeepF32}, nil
}

// InspectTypes is `cuvil inspect -types`, the type-inference debugger: it
// runs the pipeline on opts.Model (with opts.Precision and opts.KeepF32)
// and writes every value of the main graph with its type after the
// precision pass (inputs, constants, then each node's outputs in graph
// order), then one warning per precision break: the node, its op, the
// dtype and shape of its half input, why that matters and what the pass
// did.
func InspectTypes(opts Options, w io.Writer) error {
	var types strings.Builder
	_, _, prec, err := loadWith(opts, nil, func(p *passes.Pass, m *ir.Model) {
		if p == passes.Precision {
			writeTypes(&types, m.Graph)
		}
	})
	if err != nil {
		return err
	}
	mode := opts.Precision
	if mode == "" {
		mode = "none"
	}
	fmt.Fprintf(w, "# value types after the precision pass (-precision %s", mode)
	if len(opts.KeepF32) > 0 {
		fmt.Fprintf(w, ", -keep-f32 %v", opts.KeepF32)
	}
	fmt.Fprintln(w, ")")
	io.WriteString(w, types.String())
	if prec == nil {
		fmt.Fprintln(w, "# no -precision or -keep-f32: dtypes as the model declares them")
		return nil
	}
	for _, b := range prec.Breaks {
		fmt.Fprintf(w, "warning: %s\n", b)
	}
	fmt.Fprintln(w, passes.PrecisionNote(prec))
	return nil
}

// writeTypes writes one line per value of g: inputs, constants, then each
// node's outputs with the node's op and name.
func writeTypes(w io.Writer, g *ir.Graph) {
	for _, v := range g.Inputs {
		fmt.Fprintf(w, "%%%s %s input\n", v.Name, v.Type)
	}
	for _, v := range g.Consts {
		if v.Const != nil && v.Const.Store == ir.F16 && v.Const.DType == ir.F32 {
			fmt.Fprintf(w, "%%%s %s const, stored f16 in weights.bin (widen-half)\n", v.Name, v.Type)
			continue
		}
		fmt.Fprintf(w, "%%%s %s const\n", v.Name, v.Type)
	}
	for _, n := range g.Nodes {
		op := n.Op
		if n.Domain != "" && n.Domain != "ai.onnx" {
			op = n.Domain + "." + n.Op
		}
		for _, v := range n.Outputs {
			if v != nil {
				fmt.Fprintf(w, "%%%s %s %s @%s\n", v.Name, v.Type, op, n.Name)
			}
		}
	}
}
