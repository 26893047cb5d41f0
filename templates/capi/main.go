//go:build cuvil_capi

// Command capi is the C API of the Go package PKG (github.com/cuvil/cuvil/examples/python/mnist).
// Build it into a shared library and its C header with
//
//	go build -buildmode=c-shared -o libPKG.so .
//
// (or `make`). The header libPKG.h documents the functions.
package main

/*
// C API of the model PKG, compiled by cuvil into libPKG.so.
//
// Every function is prefixed PKG_. Buffers are void*: element type and
// layout (row-major, packed, native endianness) follow the tensor's dtype,
// numbered as ONNX's TensorProto.DataType: 1 float32, 2 uint8, 3 int8,
// 4 uint16, 5 int16, 6 int32, 7 int64, 9 bool (1 byte), 10 float16 (bits),
// 11 float64, 12 uint32, 13 uint64, 16 bfloat16 (bits). Inputs are only read.
//
// Contexts. PKG_create returns a context handle (0 on failure) that
// owns a session, its memory and its last error. Calls on one context are
// serialised; different contexts run in parallel, so use one context per
// thread for throughput. PKG_destroy frees it. Handles carry a
// generation count: a destroyed, stale or made-up handle is refused with
// status 1, never used, and a handle is never reissued by a later create.
//
// Status codes: 0 ok, 1 no such context (never created, or destroyed),
// 2 bad argument (index, dtype, rank, shape, NULL buffer, buffer size, a
// shape whose size overflows), 3 the model failed to run, 4 the model's
// weights failed to load.
//
// Errors. PKG_last_error(ctx) returns the message of the context's last
// call ("" after a success). The string is owned by the context: its text
// is valid until the context's next call, and the memory stays readable
// for the life of the library (it is recycled, never freed), so a stale
// pointer reads an unrelated message, never freed memory.
// PKG_last_error(0) returns the calling thread's last error of a call
//tmpl:begin
// not tied to a live context (PKG_create, PKG_inference_n, any call
//tmpl:as
//// not tied to a live context ({{.Pkg}}_create{{if .Inference}}, {{.Pkg}}_inference_n{{end}}, any call
//tmpl:end
// given a bad handle): each thread has its own buffer (freed when the
// thread exits), valid until that thread's next such call; no other
// thread's call changes or frees it. PKG_error_message(ctx, buf, n)
// copies the same message into a caller buffer (at most n-1 bytes and a
// NUL, cut at a UTF-8 boundary) and returns its full length, so a caller
// can retry with a larger buffer. Messages are UTF-8 and cut at 4095
// bytes, except that error_message gives a context's message whole.
//
// Symbolic dims (PKG_sym_count, PKG_sym_name) take their sizes
// from PKG_set_dims_n(ctx, sizes, n) before a run, or from the shapes
// given to the _tensors calls; shape queries report them as -1. An input
// whose element count or byte size overflows at the given sizes is an
// error (status 2), at set_dims_n and at every run.
//
// Running, checked (use these): PKG_eval_tensors(ctx, ins, nin)
// takes one PKG_tensor per input, in declaration order, and checks
// each against the model: dtype, rank, every dim (constant dims equal,
// a symbolic dim equal across inputs), NULL or misaligned data, and that
// nbytes holds the data; it runs and keeps the outputs in the context, read with
// PKG_result_rank, PKG_result_shape_n and PKG_result_copy
// (which takes the destination's size). PKG_run_tensors(ctx, ins, nin,
// outs, nout) also writes every output into outs[i].data, checking its
// dtype, its nbytes and, when outs[i].dims is not NULL, its shape.
// The outputs an eval keeps stay valid until the context's next call;
// they never point into the caller's input buffers.
//
// Running, unchecked (kept for existing callers): PKG_run(ctx, in...,
// out...), PKG_eval(ctx, in...), PKG_set_dims(ctx, sizes) and
// PKG_result_shape(ctx, i, dims) take bare pointers: the library
// cannot know their lengths and trusts that each input buffer holds the
// input's declared shape (symbolic dims at their set sizes), each output
// buffer the output's, sizes sym_count entries and dims output_rank(i).
//tmpl:begin
// A shorter buffer is read or written past its end.
//tmpl:as
//// A shorter buffer is read or written past its end.{{if .Inference}}
//tmpl:end
//
// PKG_inference_n(in, in_nbytes, out, out_nbytes) runs the model on a
// pooled internal session (safe from any thread) with one input and one
// output buffer of the given sizes; PKG_inference(in, out) is its
// unchecked form (buffers of the declared sizes). Errors of both are the
//tmpl:begin
// calling thread's, PKG_last_error(0).
//tmpl:as
//// calling thread's, {{.Pkg}}_last_error(0).{{end}}
//tmpl:end
//
// A Go panic in the calling goroutine becomes status 3 with its message
// (create returns 0, result_rank -1, error_message -1), not an abort;
// panics in the model's worker goroutines are the generated package's to
// turn into errors.

#include <stdint.h>
#include <stddef.h>

// PKG_tensor describes one caller buffer for the checked calls.
typedef struct {
	void *data;           // the elements (may be NULL when there are none)
	int64_t nbytes;       // size of data in bytes
	int32_t dtype;        // ONNX TensorProto.DataType, must be the model's
	int32_t rank;         // number of dims
	const int64_t *dims;  // rank sizes (may be NULL when rank is 0)
} PKG_tensor;
*/
import "C"

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"unsafe"

	model "github.com/cuvil/cuvil/examples/python/mnist"
)

func main() {}

const (
	statusOK     = 0
	statusBadCtx = 1
	statusBadArg = 2
	statusRun    = 3
	statusLoad   = 4
)

// maxBytes bounds any buffer the API accepts: no process holds more.
const maxBytes = 1 << 47

// cuvilArg is an input or output as the model declares it: dims[d] is -1
// for a symbolic dim, whose index into symNames is sym[d].
type cuvilArg struct {
	name  string
	dtype model.DType
	dims  []int64
	sym   []int
	cname *C.char
	csyms []*C.char
}

//tmpl:begin

var symNames = []string{}

