package gen

import (
	"bytes"
	"errors"
	"fmt"
	"go/format"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/templates"
)

// The lite profile (compile -profile lite, docs/lite.md): a package of
// pure Go for microcontroller-class targets. It runs float32 models with
// static shapes and no control flow as one straight-line Run over the
// kernels of templates/lite, with every activation in one arena the caller
// may supply and the weights read in place from a string constant (flash).
// It imports only errors and math: no unsafe, sync, fmt, reflection or
// goroutines.

// LiteOptions control GenerateLite.
type LiteOptions struct {
	Package string
	Source  string // the model file's base name, for doc.go
	// RAMBudget > 0 refuses a plan whose arena needs more bytes.
	RAMBudget int64
	// Passes are the passes that ran, for doc.go.
	Passes []string
}

// LiteReport is what a lite package needs: the weights (flash) and the
// arena (RAM), the values live where the arena peaks, and the code size
// once measured (MeasureLiteCode).
type LiteReport struct {
	WeightsBytes int64
	ArenaBytes   int64
	// LiveBytes is the most bytes of values live at once (the arena is at
	// least that; more when placement leaves holes).
	LiveBytes int64
	PeakNode  string
	Peak      []LiteValue // the values live at PeakNode, largest first
	Nodes     int
	// CodeBytes is the package's own linked code (go tool nm -size of a
	// program calling New, NewSession and Run) for CodeTarget; -1 when
	// not measured (CodeNote says why).
	CodeBytes  int64
	CodeTarget string
	CodeNote   string
}

// LiteValue is one value of the plan and its bytes.
type LiteValue struct {
	Name  string
	Bytes int64
}

// liteOps are the ops the lite profile has kernels for.
var liteOps = map[string]bool{
	"Conv": true, "Gemm": true, "MatMul": true, "MaxPool": true, "AveragePool": true, "GlobalAveragePool": true,
	"Relu": true, "Sigmoid": true, "Tanh": true, "Clip": true, "LeakyRelu": true, "Neg": true, "Exp": true, "Sqrt": true, "Abs": true,
	"Add": true, "Sub": true, "Mul": true, "Div": true, "Max": true, "Min": true,
	"Softmax": true, "LogSoftmax": true,
	"Reshape": true, "Flatten": true, "Squeeze": true, "Unsqueeze": true, "Identity": true, "Dropout": true, "Pad": true,
}

// LiteOps returns the op types the lite profile runs, sorted.
func LiteOps() []string {
	var out []string
	for op := range liteOps {
		out = append(out, op)
	}
	sort.Strings(out)
	return out
}

// liteAlias are the ops whose output is their input's buffer.
var liteAlias = map[string]bool{"Reshape": true, "Flatten": true, "Squeeze": true, "Unsqueeze": true, "Identity": true, "Dropout": true, "Pad": true}

var liteUnary = map[string]string{"Relu": "opRelu", "Sigmoid": "opSigmoid", "Tanh": "opTanh", "Clip": "opClip", "LeakyRelu": "opLeakyRelu",
	"Neg": "opNeg", "Exp": "opExp", "Sqrt": "opSqrt", "Abs": "opAbs"}

var liteBinary = map[string]string{"Add": "opAdd", "Sub": "opSub", "Mul": "opMul", "Div": "opDiv", "Max": "opMax", "Min": "opMin"}

// liteDims returns t's dims when it is a float32 tensor of static shape,
// else an error saying what it is (what names the value).
func liteDims(what string, t ir.Type) ([]int64, error) {
	switch t.Kind {
	case ir.SequenceKind:
		return nil, fmt.Errorf("%s is a sequence: the lite profile has no sequences, optionals or maps", what)
	case ir.OptionalKind:
		return nil, fmt.Errorf("%s is an optional: the lite profile has no sequences, optionals or maps", what)
	case ir.MapKind:
		return nil, fmt.Errorf("%s is a map: the lite profile has no sequences, optionals or maps", what)
	}
	if t.Unranked {
		return nil, fmt.Errorf("%s has an unknown rank: the lite profile needs static shapes", what)
	}
	for _, d := range t.Shape {
		if !d.IsConst() {
			return nil, fmt.Errorf("%s has the symbolic dim %q (shape %s): the lite profile needs static shapes (give it a size when exporting)", what, d.Sym, t.Shape)
		}
	}
	if t.DType != ir.F32 {
		return nil, fmt.Errorf("%s is %s: the lite profile runs float32 only", what, t.DType)
	}
	dims, _ := t.Shape.Consts()
	return dims, nil
}

func liteNumel(d []int64) int64 {
	n := int64(1)
	for _, x := range d {
		n *= x
	}
	return n
}

// CheckLite returns nil when the lite profile can run m, else an error
// listing every reason it cannot, each naming its input, node or output:
// symbolic dims, control flow (If, Loop, Scan, any subgraph), sequences,
// optionals and maps, dtypes other than float32, and ops (or op forms)
// without a lite kernel.
func CheckLite(m *ir.Model) error {
	_, err := planLite(m)
	return err
}

// liteNode is one node of the plan with its emitted statement.
type liteStep struct {
	n    *ir.Node
	stmt string
}

// liteBuf is one arena buffer: the values sharing it (aliases, in-place
// element-wise ops), its size in float32s, its life [def, last] in node
// indices (-1 the graph inputs, len(nodes) the graph outputs) and its
// offset once placed.
type liteBuf struct {
	vals      []*ir.Value
	size      int64
	def, last int
	off       int64
	pinned    bool // holds a graph input: never written by Run
}

type litePlan struct {
	m       *ir.Model
	nodes   []*ir.Node
	buf     map[*ir.Value]*liteBuf
	bufs    []*liteBuf
	dims    map[*ir.Value][]int64
	consts  []*ir.Value // in blob order
	constAt map[*ir.Tensor]int64
	blob    []byte
	arena   int64             // float32s
	ids     map[*ir.Value]int // placeholders of sl
	byID    []*ir.Value
	report  LiteReport
	steps   []string
}

