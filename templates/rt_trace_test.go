package templates

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// sleepTask is a parallel section whose parts take a little time each.
type sleepTask struct{}

func (sleepTask) runPart(i, parts int) { time.Sleep(200 * time.Microsecond) }

// TestTraceRuntime drives a Profiler and a WorkPool made WithTrace the way
// a generated session does (Start, sections, Mark per node) and checks the
// written trace: valid JSON, the node slices with their shapes, parts on
// their own threads and each inside the node that ran them; without the
// option nothing is recorded and Run's part loop allocates nothing.
func TestTraceRuntime(t *testing.T) {
	opts := []Option{WithTrace(), WithThreads(3)}
	pool := NewWorkPool(opts...)
	defer pool.Close()
	prof := NewProfiler([]NodeProfile{{Name: "a", Op: "Conv"}, {Name: "b", Op: "If"}}, opts...)
	x := &Tensor{Shape: []int{1, 3, 7}}
	nodes := []Node{{In: []*Tensor{x, nil}, Out: []*Tensor{{}}}}
	prof.TraceNodes(pool, []int32{0, -1}, nodes)
	for r := 0; r < 2; r++ {
		prof.Start()
		pool.Run(4, sleepTask{})
		prof.Mark(0)
		prof.Mark(1)
	}
	var buf bytes.Buffer
	if err := prof.WriteTrace(&buf, "p"); err != nil {
		t.Fatal(err)
	}
	var tr struct {
		TraceEvents []struct {
			Ph, Name, Cat string
			Tid           int
			Ts, Dur       float64
			Args          map[string]any
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(buf.Bytes(), &tr); err != nil {
		t.Fatalf("%v\n%s", err, buf.Bytes())
	}
	count := map[string]int{}
	for _, e := range tr.TraceEvents {
		if e.Ph != "X" {
			continue
		}
		count[e.Cat]++
		switch e.Cat {
		case "Conv":
			if e.Args["inputs"] != "1x3x7, -" || e.Args["outputs"] != "[]" {
				t.Errorf("node a's args %v", e.Args)
			}
		case "part":
			if e.Tid < traceTidParts || e.Name != "a" {
				t.Errorf("part %q on thread %d", e.Name, e.Tid)
			}
		}
	}
	if count["run"] != 2 || count["Conv"] != 2 || count["If"] != 2 || count["part"] != 8 {
		t.Errorf("slices by category %v, want 2 runs, 2 of each node, 8 parts", count)
	}
	prof.Reset()
	if buf.Reset(); prof.WriteTrace(&buf, "p") != nil || bytes.Contains(buf.Bytes(), []byte(`"ph":"X"`)) {
		t.Errorf("after Reset the trace still has slices:\n%s", buf.Bytes())
	}

	plain := NewWorkPool(WithThreads(3))
	defer plain.Close()
	if plain.trace != nil || NewProfiler(nil, WithProfile()).Tracing() {
		t.Error("a pool or profiler made without WithTrace traces")
	}
	var task nopTask
	if a := testing.AllocsPerRun(20, func() { plain.Run(3, &task) }); a != 0 {
		t.Errorf("an untraced pool section allocates %v times", a)
	}
}

type nopTask struct{}

func (*nopTask) runPart(i, parts int) {}

// TestTraceProblems: the generated tests' trace checker accepts a good
// trace (the runtime's own, and a hand-written one) and names what is
// wrong in bad ones.
func TestTraceProblems(t *testing.T) {
	opts := []Option{WithTrace(), WithThreads(2)}
	pool := NewWorkPool(opts...)
	defer pool.Close()
	nodes := []NodeProfile{{Name: "a", Op: "Conv"}, {Name: "b", Op: "Relu"}}
	prof := NewProfiler(nodes, opts...)
	prof.TraceNodes(pool, []int32{-1, -1}, nil)
	start := time.Now()
	for range 3 {
		prof.Start()
		pool.Run(4, sleepTask{})
		prof.Mark(0)
		prof.Mark(1)
	}
	wall := time.Since(start)
	var buf bytes.Buffer
	if err := prof.WriteTrace(&buf, "p"); err != nil {
		t.Fatal(err)
	}
	if p, parts := cuvilTraceProblems(buf.Bytes(), nodes, 3, wall); len(p) > 0 || parts != 12 {
		t.Errorf("the runtime's trace: %d parts (want 12), problems %q", parts, p)
	}

	const meta = `{"ph":"M","pid":1,"tid":1,"name":"thread_name","args":{"name":"nodes"}},
{"ph":"M","pid":1,"tid":2,"name":"thread_name","args":{"name":"parts"}},
`
	const good = `{"ph":"X","pid":1,"tid":1,"name":"run 1","cat":"run","ts":10,"dur":100},
{"ph":"X","pid":1,"tid":1,"name":"a","cat":"Conv","ts":10,"dur":50,"args":{"op":"Conv"}},
{"ph":"X","pid":1,"tid":1,"name":"b","cat":"Relu","ts":60,"dur":50,"args":{"op":"Relu"}},
{"ph":"X","pid":1,"tid":2,"name":"a","cat":"part","ts":20,"dur":20}`
	trace := func(events string) []byte { return []byte(`{"traceEvents":[` + meta + events + `]}`) }
	if p, parts := cuvilTraceProblems(trace(good), nodes, 1, 100*time.Microsecond); len(p) > 0 || parts != 1 {
		t.Errorf("a good trace: %d parts, problems %q", parts, p)
	}
	for _, c := range []struct {
		name, events string
		wall         time.Duration
		want         string
	}{
		{"not JSON", good + ",", time.Second, "not valid JSON"},
		{"B never ended", good + `,{"ph":"B","pid":1,"tid":2,"name":"x","ts":30}`, time.Second, "never ended"},
		{"E without B", good + `,{"ph":"E","pid":1,"tid":2,"ts":30}`, time.Second, "ends no slice"},
		{"no tid", good + `,{"ph":"X","pid":1,"name":"x","cat":"part","ts":30,"dur":1}`, time.Second, "no pid or tid"},
		{"negative dur", good + `,{"ph":"X","pid":1,"tid":2,"name":"x","cat":"part","ts":30,"dur":-1}`, time.Second, "negative"},
		{"instant", good + `,{"ph":"i","pid":1,"tid":2,"name":"x","ts":30}`, time.Second, `phase "i"`},
		{"unnamed thread", good + `,{"ph":"X","pid":1,"tid":3,"name":"a","cat":"part","ts":30,"dur":1}`, time.Second, "no thread_name"},
		{"partial overlap", good + `,{"ph":"X","pid":1,"tid":2,"name":"a","cat":"part","ts":30,"dur":20}`, time.Second, "without nesting"},
		{"part on the nodes' thread", good + `,{"ph":"X","pid":1,"tid":1,"name":"a","cat":"part","ts":20,"dur":5}`, time.Second, "on the nodes' thread"},
		{"part outside its node", good + `,{"ph":"X","pid":1,"tid":2,"name":"b","cat":"part","ts":20,"dur":5}`, time.Second, "inside no slice of its node"},
		{"part outside the runs", good + `,{"ph":"X","pid":1,"tid":2,"name":"a","cat":"part","ts":200,"dur":5}`, time.Second, "inside no run"},
		{"longer than the wall time", good, 50 * time.Microsecond, "more than their wall time"},
		{"a node missing", strings.Replace(good, `"name":"b","cat":"Relu"`, `"name":"b","cat":"part"`, 1), time.Second, "node slices, want 2"},
		{"nodes out of order", strings.Replace(strings.Replace(good, `"name":"a","cat":"Conv"`, `"name":"c","cat":"Conv"`, 1), `"name":"a","cat":"part"`, `"name":"c","cat":"part"`, 1), time.Second, `is "c" (Conv), want "a"`},
		{"two runs wanted", good, time.Second, "1 run slices, want 2"},
	} {
		runs := 1
		if strings.HasPrefix(c.name, "two runs") {
			runs = 2
		}
		p, _ := cuvilTraceProblems(trace(c.events), nodes, runs, c.wall)
		if !strings.Contains(strings.Join(p, "\n"), c.want) {
			t.Errorf("%s: problems %q, want one saying %q", c.name, p, c.want)
		}
	}
}
