package templates

import (
	"math"
	"strconv"
)

// ai.onnx.ml preprocessing operators (opset 1 unless noted): Binarizer,
// Scaler, Normalizer, Imputer, ArrayFeatureExtractor, CategoryMapper,
// LabelEncoder (1, 2, 4), OneHotEncoder, FeatureVectorizer. Numbers are
// read and computed in float64 and stored in the output dtype.

// mlNumeric reports whether t is a numeric tensor the ML kernels read.
func mlNumeric(t *Tensor) bool { return t != nil && ewIsNumeric(t.DType) }

// mlLastDim is the size of t's last axis (1 for a scalar).
func mlLastDim(t *Tensor) int {
	if len(t.Shape) == 0 {
		return 1
	}
	return t.Shape[len(t.Shape)-1]
}

// MLBinarizer is ai.onnx.ml Binarizer: 1 where X > threshold, else 0.
func MLBinarizer(n *Node) error {
	X := n.Input(0)
	if !mlNumeric(X) {
		return n.Errorf("want a numeric input")
	}
	th := float64(n.Attrs.Float("threshold", 0))
	out := n.Out[0]
	out.Resize(X.DType, X.Shape...)
	for i := 0; i < X.Len(); i++ {
		v := 0.0
		if ewF64At(X, i) > th {
			v = 1
		}
		ewSetF64(out, i, v)
	}
	return nil
}

// mlPerFeature returns the value of a per-feature list for feature j: the
// list has one value for all features or one per feature.
func mlPerFeature(vals []float32, j int) float64 {
	if len(vals) == 1 {
		return float64(vals[0])
	}
	return float64(vals[j])
}

// MLScaler is ai.onnx.ml Scaler: Y = (X - offset) * scale along the last
// axis, as float32.
func MLScaler(n *Node) error {
	X := n.Input(0)
	if !mlNumeric(X) {
		return n.Errorf("want a numeric input")
	}
	off, scale := n.Attrs.Floats("offset"), n.Attrs.Floats("scale")
	c := mlLastDim(X)
	for _, l := range [][]float32{off, scale} {
		if len(l) != 1 && len(l) != c && !(len(l) == 0 && X.Len() == 0) {
			return n.Errorf("offset and scale have %d and %d values: want 1 or %d (the feature count)", len(off), len(scale), c)
		}
	}
	out := n.Out[0]
	out.Resize(F32, X.Shape...)
	o := out.F32()
	for i := range o {
		j := i % c
		o[i] = float32((ewF64At(X, i) - mlPerFeature(off, j)) * mlPerFeature(scale, j))
	}
	return nil
}

// MLNormalizer is ai.onnx.ml Normalizer: each row of X ([N, C] or [C])
// divided by its MAX (largest absolute value), L1 or L2 norm; a row whose
// norm is 0 stays as it is.
func MLNormalizer(n *Node) error {
	X := n.Input(0)
	if !mlNumeric(X) || len(X.Shape) < 1 || len(X.Shape) > 2 {
		return n.Errorf("want a numeric [N, C] or [C] input")
	}
	norm := n.Attrs.String("norm", "MAX")
	if norm != "MAX" && norm != "L1" && norm != "L2" {
		return n.Errorf("norm %q: want MAX, L1 or L2", norm)
	}
	out := n.Out[0]
	out.Resize(F32, X.Shape...)
	o := out.F32()
	c := mlLastDim(X)
	for r := 0; r*c < X.Len(); r++ {
		s := 0.0
		for j := 0; j < c; j++ {
			v := math.Abs(ewF64At(X, r*c+j))
			switch norm {
			case "MAX":
				s = math.Max(s, v)
			case "L1":
				s += v
			case "L2":
				s += v * v
			}
		}
		if norm == "L2" {
			s = math.Sqrt(s)
		}
		for j := 0; j < c; j++ {
			v := ewF64At(X, r*c+j)
			if s != 0 {
				v /= s
			}
			o[r*c+j] = float32(v)
		}
	}
	return nil
}

