// Command harnessmain is the fixed part of the program that `cuvil run`,
// `check`, `conformance` and `bench` build: internal/harness copies this
// file into a temporary module next to one generated package per model and
// a models.go that registers each model's runner in the models map. It
// reads a JSON manifest of jobs, runs each (recovering from panics), writes
// the outputs in the harness tensor format (see tensorfile.go in
// internal/harness) and prints one JSON line per job. It imports only the
// standard library.
package main

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"time"
)

// maxElems bounds a tensor file's elements: 2^34, or 2^30 where int is 32
// bits (GOARCH=arm, 386, mips).
const maxElems = 1 << 34 >> ((64 - 32<<(^uint(0)>>63)) / 32 * 4)

// tensorData is a value in the harness's own terms; models.go converts it
// to and from each generated package's Tensor. Kind is kindTensor (Data
// holds the elements), kindSequence (Data is a []*tensorData) or
// kindOptional (Data is a *tensorData, nil for none); DType is the
// innermost tensors' dtype.
type tensorData struct {
	Kind  uint8
	DType uint8
	Shape []int
	Data  any
}

const (
	kindTensor   = 0
	kindSequence = 'S'
	kindOptional = 'O'
	kindMap      = 'M' // Data is []*tensorData{keys, values}, DType the values'
)

// maxNesting bounds how deep sequences and optionals nest.
const maxNesting = 16

// runner runs one model: warmup untimed runs (at least one run happens),
// then runs timed runs, each under a context with the deadline when it is
// positive; it returns the last outputs (of a run without a deadline),
// which timed runs the deadline cancelled, and with prof the per-node
// profile of the timed runs; with trace a path, it writes the timed runs'
// Chrome trace there (WithTrace, Session.WriteTrace).
type runner func(ins []*tensorData, warmup, runs int, prof bool, trace string, deadline, spin time.Duration) ([]*tensorData, []time.Duration, []bool, []nodeTime, error)

// nodeTime is one node's entry of a generated session's profile.
type nodeTime struct {
	Name    string `json:"name"`
	Op      string `json:"op"`
	Runs    int    `json:"runs"`
	TotalNS int64  `json:"total_ns"`
}

var models = map[string]runner{}

type job struct {
	Model   string   `json:"model"`
	Inputs  []string `json:"inputs"`
	Out     string   `json:"out"`
	Warmup  int      `json:"warmup"`
	Runs    int      `json:"runs"`
	Profile bool     `json:"profile,omitempty"`
	Trace   string   `json:"trace,omitempty"`
	// DeadlineNS > 0 runs each timed run under a context with this timeout.
	DeadlineNS int64 `json:"deadline_ns,omitempty"`
	// SpinNS != 0 sets the session's WithSpin (negative: no spin).
	SpinNS int64 `json:"spin_ns,omitempty"`
}

type result struct {
	Job     int     `json:"job"`
	Outputs int     `json:"outputs"`
	Error   string  `json:"error,omitempty"`
	TimesNS []int64 `json:"times_ns,omitempty"`
	// Cancelled[i] says the deadline stopped timed run i.
	Cancelled []bool     `json:"cancelled,omitempty"`
	Profile   []nodeTime `json:"profile,omitempty"`
}

func main() {
	manifest := flag.String("manifest", "", "JSON list of jobs")
	threads := flag.Int("threads", 0, "GOMAXPROCS (0: leave as is)")
	flag.Parse()
	if *threads > 0 {
		runtime.GOMAXPROCS(*threads)
	}
	b, err := os.ReadFile(*manifest)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var jobs []job
	if err := json.Unmarshal(b, &jobs); err != nil {
		fmt.Fprintln(os.Stderr, "manifest:", err)
		os.Exit(1)
	}
	w := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(w)
	for i, j := range jobs {
		r := runJob(j)
		r.Job = i
		enc.Encode(r)
		w.Flush()
	}
}

func runJob(j job) (res result) {
	run, ok := models[j.Model]
	if !ok {
		return result{Error: "no model " + strconv.Quote(j.Model) + " in this build"}
	}
	var ins []*tensorData
	for _, path := range j.Inputs {
		t, err := readTensorFile(path)
		if err != nil {
			return result{Error: err.Error()}
		}
		ins = append(ins, t)
	}
	defer func() {
		if r := recover(); r != nil {
			res = result{Error: fmt.Sprintf("panic: %v", r)}
		}
	}()
	outs, times, cancelled, prof, err := run(ins, j.Warmup, j.Runs, j.Profile, j.Trace, time.Duration(j.DeadlineNS), time.Duration(j.SpinNS))
	if err != nil {
		return result{Error: err.Error()}
	}
	for k, t := range outs {
		if err := writeTensorFile(filepath.Join(j.Out, "output_"+strconv.Itoa(k)+".cuvt"), t); err != nil {
			return result{Error: err.Error()}
		}
	}
	res.Outputs = len(outs)
	for _, d := range times {
		res.TimesNS = append(res.TimesNS, d.Nanoseconds())
	}
	res.Profile = prof
	res.Cancelled = cancelled
	return res
}