//tmpl:as
//var symNames = []string{ {{- range .Syms}}{{printf "%q" .}}, {{end -}} }
//tmpl:end

var inputs = []cuvilArg{
	//tmpl:begin
	{name: "input", dtype: model.F32, dims: []int64{1, 1, 28, 28}, sym: []int{-1, -1, -1, -1}},
	//tmpl:as
	//{{- range .Inputs}}
	//	{name: {{printf "%q" .Name}}, dtype: {{.DType}}, dims: []int64{ {{- range .Dims}}{{.}}, {{end -}} }, sym: []int{ {{- range .Sym}}{{.}}, {{end -}} }},
	//{{- end}}
	//tmpl:end
}

var outputs = []cuvilArg{
	//tmpl:begin
	{name: "log_probs", dtype: model.F32, dims: []int64{1, 10}, sym: []int{-1, -1}},
	//tmpl:as
	//{{- range .Outputs}}
	//	{name: {{printf "%q" .Name}}, dtype: {{.DType}}, dims: []int64{ {{- range .Dims}}{{.}}, {{end -}} }, sym: []int{ {{- range .Sym}}{{.}}, {{end -}} }},
	//{{- end}}
	//tmpl:end
}

// C copies of the names, made once and never freed.
var cSymNames []*C.char

func init() {
	for _, s := range symNames {
		cSymNames = append(cSymNames, keepString(s))
	}
	for _, args := range [][]cuvilArg{inputs, outputs} {
		for i := range args {
			a := &args[i]
			a.cname = keepString(a.name)
			a.csyms = make([]*C.char, len(a.dims))
			for d, s := range a.sym {
				if s >= 0 {
					a.csyms[d] = cSymNames[s]
				}
			}
		}
	}
}

//tmpl:begin

// modelInput builds the generated package's Input from the context's tensors.
func modelInput(t *[1]model.Tensor) model.Input {
	//tmpl:as
	//// modelInput builds the generated package's Input from the context's tensors.
	//func modelInput(t *[{{len .Inputs}}]model.Tensor) model.Input {
	//tmpl:end
	return model.Input{
		//tmpl:begin
		Input: &t[0],
		//tmpl:as
		//{{- range $i, $in := .Inputs}}
		//		{{$in.Field}}: &t[{{$i}}],
		//{{- end}}
		//tmpl:end
	}
}

// outputAt returns output i of o.
func outputAt(o *model.Output, i int) *model.Tensor {
	switch i {
	//tmpl:begin
	case 0:
		return o.LogProbs
		//tmpl:as
		//{{- range $i, $out := .Outputs}}
		//	case {{$i}}:
		//		return o.{{$out.Field}}
		//{{- end}}
		//tmpl:end
	}
	return nil
}

var (
	theModel *model.Model
	modelErr error
	loadOnce sync.Once
)

func loadModel() (*model.Model, error) {
	loadOnce.Do(func() { theModel, modelErr = model.New() })
	return theModel, modelErr
}

// cuvilCtx is what a context handle stands for.
type cuvilCtx struct {
	mu     sync.Mutex
	closed bool // destroyed: every call is refused
	pooled bool // an inference context: errors go to the thread's buffer
	s      *model.Session
	syms   []int
	//tmpl:begin
	ins    [1]model.Tensor
	shapes [1][]int
	//tmpl:as
	//	ins    [{{len .Inputs}}]model.Tensor
	//	shapes [{{len .Inputs}}][]int
	//tmpl:end
	out    model.Output
	hasOut bool
	err    string  // the last call's message
	errBuf *C.char // its C copy, errCap bytes from errBufs
}

// Handles: the low half of a handle is a slot of the table plus one, the
// high half the slot's generation, bumped when the context is destroyed.
const (
	handleBits = 4 * unsafe.Sizeof(uintptr(0))
	handleMask = uintptr(1)<<handleBits - 1
)

type ctxSlot struct {
	gen uintptr
	c   *cuvilCtx
}

var (
	ctxMu   sync.Mutex
	slots   []ctxSlot
	free    []int
	errBufs []*C.char // error buffers of destroyed contexts, for reuse
)

func newErrBuf() *C.char {
	ctxMu.Lock()
	defer ctxMu.Unlock()
	if n := len(errBufs); n > 0 {
		b := errBufs[n-1]
		errBufs = errBufs[:n-1]
		return b
	}
	return keepAlloc(errCap)
}

func register(c *cuvilCtx) C.uintptr_t {
	ctxMu.Lock()
	defer ctxMu.Unlock()
	var i int
	if n := len(free); n > 0 {
		i = free[n-1]
		free = free[:n-1]
	} else {
		i = len(slots)
		if uintptr(i+1) > handleMask {
			return 0
		}
		// A random first generation makes a made-up handle unlikely to match.
		slots = append(slots, ctxSlot{gen: uintptr(rand.Uint64())&handleMask | 1})
	}
	slots[i].c = c
	return C.uintptr_t(slots[i].gen<<handleBits | uintptr(i+1))
}

// lookup returns the live context of h, or nil.
func lookup(h C.uintptr_t) *cuvilCtx {
	i := int(uintptr(h)&handleMask) - 1
	gen := uintptr(h) >> handleBits
	ctxMu.Lock()
	defer ctxMu.Unlock()
	if i < 0 || i >= len(slots) || slots[i].gen != gen {
		return nil
	}
	return slots[i].c
}

// unregister removes h from the table and returns its context, or nil.
func unregister(h C.uintptr_t) *cuvilCtx {
	i := int(uintptr(h)&handleMask) - 1
	gen := uintptr(h) >> handleBits
	ctxMu.Lock()
	defer ctxMu.Unlock()
	if i < 0 || i >= len(slots) || slots[i].gen != gen || slots[i].c == nil {
		return nil
	}
	c := slots[i].c
	slots[i].c = nil
	slots[i].gen = (slots[i].gen + 1) & handleMask
	if slots[i].gen == 0 {
		slots[i].gen = 1
	}
	free = append(free, i)
	return c
}

