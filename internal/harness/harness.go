package harness

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/cuvil/cuvil/gen"
	"github.com/cuvil/cuvil/ir"
	"github.com/dave/jennifer/jen"
)

//go:embed harnessmain/main.go
var harnessMain []byte

// Harness is a temporary Go module (module cuvilrun) holding one generated
// package per model and one main package that imports them all, so that
// any number of models cost one go build. The cuvil command uses it for
// run, check, conformance and bench.
type Harness struct {
	Dir    string
	models map[string]*harnessModel // by key
	order  []string
	// Failed holds models dropped because their package did not compile,
	// with the compiler's first error line.
	Failed map[string]string
	// Target is the GOARCH and build tags the harness is built for.
	Target Target
	// CPU is the CPU time (user+sys) of every harness process Run started
	// so far, an emulator's own under a foreign Target.
	CPU time.Duration
}

// Target selects a cross build: GOARCH (and GOOS) set and not the host's
// builds the harness with them (CGO_ENABLED=0) and runs it under a
// user-mode emulator (Exec, default qemu-<arch>-static, else qemu-<arch>,
// from PATH; for GOOS=wasip1 Node.js's WASI through the runner script
// wasi_node.js); Tags are go build -tags (e.g. purego). GOARCH=arm builds
// for GOARM (default $GOARM, else 7); GOARCH=wasm defaults GOOS to wasip1. TestCross
// runs generated packages' go test under the same emulators (ExecArgs).
type Target struct {
	GOOS   string
	GOARCH string
	GOARM  string
	Tags   string
	Exec   string
}

//go:embed wasi_node.js
var wasiRunner []byte

// goos is the GOOS the target builds for.
func (t Target) goos() string {
	if t.GOOS != "" {
		return t.GOOS
	}
	if t.GOARCH == "wasm" {
		return "wasip1"
	}
	return runtime.GOOS
}

// foreign reports whether t builds for another architecture or OS than the
// host.
func (t Target) foreign() bool {
	return t.GOARCH != "" && t.GOARCH != runtime.GOARCH || t.goos() != runtime.GOOS
}

// Env is what t adds to a go build's or go test's environment.
func (t Target) Env() []string {
	var env []string
	if t.GOARCH != "" {
		env = append(env, "GOARCH="+t.GOARCH)
	}
	if t.goos() != runtime.GOOS {
		env = append(env, "GOOS="+t.goos())
	}
	if t.GOARCH == "arm" {
		arm := t.GOARM
		if arm == "" {
			arm = os.Getenv("GOARM")
		}
		if arm == "" {
			arm = "7"
		}
		env = append(env, "GOARM="+arm)
	}
	if t.foreign() {
		env = append(env, "CGO_ENABLED=0")
	}
	return env
}

// ExecArgs returns the command (program and arguments) that runs a binary
// built for t here, nil for the host; dir is where the WASI runner script
// is written when t needs it.
func (t Target) ExecArgs(dir string) ([]string, error) {
	if !t.foreign() {
		return nil, nil
	}
	if t.Exec != "" {
		return strings.Fields(t.Exec), nil
	}
	switch t.goos() {
	case "wasip1":
		node, err := exec.LookPath("node")
		if err != nil {
			return nil, fmt.Errorf("harness: GOOS=wasip1 needs Node.js (node, with node:wasi; Debian: apt-get install nodejs) on PATH")
		}
		script := filepath.Join(dir, "wasi_node.js")
		if err := os.WriteFile(script, wasiRunner, 0o644); err != nil {
			return nil, err
		}
		// Node 20's fast API calls into WASI's poll_oneoff crash under GC
		// (an assertion in node_wasi.cc, or a segfault): turn them off.
		return []string{node, "--no-warnings", "--no-turbo-fast-api-calls", script}, nil
	case runtime.GOOS:
	default:
		return nil, fmt.Errorf("harness: no emulator for GOOS=%s (set Target.Exec)", t.goos())
	}
	emu, err := t.emulator()
	if err != nil {
		return nil, err
	}
	return []string{emu}, nil
}

