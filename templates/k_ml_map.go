package templates

import (
	"math"
	"strconv"
)

// ai.onnx.ml operators on map values (rt_map.go): ZipMap, DictVectorizer,
// CastMap (opset 1).

// MLZipMap is ai.onnx.ml ZipMap: each row of the [N, C] (or [C], one row)
// float scores becomes a map from the C class labels (classlabels_strings
// or classlabels_int64s, in their order) to the row's scores; the output
// is the sequence of the N maps.
func MLZipMap(n *Node) error {
	X := n.Input(0)
	if X == nil || X.DType != F32 || len(X.Shape) < 1 || len(X.Shape) > 2 {
		return n.Errorf("want a float tensor of rank 1 or 2")
	}
	strs, ints := n.Attrs.Strings("classlabels_strings"), n.Attrs.Ints("classlabels_int64s")
	key, k := String, len(strs)
	if len(strs) == 0 {
		key, k = I64, len(ints)
	}
	if (len(strs) > 0) == (len(ints) > 0) {
		return n.Errorf("want exactly one of classlabels_strings and classlabels_int64s")
	}
	c := X.Shape[len(X.Shape)-1]
	if c != k {
		return n.Errorf("input has %d columns, but there are %d class labels", c, k)
	}
	rows := 1
	if len(X.Shape) == 2 {
		rows = X.Shape[0]
	}
	x := X.F32()
	s := MakeSequence(n.Out[0], F32)
	for r := 0; r < rows; r++ {
		m := MakeMap(s.Append(), key, F32, c)
		if key == String {
			copy(m.Keys.Str(), strs)
		} else {
			copy(m.Keys.I64(), ints)
		}
		copy(m.Values.F32(), x[r*c:(r+1)*c])
	}
	return nil
}

// mlVocabIndex is DictVectorizer's cached position of each vocabulary
// entry.
type mlVocabIndex struct {
	strs map[string]int
	ints map[int64]int
}

// MLDictVectorizer is ai.onnx.ml DictVectorizer: the map's values go into a
// [1, C] tensor of the value dtype at the positions of their keys in the
// vocabulary (string_vocabulary or int64_vocabulary, C entries); positions
// no key names are zero (the empty string for string values). Keys that
// are not in the vocabulary are ignored, as scikit-learn's DictVectorizer
// ignores features it was not fitted on (the spec requires every key to be
// present and says nothing of other keys).
func MLDictVectorizer(n *Node) error {
	X := n.Input(0)
	if X == nil || !X.IsMap() {
		return n.Errorf("want a map input")
	}
	m := X.Map()
	strs, ints := n.Attrs.Strings("string_vocabulary"), n.Attrs.Ints("int64_vocabulary")
	if (len(strs) > 0) == (len(ints) > 0) {
		return n.Errorf("want exactly one of string_vocabulary and int64_vocabulary")
	}
	idx, _ := n.Cache.(*mlVocabIndex)
	if idx == nil {
		idx = &mlVocabIndex{strs: map[string]int{}, ints: map[int64]int{}}
		for i, s := range strs {
			if _, dup := idx.strs[s]; !dup {
				idx.strs[s] = i
			}
		}
		for i, v := range ints {
			if _, dup := idx.ints[v]; !dup {
				idx.ints[v] = i
			}
		}
		n.Cache = idx
	}
	c := len(strs) + len(ints)
	want := String
	if len(ints) > 0 {
		want = I64
	}
	if m.Keys.DType != want {
		return n.Errorf("map keys are %s, the vocabulary %s", m.Keys.DType, want)
	}
	out := n.Out[0]
	out.Resize(m.Values.DType, 1, c)
	ewZero(out.Data, 0, c)
	for e := 0; e < m.Len(); e++ {
		j, ok := 0, false
		if want == String {
			j, ok = idx.strs[m.Keys.Str()[e]]
		} else {
			j, ok = idx.ints[m.Keys.I64()[e]]
		}
		if ok {
			ewMove(out.Data, j, m.Values.Data, e, 1)
		}
	}
	return nil
}

