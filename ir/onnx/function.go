package onnx

import (
	"fmt"
	"math"

	"google.golang.org/protobuf/proto"

	pb "github.com/cuvil/cuvil/ir/onnx/onnxpb"
)

// maxInlineDepth bounds nested function calls; a chain deeper than this is
// almost surely a recursive function, which ONNX forbids.
const maxInlineDepth = 64

// expand turns a graph's node list into the nodes to import, replacing
// each call of a model-local function by a renamed copy of its body. The
// IR has no functions: passes and gen see only ordinary ops.
func (im *importer) expand(nodes []*pb.NodeProto, opsets map[string]int64, stack []string) ([]nodeEntry, error) {
	out := make([]nodeEntry, 0, len(nodes))
	for i, np := range nodes {
		name := nodeName(np, i)
		key := funcKey(np.GetDomain(), np.GetOpType())
		f := im.funcs[key]
		if f == nil {
			im.nodes++
			if max := im.limits.maxNodes(); im.nodes > max {
				return nil, fmt.Errorf("node %q (%s): the model has more than %d nodes with its functions inlined (compile -max-nodes raises it)", name, np.GetOpType(), max)
			}
			out = append(out, nodeEntry{np: np, name: name, opsets: opsets})
			continue
		}
		for _, k := range stack {
			if k == key {
				return nil, fmt.Errorf("node %q (%s): function %q of domain %q calls itself", name, np.GetOpType(), f.GetName(), displayDomain(normDomain(f.GetDomain())))
			}
		}
		if len(stack) >= maxInlineDepth {
			return nil, fmt.Errorf("node %q (%s): functions nest more than %d deep", name, np.GetOpType(), maxInlineDepth)
		}
		// Refuse a call whose body would pass the node limit before
		// copying any of it.
		if max := im.limits.maxNodes(); im.nodes+im.funcNodes(key, 0) > max {
			return nil, fmt.Errorf("node %q (%s): the model has more than %d nodes with its functions inlined (compile -max-nodes raises it)", name, np.GetOpType(), max)
		}
		body, err := im.inline(np, name, f)
		if err != nil {
			return nil, fmt.Errorf("node %q (%s): inlining function %q: %w", name, np.GetOpType(), f.GetName(), err)
		}
		fopsets := map[string]int64{}
		for d, v := range opsets {
			fopsets[d] = v
		}
		for _, imp := range f.OpsetImport {
			fopsets[normDomain(imp.GetDomain())] = imp.GetVersion()
		}
		sub, err := im.expand(body, fopsets, append(stack, key))
		if err != nil {
			return nil, err
		}
		out = append(out, sub...)
	}
	return out, nil
}

// funcNodes is the number of nodes function key expands into, its calls
// inlined (saturating at MaxInt64; memoized). Recursion counts as
// unbounded: expand reports it with its own error.
func (im *importer) funcNodes(key string, depth int) int64 {
	if n, ok := im.funcSizes[key]; ok {
		return n
	}
	f := im.funcs[key]
	if f == nil {
		return 1
	}
	if depth > maxInlineDepth {
		return math.MaxInt64
	}
	if im.funcSizes == nil {
		im.funcSizes = map[string]int64{}
	}
	im.funcSizes[key] = math.MaxInt64 // while counting: a cycle is unbounded
	var n int64
	for _, np := range f.Node {
		k := im.funcNodes(funcKey(np.GetDomain(), np.GetOpType()), depth+1)
		if n > math.MaxInt64-k {
			n = math.MaxInt64
			break
		}
		n += k
	}
	im.funcSizes[key] = n
	return n
}

// inline returns a copy of f's body for one call: formal inputs and
// outputs renamed to the call's actual ones, every other value to a fresh
// name, and attribute references (ref_attr_name) replaced by the call's
// attributes.
func (im *importer) inline(call *pb.NodeProto, callName string, f *pb.FunctionProto) ([]*pb.NodeProto, error) {
	if len(call.Input) > len(f.Input) {
		return nil, fmt.Errorf("the call has %d inputs, the function takes %d", len(call.Input), len(f.Input))
	}
	if len(call.Output) > len(f.Output) {
		return nil, fmt.Errorf("the call has %d outputs, the function has %d", len(call.Output), len(f.Output))
	}
	r := &renamer{names: map[string]string{}, attrs: map[string]*pb.AttributeProto{}, fn: f.GetName()}
	for i, formal := range f.Input {
		actual := ""
		if i < len(call.Input) {
			actual = call.Input[i]
		}
		r.names[formal] = actual
	}
	for i, formal := range f.Output {
		if i < len(call.Output) && call.Output[i] != "" {
			r.names[formal] = call.Output[i]
		} else {
			// The caller ignores this output, but the body still computes
			// it, so it needs a name of its own.
			r.names[formal] = im.freshName(callName + "/" + formal)
		}
	}
	for _, a := range call.Attribute {
		r.attrs[a.GetName()] = a
	}
	body := make([]*pb.NodeProto, len(f.Node))
	for i, np := range f.Node {
		body[i] = proto.Clone(np).(*pb.NodeProto)
		body[i].Name = proto.String(callName + "/" + nodeName(np, i))
	}
	var defs []string
	for _, np := range body {
		definedNames(np, &defs)
	}
	for _, name := range defs {
		if _, ok := r.names[name]; !ok && name != "" {
			r.names[name] = im.freshName(callName + "/" + name)
		}
	}
	for _, np := range body {
		if err := r.node(np); err != nil {
			return nil, err
		}
	}
	return body, nil
}

