package passes

import (
	"fmt"

	"github.com/cuvil/cuvil/ir"
)

// Shape rules for the ai.onnx.ml operators on map values (kernels in
// templates/k_ml_map.go): ZipMap, DictVectorizer, CastMap. A map type's
// DType is its key dtype and Elem the (scalar) value tensor type.

func init() {
	reg(inferMLZipMap, ir.MLDomain+"::ZipMap")
	reg(inferMLDictVectorizer, ir.MLDomain+"::DictVectorizer")
	reg(inferMLCastMap, ir.MLDomain+"::CastMap")
}

// mapOf is the type of a map from key to scalars of dtype val.
func mapOf(key, val ir.DType) ir.Type {
	e := ir.TensorType(val, nil)
	return ir.Type{Kind: ir.MapKind, DType: key, Elem: &e}
}

// mlLabels returns the one non-empty class label list of a node among the
// string and int64 attributes named, and the key dtype it gives.
func mlLabels(n *ir.Node, strs, ints, what string) (ir.DType, int, error) {
	s, i := n.Attr(strs), n.Attr(ints)
	hasS, hasI := s != nil && len(s.Strings) > 0, i != nil && len(i.Ints) > 0
	switch {
	case hasS && hasI:
		return 0, 0, fmt.Errorf("both %s and %s are set: give one %s", strs, ints, what)
	case hasS:
		return ir.String, len(s.Strings), nil
	case hasI:
		return ir.I64, len(i.Ints), nil
	}
	return 0, 0, fmt.Errorf("neither %s nor %s is set: give one %s", strs, ints, what)
}

// inferMLZipMap: X is [N, C] (or [C], one row) float scores; Z is a
// sequence of N maps from the C class labels to the scores.
func inferMLZipMap(x *inferer, n *ir.Node) error {
	t, err := x.inRank(n, 0, 1, 2)
	if err != nil {
		return err
	}
	key, k, err := mlLabels(n, "classlabels_strings", "classlabels_int64s", "list of class labels")
	if err != nil {
		return err
	}
	if c := t.Shape[len(t.Shape)-1]; c.IsConst() && c.Size != int64(k) {
		return fmt.Errorf("input X (%s) has %d columns, but there are %d class labels", n.Inputs[0].Name, c.Size, k)
	}
	if len(n.Outputs) > 0 {
		x.set(n.Outputs[0], seqOf(mapOf(key, ir.F32)))
	}
	return nil
}

// inMap returns input i, which must be a map with a scalar value type.
func inMap(n *ir.Node, i int) (key, val ir.DType, err error) {
	v := n.Input(i)
	if v == nil {
		return 0, 0, fmt.Errorf("input %d is missing", i)
	}
	t := v.Type
	if t.Kind != ir.MapKind || t.Elem == nil || t.Elem.Kind != ir.TensorKind {
		return 0, 0, fmt.Errorf("input %d (%s) is %s, want a map to scalars", i, v.Name, t)
	}
	if t.Elem.DType == ir.Undefined {
		return 0, 0, fmt.Errorf("input %d (%s) is %s: the map's value dtype is not known", i, v.Name, t)
	}
	if !t.Elem.Unranked && len(t.Elem.Shape) != 0 {
		return 0, 0, fmt.Errorf("input %d (%s) is %s: map values must be scalars", i, v.Name, t)
	}
	return t.DType, t.Elem.DType, nil
}

// inferMLDictVectorizer: a map from string or int64 keys to values of
// dtype T becomes a [1, C] tensor of T, C the vocabulary's length (the
// spec's T2 constraint: "Its shape will be [1,C]").
func inferMLDictVectorizer(x *inferer, n *ir.Node) error {
	key, val, err := inMap(n, 0)
	if err != nil {
		return err
	}
	vkey, c, err := mlLabels(n, "string_vocabulary", "int64_vocabulary", "vocabulary")
	if err != nil {
		return err
	}
	if key != vkey {
		return fmt.Errorf("input %s has %s keys, but the vocabulary is of %s", n.Inputs[0].Type, key, vkey)
	}
	if key == val {
		return fmt.Errorf("input %s: the spec allows maps from string to int64, float or double and from int64 to string, float or double", n.Inputs[0].Type)
	}
	x.setOut(n, 0, val, ir.Shape{ir.D(1), ir.D(int64(c))})
	return nil
}

// mlCastMapTo is the output dtype CastMap's cast_to names.
func mlCastMapTo(n *ir.Node) (ir.DType, error) {
	switch s := n.AttrString("cast_to", "TO_FLOAT"); s {
	case "TO_FLOAT":
		return ir.F32, nil
	case "TO_STRING":
		return ir.String, nil
	case "TO_INT64":
		return ir.I64, nil
	default:
		return 0, fmt.Errorf("cast_to is %q, want TO_FLOAT, TO_STRING or TO_INT64", s)
	}
}

// inferMLCastMap: a map from int64 to string or float becomes a 1-D
// tensor of the values in key order: as many as the map holds (DENSE, a
// size known at run time) or max_map of them, positioned by key (SPARSE).
func inferMLCastMap(x *inferer, n *ir.Node) error {
	key, val, err := inMap(n, 0)
	if err != nil {
		return err
	}
	if key != ir.I64 || (val != ir.String && val != ir.F32) {
		return fmt.Errorf("input %s: want a map from int64 to string or float", n.Inputs[0].Type)
	}
	dt, err := mlCastMapTo(n)
	if err != nil {
		return err
	}
	var d ir.Dim
	switch f := n.AttrString("map_form", "DENSE"); f {
	case "DENSE":
		d = x.freshDim("")
	case "SPARSE":
		m := n.AttrInt("max_map", 1)
		if m < 0 {
			return fmt.Errorf("max_map is %d, want >= 0", m)
		}
		d = ir.D(m)
	default:
		return fmt.Errorf("map_form is %q, want DENSE or SPARSE", f)
	}
	x.setOut(n, 0, dt, ir.Shape{d})
	return nil
}
