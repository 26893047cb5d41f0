package gen

import (
	"strings"
	"testing"

	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/passes"
)

// A model whose plan or weights exceed the limits is refused naming the
// largest value; a raised (or lifted) limit compiles it.
func TestGenerateLimits(t *testing.T) {
	m, err := ir.Parse(`opset ai.onnx 17
graph main(%x: f32[1]) -> (%y) {
  %w = const f32[4] {1, 2, 3, 4}
  %s = const i64[2] {1024, 4}
  %c = ConstantOfShape @fill <?[?]> %s
  %a = Add @add <?[?]> %c %x
  %y = Mul @mul <?[?]> %a %w
}`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := passes.InferShapes(m); err != nil {
		t.Fatal(err)
	}
	_, err = Generate(m, Options{Package: "p", NoTest: true, MaxArena: 8 << 10})
	if err == nil || !strings.Contains(err.Error(), "-max-arena") || !strings.Contains(err.Error(), `of node "fill" (ConstantOfShape)`) {
		t.Fatalf("MaxArena 8KiB: got %v, want a refusal naming fill", err)
	}
	if _, err := Generate(m, Options{Package: "p", NoTest: true, MaxArena: 64 << 10}); err != nil {
		t.Fatalf("MaxArena 64KiB: %v", err)
	}
	if _, err := Generate(m, Options{Package: "p", NoTest: true, MaxArena: -1}); err != nil {
		t.Fatalf("MaxArena -1: %v", err)
	}
	_, err = Generate(m, Options{Package: "p", NoTest: true, MaxWeights: 8})
	if err == nil || !strings.Contains(err.Error(), "-max-weights") || !strings.Contains(err.Error(), `"w"`) {
		t.Fatalf("MaxWeights 8: got %v, want a refusal naming w", err)
	}
}

func TestParseFormatBytes(t *testing.T) {
	for in, want := range map[string]int64{"8GiB": 8 << 30, "512MiB": 512 << 20, "1.5K": 1536, "100MB": 100e6, "4096": 4096, " 2 G ": 2 << 30, "-1": -1, "3B": 3} {
		got, err := ParseBytes(in)
		if err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "8x", "GiB", "0", "-2", "1e30", "NaN", "8GiBs"} {
		if _, err := ParseBytes(bad); err == nil {
			t.Errorf("ParseBytes(%q) accepted", bad)
		}
	}
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1536: "1.5 KiB", 8 << 30: "8.0 GiB", 4e12: "3.6 TiB"} {
		if got := FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}
