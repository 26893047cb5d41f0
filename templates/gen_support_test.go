package templates

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"
	"unsafe"
)

// This file is the same in every package cuvil generates: helpers for
// model_test.go.

// cuvilRand is a small deterministic generator (a 64-bit LCG), so the test
// input is the same on every machine.
type cuvilRand struct{ x uint64 }

func (r *cuvilRand) next() uint64 {
	r.x = r.x*6364136223846793005 + 1442695040888963407
	return r.x >> 11
}

// float returns a value in [-1, 1).
func (r *cuvilRand) float() float64 { return float64(r.next())/float64(1<<52) - 1 }

// cuvilTestTensor returns a pseudo-random tensor: floats in [-1, 1),
// integers in [0, 4) (valid indices for most gathers), random bools.
func cuvilTestTensor(dt DType, shape []int, seed uint64) *Tensor {
	t := &Tensor{}
	t.Resize(dt, shape...)
	r := &cuvilRand{x: seed}
	switch d := t.Data.(type) {
	case []float32:
		for i := range d {
			d[i] = float32(r.float())
		}
	case []float64:
		for i := range d {
			d[i] = r.float()
		}
	case []uint16:
		for i := range d {
			switch dt {
			case F16:
				d[i] = F32ToF16(float32(r.float()))
			case BF16:
				d[i] = F32ToBF16(float32(r.float()))
			default:
				d[i] = uint16(r.next() % 4)
			}
		}
	case []int8:
		for i := range d {
			d[i] = int8(r.next() % 4)
		}
	case []uint8:
		for i := range d {
			d[i] = uint8(r.next() % 4)
		}
	case []int16:
		for i := range d {
			d[i] = int16(r.next() % 4)
		}
	case []int32:
		for i := range d {
			d[i] = int32(r.next() % 4)
		}
	case []int64:
		for i := range d {
			d[i] = int64(r.next() % 4)
		}
	case []uint32:
		for i := range d {
			d[i] = uint32(r.next() % 4)
		}
	case []uint64:
		for i := range d {
			d[i] = r.next() % 4
		}
	case []bool:
		for i := range d {
			d[i] = r.next()%2 == 0
		}
	case []string:
		for i := range d {
			d[i] = string(rune('a' + r.next()%26))
		}
	}
	return t
}

// cuvilCheckOutput checks an output's dtype and shape (-1 matches any
// size) and that its float elements are finite.
func cuvilCheckOutput(t *testing.T, name string, got *Tensor, dt DType, shape []int) {
	t.Helper()
	if got == nil {
		t.Fatalf("output %q is nil", name)
	}
	if got.DType != dt {
		t.Errorf("output %q: dtype %s, want %s", name, got.DType, dt)
	}
	ok := len(got.Shape) == len(shape)
	for i := 0; ok && i < len(shape); i++ {
		ok = shape[i] < 0 || shape[i] == got.Shape[i]
	}
	if !ok {
		t.Errorf("output %q: shape %v, want %v (-1: any)", name, got.Shape, shape)
	}
	if n := cuvilDataLen(got); n != got.Len() {
		t.Fatalf("output %q: data has %d elements (%T), shape %v wants %d", name, n, got.Data, got.Shape, got.Len())
	}
	finite := func(i int, f float64) {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			t.Fatalf("output %q: element %d is %v", name, i, f)
		}
	}
	switch d := got.Data.(type) {
	case []float32:
		for i, f := range d {
			finite(i, float64(f))
		}
	case []float64:
		for i, f := range d {
			finite(i, f)
		}
	case []uint16:
		for i, h := range d {
			switch got.DType {
			case F16:
				finite(i, float64(F16ToF32(h)))
			case BF16:
				finite(i, float64(BF16ToF32(h)))
			}
		}
	}
}

