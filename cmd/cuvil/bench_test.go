package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// TestBenchProfile runs bench -profile on real models and checks the
// tables' consistency (no timing assertions): one line per node, times not
// negative, the per-op table covering every node once, the shares of the
// wall time adding up to at most 100% (the nodes' times to at most the
// runs' wall time).
func TestBenchProfile(t *testing.T) {
	if testing.Short() {
		t.Skip("builds generated code; skipped in -short mode")
	}
	models := []string{mnist + "/model.onnx"}
	shared := "../../../shared/models"
	for _, m := range []string{"lstm_small_op13", "squeezenet1_1_op13"} {
		models = append(models, filepath.Join(shared, m, "model.onnx"))
	}
	for _, m := range models {
		if _, err := os.Stat(m); err != nil {
			continue // the shared models are not on this machine
		}
		code, stdout, stderr := cuvil(t, "bench", "-model", m, "-threads", "2", "-runs", "3", "-warmup", "1", "-profile", "-top", "1000")
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s%s", m, code, stdout, stderr)
		}
		nodes, byOp, sumPct := parseProfile(t, stdout)
		// Each share is rounded to 0.05%.
		if nodes[0] == 0 || nodes[0] != byOp || sumPct > 100+0.05*float64(nodes[1]) {
			t.Errorf("%s: header says %d nodes, %d node lines, per-op tables count %d nodes, shares add up to %.1f%%\n%s",
				m, nodes[0], nodes[1], byOp, sumPct, stdout)
		}
	}
}

// parseProfile returns [nodes in the header, node lines], the node count of
// the per-op table and the sum of the node lines' shares.
func parseProfile(t *testing.T, out string) ([2]int, int, float64) {
	t.Helper()
	_, prof, ok := strings.Cut(out, "\nprofile: ")
	if !ok {
		t.Fatalf("no profile in\n%s", out)
	}
	header, rest, _ := strings.Cut(prof, "\n")
	var counts [2]int
	counts[0], _ = strconv.Atoi(strings.Fields(header)[0])
	nodeTable, opTable, _ := strings.Cut(rest, "\n\n")
	var sumPct float64
	num := func(s string) float64 {
		v, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
		if err != nil || v < 0 {
			t.Fatalf("bad number %q in\n%s", s, out)
		}
		return v
	}
	for _, line := range strings.Split(strings.TrimSpace(nodeTable), "\n")[1:] {
		f := strings.Fields(line)
		num(f[0])
		sumPct += num(f[1])
		counts[1]++
	}
	byOp := 0
	for _, line := range strings.Split(strings.TrimSpace(opTable), "\n")[1:] {
		f := strings.Fields(line)
		num(f[0])
		num(f[1])
		byOp += int(num(f[2]))
	}
	if counts[0] != counts[1] {
		t.Errorf("header says %d nodes, table lists %d", counts[0], counts[1])
	}
	return counts, byOp, sumPct
}