// emulator returns the qemu-user command that runs a binary of t.GOARCH
// here.
func (t Target) emulator() (string, error) {
	if t.Exec != "" {
		return t.Exec, nil
	}
	arch := map[string]string{"arm64": "aarch64", "amd64": "x86_64", "386": "i386", "arm": "arm", "loong64": "loongarch64", "ppc64le": "ppc64le", "mipsle": "mipsel", "mips64le": "mips64el"}[t.GOARCH]
	if arch == "" {
		arch = t.GOARCH
	}
	for _, name := range []string{"qemu-" + arch + "-static", "qemu-" + arch} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("harness: GOARCH=%s needs qemu-%s-static (Debian: apt-get install qemu-user-static) or qemu-%s on PATH", t.GOARCH, arch, arch)
}

type harnessModel struct {
	key      string
	pkg      string // package (and folder) name, m0001...
	inNames  []string
	inTypes  []ir.DType
	outNames []string
	files    map[string][]byte
}

// New creates the module in a fresh temporary folder.
func New() (*Harness, error) {
	removeStaleHarnesses()
	dir, err := os.MkdirTemp("", "cuvilrun-")
	if err != nil {
		return nil, err
	}
	gen.TrackTempDir(dir)
	return &Harness{Dir: dir, models: map[string]*harnessModel{}, Failed: map[string]string{}}, nil
}

// Close deletes the module.
func (h *Harness) Close() error {
	gen.UntrackTempDir(h.Dir)
	return os.RemoveAll(h.Dir)
}

// Add generates a package for m under key (any string naming the model).
func (h *Harness) Add(key string, m *ir.Model) error {
	if _, dup := h.models[key]; dup {
		return fmt.Errorf("harness: model %q added twice", key)
	}
	pkg := fmt.Sprintf("m%04d", len(h.order))
	files, err := gen.Generate(m, gen.Options{Package: pkg, NoTest: true})
	if err != nil {
		return err
	}
	hm := &harnessModel{key: key, pkg: pkg, files: files}
	var ins, outs []string
	for _, v := range m.Graph.Inputs {
		ins = append(ins, v.Name)
		hm.inTypes = append(hm.inTypes, v.Type.DType)
	}
	for _, v := range m.Graph.Outputs {
		outs = append(outs, v.Name)
	}
	hm.inNames, hm.outNames = gen.FieldNames(ins), gen.FieldNames(outs)
	h.models[key] = hm
	h.order = append(h.order, key)
	return nil
}

// Has reports whether key was added and not dropped.
func (h *Harness) Has(key string) bool {
	_, ok := h.models[key]
	return ok
}

// goVersion is the go directive for the module: the toolchain's language
// version, since copied kernels may use recent language features.
func goVersion() string {
	v := strings.TrimPrefix(runtime.Version(), "go")
	parts := strings.SplitN(v, ".", 3)
	if len(parts) >= 2 {
		if _, err := strconv.Atoi(parts[1]); err == nil {
			return parts[0] + "." + parts[1]
		}
	}
	return "1.22"
}