// cuvilSameTensor reports whether two tensors hold the same values.
func cuvilSameTensor(a, b *Tensor) bool {
	if a.DType != b.DType || len(a.Shape) != len(b.Shape) {
		return false
	}
	switch d := a.Data.(type) {
	case *Sequence:
		e, ok := b.Data.(*Sequence)
		if !ok || len(d.Elems) != len(e.Elems) {
			return false
		}
		for i := range d.Elems {
			if !cuvilSameTensor(d.Elems[i], e.Elems[i]) {
				return false
			}
		}
		return true
	case *OptionalValue:
		e, ok := b.Data.(*OptionalValue)
		if !ok || (d.Value == nil) != (e.Value == nil) {
			return false
		}
		return d.Value == nil || cuvilSameTensor(d.Value, e.Value)
	case *MapValue:
		e, ok := b.Data.(*MapValue)
		return ok && cuvilSameTensor(&d.Keys, &e.Keys) && cuvilSameTensor(&d.Values, &e.Values)
	}
	for i := range a.Shape {
		if a.Shape[i] != b.Shape[i] {
			return false
		}
	}
	switch d := a.Data.(type) {
	case []float32:
		e := b.Data.([]float32)
		for i := range d {
			if math.Float32bits(d[i]) != math.Float32bits(e[i]) {
				return false
			}
		}
		return true
	case []float64:
		e := b.Data.([]float64)
		for i := range d {
			if math.Float64bits(d[i]) != math.Float64bits(e[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a.Data, b.Data)
}

// cuvilCheckProfile checks a profile of runs runs that took wall in all:
// one entry per node of the main graph, in order, each reached every run,
// no negative time, and the sum within the wall time.
func cuvilCheckProfile(t *testing.T, got, nodes []NodeProfile, runs int, wall time.Duration) {
	t.Helper()
	if len(got) != len(nodes) {
		t.Fatalf("profile has %d entries, want one per node (%d)", len(got), len(nodes))
	}
	var sum time.Duration
	for i, p := range got {
		if p.Name != nodes[i].Name || p.Op != nodes[i].Op {
			t.Errorf("profile entry %d is %s (%s), want %s (%s)", i, p.Name, p.Op, nodes[i].Name, nodes[i].Op)
		}
		if p.Runs != runs || p.Total < 0 {
			t.Errorf("node %q: %d runs, %v in all; want %d runs, time >= 0", p.Name, p.Runs, p.Total, runs)
		}
		sum += p.Total
	}
	if sum > wall {
		t.Errorf("the nodes' times add up to %v, more than the runs' wall time %v", sum, wall)
	}
}

// cuvilTraceEvent is one Chrome trace event, as cuvilTraceProblems reads it.
type cuvilTraceEvent struct {
	Ph   string         `json:"ph"`
	Name string         `json:"name"`
	Cat  string         `json:"cat"`
	Pid  *int           `json:"pid"`
	Tid  *int           `json:"tid"`
	Ts   *float64       `json:"ts"`
	Dur  *float64       `json:"dur"`
	Args map[string]any `json:"args"`
}

// cuvilCheckTrace fails t with what cuvilTraceProblems finds in the trace
// and returns how many pool parts it holds.
func cuvilCheckTrace(t *testing.T, data []byte, nodes []NodeProfile, runs int, wall time.Duration) int {
	t.Helper()
	problems, parts := cuvilTraceProblems(data, nodes, runs, wall)
	if len(problems) > 10 {
		problems = append(problems[:10], "...")
	}
	if len(problems) > 0 {
		t.Fatalf("the trace does not hold:\n%s", strings.Join(problems, "\n"))
	}
	return parts
}

// cuvilTraceProblems checks a trace (Session.WriteTrace) of runs runs that
// took wall in all against the Chrome trace event format: valid JSON with
// a traceEvents array; pid and tid on every event; every slice closed (X
// events with ts and dur >= 0, B/E pairs matched per thread); a
// thread_name for every thread used; the slices of every thread nested
// (none overlaps another partly, which the viewers draw wrongly); runs
// "run" slices, adding up to and spanning at most wall, each holding the
// main graph's nodes in order on the run's thread, with their op; the
// pool's parts on threads of their own, each inside a run and inside a
// slice of the node it is named after. It returns what
// does not hold and how many parts the trace holds.
func cuvilTraceProblems(data []byte, nodes []NodeProfile, runs int, wall time.Duration) ([]string, int) {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	var tr struct {
		TraceEvents []cuvilTraceEvent `json:"traceEvents"`
	}
	if err := json.Unmarshal(data, &tr); err != nil {
		return []string{fmt.Sprintf("the trace is not valid JSON: %v", err)}, 0
	}
	if len(tr.TraceEvents) == 0 {
		return []string{"the trace has no traceEvents"}, 0
	}
	const eps = 0.002 // us: times are written to the nanosecond
	named := map[int]bool{}
	used := map[int]bool{}
	open := map[int][]cuvilTraceEvent{}
	var slices, runSlices, nodeSlices, partSlices []cuvilTraceEvent
	for _, e := range tr.TraceEvents {
		if e.Pid == nil || e.Tid == nil {
			bad("event %q (phase %q) has no pid or tid", e.Name, e.Ph)
			continue
		}
		tid := *e.Tid
		switch e.Ph {
		case "M":
			if e.Name == "thread_name" {
				named[tid] = true
			}
			continue
		case "X":
			if e.Ts == nil || e.Dur == nil || *e.Ts < 0 || *e.Dur < 0 {
				bad("complete event %q has no ts or dur, or a negative one", e.Name)
				continue
			}
			slices = append(slices, e)
		case "B":
			open[tid] = append(open[tid], e)
			continue
		case "E":
			if len(open[tid]) == 0 {
				bad("E event %q on thread %d ends no slice", e.Name, tid)
			} else {
				open[tid] = open[tid][:len(open[tid])-1]
			}
			continue
		default:
			bad("event %q has phase %q (the trace writes X and M only)", e.Name, e.Ph)
			continue
		}
		used[tid] = true
		switch e.Cat {
		case "run":
			runSlices = append(runSlices, e)
		case "part":
			partSlices = append(partSlices, e)
		default:
			nodeSlices = append(nodeSlices, e)
		}
	}
	for tid, o := range open {
		if len(o) > 0 {
			bad("thread %d: %d B events never ended (first %q)", tid, len(o), o[0].Name)
		}
	}
	for tid := range used {
		if !named[tid] {
			bad("thread %d has slices but no thread_name", tid)
		}
	}
	problems = append(problems, cuvilNestingProblems(slices)...)
	if len(runSlices) != runs {
		bad("the trace has %d run slices, want %d", len(runSlices), runs)
		return problems, len(partSlices)
	}
	var sum float64
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, r := range runSlices {
		sum += *r.Dur
		lo, hi = min(lo, *r.Ts), max(hi, *r.Ts+*r.Dur)
	}
	if sum > float64(wall)/1e3+eps*float64(runs) {
		bad("the runs' slices add up to %.3f us, more than their wall time %v", sum, wall)
	}
	if hi-lo > float64(wall)/1e3+eps {
		bad("the runs' slices span %.3f us, more than their wall time %v", hi-lo, wall)
	}
	in := func(e cuvilTraceEvent) int {
		for i, r := range runSlices {
			if *e.Ts >= *r.Ts-eps && *e.Ts+*e.Dur <= *r.Ts+*r.Dur+eps {
				return i
			}
		}
		return -1
	}
	if len(nodeSlices) != runs*len(nodes) {
		bad("the trace has %d node slices, want %d (%d runs of %d nodes)", len(nodeSlices), runs*len(nodes), runs, len(nodes))
		return problems, len(partSlices)
	}
	for i, e := range nodeSlices {
		k := i % len(nodes)
		if e.Name != nodes[k].Name || e.Cat != nodes[k].Op || e.Args["op"] != nodes[k].Op {
			bad("node slice %d is %q (%s), want %q (%s)", i, e.Name, e.Cat, nodes[k].Name, nodes[k].Op)
		}
		if *e.Tid != *runSlices[0].Tid {
			bad("node slice %q is on thread %d, its run on %d", e.Name, *e.Tid, *runSlices[0].Tid)
		}
		if r := in(e); r != i/len(nodes) {
			bad("node slice %d (%q at %.3f us, %.3f us long) is not inside run %d", i, e.Name, *e.Ts, *e.Dur, i/len(nodes)+1)
		}
	}
	for _, e := range partSlices {
		if *e.Tid == *runSlices[0].Tid {
			bad("part %q is on the nodes' thread", e.Name)
		}
		if in(e) < 0 {
			bad("part %q at %.3f us (%.3f us long) is inside no run", e.Name, *e.Ts, *e.Dur)
		}
		// A part runs inside the slice of the node it is named after: the
		// first node slice (they are in time order) ending after it starts.
		k := sort.Search(len(nodeSlices), func(i int) bool { return *nodeSlices[i].Ts+*nodeSlices[i].Dur >= *e.Ts-eps })
		if n := nodeSlices[min(k, len(nodeSlices)-1)]; k == len(nodeSlices) || n.Name != e.Name || *e.Ts < *n.Ts-eps || *e.Ts+*e.Dur > *n.Ts+*n.Dur+eps {
			bad("part %q at %.3f us (%.3f us long) is inside no slice of its node", e.Name, *e.Ts, *e.Dur)
		}
	}
	return problems, len(partSlices)
}

// cuvilNestingProblems reports the complete events of one thread that
// overlap another partly: two slices of a thread must either not overlap
// or one hold the other (what the trace viewers draw as a stack).
func cuvilNestingProblems(events []cuvilTraceEvent) []string {
	const eps = 0.002
	var problems []string
	byTid := map[int][]cuvilTraceEvent{}
	var tids []int
	for _, e := range events {
		if _, ok := byTid[*e.Tid]; !ok {
			tids = append(tids, *e.Tid)
		}
		byTid[*e.Tid] = append(byTid[*e.Tid], e)
	}
	for _, tid := range tids {
		es := byTid[tid]
		sort.SliceStable(es, func(i, j int) bool {
			if *es[i].Ts != *es[j].Ts {
				return *es[i].Ts < *es[j].Ts
			}
			return *es[i].Dur > *es[j].Dur
		})
		var stack []cuvilTraceEvent
		for _, e := range es {
			for len(stack) > 0 && *stack[len(stack)-1].Ts+*stack[len(stack)-1].Dur <= *e.Ts+eps {
				stack = stack[:len(stack)-1]
			}
			if len(stack) > 0 {
				if top := stack[len(stack)-1]; *e.Ts+*e.Dur > *top.Ts+*top.Dur+eps {
					problems = append(problems, fmt.Sprintf("thread %d: slice %q (at %.3f us, %.3f us long) overlaps %q (at %.3f us, %.3f us long) without nesting in it", tid, e.Name, *e.Ts, *e.Dur, top.Name, *top.Ts, *top.Dur))
					continue
				}
			}
			stack = append(stack, e)
		}
	}
	return problems
}

// FuzzGuard hands Run inputs of random dtypes, shapes and data lengths
// (and nil ones): Run may refuse them, but must never panic or report a
// kernel's internal error.
func FuzzGuard(f *testing.F) {
	f.Add(uint8(1), []byte{1, 2, 3}, uint16(6), false)
	f.Add(uint8(7), []byte{}, uint16(1), false)
	f.Add(uint8(1), []byte{0, 5}, uint16(0), true)
	m, err := cuvilTestModel()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, dt uint8, dims []byte, n uint16, nilInput bool) {
		in := cuvilTestInput()
		v := reflect.ValueOf(&in).Elem()
		for i := 0; i < v.NumField(); i++ {
			fv := v.Field(i)
			if fv.Type() != reflect.TypeOf((*Tensor)(nil)) {
				continue
			}
			if nilInput {
				fv.Set(reflect.Zero(fv.Type()))
				continue
			}
			x := &Tensor{}
			if !cuvilTryResize(x, DType(dt%27), int(n%512)) {
				return // a dtype this package's Tensor cannot hold
			}
			shape := make([]int, len(dims)%6)
			for j := range shape {
				shape[j] = int(dims[j] % 9)
			}
			x.Shape = shape
			fv.Set(reflect.ValueOf(x))
			if i%2 == 1 {
				break // leave the other inputs valid now and then
			}
		}
		s := m.NewSession(WithThreads(2))
		defer s.Close()
		if _, err := s.Run(in); err != nil && strings.Contains(err.Error(), "internal error") {
			t.Fatalf("Run: %v", err)
		}
	})
}

// cuvilTryResize resizes t, reporting false where Resize refuses the dtype.
func cuvilTryResize(t *Tensor, dt DType, n int) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	t.Resize(dt, n)
	return true
}

