package templates

import (
	"errors"
	"runtime"
	"sync/atomic"
	"time"
)

// A session's worker pool: Threads-1 goroutines started once with the
// session, woken for each parallel kernel section, so a run creates no
// goroutines and allocates nothing. The calling goroutine works too. A nil
// *WorkPool (nodes outside a session, the compiler's constant folding) runs
// everything on the caller.

// SessionOptions are the settings NewSession takes, set through Options.
type SessionOptions struct {
	// Threads is how many goroutines a run's kernels use, the caller
	// included; 0 means runtime.GOMAXPROCS(0) at NewSession.
	Threads int
	// Profile makes the session time each node (see rt_prof.go).
	Profile bool
	// Trace makes the session keep a trace of its runs, the pool's parts
	// included (see rt_trace.go); it implies Profile.
	Trace bool
	// Spin is how long an idle worker, and the caller waiting for a
	// section's last part, poll before they block (see WithSpin): 0 means
	// the default, 1 ms; negative, not at all.
	Spin time.Duration
}

// Option sets one of SessionOptions.
type Option func(*SessionOptions)

// WithThreads makes a session's kernels use n goroutines (n < 1: one).
func WithThreads(n int) Option {
	return func(o *SessionOptions) {
		o.Threads = max(n, 1)
	}
}

// WithSpin sets how long a session's idle workers, and its caller waiting
// for a section's last part, poll before they block (d <= 0: they block at
// once). Polling catches the next section without a wake-up, which costs
// 50-150 us on a VM and can leave a core idle for as long at every
// section: the default, 1 ms, suits a machine whose cores the session has
// to itself (resnet50 at 2 threads on Zen 3: 44 against 56 ms with 50 us).
// Where more threads are runnable than there are cores, a spinning thread
// takes a core from them: a shorter spin, or none, suits that machine.
func WithSpin(d time.Duration) Option {
	return func(o *SessionOptions) {
		o.Spin = d
		if d <= 0 {
			o.Spin = -1
		}
	}
}

// parTask is a kernel's parallel section: part i of parts.
type parTask interface {
	runPart(i, parts int)
}

// WorkPool runs parTasks on a fixed set of goroutines.
//
// A section is published by writing task and parts and then making gen odd;
// it is closed by making gen even again. Workers take part indices from the
// atomic counter next, so handing out work costs no channel operation. Idle
// workers poll gen for about spin before they park on wake; Run sends a
// wake token only to parked ones (sleeping counts them), so back-to-back
// sections, the common case in a model, never touch a channel. The caller
// waits for the last part the same way: it polls, then blocks on fin, which
// the worker that finishes the last part fills.
type WorkPool struct {
	threads  int
	spin     time.Duration // SessionOptions.Spin resolved: 0 never polls
	task     parTask
	parts    int
	gen      atomic.Uint64 // odd while a section is open
	next     atomic.Int64  // next part index to hand out
	finished atomic.Int64  // parts done in the open section
	active   atomic.Int32  // workers inside the open section
	sleeping atomic.Int32  // workers parked (or about to park) on wake
	waiting  atomic.Bool   // the caller blocks on fin
	closed   atomic.Bool
	wake     chan struct{}
	fin      chan struct{}
	// paniced holds the first panic of a part run by a worker; Run
	// re-panics with it on the caller once the section is closed, so a
	// kernel bug becomes the caller's (recoverable) panic, not a crash,
	// and the pool stays consistent.
	paniced atomic.Pointer[poolPanic]
	// parts' own scratch, one slot per part index (parts <= threads):
	// kernels keep per-part buffers here (k_gemm_core.go's GEMM pack
	// buffers), made by the part on first use. Only part i touches slot i,
	// and sections follow each other, so no lock is needed.
	slots []any
	// gemmTask is the task sgemmPar reuses (k_gemm_core.go), so a
	// parallel GEMM does not allocate.
	gemmTask any
	// Cancellation (Session.RunContext): run is the id of the run in
	// progress (0 between runs), cancelled the id of the last run whose
	// context ended, deadline the run's deadline in nanoseconds after
	// epoch (0: none). Parts of a cancelled run are skipped, so a long node
	// ends early; the session checks Cancelled after every node. The
	// deadline is read off the clock rather than waited for: with one
	// thread nothing else runs while a model runs, not even the timer
	// that would end its context.
	runs           uint64 // ids handed out, caller only
	run, cancelled atomic.Uint64
	deadline       atomic.Int64
	epoch          time.Time
	// trace records each part's time on the goroutine that ran it (nil
	// unless WithTrace; rt_trace.go).
	trace *traceParts
}

