package gen

import (
	"bytes"
	"math/rand"
	"testing"

	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/templates"
)

// A 64->64 3x3 conv on 16x16 is a layer winogradUseful picks, so the
// option alone decides whether its weights are stored transformed.
func TestWinogradOption(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	w := make([]float32, 64*64*3*3)
	for i := range w {
		w[i] = float32(r.NormFloat64())
	}
	build := func() *ir.Model {
		b := &gb{&ir.Graph{Name: "main"}}
		x := b.in("x", f32T(1, 64, 16, 16))
		wv := b.constF32([]int64{64, 64, 3, 3}, w...)
		y := b.op("Conv", []*ir.Attr{intsA("kernel_shape", 3, 3), intsA("pads", 1, 1, 1, 1)}, x, wv)
		y.Type = f32T(1, 64, 16, 16)
		return model(b, y)
	}
	gen := func(winograd WinogradMode) map[string][]byte {
		files, err := Generate(build(), Options{Package: "p", NoTest: true, Winograd: winograd})
		if err != nil {
			t.Fatal(err)
		}
		return files
	}
	off, on := gen(WinogradOff), gen(WinogradOn)
	if bytes.Contains(off["model.go"], []byte(templates.ConvWinogradAttr)) {
		t.Errorf("Winograd off: model.go marks a node with %s", templates.ConvWinogradAttr)
	}
	if !bytes.Contains(on["model.go"], []byte(templates.ConvWinogradAttr)) {
		t.Errorf("Winograd on: no node carries %s", templates.ConvWinogradAttr)
	}
	if bytes.Equal(off["weights.bin"], on["weights.bin"]) {
		t.Error("Winograd on stores the same weights as off")
	}
}