func (h *Harness) writeMain() error {
	f := jen.NewFile("main")
	f.HeaderComment("// Code generated by cuvil " + gen.Version + "; DO NOT EDIT.")
	f.Func().Id("init").Params().BlockFunc(func(g *jen.Group) {
		for _, key := range h.order {
			if hm, ok := h.models[key]; ok {
				g.Id("models").Index(jen.Lit(key)).Op("=").Id("run_" + hm.pkg)
			}
		}
	})
	for _, key := range h.order {
		hm, ok := h.models[key]
		if !ok {
			continue
		}
		path := "cuvilrun/" + hm.pkg
		f.ImportName(path, hm.pkg)
		fail := jen.Return(jen.Nil(), jen.Nil(), jen.Nil(), jen.Nil(), jen.Err())
		f.Func().Id("run_"+hm.pkg).Params(jen.Id("ins").Index().Op("*").Id("tensorData"), jen.Id("warmup"), jen.Id("runs").Int(), jen.Id("prof").Bool(), jen.Id("trace").String(), jen.Id("deadline"), jen.Id("spin").Qual("time", "Duration")).
			Params(jen.Index().Op("*").Id("tensorData"), jen.Index().Qual("time", "Duration"), jen.Index().Bool(), jen.Index().Id("nodeTime"), jen.Error()).BlockFunc(func(g *jen.Group) {
			g.If(jen.Len(jen.Id("ins")).Op("!=").Lit(len(hm.inNames))).Block(
				jen.Return(jen.Nil(), jen.Nil(), jen.Nil(), jen.Nil(), jen.Qual("fmt", "Errorf").Call(jen.Lit(fmt.Sprintf("model has %d inputs, got %%d", len(hm.inNames))), jen.Len(jen.Id("ins")))),
			)
			g.List(jen.Id("m"), jen.Err()).Op(":=").Qual(path, "New").Call()
			g.If(jen.Err().Op("!=").Nil()).Block(fail)
			g.Var().Id("opts").Index().Qual(path, "Option")
			g.If(jen.Id("prof")).Block(jen.Id("opts").Op("=").Append(jen.Id("opts"), jen.Qual(path, "WithProfile").Call()))
			g.If(jen.Id("trace").Op("!=").Lit("")).Block(jen.Id("opts").Op("=").Append(jen.Id("opts"), jen.Qual(path, "WithTrace").Call()))
			g.If(jen.Id("spin").Op("!=").Lit(0)).Block(jen.Id("opts").Op("=").Append(jen.Id("opts"), jen.Qual(path, "WithSpin").Call(jen.Id("spin"))))
			g.Id("s").Op(":=").Id("m").Dot("NewSession").Call(jen.Id("opts").Op("..."))
			g.Defer().Id("s").Dot("Close").Call()
			fields := make([]jen.Code, len(hm.inNames))
			for i, name := range hm.inNames {
				fields[i] = jen.Id(name).Op(":").Id("in_" + hm.pkg).Call(jen.Id("ins").Index(jen.Lit(i)))
			}
			g.Id("in").Op(":=").Qual(path, "Input").Values(fields...)
			g.Var().Id("out").Qual(path, "Output")
			g.Var().Id("cancelled").Index().Bool()
			g.List(jen.Id("times"), jen.Err()).Op(":=").Id("timeRuns").Call(jen.Id("warmup"), jen.Id("runs"), jen.Func().Params(jen.Id("timed").Bool()).Error().Block(
				jen.Var().Err().Error(),
				jen.If(jen.Op("!").Id("timed").Op("||").Id("deadline").Op("<=").Lit(0)).Block(
					jen.List(jen.Id("out"), jen.Err()).Op("=").Id("s").Dot("Run").Call(jen.Id("in")),
					jen.Return(jen.Err()),
				),
				jen.List(jen.Id("ctx"), jen.Id("cancel")).Op(":=").Qual("context", "WithTimeout").Call(jen.Qual("context", "Background").Call(), jen.Id("deadline")),
				jen.List(jen.Id("_"), jen.Err()).Op("=").Id("s").Dot("RunContext").Call(jen.Id("ctx"), jen.Id("in")),
				jen.Id("cancel").Call(),
				jen.Id("late").Op(":=").Qual("errors", "Is").Call(jen.Err(), jen.Qual("context", "DeadlineExceeded")),
				jen.Id("cancelled").Op("=").Append(jen.Id("cancelled"), jen.Id("late")),
				jen.If(jen.Id("late")).Block(jen.Return(jen.Nil())),
				jen.Return(jen.Err()),
			), jen.Id("s").Dot("ResetProfile"))
			g.If(jen.Err().Op("!=").Nil()).Block(fail)
			g.Comment("A cancelled run leaves the session's outputs half written: run once more.")
			g.If(jen.Id("deadline").Op(">").Lit(0)).Block(
				jen.If(jen.List(jen.Id("out"), jen.Err()).Op("=").Id("s").Dot("Run").Call(jen.Id("in")), jen.Err().Op("!=").Nil()).Block(fail),
			)
			g.If(jen.Id("trace").Op("!=").Lit("")).Block(
				jen.If(jen.Err().Op(":=").Id("writeTrace").Call(jen.Id("trace"), jen.Id("s").Dot("WriteTrace")), jen.Err().Op("!=").Nil()).Block(fail),
			)
			g.Var().Id("nodes").Index().Id("nodeTime")
			g.For(jen.List(jen.Id("_"), jen.Id("p")).Op(":=").Range().Id("s").Dot("Profile").Call()).Block(
				jen.Id("nodes").Op("=").Append(jen.Id("nodes"), jen.Id("nodeTime").Values(jen.Id("p").Dot("Name"), jen.Id("p").Dot("Op"), jen.Id("p").Dot("Runs"), jen.Id("p").Dot("Total").Dot("Nanoseconds").Call())),
			)
			outs := make([]jen.Code, len(hm.outNames))
			for i, name := range hm.outNames {
				outs[i] = jen.Id("out_" + hm.pkg).Call(jen.Id("out").Dot(name))
			}
			g.Return(jen.Index().Op("*").Id("tensorData").Values(outs...), jen.Id("times"), jen.Id("cancelled"), jen.Id("nodes"), jen.Nil())
		})
	}
	var buf bytes.Buffer
	if err := f.Render(&buf); err != nil {
		return fmt.Errorf("harness: rendering models.go: %v", err)
	}
	for _, key := range h.order {
		if hm, ok := h.models[key]; ok {
			fmt.Fprintf(&buf, convTemplate, hm.pkg)
		}
	}
	if err := os.WriteFile(filepath.Join(h.Dir, "models.go"), buf.Bytes(), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(h.Dir, "main.go"), harnessMain, 0o644)
}