// BeginRun starts a cancellable run that ends at deadline (none when
// zero) and returns its id for Cancel.
func (p *WorkPool) BeginRun(deadline time.Time) uint64 {
	p.runs++
	d := int64(0)
	if !deadline.IsZero() {
		if p.epoch.IsZero() {
			p.epoch = time.Now()
		}
		d = max(int64(deadline.Sub(p.epoch)), 1)
	}
	p.deadline.Store(d)
	p.run.Store(p.runs)
	return p.runs
}

// Cancel marks run id cancelled; a late call for a finished run does
// nothing, since its id is never current again.
func (p *WorkPool) Cancel(id uint64) { p.cancelled.Store(id) }

// EndRun ends the run id and reports whether it was cancelled.
func (p *WorkPool) EndRun(id uint64) bool {
	p.run.Store(0)
	return p.cancelled.Load() == id
}

// Cancelled reports whether the run in progress was cancelled.
func (p *WorkPool) Cancelled() bool {
	if p == nil {
		return false
	}
	r := p.run.Load()
	if r == 0 {
		return false
	}
	if p.cancelled.Load() == r {
		return true
	}
	if d := p.deadline.Load(); d != 0 && int64(time.Since(p.epoch)) >= d {
		p.cancelled.Store(r)
		return true
	}
	return false
}

// errCancelled is what Session.Run returns when Cancelled stopped it;
// RunContext turns it into the context's error, naming the node.
var errCancelled = errors.New("run cancelled")

// poolSpin is how long an idle worker, and the caller waiting for the
// last part, poll before blocking unless WithSpin says otherwise. Sections
// in a model follow each other within microseconds, so the poll catches
// the next one without a futex wake-up (50-150 us on a VM); past it, an
// idle pool costs no CPU. 50 us was too short on Zen 3: a worker done
// with its part before the caller parked, and joined the next section a
// median 36 us (p90 140 us) late.
const poolSpin = time.Millisecond

// poolPreempted: see spinFor.
const poolPreempted = 250 * time.Microsecond

// NewWorkPool starts a pool for the options (threads-1 goroutines).
func NewWorkPool(opts ...Option) *WorkPool {
	var o SessionOptions
	for _, f := range opts {
		f(&o)
	}
	if o.Threads < 1 {
		o.Threads = runtime.GOMAXPROCS(0)
	}
	p := &WorkPool{threads: o.Threads, spin: poolSpin, wake: make(chan struct{}, o.Threads), fin: make(chan struct{}, 1),
		slots: make([]any, o.Threads)}
	switch {
	case o.Spin < 0:
		p.spin = 0
	case o.Spin > 0:
		p.spin = o.Spin
	}
	if o.Trace {
		p.trace = newTraceParts(o.Threads)
	}
	for i := 1; i < p.threads; i++ {
		go p.worker(i)
	}
	return p
}

// Threads is the number of goroutines the pool's sections use (1 for nil).
func (p *WorkPool) Threads() int {
	if p == nil || p.closed.Load() {
		return 1
	}
	return p.threads
}

// Close stops the workers. The pool then runs sections on the caller. It
// must not run concurrently with Run.
func (p *WorkPool) Close() {
	if p == nil || p.closed.Swap(true) {
		return
	}
	close(p.wake)
}

// spinFor polls cond for about d, pausing between polls (cpuRelax: PAUSE
// on amd64, so the core the waiting thread shares with another, as a VM's
// vCPUs may, runs the other at full speed) and yielding the processor now
// and then. It gives up early when 64 polls (some 15 us) took over
// poolPreempted: the thread did not run for a while, so the machine has
// more runnable threads than cores, and a spinning one would take a core
// from them.
func spinFor(d time.Duration, cond func() bool) bool {
	if d <= 0 {
		return cond()
	}
	var start, last time.Time
	for i := 0; ; i++ {
		if cond() {
			return true
		}
		cpuRelax()
		if i&63 == 63 {
			now := time.Now()
			switch {
			case start.IsZero():
				start = now
			case now.Sub(start) > d, now.Sub(last) > poolPreempted:
				return false
			}
			last = now
			runtime.Gosched()
		}
	}
}

