package passes

import (
	"fmt"

	"github.com/cuvil/cuvil/ir"
)

// Inference for the optional ops and for Scan-8 (the sequence ops are in
// shapes_control.go).

func init() {
	reg(inferOptional, "Optional")
	reg(inferOptionalHasElement, "OptionalHasElement")
	reg(inferOptionalGetElement, "OptionalGetElement")
	reg(inferSequenceMap, "SequenceMap")
}

// inferSequenceMap infers SequenceMap-17: the body sees one element of each
// sequence input (they iterate in lockstep) and every tensor input whole;
// each output is the sequence of what the body's output was per element.
func inferSequenceMap(x *inferer, n *ir.Node) error {
	body, err := graphAttr(n, "body")
	if err != nil {
		return err
	}
	if len(n.Inputs) < 1 || len(body.Inputs) != len(n.Inputs) || len(body.Outputs) != len(n.Outputs) {
		return fmt.Errorf("body has %d inputs and %d outputs, the node %d and %d", len(body.Inputs), len(body.Outputs), len(n.Inputs), len(n.Outputs))
	}
	for i, v := range n.Inputs {
		if v == nil {
			return fmt.Errorf("input %d is missing", i)
		}
		t := v.Type
		switch {
		case t.Kind == ir.SequenceKind && t.Elem != nil:
			x.set(body.Inputs[i], t.Elem.Clone())
		case t.Kind == ir.SequenceKind:
			x.set(body.Inputs[i], ir.Type{Unranked: true})
		case i == 0:
			return fmt.Errorf("input_sequence has type %s, want a sequence", t)
		default:
			x.set(body.Inputs[i], t.Clone())
		}
	}
	if err := x.subgraph(n, body); err != nil {
		return err
	}
	for i, o := range n.Outputs {
		if o != nil {
			x.set(o, seqOf(body.Outputs[i].Type.Clone()))
		}
	}
	return nil
}

func optOf(e ir.Type) ir.Type { return ir.Type{Kind: ir.OptionalKind, Elem: &e} }

// inferOptional: an optional of the input's type, or, without input, of
// the type attribute.
func inferOptional(x *inferer, n *ir.Node) error {
	if v := n.Input(0); v != nil {
		x.set(n.Outputs[0], optOf(v.Type.Clone()))
		return nil
	}
	a := n.Attr("type")
	if a == nil || a.Kind != ir.AttrTypeProto || len(a.Types) != 1 {
		return fmt.Errorf("without an input, the type attribute is required")
	}
	x.set(n.Outputs[0], optOf(a.Types[0].Clone()))
	return nil
}

func inferOptionalHasElement(x *inferer, n *ir.Node) error {
	x.setOut(n, 0, ir.Bool, ir.Shape{})
	return nil
}

// inferOptionalGetElement: the optional's element type; from opset 18 a
// tensor or sequence input passes through.
func inferOptionalGetElement(x *inferer, n *ir.Node) error {
	v := n.Input(0)
	if v == nil {
		return fmt.Errorf("input is missing")
	}
	switch v.Type.Kind {
	case ir.OptionalKind:
		if v.Type.Elem == nil {
			return fmt.Errorf("input's element type is unknown")
		}
		x.set(n.Outputs[0], v.Type.Elem.Clone())
	default:
		x.set(n.Outputs[0], v.Type.Clone())
	}
	return nil
}

// inferScan8 infers Scan-8, whose inputs are sequence_lens (optional),
// the states and the scan inputs, each with a leading batch axis; scan
// inputs have the sequence axis next. The body sees one batch entry and
// one step.
func inferScan8(x *inferer, n *ir.Node) error {
	body, err := graphAttr(n, "body")
	if err != nil {
		return err
	}
	m := int(n.IntAttr("num_scan_inputs"))
	nState := len(n.Inputs) - 1 - m
	if m <= 0 || nState < 0 || len(body.Inputs) != nState+m {
		return fmt.Errorf("num_scan_inputs %d does not fit %d inputs and a body with %d", m, len(n.Inputs), len(body.Inputs))
	}
	var batch, seq ir.Dim
	for i := 1; i < len(n.Inputs); i++ {
		t, err := x.in(n, i)
		if err != nil {
			return err
		}
		min := 1
		if i > nState {
			min = 2
		}
		if t.Unranked || len(t.Shape) < min {
			return fmt.Errorf("input %d has type %s, want rank %d or more", i, t, min)
		}
		if i == 1 {
			batch = t.Shape[0]
		}
		if i <= nState {
			x.set(body.Inputs[i-1], ir.TensorType(t.DType, cloneShape(t.Shape[1:])))
			continue
		}
		if i == nState+1 {
			seq = t.Shape[1]
		}
		x.set(body.Inputs[i-1], ir.TensorType(t.DType, cloneShape(t.Shape[2:])))
	}
	if err := x.subgraph(n, body); err != nil {
		return err
	}
	if len(n.Outputs) != len(body.Outputs) || len(n.Outputs) < nState {
		return fmt.Errorf("body has %d outputs, node has %d", len(body.Outputs), len(n.Outputs))
	}
	for i, o := range n.Outputs {
		t := body.Outputs[i].Type
		if t.Kind != ir.TensorKind || t.Unranked {
			x.set(o, ir.Type{DType: t.DType, Unranked: true})
			continue
		}
		lead := ir.Shape{batch}
		if i >= nState {
			lead = append(lead, seq)
		}
		x.set(o, ir.TensorType(t.DType, append(lead, t.Shape...)))
	}
	return nil
}
