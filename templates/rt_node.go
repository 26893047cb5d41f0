package templates

import "fmt"

// Node is one operation at run time: its resolved op version, attributes,
// input and output tensors, and scratch memory the kernel keeps between
// runs. Generated sessions build their Nodes once; Run calls the kernels
// on them in order. An omitted optional input or output is nil.
type Node struct {
	Name    string // ONNX node name, for errors
	Op      string
	Version int // op version (since_version resolved from the model opset)
	Attrs   Attrs
	In      []*Tensor
	Out     []*Tensor

	scratchF32 []float32
	scratchI   []int
	// Cache lets a kernel keep values derived from attributes and shapes
	// (e.g. normalised pads) across runs.
	Cache any
	// Pool is the session's worker pool (nil: run on the caller only).
	Pool *WorkPool
}

// Kernel runs a node: it reads n.In and writes n.Out (resizing them).
type Kernel func(n *Node) error

// Errorf returns an error naming the node.
func (n *Node) Errorf(format string, args ...any) error {
	return fmt.Errorf("node %q (%s): %s", n.Name, n.Op, fmt.Sprintf(format, args...))
}

// Input returns input i or nil when it is absent.
func (n *Node) Input(i int) *Tensor {
	if i < len(n.In) {
		return n.In[i]
	}
	return nil
}

// ScratchF32 returns a float32 buffer of length size, reused across runs.
func (n *Node) ScratchF32(size int) []float32 {
	if cap(n.scratchF32) < size {
		n.scratchF32 = make([]float32, size)
	}
	return n.scratchF32[:size]
}

// ScratchInts returns an int buffer of length size, reused across runs.
func (n *Node) ScratchInts(size int) []int {
	if cap(n.scratchI) < size {
		n.scratchI = make([]int, size)
	}
	return n.scratchI[:size]
}

// Attrs holds a node's attributes by ONNX name. Values have these Go types:
// int64, float32, string, []int64, []float32, []string, *Tensor,
// []*Tensor. Graph attributes are not here: gen lowers subgraphs to Go
// control flow.
type Attrs map[string]any

func (a Attrs) Has(name string) bool { _, ok := a[name]; return ok }

func (a Attrs) Int(name string, def int64) int64 {
	if v, ok := a[name].(int64); ok {
		return v
	}
	return def
}

func (a Attrs) Float(name string, def float32) float32 {
	if v, ok := a[name].(float32); ok {
		return v
	}
	return def
}

func (a Attrs) String(name string, def string) string {
	if v, ok := a[name].(string); ok {
		return v
	}
	return def
}

func (a Attrs) Ints(name string) []int64 {
	v, _ := a[name].([]int64)
	return v
}

func (a Attrs) Floats(name string) []float32 {
	v, _ := a[name].([]float32)
	return v
}

func (a Attrs) Strings(name string) []string {
	v, _ := a[name].([]string)
	return v
}

func (a Attrs) Tensor(name string) *Tensor {
	v, _ := a[name].(*Tensor)
	return v
}
