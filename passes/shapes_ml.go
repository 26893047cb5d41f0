package passes

import (
	"encoding/binary"
	"fmt"

	"github.com/cuvil/cuvil/ir"
)

// Shape rules for the ai.onnx.ml operators (kernels in templates/k_ml_*.go)
// and the opset-20 string operators (templates/k_string_ops.go).

func init() {
	ml := func(f inferFunc, ops ...string) {
		for _, op := range ops {
			reg(f, ir.MLDomain+"::"+op)
		}
	}
	ml(inferMLSameShape, "Binarizer")
	ml(inferMLSameShapeF32, "Normalizer")
	ml(inferMLImputer, "Imputer")
	ml(inferMLScaler, "Scaler")
	ml(inferMLArrayFeatureExtractor, "ArrayFeatureExtractor")
	ml(inferMLCategoryMapper, "CategoryMapper")
	ml(inferMLLabelEncoder, "LabelEncoder")
	ml(inferMLOneHotEncoder, "OneHotEncoder")
	ml(inferMLFeatureVectorizer, "FeatureVectorizer")
	ml(inferMLTreeEnsemble, "TreeEnsemble")
	ml(inferMLRegressor, "LinearRegressor", "SVMRegressor", "TreeEnsembleRegressor")
	ml(inferMLClassifier, "LinearClassifier", "SVMClassifier", "TreeEnsembleClassifier")
	reg(inferBroadcastString, "StringConcat")
	reg(inferRegexFullMatch, "RegexFullMatch")
	reg(inferStringSplit, "StringSplit")
}

func inferMLSameShape(x *inferer, n *ir.Node) error {
	t, err := x.in(n, 0)
	if err != nil {
		return err
	}
	x.setOut(n, 0, t.DType, append(ir.Shape(nil), t.Shape...))
	return nil
}

func inferMLSameShapeF32(x *inferer, n *ir.Node) error {
	t, err := x.in(n, 0)
	if err != nil {
		return err
	}
	x.setOut(n, 0, ir.F32, append(ir.Shape(nil), t.Shape...))
	return nil
}

// inferMLImputer keeps X's dtype and shape.
func inferMLImputer(x *inferer, n *ir.Node) error { return inferMLSameShape(x, n) }

// inferMLScaler: float output of X's shape.
func inferMLScaler(x *inferer, n *ir.Node) error { return inferMLSameShapeF32(x, n) }

// inferMLRows returns X's batch dim and feature count: a 1-D X is one row.
func inferMLRows(x *inferer, n *ir.Node) (ir.Dim, ir.Type, error) {
	t, err := x.inRank(n, 0, 1, 2)
	if err != nil {
		return ir.Dim{}, t, err
	}
	if len(t.Shape) == 1 {
		return ir.D(1), t, nil
	}
	return t.Shape[0], t, nil
}

func inferMLArrayFeatureExtractor(x *inferer, n *ir.Node) error {
	t, err := x.in(n, 0)
	if err != nil {
		return err
	}
	y, err := x.in(n, 1)
	if err != nil {
		return err
	}
	if len(t.Shape) == 0 {
		return fmt.Errorf("input 0 is a scalar: want rank >= 1")
	}
	k := x.prodDim(y.Shape)
	var out ir.Shape
	if len(t.Shape) == 1 {
		out = ir.Shape{ir.D(1), k}
	} else {
		out = append(append(ir.Shape(nil), t.Shape[:len(t.Shape)-1]...), k)
	}
	x.setOut(n, 0, t.DType, out)
	return nil
}

func inferMLCategoryMapper(x *inferer, n *ir.Node) error {
	t, err := x.in(n, 0)
	if err != nil {
		return err
	}
	dt := ir.String
	if t.DType == ir.String {
		dt = ir.I64
	}
	x.setOut(n, 0, dt, append(ir.Shape(nil), t.Shape...))
	return nil
}

// inferMLLabelEncoder: the output dtype is the values' (version 1: the
// other side of string <-> int64).
func inferMLLabelEncoder(x *inferer, n *ir.Node) error {
	t, err := x.in(n, 0)
	if err != nil {
		return err
	}
	dt, err := mlLabelEncoderValueType(n, t.DType)
	if err != nil {
		return err
	}
	x.setOut(n, 0, dt, append(ir.Shape(nil), t.Shape...))
	return nil
}

func mlLabelEncoderValueType(n *ir.Node, in ir.DType) (ir.DType, error) {
	if n.Version < 2 {
		if in == ir.String {
			return ir.I64, nil
		}
		return ir.String, nil
	}
	if a := n.Attr("values_tensor"); a != nil && a.T != nil {
		return a.T.DType, nil
	}
	switch {
	case n.Attr("values_strings") != nil:
		return ir.String, nil
	case n.Attr("values_int64s") != nil:
		return ir.I64, nil
	case n.Attr("values_floats") != nil:
		return ir.F32, nil
	}
	return ir.Undefined, fmt.Errorf("no values attribute (values_tensor, values_strings, values_int64s or values_floats)")
}

func inferMLOneHotEncoder(x *inferer, n *ir.Node) error {
	t, err := x.in(n, 0)
	if err != nil {
		return err
	}
	k := len(n.AttrInts("cats_int64s", nil))
	if a := n.Attr("cats_strings"); a != nil {
		k = len(a.Strings)
	}
	x.setOut(n, 0, ir.F32, append(append(ir.Shape(nil), t.Shape...), ir.D(int64(k))))
	return nil
}

