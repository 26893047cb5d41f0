package templates

import (
	"fmt"
	"sort"
)

// Maps travel in *Tensor slots like sequences (rt_seq.go): a map is a
// Tensor whose Data is a *MapValue, whose DType is the dtype of the map's
// values and whose Shape is empty. ZipMap's output, a sequence of maps, is
// a Sequence whose elements hold *MapValue.

// MapValue is the Data of a Tensor holding an ONNX map: the i-th entry maps
// Keys[i] to Values[i]. Keys is a 1-D tensor of dtype I64 or String with no
// key twice; Values is a 1-D tensor of the value dtype, of the same length.
// Entries keep the order the producing kernel gave them (ZipMap: the class
// labels' order; NewMap: ascending keys). MapOf and MapsOf read them as Go
// maps.
type MapValue struct {
	Keys, Values Tensor
}

// IsMap reports whether t holds a map.
func (t *Tensor) IsMap() bool {
	_, ok := t.Data.(*MapValue)
	return ok
}

// Map returns the map t holds; it panics when t holds something else.
func (t *Tensor) Map() *MapValue { return t.Data.(*MapValue) }

// Len is the number of entries.
func (m *MapValue) Len() int {
	if len(m.Keys.Shape) != 1 {
		return 0
	}
	return m.Keys.Shape[0]
}

// MakeMap turns t into a map of n entries from keys of dtype key to values
// of dtype val, reusing the memory of the map t held before. The caller
// fills Keys and Values.
func MakeMap(t *Tensor, key, val DType, n int) *MapValue {
	m, ok := t.Data.(*MapValue)
	if !ok {
		m = &MapValue{}
		t.Data = m
	}
	m.Keys.Resize(key, n)
	m.Values.Resize(val, n)
	t.DType = val
	t.Shape = t.Shape[:0]
	return m
}

// MapKey are the Go types of ONNX map keys the generated API exchanges.
type MapKey interface{ int64 | string }

// MapElem are the Go types of map values the generated API exchanges.
type MapElem interface {
	float32 | float64 | int64 | string
}

// mapDType is the DType of the Go type T.
func mapDType[T MapKey | MapElem]() DType {
	var z T
	switch any(z).(type) {
	case float32:
		return F32
	case float64:
		return F64
	case int64:
		return I64
	}
	return String
}

// NewMap returns a Tensor holding the map m (for a model input such as
// DictVectorizer's), its entries in ascending key order.
func NewMap[K MapKey, V MapElem](m map[K]V) *Tensor {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	t := &Tensor{}
	mv := MakeMap(t, mapDType[K](), mapDType[V](), len(keys))
	ks, vs := mv.Keys.Data.([]K), mv.Values.Data.([]V)
	for i, k := range keys {
		ks[i], vs[i] = k, m[k]
	}
	return t
}

// MapOf returns the map t holds as a Go map, for example
// MapOf[string, float32](t). It fails when t is not a map with keys of
// type K and values of type V.
func MapOf[K MapKey, V MapElem](t *Tensor) (map[K]V, error) {
	if t == nil {
		return nil, fmt.Errorf("nil value, want a map")
	}
	m, ok := t.Data.(*MapValue)
	if !ok {
		return nil, fmt.Errorf("value holds %T, want a map", t.Data)
	}
	ks, ok1 := m.Keys.Data.([]K)
	vs, ok2 := m.Values.Data.([]V)
	if !ok1 || !ok2 || len(ks) != len(vs) {
		return nil, fmt.Errorf("map from %s to %s, want map[%T]%T", m.Keys.DType, m.Values.DType, *new(K), *new(V))
	}
	out := make(map[K]V, len(ks))
	for i, k := range ks {
		out[k] = vs[i]
	}
	return out, nil
}

// MapsOf returns the sequence of maps t holds (ZipMap's output: one map
// per row, from class label to score) as Go maps, for example
// MapsOf[string, float32](out.OutputProbability).
func MapsOf[K MapKey, V MapElem](t *Tensor) ([]map[K]V, error) {
	if t == nil {
		return nil, fmt.Errorf("nil value, want a sequence of maps")
	}
	s, ok := t.Data.(*Sequence)
	if !ok {
		return nil, fmt.Errorf("value holds %T, want a sequence of maps", t.Data)
	}
	out := make([]map[K]V, len(s.Elems))
	for i, e := range s.Elems {
		m, err := MapOf[K, V](e)
		if err != nil {
			return nil, fmt.Errorf("element %d: %w", i, err)
		}
		out[i] = m
	}
	return out, nil
}

// copyMap makes dst a deep copy of the map src holds.
func copyMap(dst, src *Tensor, m *MapValue) {
	d := MakeMap(dst, m.Keys.DType, src.DType, m.Len())
	ewCopyTensor(&d.Keys, &m.Keys)
	ewCopyTensor(&d.Values, &m.Values)
}
