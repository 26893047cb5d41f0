package templates

import (
	"bufio"
	"io"
	"strconv"
	"time"
)

// Chrome trace events of a generated session (Session.WriteTrace; open the
// file in ui.perfetto.dev or chrome://tracing). NewSession(WithTrace())
// gives the session's Profiler a tracer: the profiler's Mark after each
// main-graph node, which exists anyway, also appends the node's slice, and
// the worker pool appends one slice per part of a parallel section on the
// goroutine that ran it. Without the option the tracer is not made: the
// profiler is nil as before (one nil check per node) and the pool's part
// loop checks one nil pointer per part, no time read, no allocation.
//
// Events are kept in memory since NewSession or the last ResetProfile, up
// to traceMaxEvents nodes and as many parts per goroutine; later ones are
// counted as dropped (WriteTrace says how many).

// WithTrace makes a session record a trace of its runs (one slice per
// main-graph node per run, the worker pool's parts on their own threads);
// Session.WriteTrace writes it. It implies WithProfile: the trace's node
// hooks are the profiler's, so Session.Profile works too.
func WithTrace() Option {
	return func(o *SessionOptions) {
		o.Profile = true
		o.Trace = true
	}
}

// traceMaxEvents bounds the events a session keeps per buffer (about 32
// bytes each).
const traceMaxEvents = 1 << 21

// traceNode is one node's slice of one run.
type traceNode struct {
	start, end int64 // ns after the tracer's epoch
	idx        int32 // index in the main graph (-1: a run's slice)
	shapes     int32 // offset of the node's shape text in tracer.text (-1: none)
}

// tracePart is one part of a pool section.
type tracePart struct {
	start, end  int64
	part, parts int32
}

// tracer is a session's trace, owned by its Profiler; parts is owned by
// the session's WorkPool (one buffer per goroutine: slot 0 the caller,
// slot w the pool's worker w, so no lock).
type tracer struct {
	epoch   time.Time
	runs    []traceNode // one per run, node -1
	nodes   []traceNode
	dropped int
	parts   *traceParts
	// Shape text: node k's In and Out shapes when it last ran, as
	// NUL-terminated text in text at offset last[k] (reused while the
	// shapes stay the same, so steady runs add nothing).
	io   []*Node // main-graph node k's Node (nil: a control-flow node)
	last []int32
	text []byte
	tmp  []byte
}

// traceParts holds the pool's part slices.
type traceParts struct {
	epoch   time.Time
	parts   [][]tracePart
	dropped []int
}

func newTraceParts(threads int) *traceParts {
	return &traceParts{epoch: time.Now(), parts: make([][]tracePart, threads), dropped: make([]int, threads)}
}

// record appends part i of parts, run on goroutine w from start.
func (t *traceParts) record(w, i, parts int, start int64) {
	end := int64(time.Since(t.epoch))
	if len(t.parts[w]) >= traceMaxEvents {
		t.dropped[w]++
		return
	}
	t.parts[w] = append(t.parts[w], tracePart{start: start, end: end, part: int32(i), parts: int32(parts)})
}

func (t *traceParts) now() int64 { return int64(time.Since(t.epoch)) }

// TraceNodes gives a tracing profiler the session's pool and, for main-graph
// node k, its Node (idx[k] indexes nodes; -1 for a control-flow node), to
// read shapes from. It does nothing for a profiler without a trace.
func (p *Profiler) TraceNodes(pool *WorkPool, idx []int32, nodes []Node) {
	if p == nil || p.tr == nil {
		return
	}
	t := p.tr
	t.io = make([]*Node, len(idx))
	t.last = make([]int32, len(idx))
	for k, i := range idx {
		t.last[k] = -1
		if i >= 0 {
			t.io[k] = &nodes[i]
		}
	}
	if pool != nil && pool.trace != nil {
		t.parts = pool.trace
		t.epoch = pool.trace.epoch // one clock for nodes and parts
	}
}

func newTracer() *tracer { return &tracer{epoch: time.Now()} }

