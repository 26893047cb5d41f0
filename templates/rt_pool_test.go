package templates

import (
	"math/rand"
	"sync/atomic"
	"testing"
	"time"
)

// TestSgemmParEqualsSerial checks that splitting a GEMM over threads does
// not change a single bit of C, on odd sizes and every transposition.
func TestSgemmParEqualsSerial(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	for _, threads := range []int{2, 3, 4} {
		p := NewWorkPool(WithThreads(threads))
		for _, sz := range [][3]int{{7, 300, 61}, {131, 37, 97}, {64, 1000, 33}, {250, 70, 300}, {5, 9, 3}} {
			m, n, k := sz[0], sz[1], sz[2]
			for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
				a, b := make([]float32, m*k), make([]float32, k*n)
				for i := range a {
					a[i] = r.Float32()*2 - 1
				}
				for i := range b {
					b[i] = r.Float32()*2 - 1
				}
				lda, ldb := k, n
				if tr[0] {
					lda = m
				}
				if tr[1] {
					ldb = k
				}
				want, got := make([]float32, m*n), make([]float32, m*n)
				for i := range want {
					want[i] = r.Float32()
					got[i] = want[i]
				}
				sgemm(tr[0], tr[1], m, n, k, 0.5, a, lda, b, ldb, 0.25, want, n)
				sgemmPar(p, tr[0], tr[1], m, n, k, 0.5, a, lda, b, ldb, 0.25, got, n)
				for i := range want {
					if got[i] != want[i] {
						t.Fatalf("threads %d %dx%dx%d trans %v: C[%d] = %v, want %v", threads, m, n, k, tr, i, got[i], want[i])
					}
				}
			}
		}
		p.Close()
	}
}

// TestKernelsThreadsEqual runs the pooled kernels with one and with three
// threads and wants the same bits.
func TestKernelsThreadsEqual(t *testing.T) {
	r := rand.New(rand.NewSource(8))
	p := NewWorkPool(WithThreads(3))
	defer p.Close()
	type kcase struct {
		op    string
		attrs Attrs
		in    []*Tensor
	}
	cases := []kcase{
		{"Conv", Attrs{"pads": []int64{1, 1, 1, 1}}, []*Tensor{nnRand(r, 2, 5, 23, 19), nnRand(r, 37, 5, 3, 3), nnRand(r, 37)}},
		{"Conv", Attrs{"group": int64(9), "strides": []int64{2, 2}, "pads": []int64{1, 1, 1, 1}}, []*Tensor{nnRand(r, 1, 9, 29, 31), nnRand(r, 9, 1, 3, 3), nnRand(r, 9)}},
		{"cuvil::FusedConv", Attrs{"activation": "Relu", "pads": []int64{1, 1, 1, 1}}, []*Tensor{nnRand(r, 1, 7, 33, 21), nnRand(r, 45, 7, 3, 3), nnRand(r, 45)}},
		{"cuvil::FusedConv", Attrs{"activation": "Relu"}, []*Tensor{nnRand(r, 1, 64, 5, 7), nnRand(r, 130, 64, 1, 1), nnRand(r, 130)}}, // few columns: rows split
		{"cuvil::FusedConv", Attrs{"activation": "Clip", "activation_params": []float32{0, 6}, "group": int64(11), "pads": []int64{1, 1, 1, 1}}, []*Tensor{nnRand(r, 2, 11, 17, 13), nnRand(r, 11, 1, 3, 3), nnRand(r, 11)}},
		{"Gemm", Attrs{"transB": int64(1)}, []*Tensor{nnRand(r, 33, 129), nnRand(r, 301, 129), nnRand(r, 301)}},
		{"MatMul", nil, []*Tensor{nnRand(r, 2, 67, 45), nnRand(r, 45, 211)}},
		{"cuvil::FusedGemm", Attrs{"activation": "Relu"}, []*Tensor{nnRand(r, 129, 77), nnRand(r, 77, 203), nnRand(r, 203)}},
		{"Concat", Attrs{"axis": int64(1)}, []*Tensor{nnRand(r, 1, 37, 31, 9), nnRand(r, 1, 5, 31, 9), nnRand(r, 1, 41, 31, 9)}},
		{"MaxPool", Attrs{"kernel_shape": []int64{3, 3}, "strides": []int64{2, 2}, "ceil_mode": int64(1)}, []*Tensor{nnRand(r, 1, 37, 31, 29)}},
	}
	for _, c := range cases {
		serial := nnNode(c.op, 13, c.attrs, 1, c.in...)
		par := nnNode(c.op, 13, c.attrs, 1, c.in...)
		if c.op == "cuvil::FusedConv" || c.op == "cuvil::FusedGemm" {
			serial.Version, par.Version = 1, 1
		}
		par.Pool = p
		k := Kernels[c.op]
		if err := k(serial); err != nil {
			t.Fatal(err)
		}
		for run := 0; run < 2; run++ {
			if err := k(par); err != nil {
				t.Fatal(err)
			}
			want, got := serial.Out[0].F32(), par.Out[0].F32()
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("%s %v: y[%d] = %v with 3 threads, %v with 1", c.op, c.attrs, i, got[i], want[i])
				}
			}
		}
		if allocs := testing.AllocsPerRun(5, func() { k(par) }); allocs != 0 && !raceEnabled {
			t.Errorf("%s: %v allocations per run with a pool", c.op, allocs)
		}
	}
}

