package onnx

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/cuvil/cuvil/ir"
	pb "github.com/cuvil/cuvil/ir/onnx/onnxpb"
)

// Encode writes an ir.Model as the bytes of an .onnx file (ModelProto),
// subgraphs and initializers included, so that tests can build ONNX files
// from IR. Values with empty or clashing names get unique ones (SSA names
// must be unique across a model and its subgraphs); a model without
// opsets is written with ai.onnx at ir.MaxOpset. Output is deterministic.
func Encode(m *ir.Model) ([]byte, error) {
	if m == nil || m.Graph == nil {
		return nil, fmt.Errorf("onnx.Encode: model has no graph")
	}
	e := &encoder{names: map[*ir.Value]string{}, taken: map[string]bool{}}
	if err := e.nameGraph(m.Graph); err != nil {
		return nil, fmt.Errorf("onnx.Encode: %w", err)
	}
	gp, err := e.graph(m.Graph)
	if err != nil {
		return nil, fmt.Errorf("onnx.Encode: %w", err)
	}
	irVersion := m.IRVersion
	if irVersion == 0 {
		irVersion = int64(pb.Version_IR_VERSION)
	}
	mp := &pb.ModelProto{IrVersion: ptr(irVersion), Graph: gp}
	if m.Producer != "" {
		mp.ProducerName = ptr(m.Producer)
	}
	if m.DocString != "" {
		mp.DocString = ptr(m.DocString)
	}
	opsets := m.Opsets
	if len(opsets) == 0 {
		opsets = map[string]int64{"": ir.MaxOpset}
	}
	for _, d := range sortedKeys(opsets) {
		mp.OpsetImport = append(mp.OpsetImport, &pb.OperatorSetIdProto{Domain: ptr(d), Version: ptr(opsets[d])})
	}
	for _, k := range sortedKeys(m.Metadata) {
		mp.MetadataProps = append(mp.MetadataProps, &pb.StringStringEntryProto{Key: ptr(k), Value: ptr(m.Metadata[k])})
	}
	return proto.MarshalOptions{Deterministic: true}.Marshal(mp)
}

type encoder struct {
	names map[*ir.Value]string
	taken map[string]bool
}