// MLImputer is ai.onnx.ml Imputer: elements equal to the replaced value
// (NaN matches NaN) become the imputed value of their feature (last axis).
func MLImputer(n *Node) error {
	X := n.Input(0)
	if !mlNumeric(X) {
		return n.Errorf("want a numeric input")
	}
	var imputed []float64
	var marker float64
	if fs := n.Attrs.Floats("imputed_value_floats"); len(fs) > 0 {
		for _, f := range fs {
			imputed = append(imputed, float64(f))
		}
		marker = float64(n.Attrs.Float("replaced_value_float", 0))
	} else {
		for _, v := range n.Attrs.Ints("imputed_value_int64s") {
			imputed = append(imputed, float64(v))
		}
		marker = float64(n.Attrs.Int("replaced_value_int64", 0))
	}
	c := mlLastDim(X)
	if len(imputed) != 1 && len(imputed) != c {
		return n.Errorf("%d imputed values: want 1 or %d (the feature count)", len(imputed), c)
	}
	out := n.Out[0]
	out.Resize(X.DType, X.Shape...)
	ewCopyData(out.Data, X.Data)
	nan := math.IsNaN(marker)
	for i := 0; i < X.Len(); i++ {
		v := ewF64At(X, i)
		if v == marker || nan && math.IsNaN(v) {
			k := 0
			if len(imputed) > 1 {
				k = i % c
			}
			ewSetF64(out, i, imputed[k])
		}
	}
	return nil
}

// MLArrayFeatureExtractor is ai.onnx.ml ArrayFeatureExtractor: Z[..., k] =
// X[..., Y[k]] over the last axis; a 1-D X gives [1, len(Y)].
func MLArrayFeatureExtractor(n *Node) error {
	X, Y := n.Input(0), n.Input(1)
	if X == nil || Y == nil || Y.DType != I64 || len(X.Shape) == 0 {
		return n.Errorf("want X of rank >= 1 and int64 indices")
	}
	idx := Y.I64()
	c := mlLastDim(X)
	for _, k := range idx {
		if k < 0 || k >= int64(c) {
			return n.Errorf("index %d out of range [0, %d)", k, c)
		}
	}
	shape := miscScr[string](n).getInts(0, max(len(X.Shape), 2))
	if len(X.Shape) == 1 {
		shape[0] = 1
	} else {
		copy(shape, X.Shape[:len(X.Shape)-1])
	}
	shape[len(shape)-1] = len(idx)
	out := n.Out[0]
	out.Resize(X.DType, shape...)
	rows := X.Len() / max(c, 1)
	if c == 0 {
		rows = 0
	}
	for r := 0; r < rows; r++ {
		for k, j := range idx {
			ewMove(out.Data, r*len(idx)+k, X.Data, r*c+int(j), 1)
		}
	}
	return nil
}

// MLCategoryMapper is ai.onnx.ml CategoryMapper: strings to int64 and
// int64 to strings through the parallel lists cats_strings and cats_int64s.
func MLCategoryMapper(n *Node) error {
	X := n.Input(0)
	strs, ints := n.Attrs.Strings("cats_strings"), n.Attrs.Ints("cats_int64s")
	if len(strs) != len(ints) {
		return n.Errorf("cats_strings has %d values and cats_int64s %d: want the same count", len(strs), len(ints))
	}
	out := n.Out[0]
	switch {
	case X != nil && X.DType == String:
		out.Resize(I64, X.Shape...)
		def := n.Attrs.Int("default_int64", -1)
		o := out.I64()
		for i, s := range X.Str() {
			o[i] = def
			for k, c := range strs {
				if c == s {
					o[i] = ints[k]
					break
				}
			}
		}
	case X != nil && X.DType == I64:
		out.Resize(String, X.Shape...)
		def := n.Attrs.String("default_string", "_Unused")
		o := out.Str()
		for i, v := range X.I64() {
			o[i] = def
			for k, c := range ints {
				if c == v {
					o[i] = strs[k]
					break
				}
			}
		}
	default:
		return n.Errorf("want a string or int64 input")
	}
	return nil
}

// mlLabelTable is a LabelEncoder's mapping, built once per node.
type mlLabelTable struct {
	strKeys map[string]int
	numKeys map[float64]int
	nanKey  int // index of a NaN key, -1 if none
	values  *Tensor
	def     *Tensor // one element
}

// mlTensorOf builds a 1-D tensor of dtype dt from float64 or string values.
func mlTensorOf(dt DType, nums []float64, strs []string) *Tensor {
	t := &Tensor{}
	if dt == String {
		t.Resize(String, len(strs))
		copy(t.Str(), strs)
		return t
	}
	t.Resize(dt, len(nums))
	for i, v := range nums {
		ewSetF64(t, i, v)
	}
	return t
}

