package templates

import (
	"bytes"
	"encoding/json"
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