// writeTrace writes a session's trace (its WriteTrace) to the file path.
func writeTrace(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// timeRuns calls f(false) warmup times (at least once in all), then reset,
// then f(true) runs times, timing each of those.
func timeRuns(warmup, runs int, f func(timed bool) error, reset func()) ([]time.Duration, error) {
	if warmup < 1 && runs < 1 {
		warmup = 1
	}
	for i := 0; i < warmup; i++ {
		if err := f(false); err != nil {
			return nil, err
		}
	}
	reset()
	times := make([]time.Duration, 0, runs)
	for i := 0; i < runs; i++ {
		start := time.Now()
		if err := f(true); err != nil {
			return nil, err
		}
		times = append(times, time.Since(start))
	}
	return times, nil
}

// Tensor file format: see gen/tensorfile.go.

func elemSize(dt uint8) int {
	switch dt {
	case 2, 3, 9: // u8 i8 bool
		return 1
	case 17, 18, 19, 20, 21, 22, 23, 24, 25, 26: // float8s, u4 i4 f4e2m1 e8m0 u2 i2: a byte each
		return 1
	case 4, 5, 10, 16: // u16 i16 f16 bf16
		return 2
	case 1, 6, 12: // f32 i32 u32
		return 4
	case 7, 11, 13: // i64 f64 u64
		return 8
	}
	return 0
}

func readTensorFile(path string) (*tensorData, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	t, err := readTensor(bufio.NewReader(f))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return t, nil
}

func readTensor(r io.Reader) (*tensorData, error) { return readValue(r, 0) }

// readValue reads a tensor (version 1 record) or a sequence or optional
// (version 2 record, followed by its elements).
func readValue(r io.Reader, depth int) (*tensorData, error) {
	var hdr [12]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	if string(hdr[:4]) != "CUVT" || (hdr[4] != 1 && hdr[4] != 2) {
		return nil, errors.New("not a version 1 or 2 cuvil tensor file")
	}
	if hdr[4] == 2 {
		if depth >= maxNesting {
			return nil, fmt.Errorf("values nest deeper than %d", maxNesting)
		}
		t := &tensorData{Kind: hdr[5], DType: hdr[6], Shape: []int{}}
		n := binary.LittleEndian.Uint32(hdr[8:])
		switch t.Kind {
		case kindSequence, kindMap:
			if t.Kind == kindMap && n != 2 {
				return nil, fmt.Errorf("map record holds %d tensors, want 2", n)
			}
			if n > 1<<24 {
				return nil, fmt.Errorf("sequence of %d elements is too long", n)
			}
			elems := make([]*tensorData, n)
			for i := range elems {
				e, err := readValue(r, depth+1)
				if err != nil {
					return nil, fmt.Errorf("element %d: %v", i, err)
				}
				elems[i] = e
			}
			t.Data = elems
		case kindOptional:
			if n > 1 {
				return nil, fmt.Errorf("optional holds %d values", n)
			}
			var v *tensorData
			if n == 1 {
				e, err := readValue(r, depth+1)
				if err != nil {
					return nil, fmt.Errorf("optional value: %v", err)
				}
				v = e
			}
			t.Data = v
		default:
			return nil, fmt.Errorf("unknown value kind %q", t.Kind)
		}
		return t, nil
	}
	t := &tensorData{DType: hdr[5]}
	rank := binary.LittleEndian.Uint32(hdr[8:])
	if rank > 64 {
		return nil, fmt.Errorf("rank %d is too large", rank)
	}
	n := 1
	for i := 0; i < int(rank); i++ {
		var d [8]byte
		if _, err := io.ReadFull(r, d[:]); err != nil {
			return nil, err
		}
		v := binary.LittleEndian.Uint64(d[:])
		if v > maxElems || n != 0 && v > maxElems/uint64(n) {
			return nil, fmt.Errorf("dim %d is too large", v)
		}
		t.Shape = append(t.Shape, int(v))
		n *= int(v)
	}
	if t.Shape == nil {
		t.Shape = []int{}
	}
	if t.DType == 8 { // string
		s := make([]string, n)
		for i := range s {
			var l [4]byte
			if _, err := io.ReadFull(r, l[:]); err != nil {
				return nil, err
			}
			b := make([]byte, binary.LittleEndian.Uint32(l[:]))
			if _, err := io.ReadFull(r, b); err != nil {
				return nil, err
			}
			s[i] = string(b)
		}
		t.Data = s
		return t, nil
	}
	size := elemSize(t.DType)
	if size == 0 {
		return nil, fmt.Errorf("unsupported dtype %d", t.DType)
	}
	b := make([]byte, n*size)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, err
	}
	le := binary.LittleEndian
	switch t.DType {
	case 1:
		d := make([]float32, n)
		for i := range d {
			d[i] = math.Float32frombits(le.Uint32(b[4*i:]))
		}
		t.Data = d
	case 11:
		d := make([]float64, n)
		for i := range d {
			d[i] = math.Float64frombits(le.Uint64(b[8*i:]))
		}
		t.Data = d
	case 4, 10, 16:
		d := make([]uint16, n)
		for i := range d {
			d[i] = le.Uint16(b[2*i:])
		}
		t.Data = d
	case 5:
		d := make([]int16, n)
		for i := range d {
			d[i] = int16(le.Uint16(b[2*i:]))
		}
		t.Data = d
	case 2, 17, 18, 19, 20, 21, 23, 24, 25:
		t.Data = b
	case 3, 22, 26:
		d := make([]int8, n)
		for i := range d {
			d[i] = int8(b[i])
		}
		t.Data = d
	case 9:
		d := make([]bool, n)
		for i := range d {
			d[i] = b[i] != 0
		}
		t.Data = d
	case 6:
		d := make([]int32, n)
		for i := range d {
			d[i] = int32(le.Uint32(b[4*i:]))
		}
		t.Data = d
	case 12:
		d := make([]uint32, n)
		for i := range d {
			d[i] = le.Uint32(b[4*i:])
		}
		t.Data = d
	case 7:
		d := make([]int64, n)
		for i := range d {
			d[i] = int64(le.Uint64(b[8*i:]))
		}
		t.Data = d
	case 13:
		d := make([]uint64, n)
		for i := range d {
			d[i] = le.Uint64(b[8*i:])
		}
		t.Data = d
	}
	return t, nil
}

