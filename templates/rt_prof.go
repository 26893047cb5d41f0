package templates

import "time"

// The per-node profiler of a generated session. NewSession(WithProfile())
// gives the session a Profiler; Run then calls Start once and Mark after
// each node of the main graph, so node i's time is the wall time between
// the previous mark and its own. Without the option the session holds a
// nil *Profiler and each Mark is one inlined nil check: no time read, no
// allocation.

// NodeProfile is the time one node of the main graph took, summed over
// runs. A control-flow node (If, Loop, Scan) includes its subgraphs.
type NodeProfile struct {
	Name  string        // the ONNX node name
	Op    string        // the op (fused ops by their cuvil name, e.g. FusedConv)
	Runs  int           // how many runs reached the node
	Total time.Duration // wall time summed over those runs
}

// WithProfile makes a session record the wall time of each node over its
// runs; Session.Profile returns it.
func WithProfile() Option {
	return func(o *SessionOptions) {
		o.Profile = true
	}
}

// Profiler accumulates NodeProfiles. It is owned by one session.
type Profiler struct {
	last  time.Time
	nodes []NodeProfile
	tr    *tracer // nil unless WithTrace (rt_trace.go)
}

// NewProfiler returns a profiler for the nodes (name and op filled in),
// or nil when the options do not ask for one.
func NewProfiler(nodes []NodeProfile, opts ...Option) *Profiler {
	var o SessionOptions
	for _, f := range opts {
		f(&o)
	}
	if !o.Profile {
		return nil
	}
	p := &Profiler{nodes: make([]NodeProfile, len(nodes))}
	copy(p.nodes, nodes)
	if o.Trace {
		p.tr = newTracer()
	}
	p.Reset()
	return p
}

// Start begins a run.
func (p *Profiler) Start() {
	if p != nil {
		p.last = time.Now()
		if p.tr != nil {
			p.tr.start(p.last)
		}
	}
}

// Mark ends node i of the run.
func (p *Profiler) Mark(i int) {
	if p != nil {
		p.mark(i)
	}
}

func (p *Profiler) mark(i int) {
	now := time.Now()
	p.nodes[i].Runs++
	p.nodes[i].Total += now.Sub(p.last)
	if p.tr != nil {
		p.tr.addNode(i, p.last, now)
		now = time.Now() // the trace's bookkeeping is no node's time
	}
	p.last = now
}

// Nodes returns a copy of the times so far, in graph order (nil for a nil
// profiler).
func (p *Profiler) Nodes() []NodeProfile {
	if p == nil {
		return nil
	}
	return append([]NodeProfile(nil), p.nodes...)
}

// Reset zeroes the times (warm-up runs are usually left out this way).
func (p *Profiler) Reset() {
	if p == nil {
		return
	}
	for i := range p.nodes {
		p.nodes[i].Runs, p.nodes[i].Total = 0, 0
	}
	if p.tr != nil {
		p.tr.reset()
	}
}
