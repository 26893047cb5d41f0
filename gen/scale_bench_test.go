package gen

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/cuvil/cuvil/internal/irbuild"
	"github.com/cuvil/cuvil/ir"
)

// syntheticModel is a model of about nodes nodes with the mix of a real
// export: blocks of Conv, element-wise chains, Reshape/Concat/Gather with
// attributes and a residual Add, and an If every 100 blocks (its branches
// capture the running value).
func syntheticModel(nodes int) *ir.Model {
	b := &irbuild.B{G: &ir.Graph{Name: "synth"}}
	x := b.In("x", irbuild.F32(1, 8, 8, 8))
	flag := b.In("flag", ir.TensorType(ir.Bool, ir.ShapeOf()))
	scale := b.ConstF32([]int64{1}, 0.5)
	bias := b.ConstF32([]int64{1, 8, 1, 1}, 0.1, -0.1, 0.2, -0.2, 0.3, -0.3, 0.4, -0.4)
	flat := b.ConstI64([]int64{3}, 1, 8, 64)
	back := b.ConstI64([]int64{4}, 1, 8, 8, 8)
	idx := b.ConstI64([]int64{8}, 0, 2, 4, 6, 8, 10, 12, 14)
	convAttrs := []*ir.Attr{
		irbuild.IntsAttr("kernel_shape", 3, 3), irbuild.IntsAttr("pads", 1, 1, 1, 1),
		irbuild.IntsAttr("strides", 1, 1), irbuild.IntsAttr("dilations", 1, 1), irbuild.IntAttr("group", 1),
	}
	w := make([]float32, 8*8*3*3)
	for blk := 0; len(b.G.Nodes) < nodes; blk++ {
		if blk%100 == 99 {
			then := irbuild.Sub(fmt.Sprintf("then%d", blk), b.G)
			then.G.Outputs = []*ir.Value{then.Op("Relu", nil, x)}
			els := irbuild.Sub(fmt.Sprintf("else%d", blk), b.G)
			els.G.Outputs = []*ir.Value{els.Op("Neg", nil, x)}
			x = b.Op("If", []*ir.Attr{irbuild.GraphAttr("then_branch", then.G), irbuild.GraphAttr("else_branch", els.G)}, flag)
		}
		for i := range w {
			w[i] = float32((i*7+blk)%13-6) / 64
		}
		cw := b.ConstF32([]int64{8, 8, 3, 3}, w...)
		cb := b.ConstF32([]int64{8}, float32(blk%5)/10, 0, 0, 0, 0, 0, 0, float32(blk%3)/10)
		c := b.Op("Conv", convAttrs, x, cw, cb)
		a := b.Op("Add", nil, c, bias)
		r := b.Op("Relu", nil, a)
		m := b.Op("Mul", nil, r, scale)
		s := b.Op("Sigmoid", nil, m)
		rs := b.Op("Reshape", []*ir.Attr{irbuild.IntAttr("allowzero", 0)}, s, flat)
		cc := b.Op("Concat", []*ir.Attr{irbuild.IntAttr("axis", 1)}, rs, rs)
		g := b.Op("Gather", []*ir.Attr{irbuild.IntAttr("axis", 1)}, cc, idx)
		rb := b.Op("Reshape", nil, g, back)
		x = b.Op("Add", nil, rb, x)
	}
	return irbuild.Model(b, x)
}

// BenchmarkBuildLargeModel generates the package of a synthetic model of
// CUVIL_SCALE_NODES nodes (default 10000) and times `go build` of it,
// reporting wall and CPU seconds and the peak RSS of the build (the go
// command and the compiler it waits for). Each iteration builds a package
// whose source differs (a nonce file), so the build cache never answers.
// It is a measurement, not a test: run it with
//
//	go test ./gen/ -run '^$' -bench BuildLargeModel -benchtime 1x
func BenchmarkBuildLargeModel(b *testing.B) {
	if testing.Short() {
		b.Skip("builds a 10,000-node generated package; skipped in -short mode")
	}
	nodes := 10000
	if s := os.Getenv("CUVIL_SCALE_NODES"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			b.Fatal(err)
		}
		nodes = n
	}
	m := syntheticModel(nodes)
	files, err := Generate(m, Options{Package: "synth", NoTest: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%d nodes, model.go %d bytes", len(m.Graph.Nodes), len(files["model.go"]))
	root := b.TempDir()
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module synthbuild\n\ngo 1.24\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	dir := filepath.Join(root, "synth")
	if err := WritePackage(dir, files); err != nil {
		b.Fatal(err)
	}
	var wall, cpu time.Duration
	var rss int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		nonce := fmt.Sprintf("package synth\n\n// nonce %d %d\n", time.Now().UnixNano(), i)
		if err := os.WriteFile(filepath.Join(dir, "nonce.go"), []byte(nonce), 0o644); err != nil {
			b.Fatal(err)
		}
		cmd := exec.Command("go", "build", "-o", os.DevNull, "./synth")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-buildvcs=false")
		start := time.Now()
		out, err := cmd.CombinedOutput()
		wall += time.Since(start)
		if err != nil {
			b.Fatalf("go build: %v\n%s", err, out)
		}
		cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && ru.Maxrss > rss {
			rss = ru.Maxrss // KiB on linux
		}
	}
	b.ReportMetric(wall.Seconds()/float64(b.N), "build-s/op")
	b.ReportMetric(cpu.Seconds()/float64(b.N), "build-cpu-s/op")
	b.ReportMetric(float64(rss)/1024, "peak-rss-MiB")
}