func (p *WorkPool) worker(w int) {
	var seen uint64 // the last section joined (or found closed)
	ready := func() bool {
		g := p.gen.Load()
		return g&1 == 1 && g != seen || p.closed.Load()
	}
	for {
		if !spinFor(p.spin, ready) {
			// Park. Run hands a token to every worker it counted in
			// sleeping; one that finds work before blocking takes its
			// count back if Run has not, else it eats the token.
			p.sleeping.Add(1)
			if ready() {
				if !p.unsleep() {
					<-p.wake
				}
			} else if _, ok := <-p.wake; !ok {
				return
			}
		}
		if p.closed.Load() {
			return
		}
		g := p.gen.Load()
		if g&1 == 0 || g == seen {
			continue
		}
		p.active.Add(1)
		if p.gen.Load() == g { // still the section g: task and parts are its
			p.drain(w)
		}
		p.active.Add(-1)
		seen = g
	}
}

// unsleep takes one count back from sleeping, if Run has not swapped it.
func (p *WorkPool) unsleep() bool {
	for {
		s := p.sleeping.Load()
		if s == 0 {
			return false
		}
		if p.sleeping.CompareAndSwap(s, s-1) {
			return true
		}
	}
}

// drain runs parts of the current task until none are left, on goroutine
// w (0: the caller).
func (p *WorkPool) drain(w int) {
	t, parts := p.task, p.parts
	for {
		i := int(p.next.Add(1)) - 1
		if i >= parts {
			return
		}
		switch {
		case p.Cancelled():
		case p.trace != nil:
			start := p.trace.now()
			p.runPart(t, i, parts)
			p.trace.record(w, i, parts, start)
		default:
			p.runPart(t, i, parts)
		}
		if p.finished.Add(1) == int64(parts) && p.waiting.CompareAndSwap(true, false) {
			p.fin <- struct{}{}
		}
	}
}

type poolPanic struct{ v any }

// runPart runs one part, keeping its panic for Run.
func (p *WorkPool) runPart(t parTask, i, parts int) {
	defer func() {
		if r := recover(); r != nil {
			p.paniced.CompareAndSwap(nil, &poolPanic{r})
		}
	}()
	t.runPart(i, parts)
}

// Run runs t.runPart(i, parts) for every i in [0, parts), spread over the
// pool, and returns when all are done (a part's panic is re-raised on the
// caller, after every part has ended). Parts may run in any order. Run is
// not safe for concurrent use (a session runs one node at a time).
func (p *WorkPool) Run(parts int, t parTask) {
	if parts <= 0 {
		return
	}
	if p == nil || p.threads == 1 || parts == 1 || p.closed.Load() {
		for i := 0; i < parts && !p.Cancelled(); i++ {
			t.runPart(i, parts)
		}
		return
	}
	p.task, p.parts = t, parts
	p.next.Store(0)
	p.finished.Store(0)
	p.gen.Add(1) // open
	for s := p.sleeping.Load(); s > 0; s = p.sleeping.Load() {
		k := min(s, int32(parts-1))
		if p.sleeping.CompareAndSwap(s, s-k) {
			for ; k > 0; k-- {
				p.wake <- struct{}{}
			}
			break
		}
	}
	p.drain(0)
	done := func() bool { return p.finished.Load() == int64(parts) }
	if !spinFor(p.spin, done) {
		// Exactly one side clears waiting: the finisher (which then
		// sends on fin) or the caller finding the parts done.
		p.waiting.Store(true)
		if !done() || !p.waiting.CompareAndSwap(true, false) {
			<-p.fin
		}
	}
	p.gen.Add(1) // closed: late workers see it and leave
	for p.active.Load() != 0 {
		runtime.Gosched()
	}
	p.task = nil
	if e := p.paniced.Swap(nil); e != nil {
		panic(e.v)
	}
}

// parSplit returns the i-th of parts near-equal chunks of [0, n), each
// but the last a multiple of align.
func parSplit(n, parts, i, align int) (lo, hi int) {
	chunk := (n + parts - 1) / parts
	chunk = (chunk + align - 1) / align * align
	lo = min(i*chunk, n)
	hi = min(lo+chunk, n)
	return lo, hi
}

// parMinFlops is the least work (multiply-adds) worth waking the pool for.
const parMinFlops = 1 << 17

// parTaskOf returns the parallel task kept in n's scratch (slot 5 of its
// nnCache), made on first use so steady-state runs do not allocate.
func parTaskOf[T any](n *Node) *T {
	c := nnCacheOf(n)
	if t, ok := c.slots[5].(*T); ok {
		return t
	}
	t := new(T)
	c.slots[5] = t
	return t
}
