package gen

import (
	"bytes"
	"testing"

	"github.com/cuvil/cuvil/ir"
)

// TestDynamicViews compiles views whose sizes depend on a symbolic dim:
// %r (a Reshape of %a, which dies there) shares %a's session tensor,
// %f (a Flatten of %b, which %s reads later) does not, and %q (an
// Unsqueeze of the graph input) does not either. The generated test runs
// the session at batch 2, 3 and 1 and checks every output's values and
// shapes, so a view that kept a stale shape, or a shared tensor that a
// later node overwrote, fails.
func TestDynamicViews(t *testing.T) {
	m, err := ir.Parse(`opset ai.onnx 13
graph main(%x: f32[n,4]) -> (%y, %f, %s, %q) {
  %a = Relu <f32[n,4]> %x
  %shp = const i64[2] {-1, 2}
  %r = Reshape <f32[r0,2]> %a %shp
  %two = const f32[] {2}
  %y = Mul <f32[r0,2]> %r %two
  %b = Neg <f32[n,4]> %x
  %f = Flatten <f32[n,4]> %b {axis=1}
  %s = Add <f32[n,4]> %b %x
  %ax = const i64[1] {0}
  %q = Unsqueeze <f32[1,n,4]> %x %ax
}`)
	if err != nil {
		t.Fatal(err)
	}
	lib, err := loadLibrary()
	if err != nil {
		t.Fatal(err)
	}
	c, err := lower(m, lib, nil)
	if err != nil {
		t.Fatal(err)
	}
	val := func(name string) int {
		for v, i := range c.valIndex {
			if v.Name == name {
				return i
			}
		}
		t.Fatalf("no value %s", name)
		return -1
	}
	if val("r") != val("a") {
		t.Errorf("dynamic Reshape r does not share its dying input a's tensor (%d, %d)", val("r"), val("a"))
	}
	if val("f") == val("b") {
		t.Errorf("Flatten f shares b's tensor though b is read after it")
	}
	files, err := Generate(m, Options{Package: "dynview", TestDims: map[string]int{"n": 2}})
	if err != nil {
		t.Fatal(err)
	}
	files["values_test.go"] = []byte(`package dynview

import (
	"fmt"
	"testing"
)

func TestViewValues(t *testing.T) {
	m, err := New()
	if err != nil {
		t.Fatal(err)
	}
	s := m.NewSession()
	for _, n := range []int{2, 3, 1} {
		x := &Tensor{DType: F32, Shape: []int{n, 4}, Data: make([]float32, 4*n)}
		for i := range x.Data.([]float32) {
			x.Data.([]float32)[i] = float32(i%5) - 2
		}
		out, err := s.Run(Input{X: x})
		if err != nil {
			t.Fatal(err)
		}
		var y, f, sum []float32
		for _, v := range x.F32() {
			y = append(y, 2*max(v, 0))
			f = append(f, -v)
			sum = append(sum, 0)
		}
		check := func(name string, got *Tensor, shape []int, want []float32) {
			if fmt.Sprint(got.Shape) != fmt.Sprint(shape) || fmt.Sprint(got.F32()) != fmt.Sprint(want) {
				t.Errorf("n=%d: %s = %v %v, want %v %v", n, name, got.Shape, got.F32(), shape, want)
			}
		}
		check("y", out.Y, []int{2 * n, 2}, y)
		check("f", out.F, []int{n, 4}, f)
		check("s", out.S, []int{n, 4}, sum)
		check("q", out.Q, []int{1, n, 4}, x.F32())
	}
}
`)
	out := goTest(t, "dynview", files)
	if !bytes.Contains([]byte(out), []byte("--- PASS: TestViewValues")) {
		t.Errorf("go test output lacks TestViewValues:\n%s", out)
	}
}