// planLite checks m and plans its arena; the error lists every reason the
// lite profile refuses m.
func planLite(m *ir.Model) (*litePlan, error) {
	g := m.Graph
	p := &litePlan{m: m, ids: map[*ir.Value]int{}, buf: map[*ir.Value]*liteBuf{}, dims: map[*ir.Value][]int64{}, constAt: map[*ir.Tensor]int64{}}
	var errs []error
	bad := func(err error) {
		if len(errs) < 20 {
			errs = append(errs, err)
		}
	}
	symIn := false // a symbolic input dim: its consequences are not listed again
	for _, v := range g.Inputs {
		d, err := liteDims(fmt.Sprintf("input %q", v.Name), v.Type)
		if err != nil {
			bad(err)
			symIn = symIn || strings.Contains(err.Error(), "symbolic dim")
			continue
		}
		p.dims[v] = d
	}
	noKernel := false
	// outDims checks a node's or the graph's output; a shape made symbolic
	// by a symbolic input is not listed again.
	outDims := func(what string, t ir.Type) ([]int64, bool) {
		d, err := liteDims(what, t)
		if err != nil {
			if !symIn || !strings.Contains(err.Error(), "symbolic dim") {
				bad(err)
			}
			return nil, false
		}
		return d, true
	}
	for _, n := range g.Nodes {
		for _, a := range n.Attrs {
			if a.Kind == ir.AttrGraph || a.Kind == ir.AttrGraphs {
				bad(fmt.Errorf("node %q (%s): control flow (a subgraph in attribute %q): the lite profile runs straight-line graphs only (no If, Loop or Scan)", n.Name, n.Op, a.Name))
				goto next
			}
		}
		if n.Op == "If" || n.Op == "Loop" || n.Op == "Scan" {
			bad(fmt.Errorf("node %q (%s): control flow: the lite profile runs straight-line graphs only", n.Name, n.Op))
			continue
		}
		for _, o := range n.Outputs {
			if o != nil && o.Type.Kind != ir.TensorKind {
				outDims(fmt.Sprintf("node %q (%s): output %q", n.Name, n.Op, o.Name), o.Type)
				goto next
			}
		}
		if n.Domain != "" || !liteOps[n.Op] {
			op := n.Op
			if n.Domain != "" {
				op = n.Domain + "::" + op
			}
			bad(fmt.Errorf("node %q (%s): op %s has no lite kernel", n.Name, op, op))
			noKernel = true
			continue
		}
		for i, o := range n.Outputs {
			if o == nil {
				continue
			}
			if i > 0 {
				if n.Op == "Dropout" && !liteUsed(g, o) {
					continue
				}
				bad(fmt.Errorf("node %q (%s): output %d (%q) has no lite kernel (only the first output is computed)", n.Name, n.Op, i, o.Name))
				continue
			}
			if d, ok := outDims(fmt.Sprintf("node %q (%s): output %q", n.Name, n.Op, o.Name), o.Type); ok {
				p.dims[o] = d
			}
		}
		p.nodes = append(p.nodes, n)
	next:
	}
	for _, v := range g.Outputs {
		outDims(fmt.Sprintf("output %q", v.Name), v.Type)
		for _, in := range g.Inputs {
			if in == v {
				bad(fmt.Errorf("output %q is the graph input of that name: nothing to compute", v.Name))
			}
		}
	}
	if noKernel {
		errs = append(errs, fmt.Errorf("(the lite ops: %s)", strings.Join(LiteOps(), ", ")))
	}
	if len(errs) > 0 {
		return nil, liteErr(errs)
	}
	// Statements (they check each node's attributes and constant inputs).
	for i, n := range p.nodes {
		stmt, err := p.stmt(i, n)
		if err != nil {
			bad(fmt.Errorf("node %q (%s): %v", n.Name, n.Op, err))
			continue
		}
		p.steps = append(p.steps, stmt)
	}
	if len(errs) > 0 {
		return nil, liteErr(errs)
	}
	return p, nil
}

func liteErr(errs []error) error {
	if len(errs) == 1 {
		return fmt.Errorf("-profile lite: %w", errs[0])
	}
	return fmt.Errorf("-profile lite: %d problems:\n  %w", len(errs), errors.Join(errs...))
}

func liteUsed(g *ir.Graph, v *ir.Value) bool {
	for _, n := range g.Nodes {
		for _, in := range n.Inputs {
			if in == v {
				return true
			}
		}
	}
	for _, o := range g.Outputs {
		if o == v {
			return true
		}
	}
	return false
}

// constF32 returns the blob expression of a float32 constant, adding it to
// the blob once.
func (p *litePlan) constF32(v *ir.Value) (string, error) {
	if !v.IsConst() {
		return "", fmt.Errorf("input %q is not a constant (the lite kernel needs constant weights here)", v.Name)
	}
	t := v.Const
	if t.DType != ir.F32 {
		return "", fmt.Errorf("constant %q is %s, the lite kernels read float32", v.Name, t.DType)
	}
	off, ok := p.constAt[t]
	if !ok {
		off = int64(len(p.blob))
		p.constAt[t] = off
		p.blob = append(p.blob, t.Raw...)
		p.consts = append(p.consts, v)
	}
	if len(t.Raw) == 0 {
		return `""`, nil
	}
	return fmt.Sprintf("cuvilWeights[%d:%d]", off, off+int64(len(t.Raw))), nil
}

// arenaIn is an input read from the arena (not a constant).
func (p *litePlan) arenaIn(v *ir.Value) ([]int64, error) {
	if v == nil {
		return nil, fmt.Errorf("a required input is missing")
	}
	if v.IsConst() {
		return nil, fmt.Errorf("input %q is a constant where the lite kernel reads an activation", v.Name)
	}
	d, ok := p.dims[v]
	if !ok {
		return nil, fmt.Errorf("input %q has no static float32 shape", v.Name)
	}
	return d, nil
}