// TestBenchTrace runs bench -trace on mobilenet (mnist where the shared
// models are absent) with two threads and checks the file against the
// Chrome trace event format: valid JSON, every slice closed (X with ts and
// dur >= 0; no B/E left open), a thread_name for every thread, the slices
// of each thread nested, one slice per node per run inside its run's
// slice, each run no longer than the slowest timed run bench printed, and
// the pool's parts on threads of their own, inside the runs and inside a
// slice of the node they are named after.
func TestBenchTrace(t *testing.T) {
	if testing.Short() {
		t.Skip("builds generated code; skipped in -short mode")
	}
	m := filepath.Join("../../../shared/models", "mobilenet_v2_op13", "model.onnx")
	parallel := true
	if _, err := os.Stat(m); err != nil {
		m, parallel = mnist+"/model.onnx", false
	}
	path := filepath.Join(t.TempDir(), "trace.json")
	const runs = 3
	code, stdout, stderr := cuvil(t, "bench", "-model", m, "-threads", "2", "-runs", strconv.Itoa(runs), "-warmup", "1", "-trace", path)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	var maxMS float64
	if _, rest, ok := strings.Cut(stdout, " max "); ok {
		maxMS, _ = strconv.ParseFloat(strings.Fields(rest)[0], 64)
	}
	if maxMS <= 0 {
		t.Fatalf("no max time in\n%s", stdout)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var tr struct {
		TraceEvents []struct {
			Ph, Name, Cat string
			Pid, Tid      *int
			Ts, Dur       *float64
			Args          map[string]any
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(b, &tr); err != nil {
		t.Fatalf("trace is not valid JSON: %v", err)
	}
	named := map[int]bool{}
	open := map[int]int{}
	type span struct{ ts, end float64 }
	var runSpans []span
	nodeTid, nodes, parts := -1, 0, 0
	for _, e := range tr.TraceEvents {
		if e.Pid == nil || e.Tid == nil {
			t.Fatalf("event %q without pid or tid", e.Name)
		}
		switch e.Ph {
		case "M":
			if e.Name == "thread_name" {
				named[*e.Tid] = true
			}
			if e.Name == "process_name" && e.Args["name"] != modelName(m)+" (threads=2)" {
				t.Errorf("process_name %v, want the model's name", e.Args)
			}
		case "B":
			open[*e.Tid]++
		case "E":
			if open[*e.Tid]--; open[*e.Tid] < 0 {
				t.Fatalf("E without B on thread %d", *e.Tid)
			}
		case "X":
			if e.Ts == nil || e.Dur == nil || *e.Ts < 0 || *e.Dur < 0 {
				t.Fatalf("X event %q: ts or dur missing or negative", e.Name)
			}
			if e.Cat == "run" {
				runSpans = append(runSpans, span{*e.Ts, *e.Ts + *e.Dur})
				nodeTid = *e.Tid
				if *e.Dur > maxMS*1e3+0.01 {
					t.Errorf("%s lasts %.3f us, longer than the slowest timed run (%.3f ms)", e.Name, *e.Dur, maxMS)
				}
			}
		default:
			t.Fatalf("event %q has phase %q", e.Name, e.Ph)
		}
	}
	// Slices of one thread nest (runs hold nodes; nodes and parts follow
	// one another): a partial overlap is drawn wrongly by the viewers.
	byTid := map[int][]span{}
	for _, e := range tr.TraceEvents {
		if e.Ph == "X" {
			byTid[*e.Tid] = append(byTid[*e.Tid], span{*e.Ts, *e.Ts + *e.Dur})
		}
	}
	for tid, ss := range byTid {
		sort.Slice(ss, func(i, j int) bool { return ss[i].ts < ss[j].ts || ss[i].ts == ss[j].ts && ss[i].end > ss[j].end })
		var stack []span
		for _, s := range ss {
			for len(stack) > 0 && stack[len(stack)-1].end <= s.ts+0.002 {
				stack = stack[:len(stack)-1]
			}
			if len(stack) > 0 && s.end > stack[len(stack)-1].end+0.002 {
				t.Errorf("thread %d: slice at %.3f-%.3f us overlaps %.3f-%.3f us without nesting", tid, s.ts, s.end, stack[len(stack)-1].ts, stack[len(stack)-1].end)
			}
			stack = append(stack, s)
		}
	}
	for tid, n := range open {
		if n != 0 {
			t.Errorf("thread %d: %d slices left open", tid, n)
		}
	}
	if len(runSpans) != runs {
		t.Fatalf("%d run slices, want %d", len(runSpans), runs)
	}
	for _, e := range tr.TraceEvents {
		if e.Ph != "X" || e.Cat == "run" {
			continue
		}
		if !named[*e.Tid] {
			t.Errorf("thread %d has slices but no thread_name", *e.Tid)
		}
		inside := false
		for _, r := range runSpans {
			inside = inside || *e.Ts >= r.ts-0.002 && *e.Ts+*e.Dur <= r.end+0.002
		}
		if !inside {
			t.Errorf("%s slice %q at %.3f us (%.3f us) is inside no run", e.Cat, e.Name, *e.Ts, *e.Dur)
		}
		if e.Cat == "part" {
			parts++
			if *e.Tid == nodeTid {
				t.Errorf("part %q on the nodes' thread", e.Name)
			}
			inNode := false // inside a slice of the node it is named after
			for _, n := range tr.TraceEvents {
				if n.Ph == "X" && n.Cat != "part" && n.Cat != "run" && n.Name == e.Name && *e.Ts >= *n.Ts-0.002 && *e.Ts+*e.Dur <= *n.Ts+*n.Dur+0.002 {
					inNode = true
					break
				}
			}
			if !inNode {
				t.Errorf("part %q at %.3f us (%.3f us) is inside no slice of its node", e.Name, *e.Ts, *e.Dur)
			}
			continue
		}
		nodes++
		if *e.Tid != nodeTid || e.Args["op"] != e.Cat || e.Args["outputs"] == nil && e.Cat != "If" && e.Cat != "Loop" && e.Cat != "Scan" {
			t.Errorf("node slice %q: thread %d (runs on %d), args %v", e.Name, *e.Tid, nodeTid, e.Args)
		}
	}
	if nodes == 0 || nodes%runs != 0 {
		t.Errorf("%d node slices over %d runs", nodes, runs)
	}
	if parallel && parts == 0 {
		t.Error("mobilenet at two threads: no pool parts in the trace")
	}
	t.Logf("%s: %d node slices, %d parts, %d bytes", m, nodes, parts, len(b))
}

// TestBenchCPU: bench -cpu prints a CPU time per run that is positive and,
// a run being sequential work on one thread plus the runtime's, at most a
// few times the median wall time (no lower bound: the machine may be
// loaded). Run time against CPU time is no speed claim either way.
func TestBenchCPU(t *testing.T) {
	if testing.Short() {
		t.Skip("builds generated code; skipped in -short mode")
	}
	code, stdout, stderr := cuvil(t, "bench", "-model", mnist+"/model.onnx", "-threads", "1", "-runs", "2000", "-warmup", "2", "-cpu")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	var med, cpu float64
	for _, line := range strings.Split(stdout, "\n") {
		f := strings.Fields(line)
		if len(f) >= 4 && f[2] == "median" {
			med, _ = strconv.ParseFloat(f[3], 64)
		}
		if len(f) >= 2 && f[0] == "cpu" {
			cpu, _ = strconv.ParseFloat(f[1], 64)
		}
	}
	if med <= 0 || cpu <= 0 || cpu > 10*med+5 {
		t.Errorf("median %.3f ms, cpu %.3f ms per run:\n%s", med, cpu, stdout)
	}
}
