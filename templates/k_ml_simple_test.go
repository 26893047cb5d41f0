package templates

import (
	"math"
	"math/rand"
	"slices"
	"testing"
)

func mlRandF32(r *rand.Rand, shape ...int) *Tensor {
	t := &Tensor{}
	t.Resize(F32, shape...)
	for i := range t.F32() {
		t.F32()[i] = float32(r.NormFloat64())
	}
	return t
}

func mlClose(t *testing.T, what string, got []float32, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i, w := range want {
		if g := float64(got[i]); math.Abs(g-w) > tol*(1+math.Abs(w)) && !(math.IsNaN(g) && math.IsNaN(w)) {
			t.Fatalf("%s: element %d = %g, want %g", what, i, g, w)
		}
	}
}

func TestMLScalerNormalizerBinarizer(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	x := mlRandF32(r, 7, 5)
	off := []float32{0.5, -1, 2, 0, 0.25}
	scale := []float32{3}
	n := &Node{Op: "Scaler", Attrs: Attrs{"offset": off, "scale": scale}, In: []*Tensor{x}, Out: []*Tensor{{}}}
	miscRun(t, MLScaler, n)
	want := make([]float64, 35)
	for i := range want {
		want[i] = (float64(x.F32()[i]) - float64(off[i%5])) * 3
	}
	mlClose(t, "Scaler", n.Out[0].F32(), want, 1e-6)

	for _, norm := range []string{"MAX", "L1", "L2"} {
		n := &Node{Op: "Normalizer", Attrs: Attrs{"norm": norm}, In: []*Tensor{x}, Out: []*Tensor{{}}}
		miscRun(t, MLNormalizer, n)
		for r := 0; r < 7; r++ {
			s := 0.0
			for j := 0; j < 5; j++ {
				v := math.Abs(float64(x.F32()[r*5+j]))
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
			for j := 0; j < 5; j++ {
				want[r*5+j] = float64(x.F32()[r*5+j]) / s
			}
		}
		mlClose(t, "Normalizer "+norm, n.Out[0].F32(), want, 1e-6)
	}

	n = &Node{Op: "Binarizer", Attrs: Attrs{"threshold": float32(0.3)}, In: []*Tensor{x}, Out: []*Tensor{{}}}
	miscRun(t, MLBinarizer, n)
	for i, v := range x.F32() {
		w := 0.0
		if v > 0.3 {
			w = 1
		}
		want[i] = w
	}
	mlClose(t, "Binarizer", n.Out[0].F32(), want, 0)
}

func TestMLImputerAndFeatureExtractor(t *testing.T) {
	r := rand.New(rand.NewSource(12))
	x := mlRandF32(r, 3, 4)
	x.F32()[1], x.F32()[6] = float32(math.NaN()), float32(math.NaN())
	imp := []float32{1, 2, 3, 4}
	n := &Node{Op: "Imputer", Attrs: Attrs{"imputed_value_floats": imp, "replaced_value_float": float32(math.NaN())}, In: []*Tensor{x}, Out: []*Tensor{{}}}
	miscRun(t, MLImputer, n)
	for i, v := range n.Out[0].F32() {
		w := x.F32()[i]
		if math.IsNaN(float64(w)) {
			w = imp[i%4]
		}
		if v != w {
			t.Fatalf("Imputer element %d = %g, want %g", i, v, w)
		}
	}

	idx := &Tensor{}
	idx.Resize(I64, 3)
	copy(idx.I64(), []int64{3, 0, 3})
	n = &Node{Op: "ArrayFeatureExtractor", In: []*Tensor{x, idx}, Out: []*Tensor{{}}}
	miscRun(t, MLArrayFeatureExtractor, n)
	if !slices.Equal(n.Out[0].Shape, []int{3, 3}) {
		t.Fatalf("shape %v", n.Out[0].Shape)
	}
	for r := 0; r < 3; r++ {
		for k, j := range idx.I64() {
			g, w := n.Out[0].F32()[r*3+k], x.F32()[r*4+int(j)]
			if g != w && !(g != g && w != w) {
				t.Fatalf("row %d col %d: %g, want %g", r, k, g, w)
			}
		}
	}
}

func TestMLLabelEncoderCategoryOneHot(t *testing.T) {
	x := strTensor([]int{2, 3}, []string{"b", "zz", "a", "c", "a", ""})
	// Version 2 lists, version 4 tensors, version 1 classes.
	vt := &Tensor{}
	vt.Resize(I32, 3)
	copy(vt.Data.([]int32), []int32{7, 8, 9})
	def := &Tensor{}
	def.Resize(I32, 1)
	def.Data.([]int32)[0] = -5
	n := &Node{Op: "LabelEncoder", Version: 4, Attrs: Attrs{"keys_strings": []string{"a", "b", "c"}, "values_tensor": vt, "default_tensor": def}, In: []*Tensor{x}, Out: []*Tensor{{}}}
	miscRun(t, MLLabelEncoder, n)
	if got := n.Out[0].Data.([]int32); !slices.Equal(got, []int32{8, -5, 7, 9, 7, -5}) {
		t.Fatalf("LabelEncoder 4: %v", got)
	}
	n = &Node{Op: "LabelEncoder", Version: 2, Attrs: Attrs{"keys_strings": []string{"a", "b"}, "values_floats": []float32{0.5, 1.5}}, In: []*Tensor{x}, Out: []*Tensor{{}}}
	miscRun(t, MLLabelEncoder, n)
	if got := n.Out[0].F32(); got[0] != 1.5 || got[2] != 0.5 || !math.Signbit(float64(got[1])) || got[1] != 0 {
		t.Fatalf("LabelEncoder 2: %v", got)
	}
	n = &Node{Op: "LabelEncoder", Version: 1, Attrs: Attrs{"classes_strings": []string{"a", "b", "c"}, "default_int64": int64(42)}, In: []*Tensor{x}, Out: []*Tensor{{}}}
	miscRun(t, MLLabelEncoder, n)
	if got := n.Out[0].I64(); !slices.Equal(got, []int64{1, 42, 0, 2, 0, 42}) {
		t.Fatalf("LabelEncoder 1: %v", got)
	}
	// Float keys: NaN is a key, -0 matches 0.
	xf := &Tensor{}
	xf.Resize(F64, 4)
	copy(xf.F64(), []float64{math.NaN(), math.Copysign(0, -1), 2, 3})
	kt := &Tensor{}
	kt.Resize(F64, 3)
	copy(kt.F64(), []float64{0, math.NaN(), 2})
	n = &Node{Op: "LabelEncoder", Version: 4, Attrs: Attrs{"keys_tensor": kt, "values_strings": []string{"zero", "nan", "two"}}, In: []*Tensor{xf}, Out: []*Tensor{{}}}
	miscRun(t, MLLabelEncoder, n)
	if got := n.Out[0].Str(); !slices.Equal(got, []string{"nan", "zero", "two", "_Unused"}) {
		t.Fatalf("LabelEncoder float keys: %q", got)
	}

	n = &Node{Op: "CategoryMapper", Attrs: Attrs{"cats_strings": []string{"a", "b", "c"}, "cats_int64s": []int64{5, 6, 7}}, In: []*Tensor{x}, Out: []*Tensor{{}}}
	miscRun(t, MLCategoryMapper, n)
	if got := n.Out[0].I64(); !slices.Equal(got, []int64{6, -1, 5, 7, 5, -1}) {
		t.Fatalf("CategoryMapper: %v", got)
	}

	n = &Node{Op: "OneHotEncoder", Attrs: Attrs{"cats_strings": []string{"a", "b", "c", "d"}}, In: []*Tensor{x}, Out: []*Tensor{{}}}
	miscRun(t, MLOneHotEncoder, n)
	if !slices.Equal(n.Out[0].Shape, []int{2, 3, 4}) {
		t.Fatalf("OneHotEncoder shape %v", n.Out[0].Shape)
	}
	for i, s := range x.Str() {
		for k, c := range []string{"a", "b", "c", "d"} {
			w := float32(0)
			if s == c {
				w = 1
			}
			if n.Out[0].F32()[i*4+k] != w {
				t.Fatalf("OneHotEncoder %q at %d", s, k)
			}
		}
	}
	n.Attrs["zeros"] = int64(0)
	if err := MLOneHotEncoder(n); err == nil {
		t.Fatal("OneHotEncoder zeros=0: no error for an unknown category")
	}
}

func TestMLFeatureVectorizer(t *testing.T) {
	r := rand.New(rand.NewSource(13))
	a, b := mlRandF32(r, 5, 3), mlRandF32(r, 5)
	c := &Tensor{}
	c.Resize(I64, 5, 2)
	copy(c.I64(), []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
	n := &Node{Op: "FeatureVectorizer", Attrs: Attrs{"inputdimensions": []int64{2, 1, 4}}, In: []*Tensor{a, b, c}, Out: []*Tensor{{}}}
	miscRun(t, MLFeatureVectorizer, n)
	want := make([]float64, 0, 35)
	for r := 0; r < 5; r++ {
		want = append(want, float64(a.F32()[r*3]), float64(a.F32()[r*3+1]), float64(b.F32()[r]),
			float64(c.I64()[r*2]), float64(c.I64()[r*2+1]), 0, 0)
	}
	mlClose(t, "FeatureVectorizer", n.Out[0].F32(), want, 0)
}