// sl is the arena slice expression of v: a placeholder (NUL, v's index,
// NUL) until the plan is placed and fill replaces it.
func (p *litePlan) sl(v *ir.Value) string {
	id, ok := p.ids[v]
	if !ok {
		id = len(p.byID)
		p.ids[v] = id
		p.byID = append(p.byID, v)
	}
	return "\x00" + strconv.Itoa(id) + "\x00"
}

func ints(v []int64, n int, def int64) []int64 {
	if len(v) == n {
		return v
	}
	out := make([]int64, n)
	for i := range out {
		out[i] = def
	}
	return out
}

// window resolves a conv or pool window over spatial dims in (1 or 2),
// with kernel k and output out: strides, dilations and the begin and end
// pads (auto_pad included).
func window(n *ir.Node, in, k, out []int64) (s, d, pb, pe []int64, err error) {
	r := len(in)
	s = ints(n.AttrInts("strides", nil), r, 1)
	d = ints(n.AttrInts("dilations", nil), r, 1)
	pads := n.AttrInts("pads", nil)
	pb, pe = make([]int64, r), make([]int64, r)
	switch ap := n.AttrString("auto_pad", "NOTSET"); ap {
	case "NOTSET", "":
		if len(pads) == 2*r {
			copy(pb, pads[:r])
			copy(pe, pads[r:])
		} else if len(pads) != 0 {
			return nil, nil, nil, nil, fmt.Errorf("pads %v: want %d values", pads, 2*r)
		}
	case "VALID":
	case "SAME_UPPER", "SAME_LOWER":
		for i := 0; i < r; i++ {
			total := (out[i]-1)*s[i] + (k[i]-1)*d[i] + 1 - in[i]
			if total < 0 {
				total = 0
			}
			pb[i] = total / 2
			if ap == "SAME_LOWER" {
				pb[i] = (total + 1) / 2
			}
			pe[i] = total - pb[i]
		}
	default:
		return nil, nil, nil, nil, fmt.Errorf("auto_pad %q", ap)
	}
	return s, d, pb, pe, nil
}

// spatial splits an NCHW (or NCW) shape: batch*channels, channels and the
// spatial dims as 2 (H=1 for 1-D).
func spatial(d []int64) (n, c int64, hw []int64, ok bool) {
	switch len(d) {
	case 3:
		return d[0], d[1], []int64{1, d[2]}, true
	case 4:
		return d[0], d[1], []int64{d[2], d[3]}, true
	}
	return 0, 0, nil, false
}

// to2 makes a 1-D window attribute 2-D (a leading 1 or 0).
func to2(v []int64, def int64) []int64 {
	if len(v) == 1 {
		return []int64{def, v[0]}
	}
	return v
}

