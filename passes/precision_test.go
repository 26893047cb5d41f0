package passes

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/ir/irtest"
	"github.com/cuvil/cuvil/templates"
	"golang.org/x/tools/txtar"
)

// TestPrecisionGolden runs the precision pass on testdata/precision: each
// file's config section gives the mode ("mode fp16") and the -keep-f32
// entries ("keep a,b"), its warnings section the breaks the pass reports,
// one per line, in order.
func TestPrecisionGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/precision/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, file := range files {
		ar, err := txtar.ParseFile(file)
		if err != nil {
			t.Fatal(err)
		}
		cfg := &PrecisionConfig{}
		var want string
		haveWarnings := false
		for _, f := range ar.Files {
			switch f.Name {
			case "config":
				for _, line := range strings.Split(string(f.Data), "\n") {
					k, v, _ := strings.Cut(strings.TrimSpace(line), " ")
					switch k {
					case "mode":
						cfg.Mode = v
					case "keep":
						cfg.KeepF32 = strings.Split(v, ",")
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
			cfg.Breaks = nil
			if err := PrecisionModel(m, cfg); err != nil {
				return err
			}
			return DCE.Run(m)
		})
		var got strings.Builder
		for _, b := range cfg.Breaks {
			got.WriteString(b.String() + "\n")
		}
		if got.String() != want {
			t.Errorf("%s: warnings\n%s\nwant\n%s", file, got.String(), want)
		}
	}
}

// TestPrecisionOff: without a config the pipeline's precision pass leaves
// an f16 Softmax alone (the conformance suites' f16 tests run as before).
func TestPrecisionOff(t *testing.T) {
	m, err := ir.Parse(`opset ai.onnx 13
graph main(%x: f16[2,8]) -> (%y) {
  %y = Softmax @sm <f16[2,8]> %x {axis=-1}
}
`)
	if err != nil {
		t.Fatal(err)
	}
	if err := Precision.WithOptions(m, Options{}); err != nil {
		t.Fatal(err)
	}
	if len(m.Graph.Nodes) != 1 {
		t.Errorf("precision without options changed the graph: %d nodes", len(m.Graph.Nodes))
	}
	if _, err := ParsePrecision("fp8"); err == nil || !strings.Contains(err.Error(), `-precision "fp8": want bf16 or fp16`) {
		t.Errorf("ParsePrecision(fp8): %v", err)
	}
}

// TestPrepackBF16: with -precision bf16 prepack stores a MatMul's and a
// FusedMatMul's constant B as bf16 panels (half the bytes of the f32
// panels), records each as a weight break, and the result verifies;
// negative cases: a GEMV (one row of A) and a -keep-f32 node keep f32 B,
// and without -precision nothing is bf16.
func TestPrepackBF16(t *testing.T) {
	src := `opset ai.onnx 13
opset cuvil 1
graph main(%x: f32[4,8], %v: f32[1,8]) -> (%y, %z, %u) {
  %w = const f32[8,20] {` + strings.TrimSuffix(strings.Repeat("0.5, -0.25, ", 80), ", ") + `}
  %w2 = const f32[8,20] {` + strings.TrimSuffix(strings.Repeat("1, 2, ", 80), ", ") + `}
  %w3 = const f32[8,20] {` + strings.TrimSuffix(strings.Repeat("3, 4, ", 80), ", ") + `}
  %w4 = const f32[8,20] {` + strings.TrimSuffix(strings.Repeat("5, 6, ", 80), ", ") + `}
  %y = MatMul @mm <f32[4,20]> %x %w
  %z = cuvil.FusedMatMul @fm <f32[4,20]> %x %w2 {activation="Relu"}
  %u = MatMul @gemv <f32[1,20]> %v %w3
  %q = MatMul @kept <f32[4,20]> %x %w4
}
`
	for _, c := range []struct {
		cfg  *PrecisionConfig
		bf16 []string // nodes whose B is bf16
	}{
		{&PrecisionConfig{Mode: PrecisionBF16, KeepF32: []string{"kept"}}, []string{"mm", "fm"}},
		{&PrecisionConfig{Mode: PrecisionFP16}, nil},
		{nil, nil},
	} {
		m, err := ir.Parse(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := prepack(m, WinogradAuto, c.cfg); err != nil {
			t.Fatal(err)
		}
		if err := ir.Verify(m); err != nil {
			t.Fatalf("after prepack: %v", err)
		}
		var got []string
		for _, n := range m.Graph.Nodes {
			b := n.Inputs[1]
			if b.Const != nil && b.Const.DType == ir.BF16 {
				got = append(got, n.Name)
				if want := 2 * 2 * 4 * 32; len(b.Const.Raw) != want { // 2 panels x 4 pairs x 32 bf16
					t.Errorf("%s: bf16 B has %d bytes, want %d", n.Name, len(b.Const.Raw), want)
				}
			}
		}
		if strings.Join(got, ",") != strings.Join(c.bf16, ",") {
			t.Errorf("%+v: bf16 B on %v, want %v", c.cfg, got, c.bf16)
		}
		if c.cfg != nil && len(c.bf16) > 0 {
			want := "node mm (MatMul): weight w f32 [8,20]: stored bf16 in weights.bin (half the bytes): products in bf16, sums in f32; A rounded to bf16 in the kernel (VDPBF16PS tiles)"
			if len(c.cfg.Breaks) != 2 || c.cfg.Breaks[0].String() != want || c.cfg.Breaks[1].Op != "cuvil::FusedMatMul" {
				t.Errorf("breaks %v, want 2 starting with\n%s", c.cfg.Breaks, want)
			}
		}
	}
}

// TestPrepackConvBF16: with -precision bf16 prepack stores the W' panels
// of group-1 NHWC FusedConvs (pointwise, strided 3x3) as bf16
// (half the bytes of the f32 panels: K*M' values at 2 bytes) and records
// each as a weight break; negative cases keep f32: a -keep-f32 node, the
// NCHW-entry stem, a
// grouped conv, an NCHW one, one with input Scale, a Winograd one (its U
// stays f32), and everything without -precision or with fp16.
func TestPrepackConvBF16(t *testing.T) {
	vals := func(n int) string {
		s := make([]string, n)
		for i := range s {
			s[i] = fmt.Sprintf("%g", float32(i%7)-3.25)
		}
		return strings.Join(s, ", ")
	}
	src := `opset ai.onnx 13
opset cuvil 1
graph main(%x: f32[1,12,12,8], %xc: f32[1,3,12,12], %g: f32[1,1,1,8]) -> (%pw, %s2, %stem, %wn, %kp, %gr, %nc, %sc) {
  %w1 = const f32[16,8,1,1] {` + vals(128) + `}
  %w2 = const f32[16,8,3,3] {` + vals(1152) + `}
  %w3 = const f32[16,3,7,7] {` + vals(2352) + `}
  %w4 = const f32[16,8,3,3] {` + vals(1152) + `}
  %w5 = const f32[16,8,1,1] {` + vals(128) + `}
  %w6 = const f32[16,4,1,1] {` + vals(64) + `}
  %w7 = const f32[16,3,1,1] {` + vals(48) + `}
  %w8 = const f32[16,8,1,1] {` + vals(128) + `}
  %pw = cuvil.FusedConv @pw <f32[1,12,12,16]> %x %w1 {kernel_shape=[1,1] layout="NHWC" activation="Relu"}
  %s2 = cuvil.FusedConv @s2 <f32[1,6,6,16]> %x %w2 {kernel_shape=[3,3] layout="NHWC" pads=[1,1,1,1] strides=[2,2]}
  %stem = cuvil.FusedConv @stem <f32[1,6,6,16]> %xc %w3 {kernel_shape=[7,7] layout="NHWC" in_layout="NCHW" pads=[3,3,3,3] strides=[2,2]}
  %wn = cuvil.FusedConv @wino <f32[1,12,12,16]> %x %w4 {kernel_shape=[3,3] layout="NHWC" pads=[1,1,1,1]}
  %kp = cuvil.FusedConv @kept <f32[1,12,12,16]> %x %w5 {kernel_shape=[1,1] layout="NHWC"}
  %gr = cuvil.FusedConv @grouped <f32[1,12,12,16]> %x %w6 {kernel_shape=[1,1] layout="NHWC" group=2}
  %nc = cuvil.FusedConv @nchw <f32[1,16,12,12]> %xc %w7 {kernel_shape=[1,1]}
  %sc = cuvil.FusedConv @scale <f32[1,12,12,16]> %x %w8 _ _ _ %g {kernel_shape=[1,1] layout="NHWC"}
}
`
	for _, c := range []struct {
		cfg  *PrecisionConfig
		wino WinogradMode
		bf16 []string // nodes whose W is bf16
	}{
		{&PrecisionConfig{Mode: PrecisionBF16, KeepF32: []string{"kept"}}, WinogradOn, []string{"pw", "s2"}},
		{&PrecisionConfig{Mode: PrecisionBF16}, WinogradOff, []string{"pw", "s2", "wino", "kept"}},
		{&PrecisionConfig{Mode: PrecisionBF16, KeepF32: []string{"cuvil::FusedConv"}}, WinogradOff, nil},
		{&PrecisionConfig{Mode: PrecisionFP16}, WinogradOff, nil},
		{nil, WinogradOff, nil},
	} {
		m, err := ir.Parse(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := prepack(m, c.wino, c.cfg); err != nil {
			t.Fatal(err)
		}
		if err := ir.Verify(m); err != nil {
			t.Fatalf("after prepack: %v", err)
		}
		var got []string
		for _, n := range m.Graph.Nodes {
			w := n.Inputs[1]
			if w.Const == nil || w.Const.DType != ir.BF16 {
				continue
			}
			got = append(got, n.Name)
			ws := n.AttrInts(templates.ConvPackedAttr, nil)
			if len(ws) != 4 {
				t.Fatalf("%s: bf16 W without its shape", n.Name)
			}
			K, M := int(ws[1]*ws[2]*ws[3]), int(ws[0])
			if want := 2 * ((M + 15) / 16 * 16) * ((K + 1) / 2 * 2); len(w.Const.Raw) != want {
				t.Errorf("%s: bf16 W has %d bytes, want %d", n.Name, len(w.Const.Raw), want)
			}
			if n.Attr(templates.ConvWinogradAttr) != nil {
				t.Errorf("%s: bf16 W and Winograd", n.Name)
			}
		}
		if strings.Join(got, ",") != strings.Join(c.bf16, ",") {
			t.Errorf("%+v winograd %v: bf16 W on %v, want %v", c.cfg, c.wino, got, c.bf16)
		}
		if c.wino == WinogradOn {
			if n := m.Graph.Nodes[3]; n.Name != "wino" || n.Attr(templates.ConvWinogradAttr) == nil {
				t.Errorf("wino not Winograd under bf16")
			}
		}
		if c.cfg != nil && len(c.bf16) > 0 {
			want := "node pw (cuvil::FusedConv): weight w1 f32 [16,8,1,1]: stored bf16 in weights.bin (half the bytes): products in bf16, sums in f32; X rounded to bf16 as the kernel gathers it (VDPBF16PS tiles)"
			if len(c.cfg.Breaks) != len(c.bf16) || c.cfg.Breaks[0].String() != want {
				t.Errorf("breaks %v, want %d starting with\n%s", c.cfg.Breaks, len(c.bf16), want)
			}
		}
	}
}
