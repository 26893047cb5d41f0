package ir

import (
	"fmt"
	"strconv"
	"strings"
)

// Dim is one dimension of a shape: a constant size, or a named symbol whose
// size is known only at run time (Sym != ""). A dim that ONNX leaves
// unnamed is given a fresh symbol by the importer, so every Dim is one or
// the other.
type Dim struct {
	Size int64  // valid when Sym == ""
	Sym  string // symbolic name, e.g. "batch" or "seq"
}

// D returns a constant dim.
func D(n int64) Dim { return Dim{Size: n} }

// S returns a symbolic dim.
func S(name string) Dim { return Dim{Sym: name} }

func (d Dim) IsConst() bool { return d.Sym == "" }

func (d Dim) String() string {
	if d.Sym != "" {
		return d.Sym
	}
	return strconv.FormatInt(d.Size, 10)
}

// Shape is a list of dims. A nil Shape in a Type whose Unranked is false is
// a scalar.
type Shape []Dim

// Consts returns the sizes when every dim is constant.
func (s Shape) Consts() ([]int64, bool) {
	out := make([]int64, len(s))
	for i, d := range s {
		if !d.IsConst() {
			return nil, false
		}
		out[i] = d.Size
	}
	return out, true
}

// NumElements returns the element count when the shape is fully constant.
func (s Shape) NumElements() (int64, bool) {
	n := int64(1)
	for _, d := range s {
		if !d.IsConst() {
			return 0, false
		}
		n *= d.Size
	}
	return n, true
}

// ShapeOf builds a constant shape.
func ShapeOf(dims ...int64) Shape {
	s := make(Shape, len(dims))
	for i, d := range dims {
		s[i] = D(d)
	}
	return s
}

func (s Shape) Equal(t Shape) bool {
	if len(s) != len(t) {
		return false
	}
	for i := range s {
		if s[i] != t[i] {
			return false
		}
	}
	return true
}

func (s Shape) String() string {
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = d.String()
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// TypeKind says what kind of value a Type describes.
type TypeKind uint8

const (
	TensorKind TypeKind = iota
	SequenceKind
	OptionalKind
	MapKind
)

// Type is the type of a value: a tensor of DType and Shape, or a
// sequence/optional of Elem, or a map from Key to Elem. A zero DType means
// the dtype is not known yet (before inference).
type Type struct {
	Kind     TypeKind
	DType    DType // tensor element type; map key type for MapKind
	Shape    Shape
	Unranked bool  // tensor rank unknown
	Elem     *Type // element type of sequence, optional, map value
}

// TensorType returns a ranked tensor type.
func TensorType(dt DType, shape Shape) Type { return Type{DType: dt, Shape: shape} }

// Known reports whether the type is a tensor with known dtype and rank.
func (t Type) Known() bool { return t.Kind == TensorKind && t.DType != Undefined && !t.Unranked }

// Rank returns the tensor rank, or -1 when unranked.
func (t Type) Rank() int {
	if t.Unranked {
		return -1
	}
	return len(t.Shape)
}

// String prints the type the way the IR text does: f32[N,3,224,224],
// f32[?] for unranked, ?[...] for an unknown dtype, seq<f32[2]>,
// opt<...>, map<i64,f32[]>.
func (t Type) String() string {
	switch t.Kind {
	case SequenceKind:
		return "seq<" + elemString(t.Elem) + ">"
	case OptionalKind:
		return "opt<" + elemString(t.Elem) + ">"
	case MapKind:
		return "map<" + t.DType.String() + "," + elemString(t.Elem) + ">"
	}
	dt := "?"
	if t.DType != Undefined {
		dt = t.DType.String()
	}
	if t.Unranked {
		return dt + "[?]"
	}
	return dt + t.Shape.String()
}

func elemString(e *Type) string {
	if e == nil {
		return "?"
	}
	return e.String()
}

// Equal compares two types structurally.
func (t Type) Equal(u Type) bool {
	if t.Kind != u.Kind || t.DType != u.DType || t.Unranked != u.Unranked || !t.Shape.Equal(u.Shape) {
		return false
	}
	if (t.Elem == nil) != (u.Elem == nil) {
		return false
	}
	return t.Elem == nil || t.Elem.Equal(*u.Elem)
}

// Clone returns a deep copy.
func (t Type) Clone() Type {
	c := t
	c.Shape = append(Shape(nil), t.Shape...)
	if t.Elem != nil {
		e := t.Elem.Clone()
		c.Elem = &e
	}
	return c
}

func (t Type) GoString() string { return fmt.Sprintf("ir.Type(%s)", t) }

var typeKindNames = [...]string{TensorKind: "tensor", SequenceKind: "seq", OptionalKind: "opt", MapKind: "map"}

func (k TypeKind) String() string {
	if int(k) < len(typeKindNames) {
		return typeKindNames[k]
	}
	return fmt.Sprintf("typekind(%d)", uint8(k))
}

// ElemDType is the dtype of the innermost tensor: the tensor's own dtype,
// or that of a sequence's or optional's elements, or of a map's values
// (Undefined when unknown).
func (t Type) ElemDType() DType {
	switch t.Kind {
	case TensorKind:
		return t.DType
	case SequenceKind, OptionalKind, MapKind:
		if t.Elem != nil {
			return t.Elem.ElemDType()
		}
	}
	return Undefined
}