func (p *litePlan) stmt(i int, n *ir.Node) (string, error) {
	out := n.Outputs[0]
	od := p.dims[out]
	switch {
	case liteAlias[n.Op]:
		x, err := p.arenaIn(n.Input(0))
		if err != nil {
			if v := n.Input(0); v != nil && v.IsConst() {
				return p.constOut(out, v)
			}
			return "", err
		}
		if n.Op == "Dropout" && n.Input(2) != nil {
			return "", fmt.Errorf("training_mode input %q: the lite profile runs inference Dropout only", n.Input(2).Name)
		}
		if n.Op == "Pad" {
			if mode := n.AttrString("mode", "constant"); mode != "constant" {
				return "", fmt.Errorf("mode %q: the lite profile runs only Pads that add nothing", mode)
			}
			pads := n.AttrInts("pads", nil)
			if pv := n.Input(1); pv != nil {
				if !pv.IsConst() {
					return "", fmt.Errorf("pads %q are not constant", pv.Name)
				}
				pads = pv.Const.Int64s()
			}
			for _, q := range pads {
				if q != 0 {
					return "", fmt.Errorf("pads %v: the lite profile runs only Pads that add nothing (no padding kernel)", pads)
				}
			}
		}
		if liteNumel(x) != liteNumel(od) {
			return "", fmt.Errorf("output has %d elements, input %d", liteNumel(od), liteNumel(x))
		}
		return "", nil // the output is the input's buffer
	case liteUnary[n.Op] != "":
		if _, err := p.arenaIn(n.Input(0)); err != nil {
			return "", err
		}
		a, b := float32(0), float32(0)
		switch n.Op {
		case "LeakyRelu":
			a = n.AttrFloat("alpha", 0.01)
		case "Clip":
			a, b = float32(math.Inf(-1)), float32(math.Inf(1))
			if n.Version < 11 {
				a, b = n.AttrFloat("min", a), n.AttrFloat("max", b)
			}
			for j, dst := range []*float32{&a, &b} {
				v := n.Input(1 + j)
				if v == nil {
					continue
				}
				if !v.IsConst() || v.Const.DType != ir.F32 || v.Const.NumElements() != 1 {
					return "", fmt.Errorf("Clip bound %q is not a float32 scalar constant", v.Name)
				}
				*dst = float32(v.Const.Float64s()[0])
			}
		}
		return fmt.Sprintf("unary(%s, %s, %s, %s, %s)", p.sl(out), p.sl(n.Input(0)), liteUnary[n.Op], f32lit(a), f32lit(b)), nil
	case liteBinary[n.Op] != "":
		if len(n.Inputs) != 2 {
			return "", fmt.Errorf("%d inputs: the lite kernel takes two", len(n.Inputs))
		}
		var exprs [2][2]string // arena slice, constant
		var shapes [2][]int64
		for j, v := range n.Inputs {
			if v == nil {
				return "", fmt.Errorf("input %d is missing", j)
			}
			if v.IsConst() {
				c, err := p.constF32(v)
				if err != nil {
					return "", err
				}
				exprs[j] = [2]string{"nil", c}
				shapes[j] = v.Const.Shape
				continue
			}
			d, err := p.arenaIn(v)
			if err != nil {
				return "", err
			}
			exprs[j] = [2]string{p.sl(v), `""`}
			shapes[j] = d
		}
		if len(od) > 6 {
			return "", fmt.Errorf("rank %d: the lite kernel broadcasts up to rank 6", len(od))
		}
		dims := make([]int64, 6)
		for k := range dims {
			dims[k] = 1
		}
		copy(dims[6-len(od):], od)
		var st [2][]int64
		for j := range shapes {
			st[j] = make([]int64, 6)
			sh := shapes[j]
			stride := int64(1)
			for k := len(sh) - 1; k >= 0; k-- {
				pos := 6 - len(sh) + k
				if sh[k] != 1 {
					st[j][pos] = stride
				}
				stride *= sh[k]
			}
		}
		return fmt.Sprintf("binary(%s, %s, %s, %s, %s, %s, [binRank]int{%s}, [binRank]int{%s}, [binRank]int{%s})", p.sl(out), exprs[0][0], exprs[0][1], exprs[1][0], exprs[1][1],
			liteBinary[n.Op], joinInts(dims), joinInts(st[0]), joinInts(st[1])), nil
	}
	switch n.Op {
	case "Conv":
		x, err := p.arenaIn(n.Input(0))
		if err != nil {
			return "", err
		}
		w := n.Input(1)
		ws, err := p.constF32(w)
		if err != nil {
			return "", err
		}
		bs := `""`
		if b := n.Input(2); b != nil {
			if bs, err = p.constF32(b); err != nil {
				return "", err
			}
		}
		bn, c, hw, ok := spatial(x)
		if !ok {
			return "", fmt.Errorf("input rank %d: the lite conv is 1-D or 2-D", len(x))
		}
		wd := w.Const.Shape
		_, _, ohw, _ := spatial(od)
		k := to2(wd[2:], 1)
		s, d, pb, _, err := window(n, hw, k, ohw)
		if len(x) == 3 {
			s, d, pb, _, err = window(n, hw[1:], k[1:], ohw[1:])
			s, d, pb = to2(s, 1), to2(d, 1), to2(pb, 0)
		}
		if err != nil {
			return "", err
		}
		group := n.AttrInt("group", 1)
		if group < 1 || c%group != 0 || wd[0]%group != 0 {
			return "", fmt.Errorf("group %d does not divide %d channels", group, c)
		}
		return fmt.Sprintf("conv2d(%s, %s, %s, %s, %s)", p.sl(out), p.sl(n.Input(0)), ws, bs,
			joinInts([]int64{bn, c, hw[0], hw[1], wd[0], k[0], k[1], ohw[0], ohw[1], s[0], s[1], d[0], d[1], pb[0], pb[1], group})), nil
	case "MaxPool", "AveragePool":
		x, err := p.arenaIn(n.Input(0))
		if err != nil {
			return "", err
		}
		if n.Op == "MaxPool" && n.AttrInt("storage_order", 0) != 0 {
			return "", fmt.Errorf("storage_order 1")
		}
		bn, c, hw, ok := spatial(x)
		if !ok {
			return "", fmt.Errorf("input rank %d: the lite pools are 1-D or 2-D", len(x))
		}
		_, _, ohw, _ := spatial(od)
		k := n.AttrInts("kernel_shape", nil)
		if len(k) != len(x)-2 {
			return "", fmt.Errorf("kernel_shape %v", k)
		}
		var s, d, pb, pe []int64
		if len(x) == 3 {
			s, d, pb, pe, err = window(n, hw[1:], k, ohw[1:])
			s, d, pb, pe, k = to2(s, 1), to2(d, 1), to2(pb, 0), to2(pe, 0), to2(k, 1)
		} else {
			s, d, pb, pe, err = window(n, hw, k, ohw)
		}
		if err != nil {
			return "", err
		}
		avg := n.Op == "AveragePool"
		incl := n.AttrInt("count_include_pad", 0) != 0
		return fmt.Sprintf("pool2d(%s, %s, %v, %v, %s)", p.sl(out), p.sl(n.Input(0)), avg, incl,
			joinInts([]int64{bn * c, hw[0], hw[1], ohw[0], ohw[1], k[0], k[1], s[0], s[1], d[0], d[1], pb[0], pb[1], hw[0] + pe[0], hw[1] + pe[1]})), nil
	case "GlobalAveragePool":
		x, err := p.arenaIn(n.Input(0))
		if err != nil {
			return "", err
		}
		if len(x) < 3 {
			return "", fmt.Errorf("input rank %d", len(x))
		}
		return fmt.Sprintf("globalAvg(%s, %s, %d, %d)", p.sl(out), p.sl(n.Input(0)), x[0]*x[1], liteNumel(x[2:])), nil
	case "Gemm", "MatMul":
		a, err := p.arenaIn(n.Input(0))
		if err != nil {
			return "", err
		}
		b := n.Input(1)
		bs, err := p.constF32(b)
		if err != nil {
			return "", err
		}
		bd := b.Const.Shape
		if len(bd) != 2 {
			return "", fmt.Errorf("B %q has rank %d: the lite kernel multiplies by a 2-D constant", b.Name, len(bd))
		}
		ta, tb := false, false
		alpha, beta := float32(1), float32(1)
		var m, k, nn int64
		cs, ck := `""`, 0
		if n.Op == "MatMul" {
			if len(a) < 1 {
				return "", fmt.Errorf("A is a scalar")
			}
			k, nn = bd[0], bd[1]
			if a[len(a)-1] != k {
				return "", fmt.Errorf("A %v and B %v do not multiply", a, bd)
			}
			m = liteNumel(a) / k
		} else {
			if len(a) != 2 {
				return "", fmt.Errorf("A has rank %d", len(a))
			}
			ta, tb = n.AttrInt("transA", 0) != 0, n.AttrInt("transB", 0) != 0
			alpha, beta = n.AttrFloat("alpha", 1), n.AttrFloat("beta", 1)
			m, k = a[0], a[1]
			if ta {
				m, k = a[1], a[0]
			}
			nn = bd[1]
			if tb {
				nn = bd[0]
			}
			if c := n.Input(2); c != nil {
				if cs, err = p.constF32(c); err != nil {
					return "", err
				}
				cd := c.Const.Shape
				switch {
				case liteNumel(cd) == 1:
					ck = 1
				case len(cd) >= 1 && cd[len(cd)-1] == nn && liteNumel(cd) == nn:
					ck = 2
				case len(cd) == 2 && cd[0] == m && cd[1] == 1:
					ck = 3
				case len(cd) == 2 && cd[0] == m && cd[1] == nn:
					ck = 4
				default:
					return "", fmt.Errorf("C %v does not broadcast to [%d, %d]", cd, m, nn)
				}
			}
		}
		return fmt.Sprintf("gemm(%s, %s, %s, %s, %d, %d, %d, %v, %v, %s, %s, %d)", p.sl(out), p.sl(n.Input(0)), bs, cs, m, k, nn, ta, tb, f32lit(alpha), f32lit(beta), ck), nil
	case "Softmax", "LogSoftmax":
		x, err := p.arenaIn(n.Input(0))
		if err != nil {
			return "", err
		}
		r := int64(len(x))
		def := int64(-1)
		if n.Version < 13 {
			def = 1
		}
		axis := n.AttrInt("axis", def)
		if axis < 0 {
			axis += r
		}
		if axis < 0 || axis >= r && r > 0 {
			return "", fmt.Errorf("axis %d out of range for rank %d", n.AttrInt("axis", def), r)
		}
		if n.Version >= 13 && axis != r-1 {
			return "", fmt.Errorf("axis %d: the lite kernel normalises the last axis only", axis)
		}
		rows := liteNumel(x[:axis])
		return fmt.Sprintf("softmax(%s, %s, %d, %d, %v)", p.sl(out), p.sl(n.Input(0)), rows, liteNumel(x)/rows, n.Op == "LogSoftmax"), nil
	}
	return "", fmt.Errorf("no lite kernel")
}

