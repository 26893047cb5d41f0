package passes

import (
	"fmt"

	"github.com/cuvil/cuvil/ir"
)

// Precision is the mixed-precision pass (-precision bf16|fp16, -keep-f32):
// it keeps numerically sensitive ops in float32 where their inputs arrive
// in half precision (an all-fp16 export, or a bf16 model): Softmax and
// LogSoftmax (exp overflows f16 above 11.1), the normalisations
// (LayerNormalization, cuvil::LayerNorm/SkipLayerNorm, RMSNormalization,
// GroupNormalization, InstanceNormalization, MeanVarianceNormalization:
// their variance), reductions, Exp and Log, and cuvil::Attention (the
// softmax of its scores). Each such node's half inputs get an explicit
// Cast to f32 and its outputs are computed in f32 and cast back, so every
// reader sees the dtype it saw before; the node is named in a
// PrecisionBreak that `cuvil inspect -types` prints. -keep-f32 pins more
// nodes (by name or op type) the same way.
//
// Without a PrecisionConfig (no -precision, no -keep-f32) the pass does
// nothing: the imported graph's dtypes are what the model says.
var Precision = &Pass{
	Name: "precision",
	Doc:  "keep numerically sensitive ops (Softmax, normalisations, reductions, Exp/Log, attention) in f32 with explicit casts where their inputs are half (-precision bf16|fp16, -keep-f32)",
	Run:  func(m *ir.Model) error { return nil },
	WithOptions: func(m *ir.Model, o Options) error {
		if o.Precision == nil {
			return nil
		}
		return PrecisionModel(m, o.Precision)
	},
}

// Precision modes.
const (
	PrecisionBF16 = "bf16"
	PrecisionFP16 = "fp16"
)

// ParsePrecision checks a -precision value: "" (none), bf16 or fp16.
func ParsePrecision(s string) (string, error) {
	switch s {
	case "", PrecisionBF16, PrecisionFP16:
		return s, nil
	}
	return "", fmt.Errorf("-precision %q: want bf16 or fp16", s)
}

// PrecisionConfig is the precision pass's input and, in Breaks, its
// report.
type PrecisionConfig struct {
	// Mode is PrecisionBF16 or PrecisionFP16 ("" with only KeepF32 set).
	Mode string
	// KeepF32 names nodes (by name) or op types (Softmax, cuvil::LayerNorm
	// or LayerNorm) that run in f32 whatever their inputs.
	KeepF32 []string
	// KeepAnywhere lets a KeepF32 entry name nothing in the graph (cuvil
	// conformance: one list over many models); else that is an error.
	KeepAnywhere bool
	// Breaks lists, in graph order, each node the pass made compute in f32
	// and, from prepack, each GEMM or convolution weight stored bf16.
	Breaks []PrecisionBreak
}

// PrecisionBreak is one place where precision changes: a node whose half
// inputs the pass casts to f32.
type PrecisionBreak struct {
	Node, Op string // the node's name and op (domain-qualified outside ai.onnx)
	Weight   string // the weight stored half (prepack), "" for a node kept f32
	In       string // the first half input (or the weight's type), "f16 [1024,512]"
	Out      string // what the node computes in, "f32"
	Why      string // why it matters, "exp overflows f16 above 11.1"
	Action   string // what the pass did, "computed in f32 (cast inserted)"
}

func (b PrecisionBreak) String() string {
	if b.Weight != "" {
		return fmt.Sprintf("node %s (%s): weight %s %s: %s; %s", b.Node, b.Op, b.Weight, b.In, b.Why, b.Action)
	}
	return fmt.Sprintf("node %s (%s): input %s: %s; %s", b.Node, b.Op, b.In, b.Why, b.Action)
}

// sensitiveWhy says why op is kept in f32 when its input has dtype dt,
// or "" when op is not numerically sensitive.
func sensitiveWhy(op string, dt ir.DType) string {
	f16 := dt == ir.F16
	switch op {
	case "Softmax", "LogSoftmax", "Exp":
		if f16 {
			return "exp overflows f16 above 11.1"
		}
		return "bf16 keeps 8 significant bits: exp's row sums lose their small terms"
	case "cuvil::Attention":
		if f16 {
			return "attention scores: exp overflows f16 above 11.1"
		}
		return "attention scores: bf16 keeps 8 significant bits for the softmax sums"
	case "Log", "ReduceLogSum", "ReduceLogSumExp":
		if f16 {
			return "log loses digits near 1 and exp overflows f16 above 11.1"
		}
		return "bf16 keeps 8 significant bits: log loses digits near 1"
	case "LayerNormalization", "cuvil::LayerNorm", "cuvil::SkipLayerNorm", "RMSNormalization",
		"GroupNormalization", "InstanceNormalization", "MeanVarianceNormalization", "BatchNormalization", "LpNormalization":
		if f16 {
			return "variance: squares overflow f16 above 256 and f16 sums keep 11 significant bits"
		}
		return "variance: bf16 sums of squares keep 8 significant bits"
	case "ReduceMean", "ReduceSum", "ReduceSumSquare", "ReduceL1", "ReduceL2", "ReduceProd", "CumSum":
		if f16 {
			return "f16 sums keep 11 significant bits (and overflow above 65504)"
		}
		return "bf16 sums keep 8 significant bits"
	}
	return ""
}