// cuvilCheckWeights checks, after runs of the model, that its weights are
// as New loaded them: the blob still has the checksum gen compiled in, every
// constant equals a fresh copy decoded from the blob, and on a
// little-endian machine every numeric constant (bools excepted) is a view of
// the blob, not a copy.
func cuvilCheckWeights(t *testing.T, blob string, sum uint32, table []cuvilConst, consts []Tensor) {
	t.Helper()
	if got := cuvilChecksum(blob); got != sum {
		t.Errorf("the weights blob's checksum is %08x after the runs, want %08x", got, sum)
	}
	fresh := make([]Tensor, len(table))
	if _, err := cuvilLoad(blob, table, fresh, true); err != nil {
		t.Fatal(err)
	}
	start := uintptr(0)
	if blob != "" {
		start = uintptr(unsafe.Pointer(unsafe.StringData(blob)))
	}
	if cuvilLittleEndian && len(blob) > 1024 && start%8 != 0 {
		t.Errorf("the weights blob is at a misaligned address (%#x): every constant is a copy", start)
	}
	for i := range table {
		c := &table[i]
		if !cuvilSameTensor(&consts[i], &fresh[i]) {
			t.Errorf("constant %q changed", c.name)
		}
		if !cuvilLittleEndian || c.dtype == Bool || c.dtype == String || consts[i].Len() == 0 || start%8 != 0 {
			continue
		}
		if c.stored == F16 { // widened at New into memory of its own
			if p := reflect.ValueOf(consts[i].Data).Pointer(); p >= start && p < start+uintptr(len(blob)) {
				t.Errorf("constant %q stored f16 is a view of the weights, not its widened copy", c.name)
			}
			continue
		}
		if p := reflect.ValueOf(consts[i].Data).Pointer(); p < start || p >= start+uintptr(len(blob)) {
			t.Errorf("constant %q (%s) is a copy, not a view of the weights", c.name, c.dtype)
		}
	}
}

