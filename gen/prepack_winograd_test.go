package gen

import (
	"bytes"
	"math/rand"
	"testing"

	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/templates"
)

// A 64->64 3x3 conv on 16x16 is a layer winogradUseful picks and one on
// 7x7 is not: auto transforms the first only, on both, off neither.
func TestWinogradOption(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	w := make([]float32, 64*64*3*3)
	for i := range w {
		w[i] = float32(r.NormFloat64())
	}
	build := func(hw int64) *ir.Model {
		b := &gb{&ir.Graph{Name: "main"}}
		x := b.in("x", f32T(1, 64, hw, hw))
		wv := b.constF32([]int64{64, 64, 3, 3}, w...)
		y := b.op("Conv", []*ir.Attr{intsA("kernel_shape", 3, 3), intsA("pads", 1, 1, 1, 1)}, x, wv)
		y.Type = f32T(1, 64, hw, hw)
		return model(b, y)
	}
	genHW := func(hw int64, winograd WinogradMode) map[string][]byte {
		files, err := Generate(build(hw), Options{Package: "p", NoTest: true, Winograd: winograd})
		if err != nil {
			t.Fatal(err)
		}
		return files
	}
	gen := func(winograd WinogradMode) map[string][]byte { return genHW(16, winograd) }
	marked := func(files map[string][]byte) bool {
		return bytes.Contains(files["model.go"], []byte(templates.ConvWinogradAttr))
	}
	if !marked(gen(WinogradAuto)) || marked(genHW(7, WinogradAuto)) || !marked(genHW(7, WinogradOn)) {
		t.Errorf("auto must pick 16x16 and not 7x7; on must pick 7x7")
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

func TestParseWinograd(t *testing.T) {
	for s, want := range map[string]WinogradMode{"": WinogradAuto, "auto": WinogradAuto, "on": WinogradOn, "true": WinogradOn, "off": WinogradOff, "false": WinogradOff} {
		if m, err := ParseWinograd(s); err != nil || m != want {
			t.Errorf("ParseWinograd(%q) = %v, %v; want %v", s, m, err, want)
		}
	}
	if _, err := ParseWinograd("sometimes"); err == nil {
		t.Error("ParseWinograd accepted sometimes")
	}
}

// TestWinogradUsefulNHWC pins the NHWC rule: Winograd from 8 input
// channels, but not on maps of at most 8x8 with C*M >= 128K (resnet50's
// 512x7 convs run im2col+GEMM).
func TestWinogradUsefulNHWC(t *testing.T) {
	for _, c := range []struct {
		M, C, H, W int
		want       bool
	}{
		{512, 512, 7, 7, false}, {256, 512, 7, 7, false}, {512, 512, 9, 9, true},
		{256, 256, 14, 14, true}, {256, 256, 7, 7, true}, {64, 64, 7, 7, true},
		{32, 4, 56, 56, false}, {64, 64, 56, 56, true},
	} {
		if got := winogradUsefulNHWC(c.M, c.C, c.H, c.W); got != c.want {
			t.Errorf("winogradUsefulNHWC(M=%d, C=%d, %dx%d) = %v, want %v", c.M, c.C, c.H, c.W, got, c.want)
		}
	}
}