// convTemplate converts between the harness's tensorData and one generated
// package's Tensor (%[1]s: the package), recursively for sequences and
// optionals and maps (a Tensor whose Data is a *Sequence, *OptionalValue or
// *MapValue).
const convTemplate = `
func in_%[1]s(d *tensorData) *%[1]s.Tensor {
	switch d.Kind {
	case kindSequence:
		var elems []*%[1]s.Tensor
		for _, e := range d.Data.([]*tensorData) {
			elems = append(elems, in_%[1]s(e))
		}
		return %[1]s.NewSequence(%[1]s.DType(d.DType), elems...)
	case kindOptional:
		var v *%[1]s.Tensor
		if e := d.Data.(*tensorData); e != nil {
			v = in_%[1]s(e)
		}
		return %[1]s.NewOptional(%[1]s.DType(d.DType), v)
	case kindMap:
		kv := d.Data.([]*tensorData)
		return &%[1]s.Tensor{DType: %[1]s.DType(d.DType), Shape: []int{}, Data: &%[1]s.MapValue{Keys: *in_%[1]s(kv[0]), Values: *in_%[1]s(kv[1])}}
	}
	return &%[1]s.Tensor{DType: %[1]s.DType(d.DType), Shape: d.Shape, Data: d.Data}
}

func out_%[1]s(t *%[1]s.Tensor) *tensorData {
	if t == nil {
		return nil
	}
	switch v := t.Data.(type) {
	case *%[1]s.Sequence:
		elems := make([]*tensorData, len(v.Elems))
		for i, e := range v.Elems {
			elems[i] = out_%[1]s(e)
		}
		return &tensorData{Kind: kindSequence, DType: uint8(t.DType), Shape: []int{}, Data: elems}
	case *%[1]s.OptionalValue:
		var e *tensorData
		if v.Value != nil {
			e = out_%[1]s(v.Value)
		}
		return &tensorData{Kind: kindOptional, DType: uint8(t.DType), Shape: []int{}, Data: e}
	case *%[1]s.MapValue:
		return &tensorData{Kind: kindMap, DType: uint8(t.DType), Shape: []int{}, Data: []*tensorData{out_%[1]s(&v.Keys), out_%[1]s(&v.Values)}}
	}
	return &tensorData{DType: uint8(t.DType), Shape: t.Shape, Data: t.Data}
}
`

// goCommand returns the go tool: the one on PATH, else GOROOT's.
func goCommand() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}

func buildEnv() []string {
	// The module lives outside any workspace and needs no network; the
	// default GOCACHE is kept so rebuilds are incremental.
	return append(os.Environ(), "GOWORK=off", "GOFLAGS=-buildvcs=false", "GOTOOLCHAIN=local", "GO111MODULE=on")
}

