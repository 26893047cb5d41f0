package passes

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cuvil/cuvil/ir"
)

// builder makes small models for tests, resolving op versions against one
// ai.onnx opset the way the importer does.
type builder struct {
	t     *testing.T
	m     *ir.Model
	g     *ir.Graph
	count int
}

func newBuilder(t *testing.T, opset int64) *builder {
	g := &ir.Graph{Name: "test"}
	return &builder{t: t, g: g, m: &ir.Model{Graph: g, Opsets: map[string]int64{"": opset}, IRVersion: 8}}
}

// shape builds a shape from ints (constant dims) and strings (symbols).
func shape(dims ...any) ir.Shape {
	s := ir.Shape{}
	for _, d := range dims {
		switch d := d.(type) {
		case int:
			s = append(s, ir.D(int64(d)))
		case string:
			s = append(s, ir.S(d))
		default:
			panic(fmt.Sprintf("bad dim %v", d))
		}
	}
	return s
}

func (b *builder) input(name string, dt ir.DType, dims ...any) *ir.Value {
	v := &ir.Value{Name: name, Type: ir.TensorType(dt, shape(dims...))}
	b.g.Inputs = append(b.g.Inputs, v)
	return v
}

func (b *builder) constant(name string, t *ir.Tensor) *ir.Value {
	t.Name = name
	v := &ir.Value{Name: name, Type: t.Type(), Const: t}
	b.g.Consts = append(b.g.Consts, v)
	return v
}

func (b *builder) ints(name string, v ...int64) *ir.Value {
	return b.constant(name, ir.NewTensorInt64([]int64{int64(len(v))}, v))
}

func (b *builder) scalar(name string, v int64) *ir.Value {
	return b.constant(name, ir.NewTensorInt64(nil, []int64{v}))
}

// node adds a node with nout outputs named <name>_<i> (or <name> for one).
func (b *builder) node(op, name string, ins []*ir.Value, nout int, attrs ...*ir.Attr) *ir.Node {
	return b.nodeIn(b.g, op, name, ins, nout, attrs...)
}

func (b *builder) nodeIn(g *ir.Graph, op, name string, ins []*ir.Value, nout int, attrs ...*ir.Attr) *ir.Node {
	b.t.Helper()
	n := &ir.Node{Name: name, Op: op, Inputs: ins}
	if s := ir.LookupOp("", op); s != nil {
		v, ok := s.VersionFor(b.m.Opsets[""])
		if !ok {
			b.t.Fatalf("op %s has no version at opset %d", op, b.m.Opsets[""])
		}
		n.Version = v
	}
	for _, a := range attrs {
		n.SetAttr(a)
	}
	for i := 0; i < nout; i++ {
		oname := name
		if nout > 1 {
			oname = fmt.Sprintf("%s_%d", name, i)
		}
		n.Outputs = append(n.Outputs, &ir.Value{Name: oname, Type: ir.Type{Unranked: true}, Def: n})
	}
	g.Nodes = append(g.Nodes, n)
	return n
}

// out adds a node and returns its only output.
func (b *builder) out(op, name string, ins []*ir.Value, attrs ...*ir.Attr) *ir.Value {
	return b.node(op, name, ins, 1, attrs...).Outputs[0]
}

func aInt(name string, v int64) *ir.Attr { return &ir.Attr{Name: name, Kind: ir.AttrInt, I: v} }
func aInts(name string, v ...int64) *ir.Attr {
	return &ir.Attr{Name: name, Kind: ir.AttrInts, Ints: v}
}
func aStr(name, v string) *ir.Attr { return &ir.Attr{Name: name, Kind: ir.AttrString, S: v} }
func aTensor(name string, t *ir.Tensor) *ir.Attr {
	return &ir.Attr{Name: name, Kind: ir.AttrTensor, T: t}
}
func aGraph(name string, g *ir.Graph) *ir.Attr { return &ir.Attr{Name: name, Kind: ir.AttrGraph, G: g} }

// wantErr fails unless err is non-nil and contains every fragment.
func wantErr(t *testing.T, err error, frags ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one containing %q", frags)
	}
	for _, f := range frags {
		if !strings.Contains(err.Error(), f) {
			t.Fatalf("error %q does not contain %q", err, f)
		}
	}
}