// constOut makes an alias op of a constant a copy of it into out's buffer.
func (p *litePlan) constOut(out, c *ir.Value) (string, error) {
	cs, err := p.constF32(c)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("copyF32(%s, %s)", p.sl(out), cs), nil
}

func joinInts(v []int64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.FormatInt(x, 10)
	}
	return strings.Join(s, ", ")
}

func f32lit(f float32) string {
	switch {
	case math.IsInf(float64(f), 1):
		return "float32(math.Inf(1))"
	case math.IsInf(float64(f), -1):
		return "float32(math.Inf(-1))"
	case f != f:
		return "float32(math.NaN())"
	}
	return "float32(" + strconv.FormatFloat(float64(f), 'g', -1, 32) + ")"
}

// place groups values into buffers (alias ops share their input's,
// element-wise unary ops write over an input that dies there) and places
// them in the arena, largest first, each at the lowest offset clear of
// every placed buffer whose life overlaps (TFLite Micro's greedy plan).
func (p *litePlan) place() {
	g := p.m.Graph
	end := len(p.nodes)
	last := map[*ir.Value]int{}
	for i, n := range p.nodes {
		for _, v := range n.Inputs {
			if v != nil && !v.IsConst() {
				last[v] = i
			}
		}
	}
	for _, v := range g.Outputs {
		last[v] = end
	}
	newBuf := func(v *ir.Value, def int) *liteBuf {
		b := &liteBuf{vals: []*ir.Value{v}, size: liteNumel(p.dims[v]), def: def, last: def}
		if l, ok := last[v]; ok && l > b.last {
			b.last = l
		}
		p.bufs = append(p.bufs, b)
		p.buf[v] = b
		return b
	}
	join := func(b *liteBuf, v *ir.Value) {
		b.vals = append(b.vals, v)
		p.buf[v] = b
		if l, ok := last[v]; ok && l > b.last {
			b.last = l
		}
	}
	for _, v := range g.Inputs {
		newBuf(v, -1).pinned = true
	}
	for i, n := range p.nodes {
		out := n.Outputs[0]
		in := n.Input(0)
		switch {
		case in != nil && !in.IsConst() && liteAlias[n.Op]:
			join(p.buf[in], out)
		case in != nil && !in.IsConst() && liteUnary[n.Op] != "" && !p.buf[in].pinned && p.buf[in].last == i && p.buf[in].size == liteNumel(p.dims[out]):
			join(p.buf[in], out)
		default:
			newBuf(out, i)
		}
	}
	// Graph outputs that are constants (after folding) get a buffer that
	// Run fills.
	for _, v := range g.Outputs {
		if _, ok := p.buf[v]; !ok && v.IsConst() {
			p.dims[v] = v.Const.Shape
			newBuf(v, end)
			p.constF32(v) // into the blob now; planLite checked its dtype
		}
	}
	order := append([]*liteBuf(nil), p.bufs...)
	sort.SliceStable(order, func(i, j int) bool { return order[i].size > order[j].size })
	var placed []*liteBuf
	for _, b := range order {
		type span struct{ lo, hi int64 }
		var taken []span
		for _, q := range placed {
			if q.def <= b.last && b.def <= q.last {
				taken = append(taken, span{q.off, q.off + q.size})
			}
		}
		sort.Slice(taken, func(i, j int) bool { return taken[i].lo < taken[j].lo })
		off := int64(0)
		for _, s := range taken {
			if off+b.size <= s.lo {
				break
			}
			if s.hi > off {
				off = (s.hi + 3) &^ 3 // 16-byte aligned
			}
		}
		b.off = off
		if off+b.size > p.arena {
			p.arena = off + b.size
		}
		placed = append(placed, b)
	}
	// The peak of live bytes, for the report and -ram-budget's message.
	p.report.Nodes = end
	for i := -1; i <= end; i++ {
		var live int64
		var vals []LiteValue
		for _, b := range p.bufs {
			if b.def <= i && i <= b.last {
				live += 4 * b.size
				vals = append(vals, LiteValue{Name: b.vals[0].Name, Bytes: 4 * b.size})
			}
		}
		if live > p.report.LiveBytes {
			p.report.LiveBytes = live
			sort.SliceStable(vals, func(a, c int) bool { return vals[a].Bytes > vals[c].Bytes })
			p.report.Peak = vals
			switch {
			case i < 0:
				p.report.PeakNode = "(the inputs)"
			case i == end:
				p.report.PeakNode = "(the outputs)"
			default:
				p.report.PeakNode = p.nodes[i].Name
			}
		}
	}
	p.report.ArenaBytes = 4 * p.arena
	p.report.WeightsBytes = int64(len(p.blob))
	p.report.CodeBytes = -1
}