// TestWorkPoolClosedRunsInline checks Close and nil pools.
func TestWorkPoolClosedRunsInline(t *testing.T) {
	var nilPool *WorkPool
	p := NewWorkPool(WithThreads(4))
	p.Close()
	p.Close()
	for _, q := range []*WorkPool{nilPool, p} {
		if q.Threads() != 1 {
			t.Errorf("Threads() = %d, want 1", q.Threads())
		}
		c := &countTask{}
		q.Run(7, c)
		if c.n != 7 {
			t.Errorf("ran %d parts, want 7", c.n)
		}
	}
}

type countTask struct{ n int }

func (c *countTask) runPart(i, parts int) { c.n++ }

// sectionTask counts how often each part runs, sleeping a little in some.
type sectionTask struct {
	hits  []atomic.Int32
	sleep time.Duration
}

func (t *sectionTask) runPart(i, parts int) {
	if t.sleep > 0 && i == parts-1 {
		time.Sleep(t.sleep)
	}
	t.hits[i].Add(1)
}

// TestPoolSections runs many sections back to back and with gaps longer
// than the workers' spin, so both the polling and the parking hand-offs
// run, and wants every part run exactly once per section: with the
// default spin, a short one and none (WithSpin(0): every hand-off parks).
func TestPoolSections(t *testing.T) {
	for _, c := range []struct {
		threads int
		spin    []Option
	}{{2, nil}, {3, nil}, {5, nil}, {2, []Option{WithSpin(0)}}, {3, []Option{WithSpin(50 * time.Microsecond)}}} {
		threads := c.threads
		p := NewWorkPool(append([]Option{WithThreads(threads)}, c.spin...)...)
		task := &sectionTask{hits: make([]atomic.Int32, 16)}
		for r := 0; r < 400; r++ {
			parts := 1 + r%16
			task.sleep = 0
			if r%37 == 0 {
				task.sleep = 2 * poolSpin
			}
			for i := range task.hits {
				task.hits[i].Store(0)
			}
			p.Run(parts, task)
			for i := range task.hits {
				want := int32(0)
				if i < parts {
					want = 1
				}
				if got := task.hits[i].Load(); got != want {
					t.Fatalf("threads %d section %d: part %d ran %d times, want %d", threads, r, i, got, want)
				}
			}
			if r%50 == 49 {
				time.Sleep(3 * poolSpin) // workers park
			}
		}
		p.Close()
	}
}