func badHandle(h C.uintptr_t) C.int {
	setThreadErr(fmt.Sprintf("context handle %#x: no such context (destroyed, or never created)", uintptr(h)))
	return statusBadCtx
}

var noContext = keepString("no such context (destroyed, or never created)")

// enter looks h up and locks its context; unlock with c.mu.Unlock. It
// returns nil, after recording the error for the calling thread, when h is
// not a live context.
func enter(h C.uintptr_t) *cuvilCtx {
	c := lookup(h)
	if c == nil {
		badHandle(h)
		return nil
	}
	c.mu.Lock()
	if c.closed { // destroyed between the lookup and the lock
		c.mu.Unlock()
		badHandle(h)
		return nil
	}
	return c
}

// setErr records err (nil for success) as the context's last error and
// returns code.
func (c *cuvilCtx) setErr(code C.int, err error) C.int {
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	if c.pooled {
		setThreadErr(msg)
		return code
	}
	c.err = msg
	writeErr(c.errBuf, msg)
	return code
}

// catch turns a panic of an exported function into status 3.
func (c *cuvilCtx) catch(code *C.int) {
	if r := recover(); r != nil {
		*code = c.setErr(statusRun, fmt.Errorf("panic in the C API: %v", r))
	}
}

// catchThread turns a panic of a function without a context into status 3.
func catchThread(code *C.int) {
	if r := recover(); r != nil {
		setThreadErr(fmt.Sprintf("panic in the C API: %v", r))
		*code = statusRun
	}
}

func newCtx(m *model.Model) *cuvilCtx {
	c := &cuvilCtx{s: m.NewSession(), syms: make([]int, len(symNames))}
	for i := range c.syms {
		c.syms[i] = -1
	}
	for i, a := range inputs {
		c.shapes[i] = make([]int, len(a.dims))
	}
	return c
}

// PKG_create returns a new context, or 0 with the reason in
// PKG_last_error(0).
//
//export PKG_create
func PKG_create() (h C.uintptr_t) {
	defer func() {
		if r := recover(); r != nil {
			setThreadErr(fmt.Sprintf("panic in the C API: %v", r))
			h = 0
		}
	}()
	m, err := loadModel()
	if err != nil {
		setThreadErr(fmt.Sprintf("loading the model: %v", err))
		return 0
	}
	c := newCtx(m)
	c.errBuf = newErrBuf()
	writeErr(c.errBuf, "")
	h = register(c)
	if h == 0 {
		c.s.Close()
		setThreadErr("too many contexts")
		return 0
	}
	setThreadErr("")
	return h
}