// definedNames appends the names np and its subgraphs define.
func definedNames(np *pb.NodeProto, out *[]string) {
	*out = append(*out, np.Output...)
	for _, a := range np.Attribute {
		gs := a.Graphs
		if a.G != nil {
			gs = append([]*pb.GraphProto{a.G}, gs...)
		}
		for _, g := range gs {
			for _, vi := range g.Input {
				*out = append(*out, vi.GetName())
			}
			for _, t := range g.Initializer {
				*out = append(*out, t.GetName())
			}
			for _, sp := range g.SparseInitializer {
				*out = append(*out, sp.GetValues().GetName())
			}
			for _, n := range g.Node {
				definedNames(n, out)
			}
		}
	}
}

// renamer rewrites one inlined copy of a function body in place.
type renamer struct {
	fn    string
	names map[string]string
	attrs map[string]*pb.AttributeProto // the call's attributes
}

func (r *renamer) name(s string) (string, error) {
	if s == "" {
		return "", nil
	}
	to, ok := r.names[s]
	if !ok {
		return "", fmt.Errorf("function %q reads %q, which is neither one of its inputs nor defined in it", r.fn, s)
	}
	return to, nil
}

func (r *renamer) renameAll(ss []string) error {
	for i, s := range ss {
		to, err := r.name(s)
		if err != nil {
			return err
		}
		ss[i] = to
	}
	return nil
}

func (r *renamer) node(np *pb.NodeProto) error {
	if err := r.renameAll(np.Input); err != nil {
		return fmt.Errorf("node %q (%s): %w", np.GetName(), np.GetOpType(), err)
	}
	if err := r.renameAll(np.Output); err != nil {
		return fmt.Errorf("node %q (%s): %w", np.GetName(), np.GetOpType(), err)
	}
	attrs := np.Attribute[:0]
	for _, a := range np.Attribute {
		if ref := a.GetRefAttrName(); ref != "" {
			src := r.attrs[ref]
			if src == nil {
				// The call does not set it: the op's own default applies.
				continue
			}
			// The caller's attribute is already in the caller's names, so
			// any subgraph it holds is not renamed.
			c := proto.Clone(src).(*pb.AttributeProto)
			c.Name = a.Name
			attrs = append(attrs, c)
			continue
		}
		if a.G != nil {
			if err := r.graph(a.G); err != nil {
				return err
			}
		}
		for _, g := range a.Graphs {
			if err := r.graph(g); err != nil {
				return err
			}
		}
		attrs = append(attrs, a)
	}
	np.Attribute = attrs
	return nil
}

func (r *renamer) graph(g *pb.GraphProto) error {
	for _, vi := range g.ValueInfo {
		// value_info only annotates; a stale entry is no reason to fail.
		if to, ok := r.names[vi.GetName()]; ok {
			vi.Name = proto.String(to)
		}
	}
	for _, vis := range [][]*pb.ValueInfoProto{g.Input, g.Output} {
		for _, vi := range vis {
			to, err := r.name(vi.GetName())
			if err != nil {
				return err
			}
			vi.Name = proto.String(to)
		}
	}
	for _, t := range g.Initializer {
		to, err := r.name(t.GetName())
		if err != nil {
			return err
		}
		t.Name = proto.String(to)
	}
	for _, sp := range g.SparseInitializer {
		if sp.Values == nil {
			continue
		}
		to, err := r.name(sp.Values.GetName())
		if err != nil {
			return err
		}
		sp.Values.Name = proto.String(to)
	}
	for _, np := range g.Node {
		if err := r.node(np); err != nil {
			return err
		}
	}
	return nil
}
