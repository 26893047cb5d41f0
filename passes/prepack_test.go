package passes

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/ir/irtest"
	"github.com/cuvil/cuvil/templates"
	"golang.org/x/tools/txtar"
)

// TestPrepackGolden runs constfold (the files build weights of more than
// 16 elements with ConstantOfShape, which the text form cannot hold
// inline), prepack (Winograd auto), shapes (inference after the pass sees
// the packed weights' ONNX shapes: unpackedInputs) and DCE on
// testdata/prepack.
func TestPrepackGolden(t *testing.T) {
	irtest.Golden(t, "testdata/prepack/*.txtar", func(m *ir.Model) error {
		if err := ConstFold.Run(m); err != nil {
			return err
		}
		if err := Prepack.Run(m); err != nil {
			return err
		}
		if err := Shapes.Run(m); err != nil {
			return err
		}
		return DCE.Run(m)
	})
}

// -winograd reaches the pass through Options: on transforms a 3x3 conv
// the auto rules leave to im2col+GEMM (16 channels on a 7x7 map), off
// none, auto only the 14x14 one.
func TestPrepackWinogradOption(t *testing.T) {
	const src = `opset ai.onnx 13
graph main(%x: f32[1,16,14,14], %x7: f32[1,16,7,7]) -> (%y, %y7) {
  %s = const i64[4] {16, 16, 3, 3}
  %w = ConstantOfShape <f32[16,16,3,3]> %s {value=tensor f32[1] {0.5}}
  %w7 = ConstantOfShape <f32[16,16,3,3]> %s {value=tensor f32[1] {0.25}}
  %y = Conv <f32[1,16,14,14]> %x %w {kernel_shape=[3,3] pads=[1,1,1,1]}
  %y7 = Conv <f32[1,16,7,7]> %x7 %w7 {kernel_shape=[3,3] pads=[1,1,1,1]}
}
`
	for _, c := range []struct {
		mode WinogradMode
		want string // per conv: w Winograd, p packed for the GEMM
	}{{WinogradAuto, "wp"}, {WinogradOn, "ww"}, {WinogradOff, "pp"}} {
		m, err := ir.Parse(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := runPasses(m, []*Pass{ConstFold, Prepack}, Options{Winograd: c.mode, Verify: true}); err != nil {
			t.Fatal(err)
		}
		var got strings.Builder
		for _, n := range m.Graph.Nodes {
			switch {
			case n.Attr(templates.ConvWinogradAttr) != nil:
				got.WriteByte('w')
			case n.Attr(templates.ConvPackedAttr) != nil:
				got.WriteByte('p')
			default:
				got.WriteByte('-')
			}
		}
		if got.String() != c.want {
			t.Errorf("winograd=%v: convs marked %q, want %q", c.mode, got.String(), c.want)
		}
	}
}

// The attributes prepack sets are the ones ir/ops_cuvil.go declares, on
// every op it marks, so the verifier accepts its output.
func TestPrepackAttrsDeclared(t *testing.T) {
	for _, c := range []struct {
		domain, op string
		attrs      []string
	}{
		{"", "Conv", []string{templates.ConvPackedAttr, templates.ConvWinogradAttr}},
		{ir.CuvilDomain, "FusedConv", []string{templates.ConvPackedAttr, templates.ConvWinogradAttr}},
		{"", "Gemm", []string{templates.GemmPackedAttr}},
		{"", "MatMul", []string{templates.GemmPackedAttr}},
		{ir.CuvilDomain, "FusedGemm", []string{templates.GemmPackedAttr}},
		{ir.CuvilDomain, "FusedMatMul", []string{templates.GemmPackedAttr}},
		{ir.CuvilDomain, "FusedConvChain", []string{templates.ConvChainPackedAttr}},
	} {
		s := ir.LookupOp(c.domain, c.op)
		for _, a := range c.attrs {
			for _, v := range s.Versions {
				if spec := s.AttrFor(a, v); spec == nil || spec.Kind != ir.AttrInts {
					t.Errorf("%s-%d: attribute %s not declared as ints", c.op, v, a)
				}
			}
		}
	}
}

// A model that arrives with a packed attribute is refused before any
// pass: its W is not packed, whatever the attribute says.
func TestPrepackRefusesImportedAttrs(t *testing.T) {
	m, err := ir.Parse(`opset ai.onnx 13
graph main(%x: f32[1,1,4,4]) -> (%y) {
  %w = const f32[1,1,1,1] {2}
  %y = Conv <f32[1,1,4,4]> %x %w {packed_w_shape=[1,1,1,1]}
}
`)
	if err != nil {
		t.Fatal(err)
	}
	err = Run(m, Options{})
	if err == nil || !strings.Contains(err.Error(), `attribute "packed_w_shape" is set by the prepack pass`) {
		t.Errorf("Run = %v, want the packed attribute refused", err)
	}
}

// TestPrepackBF16Golden runs constfold, prepack with a precision config,
// shapes and DCE on testdata/prepack-bf16: each file's config section
// gives the mode ("mode bf16", "mode fp16", "mode none"), -keep-f32
// entries ("keep a,b") and the Winograd mode ("winograd on|off|auto"),
// its warnings section the weight breaks prepack reports, in order.
func TestPrepackBF16Golden(t *testing.T) {
	files, err := filepath.Glob("testdata/prepack-bf16/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, file := range files {
		ar, err := txtar.ParseFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var cfg *PrecisionConfig
		wino := WinogradAuto
		var want string
		haveWarnings := false
		for _, f := range ar.Files {
			switch f.Name {
			case "config":
				for _, line := range strings.Split(string(f.Data), "\n") {
					k, v, _ := strings.Cut(strings.TrimSpace(line), " ")
					switch k {
					case "mode":
						if v != "none" {
							if cfg == nil {
								cfg = &PrecisionConfig{}
							}
							cfg.Mode = v
						}
					case "keep":
						if cfg == nil {
							cfg = &PrecisionConfig{}
						}
						cfg.KeepF32 = strings.Split(v, ",")
					case "winograd":
						if wino, err = ParseWinograd(v); err != nil {
							t.Fatalf("%s: %v", file, err)
						}
					case "":
					default:
						t.Fatalf("%s: config line %q", file, line)
					}
				}
			case "warnings":
				want, haveWarnings = string(f.Data), true
			}
		}
		if !haveWarnings {
			t.Fatalf("%s: no warnings section", file)
		}
		irtest.Golden(t, file, func(m *ir.Model) error {
			if cfg != nil {
				cfg.Breaks = nil
			}
			if err := ConstFold.Run(m); err != nil {
				return err
			}
			if err := prepack(m, wino, cfg); err != nil {
				return err
			}
			if err := ir.Verify(m); err != nil {
				return err
			}
			if err := Shapes.Run(m); err != nil {
				return err
			}
			return DCE.Run(m)
		})
		var got strings.Builder
		if cfg != nil {
			for _, b := range cfg.Breaks {
				got.WriteString(b.String() + "\n")
			}
		}
		if got.String() != want {
			t.Errorf("%s: warnings\n%s\nwant\n%s", file, got.String(), want)
		}
	}
}