// expr is the arena slice of v after placement.
func (p *litePlan) expr(v *ir.Value) string {
	b := p.buf[v]
	return fmt.Sprintf("a[%d:%d]", b.off, b.off+liteNumel(p.dims[v]))
}

// ParseSize reads a byte count: 512KB, 1.5MB, 2MiB, 65536 (KB and MB are
// 1024 and 1024*1024 bytes, as on a microcontroller's data sheet).
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(strings.ToUpper(s))
	mult := int64(1)
	for _, u := range []struct {
		suf string
		m   int64
	}{{"KIB", 1 << 10}, {"MIB", 1 << 20}, {"GIB", 1 << 30}, {"KB", 1 << 10}, {"MB", 1 << 20}, {"GB", 1 << 30}, {"K", 1 << 10}, {"M", 1 << 20}, {"B", 1}} {
		if strings.HasSuffix(t, u.suf) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suf)), u.m
			break
		}
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || f < 0 || f*float64(mult) > 1<<62 {
		return 0, fmt.Errorf("size %q: want a byte count like 512KB, 2MB or 65536", s)
	}
	return int64(f * float64(mult)), nil
}

// HumanBytes prints a byte count in B, KB or MB (1024-based).
func HumanBytes(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.2f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// GenerateLite writes the lite package of m: model.go (the API and Run),
// kernels.go (templates/lite), weights.go (the weights as a string
// constant), doc.go (with the size report; the code size as the report
// says, see MeasureLiteCode and LiteDoc) and model_test.go.
func GenerateLite(m *ir.Model, opts LiteOptions) (map[string][]byte, *LiteReport, error) {
	if !validPackageName(opts.Package) {
		return nil, nil, fmt.Errorf("gen: %q is not a valid Go package name", opts.Package)
	}
	if opts.Source == "" {
		opts.Source = "model.onnx"
	}
	p, err := planLite(m)
	if err != nil {
		return nil, nil, err
	}
	if len(m.Graph.Outputs) == 0 {
		return nil, nil, fmt.Errorf("gen: graph %q has no outputs: there is nothing to compute", m.Graph.Name)
	}
	p.place()
	rep := &p.report
	if opts.RAMBudget > 0 && rep.ArenaBytes > opts.RAMBudget {
		var top []string
		for i, v := range rep.Peak {
			if i == 4 {
				break
			}
			top = append(top, fmt.Sprintf("%q %s", v.Name, HumanBytes(v.Bytes)))
		}
		return nil, nil, fmt.Errorf("-profile lite: the memory plan needs %s (%d bytes) of arena, %s (%d bytes) over the %s RAM budget; the peak is at node %q, where these values are live: %s",
			HumanBytes(rep.ArenaBytes), rep.ArenaBytes, HumanBytes(rep.ArenaBytes-opts.RAMBudget), rep.ArenaBytes-opts.RAMBudget, HumanBytes(opts.RAMBudget), rep.PeakNode, strings.Join(top, ", "))
	}
	files := map[string][]byte{}
	k, err := templates.Lite.ReadFile("lite/kernels.go")
	if err != nil {
		return nil, nil, err
	}
	k = bytes.Replace(k, []byte("\npackage lite\n"), []byte("\npackage "+opts.Package+"\n"), 1)
	files["kernels.go"] = append([]byte(header(opts.Source)), k...)
	files["weights.go"] = liteWeightsFile(opts, p.blob)
	model, err := p.modelFile(opts)
	if err != nil {
		return nil, nil, err
	}
	files["model.go"] = model
	test, err := p.testFile(opts)
	if err != nil {
		return nil, nil, err
	}
	files["model_test.go"] = test
	files["doc.go"] = LiteDoc(m, opts, rep)
	return files, rep, nil
}

func header(source string) string {
	return "// Code generated by cuvil " + Version + " from " + source + "; DO NOT EDIT.\n\n"
}

// liteWeightsFile is the weights as one string constant: read-only data
// (flash on a microcontroller), read in place by the kernels.
func liteWeightsFile(opts LiteOptions, blob []byte) []byte {
	var b bytes.Buffer
	b.WriteString(header(opts.Source))
	fmt.Fprintf(&b, "package %s\n\n// cuvilWeights holds the constant weights, little-endian float32 (%d bytes).\nconst cuvilWeights = \"", opts.Package, len(blob))
	for _, c := range blob {
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c >= 0x20 && c < 0x7f:
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "\\x%02x", c)
		}
	}
	b.WriteString("\"\n")
	return b.Bytes()
}