var failedPkgRE = regexp.MustCompile(`(?:^|[\s/])(m\d{4,})/[^\s:]+\.go:\d+`)
var failedHeaderRE = regexp.MustCompile(`^# cuvilrun/(m\d{4,})`)

// Build writes the module and builds it into an executable. Packages that
// fail to compile are dropped (recorded in Failed with the first compiler
// error) and the rest rebuilt, so one bad model does not sink a run.
func (h *Harness) Build(ctx context.Context) (string, error) {
	if h.Target.foreign() {
		// Fail before the (long) build when the emulator is missing.
		if _, err := h.Target.ExecArgs(h.Dir); err != nil {
			return "", err
		}
	}
	if err := os.WriteFile(filepath.Join(h.Dir, "go.mod"), []byte("module cuvilrun\n\ngo "+goVersion()+"\n"), 0o644); err != nil {
		return "", err
	}
	for _, key := range h.order {
		hm := h.models[key]
		if err := gen.WritePackage(filepath.Join(h.Dir, hm.pkg), hm.files); err != nil {
			return "", err
		}
		hm.files = nil // written; free the memory
	}
	exe := filepath.Join(h.Dir, "cuvilrun")
	if runtime.GOOS == "windows" {
		exe += ".exe"
	}
	for attempt := 0; ; attempt++ {
		if err := h.writeMain(); err != nil {
			return "", err
		}
		args := []string{"build", "-trimpath"}
		if h.Target.Tags != "" {
			args = append(args, "-tags", h.Target.Tags)
		}
		cmd := exec.CommandContext(ctx, goCommand(), append(args, "-o", exe, ".")...)
		cmd.Dir = h.Dir
		cmd.Env = buildEnv()
		cmd.Env = append(cmd.Env, h.Target.Env()...)
		out, err := cmd.CombinedOutput()
		if err == nil {
			return exe, nil
		}
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		bad := h.parseFailures(out)
		if len(bad) == 0 {
			return "", fmt.Errorf("harness: go build failed:\n%s", out)
		}
		for pkg, reason := range bad {
			for key, hm := range h.models {
				if hm.pkg == pkg {
					h.Failed[key] = "build: " + reason
					delete(h.models, key)
				}
			}
			os.RemoveAll(filepath.Join(h.Dir, pkg))
		}
	}
}

// parseFailures maps each package named in go build's output to its first
// error line.
func (h *Harness) parseFailures(out []byte) map[string]string {
	bad := map[string]string{}
	current := ""
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := failedHeaderRE.FindStringSubmatch(line); m != nil {
			current = m[1]
			continue
		}
		pkg := current
		if m := failedPkgRE.FindStringSubmatch(line); m != nil {
			pkg = m[1]
		}
		if pkg == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if _, seen := bad[pkg]; !seen {
			bad[pkg] = strings.TrimSpace(line)
		}
	}
	return bad
}

// Job is one run of one model: inputs in the harness tensor format, outputs
// written to Out as output_K.cuvt.
type Job struct {
	Model  string   `json:"model"`
	Inputs []string `json:"inputs"`
	Out    string   `json:"out"`
	Warmup int      `json:"warmup"`
	Runs   int      `json:"runs"`
	// Profile runs the session WithProfile and returns the timed runs'
	// per-node profile in Result.Profile.
	Profile bool `json:"profile,omitempty"`
	// Trace, a path, runs the session WithTrace and writes the timed runs'
	// Chrome trace event JSON there (Session.WriteTrace).
	Trace string `json:"trace,omitempty"`
	// Deadline > 0 runs each timed run through Session.RunContext under a
	// context with this timeout; Result.Cancelled says which it stopped.
	Deadline time.Duration `json:"deadline_ns,omitempty"`
	// Spin, when not 0, sets the session's WithSpin (negative: no spin).
	Spin time.Duration `json:"spin_ns,omitempty"`
}