// PKG_destroy frees a context; its handle is refused afterwards.
// It returns 0, or 1 for a handle that is not a live context.
//
//export PKG_destroy
func PKG_destroy(ctx C.uintptr_t) (code C.int) {
	defer catchThread(&code)
	c := unregister(ctx)
	if c == nil {
		return badHandle(ctx)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	c.s.Close()
	c.out, c.hasOut = model.Output{}, false
	//tmpl:begin
	c.ins = [1]model.Tensor{}
	//tmpl:as
	//	c.ins = [{{len .Inputs}}]model.Tensor{}
	//tmpl:end
	writeErr(c.errBuf, "context destroyed")
	ctxMu.Lock()
	errBufs = append(errBufs, c.errBuf)
	ctxMu.Unlock()
	c.errBuf = nil
	return statusOK
}

// PKG_last_error returns the context's last error ("" after a
// success), or for ctx 0 the calling thread's; never NULL. See the top of
// this header for how long the string is valid.
//
//export PKG_last_error
func PKG_last_error(ctx C.uintptr_t) *C.char {
	if ctx == 0 {
		return threadErr()
	}
	c := lookup(ctx)
	if c == nil {
		return noContext
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return noContext
	}
	return c.errBuf
}

// PKG_error_message copies the message PKG_last_error(ctx) would
// return, whole, into buf (at most n-1 bytes and a NUL, cut at a UTF-8
// boundary; nothing when n is 0) and returns its full length in bytes.
//
//export PKG_error_message
func PKG_error_message(ctx C.uintptr_t, buf *C.char, n C.size_t) (length C.int64_t) {
	defer func() {
		if recover() != nil {
			length = -1
		}
	}()
	var msg string
	if ctx == 0 {
		msg = C.GoString(threadErr())
	} else if c := lookup(ctx); c == nil {
		msg = C.GoString(noContext)
	} else {
		c.mu.Lock()
		if c.closed {
			msg = C.GoString(noContext)
		} else {
			msg = c.err
		}
		c.mu.Unlock()
	}
	if buf != nil && n > 0 {
		s := truncate(msg, int(min(uint64(n-1), uint64(len(msg)))))
		b := unsafe.Slice((*byte)(unsafe.Pointer(buf)), len(s)+1)
		copy(b, s)
		b[len(s)] = 0
	}
	return C.int64_t(len(msg))
}

//export PKG_input_count
func PKG_input_count() C.int { return C.int(len(inputs)) }

//export PKG_output_count
func PKG_output_count() C.int { return C.int(len(outputs)) }

//export PKG_sym_count
func PKG_sym_count() C.int { return C.int(len(symNames)) }

// PKG_sym_name returns the name of symbolic dim i, or NULL.
//
//export PKG_sym_name
func PKG_sym_name(i C.int) *C.char {
	if i < 0 || int(i) >= len(cSymNames) {
		return nil
	}
	return cSymNames[i]
}

func argAt(args []cuvilArg, i C.int) *cuvilArg {
	if i < 0 || int(i) >= len(args) {
		return nil
	}
	return &args[i]
}

func argName(a *cuvilArg) *C.char {
	if a == nil {
		return nil
	}
	return a.cname
}

func argDType(a *cuvilArg) C.int {
	if a == nil {
		return -1
	}
	return C.int(a.dtype)
}

func argRank(a *cuvilArg) C.int {
	if a == nil {
		return -1
	}
	return C.int(len(a.dims))
}

// argShape writes the declared dims (-1 for symbolic) and returns the rank.
func argShape(a *cuvilArg, dims *C.int64_t) C.int {
	if a == nil || (dims == nil && len(a.dims) > 0) {
		return -1
	}
	if len(a.dims) > 0 {
		out := unsafe.Slice((*int64)(unsafe.Pointer(dims)), len(a.dims))
		copy(out, a.dims)
	}
	return C.int(len(a.dims))
}

func argDimName(a *cuvilArg, d C.int) *C.char {
	if a == nil || d < 0 || int(d) >= len(a.dims) {
		return nil
	}
	return a.csyms[d]
}

// PKG_input_name returns the name of input i, or NULL when there is none.
//
//export PKG_input_name
func PKG_input_name(i C.int) *C.char { return argName(argAt(inputs, i)) }

// PKG_input_dtype returns the dtype code of input i, or -1.
//
//export PKG_input_dtype
func PKG_input_dtype(i C.int) C.int { return argDType(argAt(inputs, i)) }

// PKG_input_rank returns the rank of input i, or -1.
//
//export PKG_input_rank
func PKG_input_rank(i C.int) C.int { return argRank(argAt(inputs, i)) }

// PKG_input_shape writes the declared dims of input i (-1 for a
// symbolic dim) into dims, which must hold input_rank(i) entries, and
// returns the rank, or -1.
//
//export PKG_input_shape
func PKG_input_shape(i C.int, dims *C.int64_t) C.int { return argShape(argAt(inputs, i), dims) }

// PKG_input_dim_name returns the symbolic name of dim d of input i, or NULL.
//
//export PKG_input_dim_name
func PKG_input_dim_name(i, d C.int) *C.char { return argDimName(argAt(inputs, i), d) }

//export PKG_output_name
func PKG_output_name(i C.int) *C.char { return argName(argAt(outputs, i)) }

//export PKG_output_dtype
func PKG_output_dtype(i C.int) C.int { return argDType(argAt(outputs, i)) }

//export PKG_output_rank
func PKG_output_rank(i C.int) C.int { return argRank(argAt(outputs, i)) }

// PKG_output_shape: as input_shape, for output i (dims holds
// output_rank(i) entries).
//
//export PKG_output_shape
func PKG_output_shape(i C.int, dims *C.int64_t) C.int { return argShape(argAt(outputs, i), dims) }

//export PKG_output_dim_name
func PKG_output_dim_name(i, d C.int) *C.char { return argDimName(argAt(outputs, i), d) }

// elemSize is the size in bytes of one element of dt in a C buffer.
func elemSize(dt model.DType) int64 {
	switch dt {
	case model.F64, model.I64, model.U64:
		return 8
	case model.F32, model.I32, model.U32:
		return 4
	case model.F16, model.BF16, model.U16, model.I16:
		return 2
	}
	return 1
}

// count returns the element count and byte size of shape for dtype dt,
// or an error when they overflow.
func count(what string, dt model.DType, shape []int) (n, nbytes int64, err error) {
	n = 1
	for _, d := range shape {
		if d == 0 {
			return 0, 0, nil
		}
	}
	for _, d := range shape {
		if d < 0 || int64(d) > maxBytes/n {
			return 0, 0, fmt.Errorf("%s: shape %v has more than 2^47 elements (overflow)", what, shape)
		}
		n *= int64(d)
	}
	if n > maxBytes/elemSize(dt) {
		return 0, 0, fmt.Errorf("%s: shape %v is more than 2^47 bytes (overflow)", what, shape)
	}
	return n, n * elemSize(dt), nil
}

// shapeOf fills the context's shape of input i from its declared dims and
// the set symbolic sizes.
func (c *cuvilCtx) shapeOf(i int, syms []int) ([]int, error) {
	a := &inputs[i]
	shape := c.shapes[i]
	for d, size := range a.dims {
		if size >= 0 {
			shape[d] = int(size)
			continue
		}
		v := syms[a.sym[d]]
		if v < 0 {
			return nil, fmt.Errorf("input %q: dim %d is the symbolic dim %s, whose size is not set (call PKG_set_dims_n)", a.name, d, symNames[a.sym[d]])
		}
		shape[d] = v
	}
	return shape, nil
}

// setSyms checks sizes and makes them the context's symbolic sizes.
func (c *cuvilCtx) setSyms(sizes []int64) error {
	next := make([]int, len(sizes))
	for i, v := range sizes {
		if v < 0 || v > maxBytes {
			return fmt.Errorf("set_dims: dim %s is %d, want >= 0 (and at most 2^47)", symNames[i], v)
		}
		next[i] = int(v)
	}
	for i, a := range inputs {
		shape, err := c.shapeOf(i, next)
		if err != nil {
			return err
		}
		if _, _, err := count(fmt.Sprintf("set_dims: input %q", a.name), a.dtype, shape); err != nil {
			return err
		}
	}
	copy(c.syms, next)
	return nil
}

// PKG_set_dims_n sets the sizes of the n symbolic dims (n must be
// PKG_sym_count()). A negative size, or sizes at which an input's
// element count overflows, is status 2 and changes nothing.
//
//export PKG_set_dims_n
func PKG_set_dims_n(ctx C.uintptr_t, sizes *C.int64_t, n C.int32_t) (code C.int) {
	c := enter(ctx)
	if c == nil {
		return statusBadCtx
	}
	defer c.mu.Unlock()
	defer c.catch(&code)
	if int(n) != len(symNames) {
		return c.setErr(statusBadArg, fmt.Errorf("set_dims_n: n is %d, the model has %d symbolic dims", n, len(symNames)))
	}
	if n == 0 {
		return c.setErr(statusOK, nil)
	}
	if sizes == nil {
		return c.setErr(statusBadArg, errors.New("set_dims_n: sizes is NULL"))
	}
	if err := c.setSyms(unsafe.Slice((*int64)(unsafe.Pointer(sizes)), n)); err != nil {
		return c.setErr(statusBadArg, err)
	}
	return c.setErr(statusOK, nil)
}

// PKG_set_dims is set_dims_n(ctx, sizes, sym_count()), unchecked:
// sizes must hold sym_count() entries.
//
//export PKG_set_dims
func PKG_set_dims(ctx C.uintptr_t, sizes *C.int64_t) (code C.int) {
	return PKG_set_dims_n(ctx, sizes, C.int32_t(len(symNames)))
}

// buffer is one caller buffer: nbytes < 0 when the caller did not say.
type buffer struct {
	p      unsafe.Pointer
	nbytes int64
}

// bind points input i's tensor at the caller's buffer b.
func (c *cuvilCtx) bind(i int, b buffer) error {
	a := &inputs[i]
	shape, err := c.shapeOf(i, c.syms)
	if err != nil {
		return err
	}
	n, nbytes, err := count(fmt.Sprintf("input %q", a.name), a.dtype, shape)
	if err != nil {
		return err
	}
	if b.nbytes >= 0 && b.nbytes < nbytes {
		return fmt.Errorf("input %q: buffer has %d bytes, shape %v of dtype %s needs %d", a.name, b.nbytes, shape, a.dtype, nbytes)
	}
	if b.p == nil && n > 0 {
		return fmt.Errorf("input %q: buffer is NULL", a.name)
	}
	if size := elemSize(a.dtype); n > 0 && uintptr(b.p)%uintptr(size) != 0 {
		return fmt.Errorf("input %q: buffer address %#x is not aligned to its %s elements (%d bytes)", a.name, uintptr(b.p), a.dtype, size)
	}
	var data any
	if n == 0 {
		data = cuvilSlice(a.dtype, nil, 0)
	} else {
		data = cuvilSlice(a.dtype, b.p, int(n))
	}
	c.ins[i] = model.Tensor{DType: a.dtype, Shape: shape, Data: data}
	return nil
}

// eval runs the model on the input buffers and keeps the outputs.
func (c *cuvilCtx) eval(bufs []buffer) C.int {
	c.hasOut = false
	if len(bufs) != len(inputs) {
		return c.setErr(statusBadArg, fmt.Errorf("the model has %d inputs, got %d", len(inputs), len(bufs)))
	}
	for i := range inputs {
		if err := c.bind(i, bufs[i]); err != nil {
			return c.setErr(statusBadArg, err)
		}
	}
	out, err := c.s.Run(modelInput(&c.ins))
	if err != nil {
		return c.setErr(statusRun, err)
	}
	// An output may be a view of an input (Identity, Reshape): copy it,
	// so that results never point into the caller's memory.
	for i := range outputs {
		t := outputAt(&out, i)
		if t == nil {
			return c.setErr(statusRun, fmt.Errorf("output %q: the model returned none", outputs[i].name))
		}
		b := cuvilBytes(t.Data)
		if len(b) == 0 {
			continue
		}
		lo := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
		for j := range inputs {
			in := cuvilBytes(c.ins[j].Data)
			if len(in) == 0 {
				continue
			}
			ilo := uintptr(unsafe.Pointer(unsafe.SliceData(in)))
			if lo < ilo+uintptr(len(in)) && ilo < lo+uintptr(len(b)) {
				cp := *t
				cp.Shape = append([]int(nil), t.Shape...)
				cp.Data = cuvilClone(t.Data)
				*t = cp
				break
			}
		}
	}
	c.out = out
	c.hasOut = true
	return c.setErr(statusOK, nil)
}

// checkDeclared reports an error unless output i has its declared shape
// at the set symbolic sizes, so that a caller-sized buffer holds it.
func (c *cuvilCtx) checkDeclared(i int, t *model.Tensor) error {
	a := &outputs[i]
	if len(t.Shape) != len(a.dims) {
		return fmt.Errorf("output %q has rank %d, declared %d", a.name, len(t.Shape), len(a.dims))
	}
	for d, size := range a.dims {
		want := int(size)
		if size < 0 {
			if a.sym[d] < 0 {
				return fmt.Errorf("output %q: dim %d depends on the data; use PKG_eval_tensors and PKG_result_copy", a.name, d)
			}
			want = c.syms[a.sym[d]]
		}
		if t.Shape[d] != want {
			return fmt.Errorf("output %q: dim %d is %d, declared %d", a.name, d, t.Shape[d], want)
		}
	}
	return nil
}

// outBuf is a caller's output buffer; dims is nil when not given.
type outBuf struct {
	buffer
	dims []int64
}

// run evals and copies every output into outs.
func (c *cuvilCtx) run(bufs []buffer, outs []outBuf) C.int {
	if len(outs) != len(outputs) {
		return c.setErr(statusBadArg, fmt.Errorf("the model has %d outputs, got %d", len(outputs), len(outs)))
	}
	if code := c.eval(bufs); code != statusOK {
		return code
	}
	for i := range outputs {
		t := outputAt(&c.out, i)
		b := cuvilBytes(t.Data)
		o := outs[i]
		if o.dims != nil {
			if len(o.dims) != len(t.Shape) {
				return c.setErr(statusBadArg, fmt.Errorf("output %q: buffer has rank %d, the output %d (shape %v)", outputs[i].name, len(o.dims), len(t.Shape), t.Shape))
			}
			for d, v := range o.dims {
				if v != int64(t.Shape[d]) {
					return c.setErr(statusBadArg, fmt.Errorf("output %q: buffer shape %v, the output's is %v", outputs[i].name, o.dims, t.Shape))
				}
			}
		} else if o.nbytes < 0 {
			if err := c.checkDeclared(i, t); err != nil {
				return c.setErr(statusRun, err)
			}
		}
		if o.nbytes >= 0 && o.nbytes < int64(len(b)) {
			return c.setErr(statusBadArg, fmt.Errorf("output %q has %d bytes (shape %v), the buffer %d", outputs[i].name, len(b), t.Shape, o.nbytes))
		}
		if o.p == nil && len(b) > 0 {
			return c.setErr(statusBadArg, fmt.Errorf("output %q: buffer is NULL", outputs[i].name))
		}
		if len(b) > 0 {
			copy(unsafe.Slice((*byte)(o.p), len(b)), b)
		}
	}
	return c.setErr(statusOK, nil)
}

// tensors views the caller's n descriptors at p, checking n against want.
func tensors(what string, p *C.PKG_tensor, n C.int32_t, want int) ([]C.PKG_tensor, error) {
	if int(n) != want {
		return nil, fmt.Errorf("%s: n is %d, the model has %d", what, n, want)
	}
	if want == 0 {
		return nil, nil
	}
	if p == nil {
		return nil, fmt.Errorf("%s: the array is NULL", what)
	}
	return unsafe.Slice(p, want), nil
}

// tensorDims checks a descriptor's dtype and rank against a and returns its dims.
func tensorDims(kind string, a *cuvilArg, t *C.PKG_tensor) ([]int64, error) {
	if int64(t.dtype) != int64(a.dtype) {
		return nil, fmt.Errorf("%s %q: dtype is %d, want %d (%s)", kind, a.name, t.dtype, int(a.dtype), a.dtype)
	}
	if int(t.rank) != len(a.dims) {
		return nil, fmt.Errorf("%s %q: rank is %d, want %d", kind, a.name, t.rank, len(a.dims))
	}
	if t.rank == 0 {
		return []int64{}, nil
	}
	if t.dims == nil {
		return nil, fmt.Errorf("%s %q: dims is NULL", kind, a.name)
	}
	return unsafe.Slice((*int64)(unsafe.Pointer(t.dims)), int(t.rank)), nil
}

// bindTensors checks the input descriptors, sets the symbolic dims from
// their shapes and returns the buffers.
func (c *cuvilCtx) bindTensors(p *C.PKG_tensor, n C.int32_t) ([]buffer, error) {
	ts, err := tensors("inputs", p, n, len(inputs))
	if err != nil {
		return nil, err
	}
	sizes := make([]int64, len(symNames))
	for i := range sizes {
		sizes[i] = -1
	}
	bufs := make([]buffer, len(inputs))
	for i := range inputs {
		a, t := &inputs[i], &ts[i]
		dims, err := tensorDims("input", a, t)
		if err != nil {
			return nil, err
		}
		for d, v := range dims {
			if v < 0 {
				return nil, fmt.Errorf("input %q: dim %d is %d", a.name, d, v)
			}
			want := a.dims[d]
			if want < 0 {
				s := a.sym[d]
				if sizes[s] < 0 {
					sizes[s] = v
				}
				if sizes[s] != v {
					return nil, fmt.Errorf("input %q: dim %d (%s) is %d, want %d as set by an earlier input", a.name, d, symNames[s], v, sizes[s])
				}
			} else if v != want {
				return nil, fmt.Errorf("input %q: dim %d is %d, want %d", a.name, d, v, want)
			}
		}
		if t.nbytes < 0 {
			return nil, fmt.Errorf("input %q: nbytes is %d", a.name, int64(t.nbytes))
		}
		bufs[i] = buffer{p: t.data, nbytes: int64(t.nbytes)}
	}
	if len(sizes) > 0 {
		if err := c.setSyms(sizes); err != nil {
			return nil, err
		}
	}
	return bufs, nil
}

// PKG_eval_tensors checks the nin input descriptors (nin must be
// input_count()) against the model, takes the symbolic dims from their
// shapes, runs the model and keeps the outputs for result_rank,
// result_shape_n and result_copy. Status 2 for any mismatch, nothing run.
//
//export PKG_eval_tensors
func PKG_eval_tensors(ctx C.uintptr_t, ins *C.PKG_tensor, nin C.int32_t) (code C.int) {
	c := enter(ctx)
	if c == nil {
		return statusBadCtx
	}
	defer c.mu.Unlock()
	defer c.catch(&code)
	c.hasOut = false
	bufs, err := c.bindTensors(ins, nin)
	if err != nil {
		return c.setErr(statusBadArg, err)
	}
	return c.eval(bufs)
}

// PKG_run_tensors is eval_tensors, then copies output i into
// outs[i].data (nout must be output_count()): outs[i].dtype must be the
// output's, outs[i].nbytes at least its size and, when outs[i].dims is not
// NULL, outs[i].rank and dims its shape.
//
//export PKG_run_tensors
func PKG_run_tensors(ctx C.uintptr_t, ins *C.PKG_tensor, nin C.int32_t, outs *C.PKG_tensor, nout C.int32_t) (code C.int) {
	c := enter(ctx)
	if c == nil {
		return statusBadCtx
	}
	defer c.mu.Unlock()
	defer c.catch(&code)
	c.hasOut = false
	ots, err := tensors("outputs", outs, nout, len(outputs))
	if err != nil {
		return c.setErr(statusBadArg, err)
	}
	obufs := make([]outBuf, len(outputs))
	for i := range outputs {
		a, t := &outputs[i], &ots[i]
		if int64(t.dtype) != int64(a.dtype) {
			return c.setErr(statusBadArg, fmt.Errorf("output %q: dtype is %d, want %d (%s)", a.name, t.dtype, int(a.dtype), a.dtype))
		}
		if t.nbytes < 0 {
			return c.setErr(statusBadArg, fmt.Errorf("output %q: nbytes is %d", a.name, int64(t.nbytes)))
		}
		obufs[i].buffer = buffer{p: t.data, nbytes: int64(t.nbytes)}
		if t.dims != nil {
			if t.rank < 0 || int(t.rank) > 64 {
				return c.setErr(statusBadArg, fmt.Errorf("output %q: rank is %d", a.name, t.rank))
			}
			obufs[i].dims = append([]int64{}, unsafe.Slice((*int64)(unsafe.Pointer(t.dims)), int(t.rank))...)
		}
	}
	bufs, err := c.bindTensors(ins, nin)
	if err != nil {
		return c.setErr(statusBadArg, err)
	}
	return c.run(bufs, obufs)
}

func ptrBufs(ps ...unsafe.Pointer) []buffer {
	b := make([]buffer, len(ps))
	for i, p := range ps {
		b[i] = buffer{p: p, nbytes: -1}
	}
	return b
}

//tmpl:begin

// PKG_run runs the model with one buffer per input, then one per
// output, in declaration order. Unchecked: see the top of this header;
// prefer PKG_run_tensors.
//
//export PKG_run
func PKG_run(ctx C.uintptr_t, input unsafe.Pointer, logProbs unsafe.Pointer) (code C.int) {
	//tmpl:as
	//// {{.Pkg}}_run runs the model with one buffer per input, then one per
	//// output, in declaration order. Unchecked: see the top of this header;
	//// prefer {{.Pkg}}_run_tensors.
	////
	////export {{.Pkg}}_run
	//func {{.Pkg}}_run(ctx C.uintptr_t{{range .Inputs}}, {{.Param}} unsafe.Pointer{{end}}{{range .Outputs}}, {{.Param}} unsafe.Pointer{{end}}) (code C.int) {
	//tmpl:end
	c := enter(ctx)
	if c == nil {
		return statusBadCtx
	}
	defer c.mu.Unlock()
	defer c.catch(&code)
	//tmpl:begin
	outs := make([]outBuf, 0, 1)
	for _, b := range ptrBufs(logProbs) {
		//tmpl:as
		//	outs := make([]outBuf, 0, {{len .Outputs}})
		//	for _, b := range ptrBufs({{range $i, $o := .Outputs}}{{if $i}}, {{end}}{{$o.Param}}{{end}}) {
		//tmpl:end
		outs = append(outs, outBuf{buffer: b})
	}
	//tmpl:begin
	return c.run(ptrBufs(input), outs)
	//tmpl:as
	//	return c.run(ptrBufs({{range $i, $in := .Inputs}}{{if $i}}, {{end}}{{$in.Param}}{{end}}), outs)
	//tmpl:end
}

//tmpl:begin

// PKG_eval runs the model with one buffer per input and keeps the
// outputs. Unchecked: prefer PKG_eval_tensors.
//
//export PKG_eval
func PKG_eval(ctx C.uintptr_t, input unsafe.Pointer) (code C.int) {
	//tmpl:as
	//// {{.Pkg}}_eval runs the model with one buffer per input and keeps the
	//// outputs. Unchecked: prefer {{.Pkg}}_eval_tensors.
	////
	////export {{.Pkg}}_eval
	//func {{.Pkg}}_eval(ctx C.uintptr_t{{range .Inputs}}, {{.Param}} unsafe.Pointer{{end}}) (code C.int) {
	//tmpl:end
	c := enter(ctx)
	if c == nil {
		return statusBadCtx
	}
	defer c.mu.Unlock()
	defer c.catch(&code)
	//tmpl:begin
	return c.eval(ptrBufs(input))
	//tmpl:as
	//	return c.eval(ptrBufs({{range $i, $in := .Inputs}}{{if $i}}, {{end}}{{$in.Param}}{{end}}))
	//tmpl:end
}

func (c *cuvilCtx) result(i C.int) (*model.Tensor, C.int) {
	if !c.hasOut {
		return nil, c.setErr(statusBadArg, errors.New("no results: the last eval failed or none ran"))
	}
	if i < 0 || int(i) >= len(outputs) {
		return nil, c.setErr(statusBadArg, fmt.Errorf("output index %d out of range [0,%d)", i, len(outputs)))
	}
	return outputAt(&c.out, int(i)), statusOK
}

// PKG_result_rank returns the rank of output i of the last eval, or
// -1 (with the reason in last_error(ctx), or last_error(0) for a bad handle).
//
//export PKG_result_rank
func PKG_result_rank(ctx C.uintptr_t, i C.int) (rank C.int) {
	c := enter(ctx)
	if c == nil {
		return -1
	}
	defer c.mu.Unlock()
	defer func() {
		if r := recover(); r != nil {
			c.setErr(statusRun, fmt.Errorf("panic in the C API: %v", r))
			rank = -1
		}
	}()
	t, _ := c.result(i)
	if t == nil {
		return -1
	}
	c.setErr(statusOK, nil)
	return C.int(len(t.Shape))
}

// PKG_result_shape_n writes the shape of output i of the last eval
// into dims, which holds n entries (at least result_rank(ctx, i)).
//
//export PKG_result_shape_n
func PKG_result_shape_n(ctx C.uintptr_t, i C.int, dims *C.int64_t, n C.int32_t) (code C.int) {
	c := enter(ctx)
	if c == nil {
		return statusBadCtx
	}
	defer c.mu.Unlock()
	defer c.catch(&code)
	t, code := c.result(i)
	if t == nil {
		return code
	}
	if int(n) < len(t.Shape) {
		return c.setErr(statusBadArg, fmt.Errorf("result_shape_n: output %q has rank %d, dims holds %d", outputs[i].name, len(t.Shape), n))
	}
	if len(t.Shape) > 0 {
		if dims == nil {
			return c.setErr(statusBadArg, errors.New("result_shape_n: dims is NULL"))
		}
		out := unsafe.Slice((*int64)(unsafe.Pointer(dims)), len(t.Shape))
		for d, v := range t.Shape {
			out[d] = int64(v)
		}
	}
	return c.setErr(statusOK, nil)
}

// PKG_result_shape is result_shape_n with n = output_rank(i), unchecked.
//
//export PKG_result_shape
func PKG_result_shape(ctx C.uintptr_t, i C.int, dims *C.int64_t) C.int {
	return PKG_result_shape_n(ctx, i, dims, C.int32_t(argRank(argAt(outputs, i))))
}

// PKG_result_copy copies output i of the last eval into dst, which
// must have exactly the output's size in bytes.
//
//export PKG_result_copy
func PKG_result_copy(ctx C.uintptr_t, i C.int, dst unsafe.Pointer, nbytes C.int64_t) (code C.int) {
	c := enter(ctx)
	if c == nil {
		return statusBadCtx
	}
	defer c.mu.Unlock()
	defer c.catch(&code)
	t, code := c.result(i)
	if t == nil {
		return code
	}
	b := cuvilBytes(t.Data)
	if int64(nbytes) != int64(len(b)) {
		return c.setErr(statusBadArg, fmt.Errorf("output %q has %d bytes (shape %v), the buffer %d", outputs[i].name, len(b), t.Shape, int64(nbytes)))
	}
	if len(b) > 0 {
		if dst == nil {
			return c.setErr(statusBadArg, errors.New("result_copy: dst is NULL"))
		}
		copy(unsafe.Slice((*byte)(dst), len(b)), b)
	}
	return c.setErr(statusOK, nil)
}

//tmpl:begin

// Contexts for inference, reused and never dropped (a dropped session
// would keep its worker goroutines).
var (
	//tmpl:as
	//{{if .Inference}}
	//// Contexts for inference, reused and never dropped (a dropped session
	//// would keep its worker goroutines).
	//var (
	//tmpl:end
	poolMu   sync.Mutex
	freeCtxs []*cuvilCtx
)

func inference(bufs []buffer, out outBuf) (code C.int) {
	defer catchThread(&code)
	m, err := loadModel()
	if err != nil {
		setThreadErr(fmt.Sprintf("loading the model: %v", err))
		return statusLoad
	}
	poolMu.Lock()
	var c *cuvilCtx
	if n := len(freeCtxs); n > 0 {
		c = freeCtxs[n-1]
		freeCtxs = freeCtxs[:n-1]
	}
	poolMu.Unlock()
	if c == nil {
		c = newCtx(m)
		c.pooled = true
	}
	defer func() {
		c.out, c.hasOut = model.Output{}, false
		//tmpl:begin
		c.ins = [1]model.Tensor{}
		//tmpl:as
		//		c.ins = [{{len .Inputs}}]model.Tensor{}
		//tmpl:end
		poolMu.Lock()
		freeCtxs = append(freeCtxs, c)
		poolMu.Unlock()
	}()
	return c.run(bufs, []outBuf{out})
}

// PKG_inference_n runs the model on a pooled session with one input
// buffer of in_nbytes bytes and one output buffer of out_nbytes; errors
// in last_error(0).
//
//export PKG_inference_n
func PKG_inference_n(in unsafe.Pointer, inNbytes C.int64_t, out unsafe.Pointer, outNbytes C.int64_t) C.int {
	if inNbytes < 0 || outNbytes < 0 {
		setThreadErr(fmt.Sprintf("inference_n: negative size (%d, %d)", int64(inNbytes), int64(outNbytes)))
		return statusBadArg
	}
	//tmpl:begin
	return inference([]buffer{{p: in, nbytes: int64(inNbytes)}}, outBuf{buffer: buffer{p: out, nbytes: int64(outNbytes)}})
	//tmpl:as
	//	return inference([]buffer{ {p: in, nbytes: int64(inNbytes)} }, outBuf{buffer: buffer{p: out, nbytes: int64(outNbytes)}})
	//tmpl:end
}

// PKG_inference is inference_n with buffers of the declared sizes,
// unchecked.
//
//export PKG_inference
func PKG_inference(in, out unsafe.Pointer) C.int {
	return inference(ptrBufs(in), outBuf{buffer: buffer{p: out, nbytes: -1}})
}

//tmpl:begin

// cuvilSlice views n elements of dtype dt at p as the Go slice type the
// generated package wants.
func cuvilSlice(dt model.DType, p unsafe.Pointer, n int) any {
	//tmpl:as
	//{{end}}
	//// cuvilSlice views n elements of dtype dt at p as the Go slice type the
	//// generated package wants.
	//func cuvilSlice(dt model.DType, p unsafe.Pointer, n int) any {
	//tmpl:end
	switch dt {
	case model.F32:
		return unsafe.Slice((*float32)(p), n)
	case model.F64:
		return unsafe.Slice((*float64)(p), n)
	case model.F16, model.BF16, model.U16:
		return unsafe.Slice((*uint16)(p), n)
	case model.I8, model.I4, model.I2:
		return unsafe.Slice((*int8)(p), n)
	case model.U8, model.U4, model.U2, model.F8E4M3FN, model.F8E4M3FNUZ, model.F8E5M2, model.F8E5M2FNUZ, model.F4E2M1, model.F8E8M0:
		return unsafe.Slice((*uint8)(p), n)
	case model.I16:
		return unsafe.Slice((*int16)(p), n)
	case model.I32:
		return unsafe.Slice((*int32)(p), n)
	case model.I64:
		return unsafe.Slice((*int64)(p), n)
	case model.U32:
		return unsafe.Slice((*uint32)(p), n)
	case model.U64:
		return unsafe.Slice((*uint64)(p), n)
	case model.Bool:
		return unsafe.Slice((*bool)(p), n)
	}
	panic("capi: dtype checked at generation: " + dt.String())
}

// cuvilClone copies a tensor's data into Go memory.
func cuvilClone(data any) any {
	switch d := data.(type) {
	case []float32:
		return append([]float32(nil), d...)
	case []float64:
		return append([]float64(nil), d...)
	case []uint16:
		return append([]uint16(nil), d...)
	case []int8:
		return append([]int8(nil), d...)
	case []uint8:
		return append([]uint8(nil), d...)
	case []int16:
		return append([]int16(nil), d...)
	case []int32:
		return append([]int32(nil), d...)
	case []int64:
		return append([]int64(nil), d...)
	case []uint32:
		return append([]uint32(nil), d...)
	case []uint64:
		return append([]uint64(nil), d...)
	case []bool:
		return append([]bool(nil), d...)
	}
	panic(fmt.Sprintf("capi: output data of type %T", data))
}

// cuvilBytes views a tensor's data as bytes.
func cuvilBytes(data any) []byte {
	switch d := data.(type) {
	case []float32:
		return sliceBytes(d)
	case []float64:
		return sliceBytes(d)
	case []uint16:
		return sliceBytes(d)
	case []int8:
		return sliceBytes(d)
	case []uint8:
		return d
	case []int16:
		return sliceBytes(d)
	case []int32:
		return sliceBytes(d)
	case []int64:
		return sliceBytes(d)
	case []uint32:
		return sliceBytes(d)
	case []uint64:
		return sliceBytes(d)
	case []bool:
		return sliceBytes(d)
	case nil:
		return nil
	}
	panic(fmt.Sprintf("capi: output data of type %T", data))
}

func sliceBytes[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var zero T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(zero)))
}