func (p *litePlan) modelFile(opts LiteOptions) ([]byte, error) {
	g := p.m.Graph
	var b strings.Builder
	b.WriteString(header(opts.Source))
	fmt.Fprintf(&b, "package %s\n\nimport (\n\t\"errors\"\n\t\"math\"\n)\n\n", opts.Package)
	fmt.Fprintf(&b, `const (
	// ArenaLen is the float32s of the arena one Session works in (every
	// input, output and intermediate value; %d bytes).
	ArenaLen = %d
	// ArenaBytes is ArenaLen in bytes: the RAM a session needs.
	ArenaBytes = 4 * ArenaLen
	// WeightsBytes is the size of the weights, read in place from a string
	// constant (read-only data: flash on a microcontroller).
	WeightsBytes = %d
)

var _ = math.Inf // kernels' and Run's literals may not need it

// InputNames and OutputNames are the ONNX names of the inputs and
// outputs, in order; InputShapes and OutputShapes their dims.
var (
	InputNames   = [...]string{%s}
	OutputNames  = [...]string{%s}
	InputShapes  = [...][%d]int{%s}
	OutputShapes = [...][%d]int{%s}
)
`, 4*p.arena, p.arena, len(p.blob), quoteNames(g.Inputs), quoteNames(g.Outputs), maxRank(p, g.Inputs), shapeLits(p, g.Inputs), maxRank(p, g.Outputs), shapeLits(p, g.Outputs))
	fmt.Fprintf(&b, `
var (
	errWeights = errors.New(%q)
	errArena   = errors.New(%q)
)

// Model is the compiled model; it holds nothing but is the handle
// sessions come from.
type Model struct{}

// New checks the weights and returns the model. It allocates only the
// Model.
func New() (*Model, error) {
	if len(cuvilWeights) != WeightsBytes {
		return nil, errWeights
	}
	return &Model{}, nil
}

// Session runs the model in its arena: one goroutine at a time.
type Session struct{ a []float32 }

// NewSession returns a session working in arena, which must hold at
// least ArenaLen float32s (a package-level [ArenaLen]float32 array, or a
// slice of the caller's memory); nil allocates one. Nothing is allocated
// after it: Run works only in the arena.
func (m *Model) NewSession(arena []float32) (*Session, error) {
	if arena == nil {
		arena = make([]float32, ArenaLen)
	}
	if len(arena) < ArenaLen {
		return nil, errArena
	}
	return &Session{a: arena[:ArenaLen:ArenaLen]}, nil
}

// Arena is the session's arena.
func (s *Session) Arena() []float32 { return s.a }
`, opts.Package+": the weights are not the size the package was generated with", opts.Package+": the arena holds fewer than ArenaLen float32s")
	b.WriteString("\n// Input returns input i's place in the arena (nil for no such input):\n// write the input there before Run; Run may overwrite it.\nfunc (s *Session) Input(i int) []float32 {\n\ta := s.a\n\tswitch i {\n")
	for i, v := range g.Inputs {
		fmt.Fprintf(&b, "\tcase %d:\n\t\treturn %s\n", i, p.expr(v))
	}
	b.WriteString("\t}\n\treturn nil\n}\n\n// Output returns output i's place in the arena (nil for no such output),\n// valid after Run until the next Run.\nfunc (s *Session) Output(i int) []float32 {\n\ta := s.a\n\tswitch i {\n")
	for i, v := range g.Outputs {
		fmt.Fprintf(&b, "\tcase %d:\n\t\treturn %s\n", i, p.expr(v))
	}
	b.WriteString("\t}\n\treturn nil\n}\n\n// Run runs the model on the inputs in the arena; the outputs are then in\n// the arena too (Output). It allocates nothing and cannot fail.\nfunc (s *Session) Run() {\n\ta := s.a\n\t_ = a\n")
	for i, n := range p.nodes {
		if p.steps[i] == "" {
			fmt.Fprintf(&b, "\t// %s %q: its output is its input's buffer\n", n.Op, n.Name)
			continue
		}
		fmt.Fprintf(&b, "\t%s // %s %q\n", p.fill(p.steps[i]), n.Op, n.Name)
	}
	// Graph outputs that are constants.
	for _, v := range g.Outputs {
		if v.IsConst() {
			cs, err := p.constF32(v)
			if err != nil {
				return nil, fmt.Errorf("output %q: %v", v.Name, err)
			}
			fmt.Fprintf(&b, "\tcopyF32(%s, %s) // constant output %q\n", p.expr(v), cs, v.Name)
		}
	}
	b.WriteString("}\n")
	src, err := format.Source([]byte(b.String()))
	if err != nil {
		return nil, fmt.Errorf("gen: lite model.go: %v", err)
	}
	return src, nil
}

// fill replaces the arena placeholders of a statement.
func (p *litePlan) fill(s string) string {
	for {
		i := strings.IndexByte(s, 0)
		if i < 0 {
			return s
		}
		j := strings.IndexByte(s[i+1:], 0) + i + 1
		id, _ := strconv.Atoi(s[i+1 : j])
		s = s[:i] + p.expr(p.byID[id]) + s[j+1:]
	}
}

func quoteNames(vs []*ir.Value) string {
	var s []string
	for _, v := range vs {
		s = append(s, strconv.Quote(v.Name))
	}
	return strings.Join(s, ", ")
}

func maxRank(p *litePlan, vs []*ir.Value) int {
	r := 1
	for _, v := range vs {
		if d := len(p.liteShape(v)); d > r {
			r = d
		}
	}
	return r
}

func (p *litePlan) liteShape(v *ir.Value) []int64 {
	if d, ok := p.dims[v]; ok {
		return d
	}
	if v.IsConst() {
		return v.Const.Shape
	}
	return nil
}

func shapeLits(p *litePlan, vs []*ir.Value) string {
	var s []string
	for _, v := range vs {
		s = append(s, "{"+joinInts(p.liteShape(v))+"}")
	}
	return strings.Join(s, ", ")
}

