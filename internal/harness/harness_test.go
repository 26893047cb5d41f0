package harness

import (
	"context"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/cuvil/cuvil/internal/irbuild"
	"github.com/cuvil/cuvil/ir"
)

// TestHarnessDropsBrokenPackage builds two models, one of which does not
// compile: the other must still run, and the broken one be reported with
// the compiler's error.
func TestHarnessDropsBrokenPackage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module; skipped in -short mode")
	}
	h, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if err := h.Add("good", irbuild.Tiny()); err != nil {
		t.Fatal(err)
	}
	if err := h.Add("bad", irbuild.Tiny()); err != nil {
		t.Fatal(err)
	}
	h.models["bad"].files["zz.go"] = []byte("package m0001\n\nvar broken int = \"not an int\"\n")
	ctx := context.Background()
	exe, err := h.Build(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if reason := h.Failed["bad"]; !strings.Contains(reason, "zz.go:3") {
		t.Errorf("bad: reason %q, want the compiler error in zz.go", reason)
	}
	if got := strings.Join(h.Keys(), ","); got != "good" {
		t.Errorf("models left: %s", got)
	}
	in := filepath.Join(h.Dir, "x.cuvt")
	if err := WriteTensorFile(in, ir.NewTensorF32([]int64{1, 4}, []float32{1, 0, 0, 0})); err != nil {
		t.Fatal(err)
	}
	res, err := h.Run(ctx, exe, []Job{
		{Model: "good", Inputs: []string{in}, Out: h.Dir, Runs: 2},
		{Model: "bad", Inputs: []string{in}, Out: h.Dir},
		{Model: "good", Inputs: nil, Out: h.Dir},
	}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Err != "" || res[0].Outputs != 2 || len(res[0].Times) != 2 {
		t.Fatalf("good: %+v", res[0])
	}
	// z = 2*(x·W)·W2 + B with x = e0: y = W[0] = [1,2,3].
	z, err := ReadTensorFile(filepath.Join(h.Dir, "output_0.cuvt"))
	if err != nil {
		t.Fatal(err)
	}
	got := z.Float64s()
	want := []float64{2*(1*0.5+2*0.25+3*-0.125) + 100, 2*(1*-1+2*2+3*1) - 100}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("z = %v, want %v", got, want)
	}
	if !strings.Contains(res[1].Err, "no model") {
		t.Errorf("dropped model ran: %+v", res[1])
	}
	if !strings.Contains(res[2].Err, "inputs") {
		t.Errorf("missing inputs: %+v", res[2])
	}
}

func TestParseFailures(t *testing.T) {
	h := &Harness{}
	out := "# cuvilrun/m0003\nm0003/k_elem.go:12:5: undefined: foo\nm0003/k_elem.go:13:5: other\n# cuvilrun/m0010\n./m0010/model.go:1:1: syntax error\n"
	got := h.parseFailures([]byte(out))
	if got["m0003"] != "m0003/k_elem.go:12:5: undefined: foo" || got["m0010"] != "./m0010/model.go:1:1: syntax error" || len(got) != 2 {
		t.Errorf("parseFailures = %q", got)
	}
}

// TestHarnessCrossArm64 builds a model for GOARCH=arm64 (with the NEON
// kernels, then with purego) and runs it under qemu-aarch64-static; skipped
// where no emulator is installed.
func TestHarnessCrossArm64(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module; skipped in -short mode")
	}
	tgt := Target{GOARCH: "arm64"}
	if _, err := tgt.emulator(); err != nil {
		t.Skip(err)
	}
	for _, tags := range []string{"", "purego"} {
		h, err := New()
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close()
		h.Target = Target{GOARCH: "arm64", Tags: tags}
		if err := h.Add("tiny", irbuild.Tiny()); err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		exe, err := h.Build(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(h.Failed) != 0 {
			t.Fatalf("tags %q: %v", tags, h.Failed)
		}
		in := filepath.Join(h.Dir, "x.cuvt")
		if err := WriteTensorFile(in, ir.NewTensorF32([]int64{1, 4}, []float32{1, 0, 0, 0})); err != nil {
			t.Fatal(err)
		}
		res, err := h.Run(ctx, exe, []Job{{Model: "tiny", Inputs: []string{in}, Out: h.Dir}}, 2)
		if err != nil {
			t.Fatal(err)
		}
		if res[0].Err != "" || res[0].Outputs != 2 {
			t.Fatalf("tags %q: %+v", tags, res[0])
		}
		z, err := ReadTensorFile(filepath.Join(h.Dir, "output_0.cuvt"))
		if err != nil {
			t.Fatal(err)
		}
		got := z.Float64s()
		want := []float64{2*(1*0.5+2*0.25+3*-0.125) + 100, 2*(1*-1+2*2+3*1) - 100}
		if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
			t.Errorf("tags %q: z = %v, want %v", tags, got, want)
		}
	}
}

func TestTargetEmulatorMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := Target{GOARCH: "arm64"}.emulator()
	if err == nil || !strings.Contains(err.Error(), "qemu-aarch64-static") {
		t.Errorf("err = %v, want one naming qemu-aarch64-static", err)
	}
	if (Target{GOARCH: runtime.GOARCH}).foreign() || (Target{}).foreign() {
		t.Error("host GOARCH is foreign")
	}
}

func TestTargetEnv(t *testing.T) {
	t.Setenv("GOARM", "")
	for _, c := range []struct {
		tgt  Target
		want string
	}{
		{Target{}, ""},
		{Target{GOARCH: runtime.GOARCH}, "GOARCH=" + runtime.GOARCH},
		{Target{GOARCH: "arm"}, "GOARCH=arm GOARM=7 CGO_ENABLED=0"},
		{Target{GOARCH: "arm", GOARM: "6"}, "GOARCH=arm GOARM=6 CGO_ENABLED=0"},
		{Target{GOARCH: "s390x"}, "GOARCH=s390x CGO_ENABLED=0"},
		{Target{GOARCH: "wasm"}, "GOARCH=wasm GOOS=wasip1 CGO_ENABLED=0"},
		{Target{GOOS: "js", GOARCH: "wasm"}, "GOARCH=wasm GOOS=js CGO_ENABLED=0"},
	} {
		if got := strings.Join(c.tgt.Env(), " "); got != c.want {
			t.Errorf("%+v: Env = %q, want %q", c.tgt, got, c.want)
		}
	}
	if run, err := (Target{}).ExecArgs(t.TempDir()); run != nil || err != nil {
		t.Errorf("host ExecArgs = %v, %v; want nil, nil", run, err)
	}
	if _, err := (Target{GOOS: "js", GOARCH: "wasm"}).ExecArgs(t.TempDir()); err == nil || !strings.Contains(err.Error(), "GOOS=js") {
		t.Errorf("js ExecArgs err = %v, want one naming GOOS=js", err)
	}
	t.Setenv("PATH", t.TempDir())
	if _, err := (Target{GOARCH: "wasm"}).ExecArgs(t.TempDir()); err == nil || !strings.Contains(err.Error(), "Node.js") {
		t.Errorf("wasip1 ExecArgs without node: err = %v, want one naming Node.js", err)
	}
}

// TestHarnessCrossWASI runs a model's harness under Node.js's WASI
// (GOOS=wasip1 GOARCH=wasm); skipped without node.
func TestHarnessCrossWASI(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module; skipped in -short mode")
	}
	tgt := Target{GOARCH: "wasm"}
	h, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if _, err := tgt.ExecArgs(h.Dir); err != nil {
		t.Skip(err)
	}
	h.Target = tgt
	if err := h.Add("tiny", irbuild.Tiny()); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	exe, err := h.Build(ctx)
	if err != nil || len(h.Failed) != 0 {
		t.Fatal(err, h.Failed)
	}
	in := filepath.Join(h.Dir, "x.cuvt")
	if err := WriteTensorFile(in, ir.NewTensorF32([]int64{1, 4}, []float32{1, 0, 0, 0})); err != nil {
		t.Fatal(err)
	}
	res, err := h.Run(ctx, exe, []Job{{Model: "tiny", Inputs: []string{in}, Out: h.Dir}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Err != "" || res[0].Outputs != 2 {
		t.Fatalf("%+v", res[0])
	}
	z, err := ReadTensorFile(filepath.Join(h.Dir, "output_0.cuvt"))
	if err != nil {
		t.Fatal(err)
	}
	got := z.Float64s()
	want := []float64{2*(1*0.5+2*0.25+3*-0.125) + 100, 2*(1*-1+2*2+3*1) - 100}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("z = %v, want %v", got, want)
	}
}