func keptF32(n *ir.Node, keep []string) bool {
	for _, k := range keep {
		if k == n.Name || k == n.Op || k == opKey(n) {
			return true
		}
	}
	return false
}

// PrecisionModel runs the precision pass with cfg on m's main graph,
// appending what it did to cfg.Breaks.
func PrecisionModel(m *ir.Model, cfg *PrecisionConfig) error {
	if _, err := ParsePrecision(cfg.Mode); err != nil {
		return fmt.Errorf("precision: %v", err)
	}
	g := m.Graph
	for _, k := range cfg.KeepF32 {
		found := false
		for _, n := range g.Nodes {
			if keptF32(n, []string{k}) {
				found = true
				break
			}
		}
		if !found && !cfg.KeepAnywhere {
			return fmt.Errorf("precision: -keep-f32 %q names no node or op of the graph", k)
		}
	}
	castV, ok := onnxVersion(m, "Cast")
	if !ok {
		return fmt.Errorf("precision: opset %d has no Cast", m.Opset(""))
	}
	names := modelNames(m)
	fresh := func(base string) string {
		name := base
		for i := 1; names[name]; i++ {
			name = fmt.Sprintf("%s_%d", base, i)
		}
		names[name] = true
		return name
	}
	var out []*ir.Node
	// wide maps a half value a cast-back made to the f32 value it came
	// from: a kept node reading it reads the f32 value (no f32 -> half ->
	// f32 round trip between two nodes the pass keeps in f32).
	wide := map[*ir.Value]*ir.Value{}
	for _, n := range g.Nodes {
		at(m, n)
		var half *ir.Value // the first half input
		for _, v := range n.Inputs {
			if v != nil && v.Type.Kind == ir.TensorKind && (v.Type.DType == ir.F16 || v.Type.DType == ir.BF16) {
				half = v
				break
			}
		}
		if half == nil {
			out = append(out, n)
			continue
		}
		why := sensitiveWhy(opKey(n), half.Type.DType)
		pinned := keptF32(n, cfg.KeepF32)
		if why == "" && !pinned {
			out = append(out, n)
			continue
		}
		if pinned && why == "" {
			why = "pinned by -keep-f32"
		}
		for _, o := range n.Outputs {
			if o != nil && (o.Type.Kind != ir.TensorKind || !o.Type.DType.IsFloat()) {
				return fmt.Errorf("precision: %v: output %q is %v, not a float tensor: cannot compute it in f32", n, o.Name, o.Type)
			}
		}
		own(n)
		n.Outputs = append([]*ir.Value(nil), n.Outputs...)
		for i, v := range n.Inputs {
			if v == nil || v.Type.Kind != ir.TensorKind || (v.Type.DType != ir.F16 && v.Type.DType != ir.BF16) {
				continue
			}
			if w, ok := wide[v]; ok {
				n.Inputs[i] = w
				continue
			}
			c := &ir.Value{Name: fresh(v.Name + "_f32"), Type: ir.TensorType(ir.F32, v.Type.Shape)}
			c.Def = &ir.Node{Name: fresh(n.Name + "_cast_in"), Op: "Cast", Version: castV, Inputs: []*ir.Value{v}, Outputs: []*ir.Value{c},
				Attrs: []*ir.Attr{{Name: "to", Kind: ir.AttrInt, I: int64(ir.F32)}}}
			out = append(out, c.Def)
			n.Inputs[i] = c
		}
		out = append(out, n)
		for i, o := range n.Outputs {
			if o == nil || (o.Type.DType != ir.F16 && o.Type.DType != ir.BF16) {
				continue
			}
			c := &ir.Value{Name: fresh(o.Name + "_f32"), Type: ir.TensorType(ir.F32, o.Type.Shape), Def: n}
			n.Outputs[i] = c
			wide[o] = c
			o.Def = &ir.Node{Name: fresh(n.Name + "_cast_out"), Op: "Cast", Version: castV, Inputs: []*ir.Value{c}, Outputs: []*ir.Value{o},
				Attrs: []*ir.Attr{{Name: "to", Kind: ir.AttrInt, I: int64(o.Type.DType)}}}
			out = append(out, o.Def)
		}
		cfg.Breaks = append(cfg.Breaks, PrecisionBreak{Node: n.Name, Op: opKey(n), In: half.Type.DType.String() + " " + half.Type.Shape.String(),
			Out: "f32", Why: why, Action: "computed in f32 (cast inserted)"})
	}
	g.Nodes = out
	return nil
}

// PrecisionNote is the one-line summary `cuvil inspect -types` ends with.
func PrecisionNote(cfg *PrecisionConfig) string {
	casts, weights := 0, 0
	for _, b := range cfg.Breaks {
		if b.Weight != "" {
			weights++
		} else {
			casts++
		}
	}
	half := "bf16"
	if cfg.Mode == PrecisionFP16 {
		half = "f16"
	}
	return fmt.Sprintf("# %d node(s) computed in f32 with casts inserted; %d weight(s) stored %s", casts, weights, half)
}