func writeTensorFile(path string, t *tensorData) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	err = writeTensor(w, t)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func writeTensor(w io.Writer, t *tensorData) error { return writeValue(w, t, 0) }

// writeValue writes a tensor, sequence or optional (see readValue).
func writeValue(w io.Writer, t *tensorData, depth int) error {
	le := binary.LittleEndian
	if t == nil {
		return errors.New("output is missing")
	}
	if t.Kind != kindTensor {
		if depth >= maxNesting {
			return fmt.Errorf("values nest deeper than %d", maxNesting)
		}
		var elems []*tensorData
		switch d := t.Data.(type) {
		case []*tensorData:
			elems = d
		case *tensorData:
			if d != nil {
				elems = []*tensorData{d}
			}
		default:
			return fmt.Errorf("value of kind %q has data %T", t.Kind, t.Data)
		}
		b := []byte{'C', 'U', 'V', 'T', 2, t.Kind, t.DType, 0}
		b = le.AppendUint32(b, uint32(len(elems)))
		if _, err := w.Write(b); err != nil {
			return err
		}
		for i, e := range elems {
			if err := writeValue(w, e, depth+1); err != nil {
				return fmt.Errorf("element %d: %v", i, err)
			}
		}
		return nil
	}
	b := []byte{'C', 'U', 'V', 'T', 1, t.DType, 0, 0}
	b = le.AppendUint32(b, uint32(len(t.Shape)))
	for _, d := range t.Shape {
		b = le.AppendUint64(b, uint64(d))
	}
	switch d := t.Data.(type) {
	case []float32:
		for _, v := range d {
			b = le.AppendUint32(b, math.Float32bits(v))
		}
	case []float64:
		for _, v := range d {
			b = le.AppendUint64(b, math.Float64bits(v))
		}
	case []uint16:
		for _, v := range d {
			b = le.AppendUint16(b, v)
		}
	case []int16:
		for _, v := range d {
			b = le.AppendUint16(b, uint16(v))
		}
	case []uint8:
		b = append(b, d...)
	case []int8:
		for _, v := range d {
			b = append(b, byte(v))
		}
	case []bool:
		for _, v := range d {
			if v {
				b = append(b, 1)
			} else {
				b = append(b, 0)
			}
		}
	case []int32:
		for _, v := range d {
			b = le.AppendUint32(b, uint32(v))
		}
	case []uint32:
		for _, v := range d {
			b = le.AppendUint32(b, v)
		}
	case []int64:
		for _, v := range d {
			b = le.AppendUint64(b, uint64(v))
		}
	case []uint64:
		for _, v := range d {
			b = le.AppendUint64(b, v)
		}
	case []string:
		for _, v := range d {
			b = le.AppendUint32(b, uint32(len(v)))
			b = append(b, v...)
		}
	default:
		return fmt.Errorf("output has unsupported data %T", t.Data)
	}
	_, err := w.Write(b)
	return err
}