// testFile is the package's own tests: a run on deterministic inputs
// gives finite outputs, the same twice, with no allocation and no heap
// growth after New; a short arena is refused and a caller's array works.
func (p *litePlan) testFile(opts LiteOptions) ([]byte, error) {
	src := header(opts.Source) + "package " + opts.Package + `

import (
	"math"
	"runtime"
	"testing"
)

// cuvilFill writes a deterministic pseudo-random input into every input.
func cuvilFill(s *Session) {
	x := uint32(12345)
	for i := 0; s.Input(i) != nil; i++ {
		in := s.Input(i)
		for j := range in {
			x = x*1664525 + 1013904223
			in[j] = float32(x>>8)/float32(1<<24)*2 - 1
		}
	}
}

func cuvilOutputs(s *Session) [][]float32 {
	var out [][]float32
	for i := 0; s.Output(i) != nil; i++ {
		out = append(out, append([]float32(nil), s.Output(i)...))
	}
	return out
}

func TestRun(t *testing.T) {
	m, err := New()
	if err != nil {
		t.Fatal(err)
	}
	s, err := m.NewSession(nil)
	if err != nil {
		t.Fatal(err)
	}
	cuvilFill(s)
	s.Run()
	first := cuvilOutputs(s)
	if len(first) != len(OutputNames) {
		t.Fatalf("%d outputs, want %d", len(first), len(OutputNames))
	}
	for i, o := range first {
		n := 1
		for _, d := range OutputShapes[i] {
			if d > 0 {
				n *= d
			}
		}
		if len(o) != n {
			t.Errorf("output %q: %d elements, want %d", OutputNames[i], len(o), n)
		}
		for j, v := range o {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				t.Fatalf("output %q[%d] = %v", OutputNames[i], j, v)
			}
		}
	}
	// The same again (Run may overwrite the inputs: write them again).
	cuvilFill(s)
	s.Run()
	for i, o := range cuvilOutputs(s) {
		for j := range o {
			if o[j] != first[i][j] {
				t.Fatalf("output %q[%d]: %v, then %v", OutputNames[i], j, first[i][j], o[j])
			}
		}
	}
	if n := testing.AllocsPerRun(3, s.Run); n != 0 {
		t.Errorf("Run allocates %v times per run, want 0", n)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := 0; i < 3; i++ {
		s.Run()
	}
	runtime.ReadMemStats(&after)
	if after.Mallocs != before.Mallocs || after.TotalAlloc != before.TotalAlloc {
		t.Errorf("3 runs: %d mallocs, %d bytes; want none", after.Mallocs-before.Mallocs, after.TotalAlloc-before.TotalAlloc)
	}
}

var cuvilTestArena [ArenaLen]float32

func TestArena(t *testing.T) {
	m, err := New()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.NewSession(make([]float32, ArenaLen-1)); err == nil {
		t.Error("an arena one float32 short was taken")
	}
	s, err := m.NewSession(cuvilTestArena[:])
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Arena()) != ArenaLen || &s.Arena()[0] != &cuvilTestArena[0] {
		t.Error("the session does not work in the caller's arena")
	}
	for i := 0; s.Input(i) != nil; i++ {
		in := s.Input(i)
		if &in[:cap(in)][cap(in)-1] != &s.Arena()[len(s.Arena())-1] && cap(in) > ArenaLen {
			t.Errorf("input %d is outside the arena", i)
		}
	}
	cuvilFill(s)
	s.Run()
	got := cuvilOutputs(s)
	s2, _ := m.NewSession(nil)
	cuvilFill(s2)
	s2.Run()
	for i, o := range cuvilOutputs(s2) {
		for j := range o {
			if o[j] != got[i][j] {
				t.Fatalf("output %q[%d]: %v in the caller's arena, %v in its own", OutputNames[i], j, got[i][j], o[j])
			}
		}
	}
}
`
	b, err := format.Source([]byte(src))
	if err != nil {
		return nil, fmt.Errorf("gen: lite model_test.go: %v", err)
	}
	return b, nil
}

// LiteDoc is the lite package's doc.go with the size report.
func LiteDoc(m *ir.Model, opts LiteOptions, rep *LiteReport) []byte {
	var lines []string
	add := func(format string, args ...any) { lines = append(lines, fmt.Sprintf(format, args...)) }
	add("Package %s runs the ONNX model %s, compiled ahead of time by cuvil %s with -profile lite:", opts.Package, opts.Source, Version)
	add("pure Go (it imports errors and math only), float32, single-threaded, with every")
	add("value in one arena (ArenaLen float32s) and the weights read in place from a string constant.")
	add("")
	if m.SourceHash != "" {
		add("Source: %s, sha256 %s.", opts.Source, m.SourceHash)
		add("")
	}
	add("Inputs:")
	add("")
	for _, v := range m.Graph.Inputs {
		add("  - %q: %s", v.Name, v.Type)
	}
	add("")
	add("Outputs:")
	add("")
	for _, v := range m.Graph.Outputs {
		add("  - %q: %s", v.Name, v.Type)
	}
	add("")
	add("Sizes:")
	add("")
	add("  - weights (flash): %d bytes (%s)", rep.WeightsBytes, HumanBytes(rep.WeightsBytes))
	add("  - arena (RAM): %d bytes (%s); values live at once at most %d bytes, at node %q", rep.ArenaBytes, HumanBytes(rep.ArenaBytes), rep.LiveBytes, rep.PeakNode)
	if rep.CodeBytes >= 0 {
		add("  - code (flash): %d bytes (%s) of this package's functions linked into a program for %s (go tool nm -size), without the Go runtime", rep.CodeBytes, HumanBytes(rep.CodeBytes), rep.CodeTarget)
	} else {
		add("  - code: not measured (%s)", rep.CodeNote)
	}
	add("")
	add("Use:")
	add("")
	add("\tm, err := %s.New()", opts.Package)
	add("\tvar arena [%s.ArenaLen]float32 // or nil: NewSession allocates it", opts.Package)
	add("\ts, err := m.NewSession(arena[:])")
	add("\tcopy(s.Input(0), x)")
	add("\ts.Run()")
	add("\ty := s.Output(0)")
	var b strings.Builder
	b.WriteString(header(opts.Source))
	for _, l := range lines {
		if l == "" {
			b.WriteString("//\n")
		} else if l[0] == '\t' {
			b.WriteString("//" + l + "\n")
		} else {
			b.WriteString("// " + l + "\n")
		}
	}
	b.WriteString("package " + opts.Package + "\n")
	return []byte(b.String())
}