// start begins run at now.
func (t *tracer) start(now time.Time) {
	if len(t.runs) >= traceMaxEvents {
		t.dropped++
		return
	}
	s := int64(now.Sub(t.epoch))
	t.runs = append(t.runs, traceNode{start: s, end: s, idx: -1, shapes: -1})
}

// addNode records node k, run from `from` to `to`.
func (t *tracer) addNode(k int, from, to time.Time) {
	if len(t.nodes) >= traceMaxEvents || len(t.runs) == 0 {
		t.dropped++
		return
	}
	e := traceNode{start: int64(from.Sub(t.epoch)), end: int64(to.Sub(t.epoch)), idx: int32(k), shapes: -1}
	if k < len(t.io) && t.io[k] != nil {
		e.shapes = t.shapesOf(k)
	}
	t.nodes = append(t.nodes, e)
	t.runs[len(t.runs)-1].end = e.end
}

// shapesOf returns the offset of node k's shape text, appending it when it
// changed since the node last ran.
func (t *tracer) shapesOf(k int) int32 {
	n := t.io[k]
	b := t.tmp[:0]
	b = appendShapes(b, n.In)
	b = append(b, '|')
	b = appendShapes(b, n.Out)
	t.tmp = b
	if o := t.last[k]; o >= 0 && string(t.text[o:int(o)+len(b)]) == string(b) && t.text[int(o)+len(b)] == 0 {
		return o
	}
	o := int32(len(t.text))
	t.text = append(append(t.text, b...), 0)
	t.last[k] = o
	return o
}

// appendShapes appends "1x3x224x224, 64" (a missing input as "-", a
// scalar as "[]").
func appendShapes(b []byte, ts []*Tensor) []byte {
	for i, x := range ts {
		if i > 0 {
			b = append(b, ", "...)
		}
		switch {
		case x == nil:
			b = append(b, '-')
		case len(x.Shape) == 0:
			b = append(b, "[]"...)
		default:
			for j, d := range x.Shape {
				if j > 0 {
					b = append(b, 'x')
				}
				b = strconv.AppendInt(b, int64(d), 10)
			}
		}
	}
	return b
}

func (t *tracer) reset() {
	t.runs, t.nodes, t.dropped = t.runs[:0], t.nodes[:0], 0
	if t.parts != nil {
		for w := range t.parts.parts {
			t.parts.parts[w], t.parts.dropped[w] = t.parts.parts[w][:0], 0
		}
	}
}

// Trace thread ids: the calling goroutine's runs and nodes, then one per
// pool goroutine's parts.
const (
	traceTidNodes = 1
	traceTidParts = 2 // + goroutine index (0: the caller)
)