func inferMLFeatureVectorizer(x *inferer, n *ir.Node) error {
	dims := n.AttrInts("inputdimensions", nil)
	var batch ir.Dim
	for i := range n.Inputs {
		t, err := x.in(n, i)
		if err != nil {
			return err
		}
		if i == 0 {
			if len(t.Shape) == 0 {
				batch = ir.D(1)
			} else {
				batch = t.Shape[0]
			}
		}
	}
	var c int64
	for _, d := range dims {
		c += d
	}
	x.setOut(n, 0, ir.F32, ir.Shape{batch, ir.D(c)})
	return nil
}

func inferMLTreeEnsemble(x *inferer, n *ir.Node) error {
	b, t, err := inferMLRows(x, n)
	if err != nil {
		return err
	}
	nt := n.IntAttr("n_targets")
	if nt <= 0 {
		for _, id := range n.AttrInts("leaf_targetids", nil) {
			nt = max(nt, id+1)
		}
	}
	x.setOut(n, 0, t.DType, ir.Shape{b, ir.D(nt)})
	return nil
}

// mlRegressorTargets is the output width of a regressor.
func mlRegressorTargets(n *ir.Node) int64 {
	switch n.Op {
	case "LinearRegressor":
		return n.AttrInt("targets", 1)
	case "SVMRegressor":
		return 1
	}
	return n.AttrInt("n_targets", 1)
}

func inferMLRegressor(x *inferer, n *ir.Node) error {
	b, _, err := inferMLRows(x, n)
	if err != nil {
		return err
	}
	x.setOut(n, 0, ir.F32, ir.Shape{b, ir.D(mlRegressorTargets(n))})
	return nil
}

// inferMLClassifier: labels [N] (string or int64 by which class label list
// is given) and scores [N, E], E by each op's rule (the kernels' widths).
func inferMLClassifier(x *inferer, n *ir.Node) error {
	b, t, err := inferMLRows(x, n)
	if err != nil {
		return err
	}
	lt, k := ir.I64, len(n.AttrInts(mlIntLabels(n), nil))
	if a := n.Attr("classlabels_strings"); a != nil && len(a.Strings) > 0 {
		lt, k = ir.String, len(a.Strings)
	}
	x.setOut(n, 0, lt, ir.Shape{b})
	if len(n.Outputs) > 1 {
		var e ir.Dim
		c := t.Shape[len(t.Shape)-1]
		if w, ok := mlScoreColumns(n, k, c); ok {
			e = ir.D(int64(w))
		} else {
			e = x.freshDim("")
		}
		x.setOut(n, 1, ir.F32, ir.Shape{b, e})
	}
	return nil
}

func mlIntLabels(n *ir.Node) string {
	if n.Op == "TreeEnsembleClassifier" {
		return "classlabels_int64s"
	}
	return "classlabels_ints"
}

func mlAttrLen(n *ir.Node, name string) int {
	if a := n.Attr(name); a != nil {
		return max(len(a.Floats), len(a.Ints), len(a.Strings))
	}
	return 0
}

// mlScoreColumns is the width of a classifier's score output for k class
// labels and c features (as templates/k_ml_*.go compute it).
func mlScoreColumns(n *ir.Node, k int, c ir.Dim) (int, bool) {
	switch n.Op {
	case "LinearClassifier":
		if !c.IsConst() || c.Size == 0 {
			return 0, false
		}
		e := mlAttrLen(n, "coefficients") / int(c.Size)
		if e == 1 && k == 2 {
			return 2, true
		}
		return e, true
	case "SVMClassifier":
		vectors := 0
		for _, v := range n.AttrInts("vectors_per_class", nil) {
			vectors += int(v)
		}
		k = max(k, 1)
		proba := vectors > 0 && mlAttrLen(n, "prob_a") > 0
		m := k
		if vectors > 0 && !proba {
			m = k * (k - 1) / 2
		}
		switch {
		case m >= 2:
			return m, true
		case n.AttrString("post_transform", "NONE") == "PROBIT":
			return 1, true
		case mlAttrLen(n, "rho") == 1 && k == 2:
			return 2, true
		}
		return 1, true
	case "TreeEnsembleClassifier":
		ids := map[int64]bool{}
		for _, id := range n.AttrInts("class_ids", nil) {
			ids[id] = true
		}
		if a := n.Attr("packed_targets"); a != nil && a.T != nil && n.Attr("class_ids") == nil {
			// After compile-trees: the class ids of the leaves' entries.
			for i := 0; i+4 <= len(a.T.Raw); i += 4 {
				ids[int64(int32(binary.LittleEndian.Uint32(a.T.Raw[i:])))] = true
			}
		}
		if len(ids) == 1 && k == 1 {
			return 2, true
		}
	}
	return k, true
}

func inferBroadcastString(x *inferer, n *ir.Node) error {
	shapes, err := x.inputShapes(n)
	if err != nil {
		return err
	}
	out, err := x.broadcast(shapes...)
	if err != nil {
		return err
	}
	x.setOut(n, 0, ir.String, out)
	return nil
}

func inferRegexFullMatch(x *inferer, n *ir.Node) error {
	t, err := x.in(n, 0)
	if err != nil {
		return err
	}
	x.setOut(n, 0, ir.Bool, append(ir.Shape(nil), t.Shape...))
	return nil
}

// inferStringSplit: Y is X's shape plus the longest split (known only at
// run time), Z (the counts) X's shape.
func inferStringSplit(x *inferer, n *ir.Node) error {
	t, err := x.in(n, 0)
	if err != nil {
		return err
	}
	x.setOut(n, 0, ir.String, append(append(ir.Shape(nil), t.Shape...), x.freshDim("")))
	x.setOut(n, 1, ir.I64, append(ir.Shape(nil), t.Shape...))
	return nil
}