// MLCastMap is ai.onnx.ml CastMap: the values of a map from int64 to string
// or float, in ascending key order, as a 1-D tensor of cast_to's dtype
// (TO_FLOAT, TO_STRING, TO_INT64). DENSE gives one element per entry;
// SPARSE gives max_map elements, the value of key k at position k (a key
// outside [0, max_map) is an error) and the cast of 0 where no key is.
// Strings convert to numbers with Go's strconv (an unparsable string is an
// error), floats to strings in the shortest form that reads back exactly,
// floats to int64 truncating toward zero.
func MLCastMap(n *Node) error {
	X := n.Input(0)
	if X == nil || !X.IsMap() || X.Map().Keys.DType != I64 {
		return n.Errorf("want a map from int64")
	}
	m := X.Map()
	if m.Values.DType != String && m.Values.DType != F32 {
		return n.Errorf("map values are %s, want string or float", m.Values.DType)
	}
	var dt DType
	switch s := n.Attrs.String("cast_to", "TO_FLOAT"); s {
	case "TO_FLOAT":
		dt = F32
	case "TO_STRING":
		dt = String
	case "TO_INT64":
		dt = I64
	default:
		return n.Errorf("cast_to is %q, want TO_FLOAT, TO_STRING or TO_INT64", s)
	}
	keys := m.Keys.I64()
	// Entries in ascending key order: NewMap's maps already are.
	order := n.ScratchInts(len(keys))
	for i := range order {
		order[i] = i
	}
	for i := 1; i < len(order); i++ { // insertion sort, linear when sorted
		for j := i; j > 0 && keys[order[j]] < keys[order[j-1]]; j-- {
			order[j], order[j-1] = order[j-1], order[j]
		}
	}
	out := n.Out[0]
	sparse := false
	switch f := n.Attrs.String("map_form", "DENSE"); f {
	case "DENSE":
		out.Resize(dt, len(keys))
	case "SPARSE":
		mx := n.Attrs.Int("max_map", 1)
		if mx < 0 || mx > math.MaxInt32 {
			return n.Errorf("max_map is %d", mx)
		}
		out.Resize(dt, int(mx))
		sparse = true
		for i := 0; i < int(mx); i++ {
			mlCastMapSet(out, i, "0", 0)
		}
	default:
		return n.Errorf("map_form is %q, want DENSE or SPARSE", f)
	}
	for p, e := range order {
		if sparse {
			k := keys[e]
			if k < 0 || k >= int64(out.Shape[0]) {
				return n.Errorf("key %d is outside [0, max_map=%d)", k, out.Shape[0])
			}
			p = int(k)
		}
		var err error
		if m.Values.DType == String {
			err = mlCastMapFromString(out, p, m.Values.Str()[e])
		} else {
			v := m.Values.F32()[e]
			mlCastMapSet(out, p, strconv.FormatFloat(float64(v), 'g', -1, 32), v)
		}
		if err != nil {
			return n.Errorf("key %d: %v", keys[e], err)
		}
	}
	return nil
}

// mlCastMapSet stores a float value (s is its string form) at i of out.
func mlCastMapSet(out *Tensor, i int, s string, v float32) {
	switch d := out.Data.(type) {
	case []float32:
		d[i] = v
	case []int64:
		d[i] = mlTruncI64(float64(v))
	case []string:
		d[i] = s
	}
}

// mlTruncI64 converts toward zero, saturating (NaN gives 0).
func mlTruncI64(v float64) int64 {
	switch {
	case v != v:
		return 0
	case v >= math.MaxInt64:
		return math.MaxInt64
	case v <= math.MinInt64:
		return math.MinInt64
	}
	return int64(v)
}

// mlCastMapFromString stores a string value at i of out.
func mlCastMapFromString(out *Tensor, i int, s string) error {
	switch d := out.Data.(type) {
	case []float32:
		f, err := strconv.ParseFloat(s, 32)
		if err != nil {
			return err
		}
		d[i] = float32(f)
	case []int64:
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return err
		}
		d[i] = v
	case []string:
		d[i] = s
	}
	return nil
}