// WriteTrace writes the trace as Chrome trace event JSON (the "JSON Object
// Format": {"traceEvents": [...]}) with complete ("X") events in
// microseconds: a "run" slice per run with the nodes' slices inside it on
// one thread, the parts of parallel sections on one thread per pool
// goroutine, and metadata naming the process and threads. nodes names the
// main graph's nodes. It writes nothing and returns nil for a profiler
// without a trace.
func (p *Profiler) WriteTrace(w io.Writer, process string) error {
	if p == nil || p.tr == nil {
		return nil
	}
	t := p.tr
	bw := bufio.NewWriter(w)
	var b []byte
	first := true
	ev := func() {
		if !first {
			b = append(b, ",\n"...)
		}
		first = false
	}
	flush := func() {
		if len(b) > 1<<16 {
			bw.Write(b)
			b = b[:0]
		}
	}
	meta := func(name string, tid int, arg string, sort int) {
		ev()
		b = append(b, `{"ph":"M","pid":1,"tid":`...)
		b = strconv.AppendInt(b, int64(tid), 10)
		b = append(b, `,"name":`...)
		b = strconv.AppendQuote(b, name)
		b = append(b, `,"args":{"name":`...)
		b = strconv.AppendQuote(b, arg)
		b = append(b, "}}"...)
		ev()
		b = append(b, `{"ph":"M","pid":1,"tid":`...)
		b = strconv.AppendInt(b, int64(tid), 10)
		b = append(b, `,"name":"thread_sort_index","args":{"sort_index":`...)
		b = strconv.AppendInt(b, int64(sort), 10)
		b = append(b, "}}"...)
	}
	us := func(ns int64) {
		b = strconv.AppendFloat(b, float64(ns)/1e3, 'f', 3, 64)
	}
	slice := func(tid int, name, cat string, start, end int64) {
		ev()
		b = append(b, `{"ph":"X","pid":1,"tid":`...)
		b = strconv.AppendInt(b, int64(tid), 10)
		b = append(b, `,"name":`...)
		b = strconv.AppendQuote(b, name)
		b = append(b, `,"cat":`...)
		b = strconv.AppendQuote(b, cat)
		b = append(b, `,"ts":`...)
		us(start)
		b = append(b, `,"dur":`...)
		us(max(end-start, 0))
	}
	b = append(b, "{\"traceEvents\":[\n"...)
	ev()
	b = append(b, `{"ph":"M","pid":1,"tid":0,"name":"process_name","args":{"name":`...)
	b = strconv.AppendQuote(b, process)
	b = append(b, "}}"...)
	meta("thread_name", traceTidNodes, "nodes (calling goroutine)", 0)
	if t.parts != nil {
		for w := range t.parts.parts {
			name := "pool parts: caller"
			if w > 0 {
				name = "pool parts: worker " + strconv.Itoa(w)
			}
			meta("thread_name", traceTidParts+w, name, 1+w)
		}
	}
	for i, r := range t.runs {
		slice(traceTidNodes, "run "+strconv.Itoa(i+1), "run", r.start, r.end)
		b = append(b, "}"...)
		flush()
	}
	for _, e := range t.nodes {
		np := p.nodes[e.idx]
		slice(traceTidNodes, np.Name, np.Op, e.start, e.end)
		b = append(b, `,"args":{"op":`...)
		b = strconv.AppendQuote(b, np.Op)
		if e.shapes >= 0 {
			s := t.text[e.shapes:]
			for j, c := range s {
				if c == 0 {
					s = s[:j]
					break
				}
			}
			for j, c := range s {
				if c == '|' {
					b = append(b, `,"inputs":`...)
					b = strconv.AppendQuote(b, string(s[:j]))
					b = append(b, `,"outputs":`...)
					b = strconv.AppendQuote(b, string(s[j+1:]))
					break
				}
			}
		}
		b = append(b, "}}"...)
		flush()
	}
	dropped := t.dropped
	if t.parts != nil {
		// A part belongs to the node whose slice holds its start (nodes
		// run one at a time; t.nodes is in time order).
		for w, ps := range t.parts.parts {
			dropped += t.parts.dropped[w]
			for _, e := range ps {
				name := "part"
				lo, hi := 0, len(t.nodes)
				for lo < hi {
					m := (lo + hi) / 2
					if t.nodes[m].end < e.start {
						lo = m + 1
					} else {
						hi = m
					}
				}
				if lo < len(t.nodes) {
					name = p.nodes[t.nodes[lo].idx].Name
				}
				slice(traceTidParts+w, name, "part", e.start, e.end)
				b = append(b, `,"args":{"part":`...)
				b = strconv.AppendInt(b, int64(e.part), 10)
				b = append(b, `,"parts":`...)
				b = strconv.AppendInt(b, int64(e.parts), 10)
				b = append(b, "}}"...)
				flush()
			}
		}
	}
	b = append(b, "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"cuvil\",\"dropped_events\":"...)
	b = strconv.AppendInt(b, int64(dropped), 10)
	b = append(b, "}}\n"...)
	bw.Write(b)
	return bw.Flush()
}

// Tracing reports whether the profiler keeps a trace (WithTrace).
func (p *Profiler) Tracing() bool { return p != nil && p.tr != nil }
