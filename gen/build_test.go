package gen

import (
	"github.com/cuvil/cuvil/internal/irbuild"
	"github.com/cuvil/cuvil/ir"
)

// Hand-built models for gen's tests, on internal/irbuild.

type gb struct{ g *ir.Graph }

func (b *gb) in(name string, t ir.Type) *ir.Value { return (&irbuild.B{G: b.g}).In(name, t) }

func (b *gb) op(op string, attrs []*ir.Attr, ins ...*ir.Value) *ir.Value {
	return (&irbuild.B{G: b.g}).Op(op, attrs, ins...)
}

func (b *gb) constF32(shape []int64, v ...float32) *ir.Value {
	return (&irbuild.B{G: b.g}).ConstF32(shape, v...)
}

func intsA(name string, v ...int64) *ir.Attr { return irbuild.IntsAttr(name, v...) }

func f32T(dims ...int64) ir.Type { return irbuild.F32(dims...) }

func model(b *gb, outs ...*ir.Value) *ir.Model { return irbuild.Model(&irbuild.B{G: b.g}, outs...) }
