package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/cuvil/cuvil/internal/harness"
	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/templates"
)

func cmdBench(args []string, stdout io.Writer) error {
	fs := newFlags("bench")
	model := fs.String("model", "", "ONNX model file")
	threads := fs.Int("threads", runtime.NumCPU(), "GOMAXPROCS for the run")
	runs := fs.Int("runs", 20, "timed runs")
	warmup := fs.Int("warmup", 3, "untimed runs first")
	cpu := fs.Bool("cpu", false, "also print the harness process's CPU time per timed run: the CPU time of a second process that only loads the model and runs the warmup, subtracted (under -goarch: the emulator's host CPU time, a proxy for the emulated work that a loaded machine leaves nearly alone)")
	profile := fs.Bool("profile", false, "also print the time per node and per op type (over the timed runs)")
	top := fs.Int("top", 20, "with -profile, how many nodes to list")
	trace := fs.String("trace", "", "write the timed runs' Chrome trace event JSON to `file` (open it in ui.perfetto.dev or chrome://tracing)")
	deadline := fs.Duration("deadline", 0, "run each timed run under a context with this timeout (Session.RunContext) and report how far past it the cancelled runs returned")
	spin := fs.Duration("spin", time.Millisecond, "how long idle pool workers poll before they block (the session's WithSpin; 0: they block at once)")
	dims := dimFlags{}
	fs.Var(dims, "dim", "size of a symbolic dim, name=V (repeatable; default 1)")
	var pf pipelineFlags
	fs.StringVar(&pf.debug, "d", "", "pass debugging: pass/off|dump|time, comma separated")
	fs.Var(&pf.winograd, "winograd", winogradUsage)
	targetFlags(fs)
	pf.quantFlags(fs)
	pf.precisionFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected arguments %q", fs.Args())
	}
	if *runs < 1 || *threads < 1 || *warmup < 0 || *deadline < 0 || *spin < 0 {
		return usagef("-runs and -threads must be at least 1, -warmup, -deadline and -spin at least 0")
	}
	m, _, err := load(*model, pf, stdout)
	if err != nil {
		return err
	}
	ds := &dataSet{}
	r := rand.New(rand.NewSource(1))
	for _, v := range m.Graph.Inputs {
		t, err := randomTensor(v, dims, r)
		if err != nil {
			return err
		}
		ds.inputs = append(ds.inputs, tensorData(t))
	}
	h, err := harness.New()
	if err != nil {
		return err
	}
	h.Target = buildTarget
	defer h.Close()
	ctx := context.Background()
	if err := h.Add("model", m); err != nil {
		return err
	}
	exe, err := h.Build(ctx)
	if err != nil {
		return err
	}
	if reason, ok := h.Failed["model"]; ok {
		return fmt.Errorf("%s", reason)
	}
	job := harness.Job{Model: "model", Out: h.Dir, Warmup: *warmup, Runs: *runs, Profile: *profile, Deadline: *deadline, Spin: *spin}
	if *spin == 0 {
		job.Spin = -1
	}
	if *trace != "" {
		abs, err := filepath.Abs(*trace)
		if err != nil {
			return err
		}
		job.Trace = abs
	}
	for k, t := range ds.inputs {
		path := filepath.Join(h.Dir, fmt.Sprintf("input_%d.cuvt", k))
		if err := harness.WriteDataFile(path, t, ir.Undefined); err != nil {
			return err
		}
		job.Inputs = append(job.Inputs, path)
	}
	res, err := h.Run(ctx, exe, []harness.Job{job}, *threads)
	if err != nil {
		return err
	}
	if res[0].Err != "" {
		return fmt.Errorf("%s", res[0].Err)
	}
	var cpuPerRun time.Duration
	if *cpu && *runs > 0 {
		all := h.CPU
		base := job
		base.Runs, base.Profile, base.Trace, base.Deadline = 0, false, "", 0
		r0, err := h.Run(ctx, exe, []harness.Job{base}, *threads)
		if err != nil {
			return err
		}
		if r0[0].Err != "" {
			return fmt.Errorf("%s", r0[0].Err)
		}
		// With no warmup the harness still runs the model once first.
		extra := 0
		if *warmup < 1 {
			extra = 1
		}
		if n := *runs - extra; n > 0 {
			cpuPerRun = (all - (h.CPU - all)) / time.Duration(n)
		}
	}
	times := append([]time.Duration(nil), res[0].Times...)
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	ms := func(d time.Duration) string { return fmt.Sprintf("%.3f", float64(d)/float64(time.Millisecond)) }
	median := times[len(times)/2]
	if len(times)%2 == 0 {
		median = (times[len(times)/2-1] + times[len(times)/2]) / 2
	}
	fmt.Fprintf(stdout, "%s threads=%d median %s ms min %s ms max %s ms\n", modelName(*model), *threads, ms(median), ms(times[0]), ms(times[len(times)-1]))
	if *cpu && *runs > 0 {
		fmt.Fprintf(stdout, "cpu %s ms per run (harness process user+sys, less a load-and-warmup-only process)\n", ms(cpuPerRun))
	}
	if *deadline > 0 {
		printDeadline(stdout, *deadline, res[0].Times, res[0].Cancelled)
	}
	if *profile {
		printProfile(stdout, res[0].Profile, res[0].Times, *top)
	}
	if *trace != "" {
		if err := nameTraceProcess(*trace, fmt.Sprintf("%s (threads=%d)", modelName(*model), *threads)); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "trace of the %d timed runs written to %s (open it in ui.perfetto.dev or chrome://tracing)\n", *runs, *trace)
	}
	return nil
}