// BenchmarkPoolEmpty is the cost of one parallel section of trivial parts:
// the break-even below which a kernel should run a section inline.
func BenchmarkPoolEmpty(b *testing.B) {
	p := NewWorkPool(WithThreads(2))
	defer p.Close()
	task := &sectionTask{hits: make([]atomic.Int32, 2)}
	for i := 0; i < b.N; i++ {
		p.Run(2, task)
	}
}

// panicTask panics in part bad and counts the parts that ran.
type panicTask struct {
	bad  int
	hits atomic.Int32
}

func (t *panicTask) runPart(i, parts int) {
	t.hits.Add(1)
	if i == t.bad {
		panic("part failed")
	}
}

// A part's panic, on a worker or on the caller, ends the section normally
// (every other part still runs) and is re-raised on the caller; the pool
// then runs the next section as usual.
func TestPoolPanicReachesCaller(t *testing.T) {
	for _, threads := range []int{1, 2, 4} {
		p := NewWorkPool(WithThreads(threads))
		for r := 0; r < 50; r++ {
			parts := 2 + r%7
			task := &panicTask{bad: r % parts}
			got := func() (v any) {
				defer func() { v = recover() }()
				p.Run(parts, task)
				return nil
			}()
			if got != "part failed" {
				t.Fatalf("threads %d: Run's panic is %v, want the part's", threads, got)
			}
			if threads > 1 && int(task.hits.Load()) != parts {
				t.Fatalf("threads %d: %d of %d parts ran", threads, task.hits.Load(), parts)
			}
			ok := &sectionTask{hits: make([]atomic.Int32, parts)}
			p.Run(parts, ok)
			for i := range ok.hits {
				if ok.hits[i].Load() != 1 {
					t.Fatalf("threads %d: after a panic, part %d ran %d times", threads, i, ok.hits[i].Load())
				}
			}
		}
		p.Close()
	}
}

// cancelTask cancels run id in part at, and counts the parts that started
// after the cancellation.
type cancelTask struct {
	p     *WorkPool
	id    uint64
	at    int
	after atomic.Int32
	hits  atomic.Int32
}

func (t *cancelTask) runPart(i, parts int) {
	if t.p.Cancelled() {
		t.after.Add(1)
	}
	t.hits.Add(1)
	if i == t.at {
		t.p.Cancel(t.id)
	}
}

// A cancelled run's remaining parts are skipped (on one thread, every part
// after the cancelling one), the section
// still ends, EndRun reports the cancellation, and the next run, or a late
// Cancel of a finished run, is not affected.
func TestPoolCancel(t *testing.T) {
	for _, threads := range []int{1, 2, 4} {
		p := NewWorkPool(WithThreads(threads))
		for r := 0; r < 50; r++ {
			parts := 2 + r%7
			id := p.BeginRun(time.Time{})
			task := &cancelTask{p: p, id: id, at: r % parts}
			p.Run(parts, task)
			// On several threads a worker may have passed the pool's check
			// just before the cancel: only one thread's count is exact.
			if threads == 1 && (task.after.Load() != 0 || int(task.hits.Load()) != task.at+1) {
				t.Fatalf("threads 1: %d parts ran, want %d", task.hits.Load(), task.at+1)
			}
			if !p.Cancelled() || !p.EndRun(id) {
				t.Fatalf("threads %d: the run is not reported cancelled", threads)
			}
			if p.Cancelled() {
				t.Fatalf("threads %d: cancelled between runs", threads)
			}
			next := p.BeginRun(time.Time{})
			p.Cancel(id) // late: the old run's callback
			ok := &sectionTask{hits: make([]atomic.Int32, parts)}
			p.Run(parts, ok)
			for i := range ok.hits {
				if ok.hits[i].Load() != 1 {
					t.Fatalf("threads %d: after a cancelled run, part %d ran %d times", threads, i, ok.hits[i].Load())
				}
			}
			if p.EndRun(next) {
				t.Fatalf("threads %d: a late Cancel of the previous run cancelled the next", threads)
			}
		}
		p.Close()
	}
}