// cuvilCheckWeightsFile checks a -weights file package's loaders: open
// (NewFromFile) and read (NewFromReader) accept the weights file at path,
// of size bytes, and refuse a missing, truncated, longer or corrupted copy
// with an error that says so.
func cuvilCheckWeightsFile(t *testing.T, path string, size int64, open func(string) error, read func(io.ReaderAt, int64) error) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(data)) != size {
		t.Fatalf("%s has %d bytes, the package wants %d", path, len(data), size)
	}
	if err := open(path); err != nil {
		t.Fatalf("NewFromFile: %v", err)
	}
	if err := read(bytes.NewReader(data), size); err != nil {
		t.Fatalf("NewFromReader: %v", err)
	}
	dir := t.TempDir()
	if err := open(filepath.Join(dir, "missing.bin")); err == nil || !os.IsNotExist(errors.Unwrap(err)) {
		t.Errorf("a missing file: %v, want an error wrapping not-exist", err)
	}
	try := func(what string, b []byte, want string) {
		t.Helper()
		p := filepath.Join(dir, what+".bin")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := open(p); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("NewFromFile of a %s file: %v, want an error saying %q", what, err, want)
		}
		if err := read(bytes.NewReader(b), int64(len(b))); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("NewFromReader of a %s file: %v, want an error saying %q", what, err, want)
		}
	}
	try("longer", append(append([]byte{}, data...), 0), "another compile")
	if size == 0 {
		return
	}
	try("truncated", data[:size-1], "truncated")
	try("empty", nil, "truncated")
	bad := append([]byte{}, data...)
	bad[size/2] ^= 0x5a
	try("corrupted", bad, "checksum")
	if err := read(bytes.NewReader(data[:size-1]), size); err == nil || !strings.Contains(err.Error(), "truncated") {
		t.Errorf("NewFromReader of a reader shorter than its size: %v", err)
	}
}