// printProfile prints the nodes that took the most time and the totals per
// op type, as ms per run and as a share of the timed runs' wall time.
func printProfile(w io.Writer, nodes []harness.NodeTime, times []time.Duration, top int) {
	var wall, sum time.Duration
	for _, t := range times {
		wall += t
	}
	for _, n := range nodes {
		sum += n.Total
	}
	runs := float64(len(times))
	perRun := func(d time.Duration) string { return fmt.Sprintf("%8.3f", float64(d)/float64(time.Millisecond)/runs) }
	pct := func(d time.Duration) string { return fmt.Sprintf("%5.1f%%", 100*float64(d)/float64(max(wall, 1))) }
	fmt.Fprintf(w, "\nprofile: %d nodes, %s ms per run in nodes, %s of the wall time (%d runs)\n", len(nodes), strings.TrimSpace(perRun(sum)), strings.TrimSpace(pct(sum)), len(times))

	sorted := append([]harness.NodeTime(nil), nodes...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Total > sorted[j].Total })
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  ms/run\t     %%\top\tnode\n")
	for _, n := range sorted[:min(top, len(sorted))] {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", perRun(n.Total), pct(n.Total), n.Op, n.Name)
	}
	tw.Flush()

	type opTotal struct {
		op    string
		nodes int
		total time.Duration
	}
	byOp := map[string]*opTotal{}
	var ops []*opTotal
	for _, n := range nodes {
		o := byOp[n.Op]
		if o == nil {
			o = &opTotal{op: n.Op}
			byOp[n.Op] = o
			ops = append(ops, o)
		}
		o.nodes++
		o.total += n.Total
	}
	sort.SliceStable(ops, func(i, j int) bool { return ops[i].total > ops[j].total })
	fmt.Fprintln(w)
	fmt.Fprintf(tw, "  ms/run\t     %%\tnodes\top\n")
	for _, o := range ops {
		fmt.Fprintf(tw, "%s\t%s\t%5d\t%s\n", perRun(o.total), pct(o.total), o.nodes, o.op)
	}
	tw.Flush()
}