// nameGraph gives every value defined in g and its subgraphs a unique
// name, keeping the value's own name when it is free.
func (e *encoder) nameGraph(g *ir.Graph) error {
	def := func(v *ir.Value, what string) error {
		if v == nil {
			return nil
		}
		if _, dup := e.names[v]; dup {
			return fmt.Errorf("value %q is defined twice (again as %s)", v.Name, what)
		}
		base := v.Name
		if base == "" {
			base = "v"
		}
		name := base
		for k := 1; e.taken[name]; k++ {
			name = fmt.Sprintf("%s__%d", base, k)
		}
		e.taken[name] = true
		e.names[v] = name
		return nil
	}
	for _, v := range g.Inputs {
		if err := def(v, "a graph input"); err != nil {
			return err
		}
	}
	for _, v := range g.Consts {
		if err := def(v, "a constant"); err != nil {
			return err
		}
	}
	for _, n := range g.Nodes {
		for _, v := range n.Outputs {
			if err := def(v, fmt.Sprintf("output of node %q (%s)", n.Name, n.Op)); err != nil {
				return err
			}
		}
		for _, a := range n.Attrs {
			for _, sg := range attrGraphs(a) {
				if err := e.nameGraph(sg); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func attrGraphs(a *ir.Attr) []*ir.Graph {
	if a.G != nil {
		return append([]*ir.Graph{a.G}, a.Graphs...)
	}
	return a.Graphs
}

func (e *encoder) ref(v *ir.Value) (string, error) {
	if v == nil {
		return "", nil
	}
	name, ok := e.names[v]
	if !ok {
		return "", fmt.Errorf("value %q is used but no graph input, constant or node defines it", v.Name)
	}
	return name, nil
}

func (e *encoder) valueInfo(v *ir.Value) *pb.ValueInfoProto {
	return &pb.ValueInfoProto{Name: ptr(e.names[v]), Type: typeToProto(v.Type)}
}

// informative reports whether a type says more than "unknown", the type the
// importer gives a node output ONNX declares nothing about.
func informative(t ir.Type) bool {
	return !(t.Kind == ir.TensorKind && t.DType == ir.Undefined && t.Unranked)
}

func (e *encoder) graph(g *ir.Graph) (*pb.GraphProto, error) {
	gp := &pb.GraphProto{}
	if g.Name != "" {
		gp.Name = ptr(g.Name)
	}
	for _, v := range g.Inputs {
		gp.Input = append(gp.Input, e.valueInfo(v))
	}
	for _, v := range g.Consts {
		if v.Const == nil {
			return nil, fmt.Errorf("constant %q has no data", v.Name)
		}
		tp, err := tensorToProto(v.Const)
		if err != nil {
			return nil, fmt.Errorf("constant %q: %w", v.Name, err)
		}
		tp.Name = ptr(e.names[v])
		gp.Initializer = append(gp.Initializer, tp)
	}
	isOutput := map[*ir.Value]bool{}
	for _, v := range g.Outputs {
		name, err := e.ref(v)
		if err != nil {
			return nil, fmt.Errorf("graph output: %w", err)
		}
		isOutput[v] = true
		gp.Output = append(gp.Output, &pb.ValueInfoProto{Name: ptr(name), Type: typeToProto(v.Type)})
	}
	for _, n := range g.Nodes {
		np, err := e.node(n)
		if err != nil {
			return nil, fmt.Errorf("node %q (%s): %w", n.Name, n.Op, err)
		}
		gp.Node = append(gp.Node, np)
		for _, v := range n.Outputs {
			if v != nil && !isOutput[v] && informative(v.Type) {
				gp.ValueInfo = append(gp.ValueInfo, e.valueInfo(v))
			}
		}
	}
	return gp, nil
}

func (e *encoder) node(n *ir.Node) (*pb.NodeProto, error) {
	np := &pb.NodeProto{OpType: ptr(n.Op)}
	if n.Name != "" {
		np.Name = ptr(n.Name)
	}
	if n.Domain != "" {
		np.Domain = ptr(n.Domain)
	}
	for i, v := range n.Inputs {
		name, err := e.ref(v)
		if err != nil {
			return nil, fmt.Errorf("input %d: %w", i, err)
		}
		np.Input = append(np.Input, name)
	}
	for _, v := range n.Outputs {
		name := ""
		if v != nil {
			name = e.names[v]
		}
		np.Output = append(np.Output, name)
	}
	for _, a := range n.Attrs {
		ap, err := e.attr(a)
		if err != nil {
			return nil, fmt.Errorf("attribute %q: %w", a.Name, err)
		}
		np.Attribute = append(np.Attribute, ap)
	}
	return np, nil
}

func (e *encoder) attr(a *ir.Attr) (*pb.AttributeProto, error) {
	ap := &pb.AttributeProto{Name: ptr(a.Name)}
	typ := func(t pb.AttributeProto_AttributeType) { ap.Type = t.Enum() }
	switch a.Kind {
	case ir.AttrFloat:
		typ(pb.AttributeProto_FLOAT)
		ap.F = ptr(a.F)
	case ir.AttrInt:
		typ(pb.AttributeProto_INT)
		ap.I = ptr(a.I)
	case ir.AttrString:
		typ(pb.AttributeProto_STRING)
		ap.S = []byte(a.S)
	case ir.AttrFloats:
		typ(pb.AttributeProto_FLOATS)
		ap.Floats = append([]float32{}, a.Floats...)
	case ir.AttrInts:
		typ(pb.AttributeProto_INTS)
		ap.Ints = append([]int64{}, a.Ints...)
	case ir.AttrStrings:
		typ(pb.AttributeProto_STRINGS)
		for _, s := range a.Strings {
			ap.Strings = append(ap.Strings, []byte(s))
		}
	case ir.AttrTensor:
		typ(pb.AttributeProto_TENSOR)
		if a.T == nil {
			return nil, fmt.Errorf("tensor attribute has no tensor")
		}
		tp, err := tensorToProto(a.T)
		if err != nil {
			return nil, err
		}
		ap.T = tp
	case ir.AttrTensors:
		typ(pb.AttributeProto_TENSORS)
		for _, t := range a.Tensors {
			tp, err := tensorToProto(t)
			if err != nil {
				return nil, err
			}
			ap.Tensors = append(ap.Tensors, tp)
		}
	case ir.AttrGraph:
		typ(pb.AttributeProto_GRAPH)
		if a.G == nil {
			return nil, fmt.Errorf("graph attribute has no graph")
		}
		gp, err := e.graph(a.G)
		if err != nil {
			return nil, err
		}
		ap.G = gp
	case ir.AttrGraphs:
		typ(pb.AttributeProto_GRAPHS)
		for _, g := range a.Graphs {
			gp, err := e.graph(g)
			if err != nil {
				return nil, err
			}
			ap.Graphs = append(ap.Graphs, gp)
		}
	case ir.AttrTypeProto:
		typ(pb.AttributeProto_TYPE_PROTO)
		if len(a.Types) != 1 {
			return nil, fmt.Errorf("type attribute has %d types, want 1", len(a.Types))
		}
		ap.Tp = typeToProto(a.Types[0])
	case ir.AttrTypeProtos:
		typ(pb.AttributeProto_TYPE_PROTOS)
		for _, t := range a.Types {
			ap.TypeProtos = append(ap.TypeProtos, typeToProto(t))
		}
	default:
		return nil, fmt.Errorf("cannot encode attribute kind %s", a.Kind)
	}
	return ap, nil
}