func mlFloats64(fs []float32) []float64 {
	out := make([]float64, len(fs))
	for i, f := range fs {
		out[i] = float64(f)
	}
	return out
}

func mlInts64(is []int64) []float64 {
	out := make([]float64, len(is))
	for i, v := range is {
		out[i] = float64(v)
	}
	return out
}

// mlLabelEncoderTable reads the keys, values and default of a
// LabelEncoder: version 1 maps classes_strings to their indices (or back),
// versions 2 and 4 take keys_*/values_* lists or (4) tensors.
func mlLabelEncoderTable(n *Node, in DType) (*mlLabelTable, error) {
	tb := &mlLabelTable{nanKey: -1}
	var keys *Tensor
	if n.Version < 2 {
		classes := n.Attrs.Strings("classes_strings")
		idx := make([]float64, len(classes))
		for i := range idx {
			idx[i] = float64(i)
		}
		if in == String {
			keys = mlTensorOf(String, nil, classes)
			tb.values = mlTensorOf(I64, idx, nil)
			tb.def = mlTensorOf(I64, []float64{float64(n.Attrs.Int("default_int64", -1))}, nil)
		} else {
			keys = mlTensorOf(I64, idx, nil)
			tb.values = mlTensorOf(String, nil, classes)
			tb.def = mlTensorOf(String, nil, []string{n.Attrs.String("default_string", "_Unused")})
		}
	} else {
		switch {
		case n.Attrs.Tensor("keys_tensor") != nil:
			keys = n.Attrs.Tensor("keys_tensor")
		case n.Attrs.Has("keys_strings"):
			keys = mlTensorOf(String, nil, n.Attrs.Strings("keys_strings"))
		case n.Attrs.Has("keys_int64s"):
			keys = mlTensorOf(I64, mlInts64(n.Attrs.Ints("keys_int64s")), nil)
		case n.Attrs.Has("keys_floats"):
			keys = mlTensorOf(F32, mlFloats64(n.Attrs.Floats("keys_floats")), nil)
		default:
			return nil, n.Errorf("no keys attribute")
		}
		switch {
		case n.Attrs.Tensor("values_tensor") != nil:
			tb.values = n.Attrs.Tensor("values_tensor")
		case n.Attrs.Has("values_strings"):
			tb.values = mlTensorOf(String, nil, n.Attrs.Strings("values_strings"))
		case n.Attrs.Has("values_int64s"):
			tb.values = mlTensorOf(I64, mlInts64(n.Attrs.Ints("values_int64s")), nil)
		case n.Attrs.Has("values_floats"):
			tb.values = mlTensorOf(F32, mlFloats64(n.Attrs.Floats("values_floats")), nil)
		default:
			return nil, n.Errorf("no values attribute")
		}
		vt := tb.values.DType
		switch {
		case n.Attrs.Tensor("default_tensor") != nil:
			tb.def = n.Attrs.Tensor("default_tensor")
			if tb.def.DType != vt || tb.def.Len() < 1 {
				return nil, n.Errorf("default_tensor is %s[%d]: want one %s", tb.def.DType, tb.def.Len(), vt)
			}
		case vt == String:
			tb.def = mlTensorOf(String, nil, []string{n.Attrs.String("default_string", "_Unused")})
		case vt == F32 || vt == F64:
			d := -0.0
			if n.Attrs.Has("default_float") {
				d = float64(n.Attrs.Float("default_float", 0))
			} else {
				d = math.Copysign(0, -1)
			}
			tb.def = mlTensorOf(vt, []float64{d}, nil)
		default:
			tb.def = mlTensorOf(vt, []float64{float64(n.Attrs.Int("default_int64", -1))}, nil)
		}
	}
	if keys.Len() != tb.values.Len() {
		return nil, n.Errorf("%d keys and %d values: want the same count", keys.Len(), tb.values.Len())
	}
	if (keys.DType == String) != (in == String) {
		return nil, n.Errorf("keys are %s but the input is %s", keys.DType, in)
	}
	if keys.DType == String {
		tb.strKeys = map[string]int{}
		for i := len(keys.Str()) - 1; i >= 0; i-- {
			tb.strKeys[keys.Str()[i]] = i
		}
	} else {
		tb.numKeys = map[float64]int{}
		for i := keys.Len() - 1; i >= 0; i-- {
			k := ewF64At(keys, i)
			if math.IsNaN(k) {
				tb.nanKey = i
				continue
			}
			tb.numKeys[k+0] = i // +0 folds -0 into 0
		}
	}
	return tb, nil
}