// modelName is the model file's name, or its folder's when the file is
// the conventional model.onnx.
func modelName(path string) string {
	base := filepath.Base(path)
	if base == "model.onnx" {
		if dir := filepath.Base(filepath.Dir(path)); dir != "." && dir != string(filepath.Separator) {
			return dir
		}
	}
	return strings.TrimSuffix(base, ".onnx")
}

// randomTensor makes an input at its declared shape (symbolic dims from
// dims, else 1): floats uniform in [-1, 1), integers in [0, 4).
func randomTensor(v *ir.Value, dims dimFlags, r *rand.Rand) (*ir.Tensor, error) {
	if !v.Type.Known() {
		return nil, fmt.Errorf("input %q has type %s; bench needs a known dtype and rank", v.Name, v.Type)
	}
	t := &ir.Tensor{Name: v.Name, DType: v.Type.DType}
	n := int64(1)
	for _, d := range v.Type.Shape {
		size := d.Size
		if !d.IsConst() {
			size = 1
			if s, ok := dims[d.Sym]; ok {
				size = int64(s)
			}
		}
		t.Shape = append(t.Shape, size)
		n *= size
	}
	size := int64(t.DType.Size())
	if t.DType == ir.String {
		t.Strings = make([]string, n)
		for i := range t.Strings {
			t.Strings[i] = string(rune('a' + r.Intn(26)))
		}
		return t, nil
	}
	t.Raw = make([]byte, n*size)
	for i := int64(0); i < n; i++ {
		b := t.Raw[i*size : (i+1)*size]
		switch t.DType {
		case ir.F32:
			putLE(b, uint64(math.Float32bits(float32(r.Float64()*2-1))))
		case ir.F64:
			putLE(b, math.Float64bits(r.Float64()*2-1))
		case ir.F16:
			putLE(b, uint64(templates.F32ToF16(float32(r.Float64()*2-1))))
		case ir.BF16:
			putLE(b, uint64(templates.F32ToBF16(float32(r.Float64()*2-1))))
		case ir.I2:
			putLE(b, uint64(r.Intn(2))) // 0 or 1: int2 holds -2..1
		default:
			putLE(b, uint64(r.Intn(4)))
		}
	}
	return t, nil
}

func putLE(b []byte, v uint64) {
	for i := range b {
		b[i] = byte(v >> (8 * i))
	}
}

// printDeadline reports how many timed runs the deadline cancelled and how
// long after it they returned (the cancellation latency).
func printDeadline(w io.Writer, deadline time.Duration, times []time.Duration, cancelled []bool) {
	var late []time.Duration
	for i, c := range cancelled {
		if c && i < len(times) {
			late = append(late, max(times[i]-deadline, 0))
		}
	}
	fmt.Fprintf(w, "deadline %s: %d of %d runs cancelled", deadline, len(late), len(times))
	if len(late) > 0 {
		sort.Slice(late, func(i, j int) bool { return late[i] < late[j] })
		us := func(d time.Duration) string { return fmt.Sprintf("%.0f us", float64(d)/float64(time.Microsecond)) }
		fmt.Fprintf(w, ", returned after it by median %s, p90 %s, max %s", us(late[len(late)/2]), us(late[len(late)*9/10]), us(late[len(late)-1]))
	}
	fmt.Fprintln(w)
}

// nameTraceProcess renames the trace's process (the generated package's
// name, which the harness makes up) after the model: the first event of a
// Session.WriteTrace file is its process_name.
func nameTraceProcess(path, name string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	const meta = `{"ph":"M","pid":1,"tid":0,"name":"process_name","args":{"name":`
	i := bytes.Index(b, []byte(meta))
	if i < 0 {
		return nil
	}
	j := bytes.Index(b[i:], []byte("}}"))
	if j < 0 {
		return nil
	}
	out := append(append(append([]byte{}, b[:i+len(meta)]...), strconv.Quote(name)...), b[i+j:]...)
	return os.WriteFile(path, out, 0o644)
}
