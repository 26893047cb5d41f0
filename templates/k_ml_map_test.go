package templates

import (
	"math/rand"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// ZipMap on awkward sizes: every row's map holds exactly the row's scores
// under the labels, in label order, and a rerun reuses the memory.
func TestMLZipMap(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	for _, tc := range []struct {
		shape []int
		attrs Attrs
	}{
		{[]int{7, 3}, Attrs{"classlabels_strings": []string{"cat", "dog", "eel"}}},
		{[]int{1, 5}, Attrs{"classlabels_int64s": []int64{4, -2, 9, 0, 100}}},
		{[]int{4}, Attrs{"classlabels_int64s": []int64{1, 2, 3, 5}}},
		{[]int{0, 2}, Attrs{"classlabels_strings": []string{"a", "b"}}},
	} {
		x := mlRandF32(r, tc.shape...)
		n := &Node{Op: "ZipMap", Attrs: tc.attrs, In: []*Tensor{x}, Out: []*Tensor{{}}}
		for run := 0; run < 2; run++ {
			miscRun(t, MLZipMap, n)
		}
		c := tc.shape[len(tc.shape)-1]
		rows := 1
		if len(tc.shape) == 2 {
			rows = tc.shape[0]
		}
		out := n.Out[0]
		if !out.IsSequence() || out.Seq().Len() != rows || out.DType != F32 {
			t.Fatalf("%v: output %v, want a sequence of %d maps", tc.shape, out.Data, rows)
		}
		for i := 0; i < rows; i++ {
			e := out.Seq().Elems[i]
			if !e.IsMap() || e.Map().Len() != c {
				t.Fatalf("%v: element %d is %v", tc.shape, i, e.Data)
			}
			if !reflect.DeepEqual(e.Map().Values.F32(), x.F32()[i*c:(i+1)*c]) {
				t.Errorf("%v: row %d values %v", tc.shape, i, e.Map().Values.F32())
			}
			if s := tc.attrs.Strings("classlabels_strings"); s != nil {
				if got, _ := MapOf[string, float32](e); len(got) != c || got[s[c-1]] != x.F32()[i*c+c-1] {
					t.Errorf("%v: row %d as a Go map %v", tc.shape, i, got)
				}
			} else if !reflect.DeepEqual(e.Map().Keys.I64(), tc.attrs.Ints("classlabels_int64s")) {
				t.Errorf("%v: row %d keys %v", tc.shape, i, e.Map().Keys.I64())
			}
		}
		if ms, err := MapsOf[int64, float32](out); tc.attrs.Ints("classlabels_int64s") != nil && (err != nil || len(ms) != rows) {
			t.Errorf("%v: MapsOf: %v, %v", tc.shape, ms, err)
		}
		if allocs := testing.AllocsPerRun(3, func() { _ = MLZipMap(n) }); allocs != 0 {
			t.Errorf("%v: %v allocations per rerun", tc.shape, allocs)
		}
	}
	bad := &Node{Name: "zm", Op: "ZipMap", Attrs: Attrs{"classlabels_strings": []string{"a"}}, In: []*Tensor{mlRandF32(r, 2, 3)}, Out: []*Tensor{{}}}
	if err := MLZipMap(bad); err == nil || !strings.Contains(err.Error(), `node "zm"`) || !strings.Contains(err.Error(), "3 columns") {
		t.Errorf("3 columns, 1 label: %v", err)
	}
}

// DictVectorizer: values land at their keys' vocabulary positions, others
// are zero, keys outside the vocabulary are ignored; string and int64 keys,
// each value dtype.
func TestMLDictVectorizer(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	vocab := make([]string, 13)
	for i := range vocab {
		vocab[i] = "f" + strconv.Itoa(i*7%13)
	}
	in := map[string]float64{}
	want := make([]float64, 13)
	for i := 0; i < 13; i += 2 {
		v := r.NormFloat64()
		in[vocab[i]] = v
		want[i] = v
	}
	in["unseen"] = 42
	n := &Node{Op: "DictVectorizer", Attrs: Attrs{"string_vocabulary": vocab}, In: []*Tensor{NewMap(in)}, Out: []*Tensor{{}}}
	miscRun(t, MLDictVectorizer, n)
	if out := n.Out[0]; out.DType != F64 || !reflect.DeepEqual(out.Shape, []int{1, 13}) || !reflect.DeepEqual(out.F64(), want) {
		t.Errorf("string keys: %v %v, want %v", out, out.Data, want)
	}

	ivocab := []int64{9, -3, 5, 70, 1}
	n = &Node{Op: "DictVectorizer", Attrs: Attrs{"int64_vocabulary": ivocab},
		In: []*Tensor{NewMap(map[int64]string{5: "five", 1: "one", 8: "eight"})}, Out: []*Tensor{{}}}
	miscRun(t, MLDictVectorizer, n)
	if got := n.Out[0].Str(); !reflect.DeepEqual(got, []string{"", "", "five", "", "one"}) {
		t.Errorf("int64 keys: %q", got)
	}
	n = &Node{Name: "dv", Op: "DictVectorizer", Attrs: Attrs{"string_vocabulary": vocab},
		In: []*Tensor{NewMap(map[int64]float32{1: 2})}, Out: []*Tensor{{}}}
	if err := MLDictVectorizer(n); err == nil || !strings.Contains(err.Error(), `node "dv"`) {
		t.Errorf("int64 keys, string vocabulary: %v", err)
	}
}

// CastMap: dense gives the values in key order, sparse places them by key
// over max_map with the cast of 0 elsewhere; each cast_to.
func TestMLCastMap(t *testing.T) {
	fm := map[int64]float32{7: 2.5, 0: -1.75, 3: 1e-3, 4: 9}
	sm := map[int64]string{2: "10", 0: "-3", 1: "7"}
	run := func(in *Tensor, attrs Attrs) *Tensor {
		t.Helper()
		n := &Node{Name: "cm", Op: "CastMap", Attrs: attrs, In: []*Tensor{in}, Out: []*Tensor{{}}}
		miscRun(t, MLCastMap, n)
		return n.Out[0]
	}
	if got := run(NewMap(fm), Attrs{}).F32(); !reflect.DeepEqual(got, []float32{-1.75, 1e-3, 9, 2.5}) {
		t.Errorf("dense float: %v", got)
	}
	if got := run(NewMap(fm), Attrs{"cast_to": "TO_STRING"}).Str(); !reflect.DeepEqual(got, []string{"-1.75", "0.001", "9", "2.5"}) {
		t.Errorf("dense string: %q", got)
	}
	if got := run(NewMap(fm), Attrs{"cast_to": "TO_INT64", "map_form": "SPARSE", "max_map": int64(9)}).I64(); !reflect.DeepEqual(got, []int64{-1, 0, 0, 0, 9, 0, 0, 2, 0}) {
		t.Errorf("sparse int64: %v", got)
	}
	if got := run(NewMap(sm), Attrs{"cast_to": "TO_INT64"}).I64(); !reflect.DeepEqual(got, []int64{-3, 7, 10}) {
		t.Errorf("dense string to int64: %v", got)
	}
	if got := run(NewMap(sm), Attrs{"cast_to": "TO_STRING", "map_form": "SPARSE", "max_map": int64(4)}).Str(); !reflect.DeepEqual(got, []string{"-3", "7", "10", "0"}) {
		t.Errorf("sparse string: %q", got)
	}
	// Keys out of order (a map not made by NewMap) are sorted.
	u := NewMap(map[int64]float32{1: 1, 2: 2, 3: 3})
	copy(u.Map().Keys.I64(), []int64{3, 1, 2})
	if got := run(u, Attrs{}).F32(); !reflect.DeepEqual(got, []float32{2, 3, 1}) {
		t.Errorf("unsorted keys: %v", got)
	}
	n := &Node{Name: "cm", Op: "CastMap", Attrs: Attrs{"map_form": "SPARSE", "max_map": int64(5)}, In: []*Tensor{NewMap(fm)}, Out: []*Tensor{{}}}
	if err := MLCastMap(n); err == nil || !strings.Contains(err.Error(), "key 7") {
		t.Errorf("key past max_map: %v", err)
	}
}

// CopyValue deep-copies maps and sequences of maps.
func TestMapCopyValue(t *testing.T) {
	src := NewSequence(F32, NewMap(map[string]float32{"a": 1, "b": 2}), NewMap(map[string]float32{"c": 3}))
	dst := &Tensor{}
	CopyValue(dst, src)
	src.Seq().Elems[0].Map().Values.F32()[0] = 99
	got, err := MapsOf[string, float32](dst)
	if err != nil || !reflect.DeepEqual(got, []map[string]float32{{"a": 1, "b": 2}, {"c": 3}}) {
		t.Errorf("copy: %v, %v", got, err)
	}
	if _, err := MapOf[int64, float32](dst.Seq().Elems[0]); err == nil {
		t.Error("MapOf with the wrong key type succeeded")
	}
}
