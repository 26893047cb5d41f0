// Package irbuild builds small ir models by hand for tests of gen and of
// the harness: a graph builder, attribute helpers and a two-layer model.
package irbuild

import (
	"fmt"

	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/passes"
)

// B appends inputs, nodes and constants to G.
type B struct{ G *ir.Graph }

// Sub returns a builder for a subgraph (an If branch, a Loop body) of parent.
func Sub(name string, parent *ir.Graph) *B { return &B{&ir.Graph{Name: name, Parent: parent}} }

// In adds a graph input.
func (b *B) In(name string, t ir.Type) *ir.Value {
	v := &ir.Value{Name: name, Type: t}
	b.G.Inputs = append(b.G.Inputs, v)
	return v
}

// Op adds an ai.onnx node at its opset-17 version with one output.
func (b *B) Op(op string, attrs []*ir.Attr, ins ...*ir.Value) *ir.Value {
	out := &ir.Value{Name: fmt.Sprintf("%s_%s_%d", b.G.Name, op, len(b.G.Nodes))}
	b.OpN(op, attrs, ins, out)
	return out
}

// OpN adds an ai.onnx node at its opset-17 version with the given outputs.
func (b *B) OpN(op string, attrs []*ir.Attr, ins []*ir.Value, outs ...*ir.Value) {
	s := ir.LookupOp("", op)
	if s == nil {
		panic("no op " + op)
	}
	ver, _ := s.VersionFor(17)
	n := &ir.Node{Name: fmt.Sprintf("%s_%d", b.G.Name, len(b.G.Nodes)), Op: op, Version: ver, Inputs: ins, Outputs: outs, Attrs: attrs}
	for _, o := range outs {
		if o != nil {
			o.Def = n
		}
	}
	b.G.Nodes = append(b.G.Nodes, n)
}

// ConstF32 adds a float32 constant.
func (b *B) ConstF32(shape []int64, v ...float32) *ir.Value {
	c := &ir.Value{Name: fmt.Sprintf("%s_c%d", b.G.Name, len(b.G.Consts)), Const: ir.NewTensorF32(shape, v)}
	b.G.Consts = append(b.G.Consts, c)
	return c
}

// ConstI64 adds an int64 constant.
func (b *B) ConstI64(shape []int64, v ...int64) *ir.Value {
	c := &ir.Value{Name: fmt.Sprintf("%s_c%d", b.G.Name, len(b.G.Consts)), Const: ir.NewTensorInt64(shape, v)}
	b.G.Consts = append(b.G.Consts, c)
	return c
}

// GraphAttr, IntAttr and IntsAttr make attributes.
func GraphAttr(name string, g *ir.Graph) *ir.Attr {
	return &ir.Attr{Name: name, Kind: ir.AttrGraph, G: g}
}

func IntAttr(name string, v int64) *ir.Attr { return &ir.Attr{Name: name, Kind: ir.AttrInt, I: v} }

func IntsAttr(name string, v ...int64) *ir.Attr {
	return &ir.Attr{Name: name, Kind: ir.AttrInts, Ints: v}
}

// F32 is a float32 tensor type of constant dims.
func F32(dims ...int64) ir.Type { return ir.TensorType(ir.F32, ir.ShapeOf(dims...)) }

// Model makes b's graph an opset-17 model with outputs outs and infers its
// types (it panics on a model that does not check).
func Model(b *B, outs ...*ir.Value) *ir.Model {
	b.G.Outputs = outs
	m := &ir.Model{Graph: b.G, Opsets: map[string]int64{"": 17}, Path: b.G.Name + ".onnx"}
	if _, err := passes.InferShapes(m); err != nil {
		panic(err)
	}
	return m
}

// Tiny is z = 2*(x·W)·W2 + B (MatMul then Gemm, B from a Constant node)
// with x [batch, 4], and y = x·W as a second output: opset 13, types set.
func Tiny() *ir.Model {
	f32 := func(shape ...ir.Dim) ir.Type { return ir.TensorType(ir.F32, ir.Shape(shape)) }
	x := &ir.Value{Name: "x", Type: f32(ir.S("batch"), ir.D(4))}
	w := &ir.Value{Name: "W", Type: f32(ir.D(4), ir.D(3)), Const: ir.NewTensorF32([]int64{4, 3},
		[]float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})}
	w2 := &ir.Value{Name: "W2", Type: f32(ir.D(3), ir.D(2)), Const: ir.NewTensorF32([]int64{3, 2},
		[]float32{0.5, -1, 0.25, 2, -0.125, 1})}
	b := &ir.Value{Name: "B", Type: f32(ir.D(2))}
	y := &ir.Value{Name: "y.out", Type: f32(ir.S("batch"), ir.D(3))}
	z := &ir.Value{Name: "z", Type: f32(ir.S("batch"), ir.D(2))}
	cn := &ir.Node{Name: "const_b", Op: "Constant", Version: 13, Outputs: []*ir.Value{b},
		Attrs: []*ir.Attr{{Name: "value", Kind: ir.AttrTensor, T: ir.NewTensorF32([]int64{2}, []float32{100, -100})}}}
	mm := &ir.Node{Name: "mm", Op: "MatMul", Version: 13, Inputs: []*ir.Value{x, w}, Outputs: []*ir.Value{y}}
	gm := &ir.Node{Name: "gemm", Op: "Gemm", Version: 13, Inputs: []*ir.Value{y, w2, b}, Outputs: []*ir.Value{z},
		Attrs: []*ir.Attr{{Name: "alpha", Kind: ir.AttrFloat, F: 2}}}
	b.Def, y.Def, z.Def = cn, mm, gm
	g := &ir.Graph{Name: "tiny", Inputs: []*ir.Value{x}, Outputs: []*ir.Value{z, y}, Nodes: []*ir.Node{cn, mm, gm}, Consts: []*ir.Value{w, w2}}
	return &ir.Model{Graph: g, Opsets: map[string]int64{"": 13}, Path: "testdata/tiny.onnx", SourceHash: "00ff"}
}