// Result is what a job produced.
type Result struct {
	Outputs int    // number of output files written
	Err     string // empty on success
	Times   []time.Duration
	// Cancelled[i] says the deadline stopped timed run i (Job.Deadline).
	Cancelled []bool
	Profile   []NodeTime // the main graph's nodes in order, with Job.Profile
}

// NodeTime is one node's wall time summed over a job's timed runs.
type NodeTime struct {
	Name  string        `json:"name"`
	Op    string        `json:"op"`
	Runs  int           `json:"runs"`
	Total time.Duration `json:"total_ns"`
}

type result struct {
	Job       int        `json:"job"`
	Outputs   int        `json:"outputs"`
	Error     string     `json:"error,omitempty"`
	TimesNS   []int64    `json:"times_ns,omitempty"`
	Cancelled []bool     `json:"cancelled,omitempty"`
	Profile   []NodeTime `json:"profile,omitempty"`
}

// Run runs the built executable on jobs; threads > 0 sets GOMAXPROCS. A
// job that crashes the process (a fatal runtime error that recover cannot
// catch) is reported as failed and the remaining jobs run in a new process.
func (h *Harness) Run(ctx context.Context, exe string, jobs []Job, threads int) ([]Result, error) {
	results := make([]Result, len(jobs))
	for start := 0; start < len(jobs); {
		done, crash, err := h.runBatch(ctx, exe, jobs[start:], threads, results[start:])
		if err != nil {
			return nil, err
		}
		start += done
		if start < len(jobs) {
			results[start].Err = "harness process ended: " + crash
			start++
		}
	}
	return results, nil
}

// runBatch runs jobs in one process and returns how many finished in
// order before it ended, and the process's last words when it crashed.
func (h *Harness) runBatch(ctx context.Context, exe string, jobs []Job, threads int, results []Result) (int, string, error) {
	manifest := filepath.Join(h.Dir, "manifest.json")
	b, err := json.Marshal(jobs)
	if err != nil {
		return 0, "", err
	}
	if err := os.WriteFile(manifest, b, 0o644); err != nil {
		return 0, "", err
	}
	args := []string{exe, "-manifest", manifest, "-threads", strconv.Itoa(threads)}
	emu, err := h.Target.ExecArgs(h.Dir)
	if err != nil {
		return 0, "", err
	}
	args = append(emu, args...)
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, runErr := cmd.Output()
	if ps := cmd.ProcessState; ps != nil {
		h.CPU += ps.UserTime() + ps.SystemTime()
	}
	if ctx.Err() != nil {
		return 0, "", ctx.Err()
	}
	done := 0
	sc := bufio.NewScanner(bytes.NewReader(stdout))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var r result
		if json.Unmarshal(sc.Bytes(), &r) != nil || r.Job != done {
			break
		}
		results[done] = Result{Outputs: r.Outputs, Err: r.Error, Profile: r.Profile, Cancelled: r.Cancelled}
		for _, ns := range r.TimesNS {
			results[done].Times = append(results[done].Times, time.Duration(ns))
		}
		done++
	}
	if done == len(jobs) {
		return done, "", nil
	}
	crash := firstLine(strings.TrimSpace(stderr.String()))
	if runErr != nil {
		crash = strings.TrimSpace(runErr.Error() + ": " + crash)
	}
	if crash == "" {
		crash = "no result printed"
	}
	return done, crash, nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// Keys returns the models in the order they were added, without dropped
// ones.
func (h *Harness) Keys() []string {
	var out []string
	for _, k := range h.order {
		if _, ok := h.models[k]; ok {
			out = append(out, k)
		}
	}
	return out
}

// harnessStaleAge is how old a build module must be before a new harness
// takes it for the leftover of a killed command (a conformance run keeps
// its module for under an hour).
const harnessStaleAge = 24 * time.Hour

// removeStaleHarnesses removes build modules (cuvilrun-* in the temporary
// folder) that a killed command left behind.
func removeStaleHarnesses() {
	old, _ := filepath.Glob(filepath.Join(os.TempDir(), "cuvilrun-*"))
	for _, dir := range old {
		if info, err := os.Lstat(dir); err == nil && info.IsDir() && time.Since(info.ModTime()) > harnessStaleAge {
			os.RemoveAll(dir)
		}
	}
}