// MLLabelEncoder is ai.onnx.ml LabelEncoder (versions 1, 2 and 4).
func MLLabelEncoder(n *Node) error {
	X := n.Input(0)
	if X == nil || !(X.DType == String || mlNumeric(X)) {
		return n.Errorf("want a string or numeric input")
	}
	tb, ok := n.Cache.(*mlLabelTable)
	if !ok {
		var err error
		if tb, err = mlLabelEncoderTable(n, X.DType); err != nil {
			return err
		}
		n.Cache = tb
	}
	out := n.Out[0]
	out.Resize(tb.values.DType, X.Shape...)
	for i := 0; i < X.Len(); i++ {
		k := -1
		if X.DType == String {
			if j, ok := tb.strKeys[X.Str()[i]]; ok {
				k = j
			}
		} else if v := ewF64At(X, i); math.IsNaN(v) {
			k = tb.nanKey
		} else if j, ok := tb.numKeys[v+0]; ok {
			k = j
		}
		if k < 0 {
			ewMove(out.Data, i, tb.def.Data, 0, 1)
		} else {
			ewMove(out.Data, i, tb.values.Data, k, 1)
		}
	}
	return nil
}

// MLOneHotEncoder is ai.onnx.ml OneHotEncoder: a new last axis over the
// categories (cats_int64s or cats_strings) with 1 at the element's
// category. An unknown value gives all zeros, or an error when zeros is 0.
func MLOneHotEncoder(n *Node) error {
	X := n.Input(0)
	if X == nil {
		return n.Errorf("missing input")
	}
	strs, ints := n.Attrs.Strings("cats_strings"), n.Attrs.Ints("cats_int64s")
	k := len(ints)
	if X.DType == String {
		k = len(strs)
	} else if !mlNumeric(X) {
		return n.Errorf("want a string or numeric input")
	}
	zeros := n.Attrs.Int("zeros", 1) != 0
	shape := miscScr[string](n).getInts(0, len(X.Shape)+1)
	copy(shape, X.Shape)
	shape[len(X.Shape)] = k
	out := n.Out[0]
	out.Resize(F32, shape...)
	o := out.F32()
	clear(o)
	for i := 0; i < X.Len(); i++ {
		hit := -1
		if X.DType == String {
			for j, c := range strs {
				if c == X.Str()[i] {
					hit = j
					break
				}
			}
		} else {
			v := ewF64At(X, i)
			for j, c := range ints {
				if float64(c) == v {
					hit = j
					break
				}
			}
		}
		if hit < 0 {
			if !zeros {
				what := "value"
				if X.DType == String {
					what = strconv.Quote(X.Str()[i])
				} else {
					what = strconv.FormatFloat(ewF64At(X, i), 'g', -1, 64)
				}
				return n.Errorf("%s is not a category and zeros is 0", what)
			}
			continue
		}
		o[i*k+hit] = 1
	}
	return nil
}

// MLFeatureVectorizer is ai.onnx.ml FeatureVectorizer: the inputs ([N, C_i]
// or [N]) concatenated along axis 1 as float32, input i cut or padded with
// zeros to inputdimensions[i] columns.
func MLFeatureVectorizer(n *Node) error {
	dims := n.Attrs.Ints("inputdimensions")
	if len(dims) != len(n.In) {
		return n.Errorf("inputdimensions has %d values for %d inputs", len(dims), len(n.In))
	}
	rows, total := -1, 0
	for i, t := range n.In {
		if !mlNumeric(t) || len(t.Shape) < 1 || len(t.Shape) > 2 {
			return n.Errorf("input %d: want a numeric [N, C] or [N] tensor", i)
		}
		if rows >= 0 && t.Shape[0] != rows {
			return n.Errorf("input %d has %d rows, input 0 has %d", i, t.Shape[0], rows)
		}
		rows = t.Shape[0]
		total += int(dims[i])
	}
	out := n.Out[0]
	out.Resize(F32, rows, total)
	o := out.F32()
	clear(o)
	col := 0
	for i, t := range n.In {
		c := 1
		if len(t.Shape) == 2 {
			c = t.Shape[1]
		}
		w := min(c, int(dims[i]))
		for r := 0; r < rows; r++ {
			for j := 0; j < w; j++ {
				o[r*total+col+j] = float32(ewF64At(t, r*c+j))
			}
		}
		col += int(dims[i])
	}
	return nil
}