//cuvil:model-go Everything below stands for what model.go and
// model_test.go declare, so that this file compiles and runs in templates/;
// gen drops it on copy.

// Input, Output, Model, Session, New and cuvilTestInput stand for a
// generated package's: a model of one float32 input [2, n] whose Run
// checks it as model.go does and returns its negation.
type Input struct{ X *Tensor }

type Output struct{ Y *Tensor }

type Model struct{}

type Session struct{ closed bool }

var cuvilInputs = [...]cuvilInputSpec{{name: "x", dtype: F32, dims: []cuvilDim{{size: 2, sym: -1}, {sym: 0}}}}

func New() (*Model, error) { return &Model{}, nil }

func cuvilTestModel() (*Model, error) { return New() }

func (m *Model) NewSession(opts ...Option) *Session { return &Session{} }

func (s *Session) Close() { s.closed = true }

func (s *Session) Run(in Input) (out Output, err error) {
	if s.closed {
		return Output{}, errCuvilClosed
	}
	defer func() {
		if r := recover(); r != nil {
			err = cuvilPanicError("", r)
		}
	}()
	syms := []int{-1}
	if err := cuvilCheckInput(&cuvilInputs[0], in.X, syms); err != nil {
		return Output{}, err
	}
	y := &Tensor{}
	y.Resize(F32, in.X.Shape...)
	for i, v := range in.X.F32() {
		y.F32()[i] = -v
	}
	return Output{Y: y}, nil
}

func cuvilTestInput() Input { return Input{X: cuvilTestTensor(F32, []int{2, 3}, 1)} }
