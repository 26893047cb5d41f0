package passes

import (
	"math"
	"slices"

	"github.com/cuvil/cuvil/ir"
)

// FuseElementwise turns connected element-wise ops that the other fusions
// left (an epilogue inside a GEMM or conv beats a loop of its own) into
// one cuvil::Elementwise, whose kernel runs them chunk by chunk in one
// pass over memory (templates/k_elem_group.go).
//
// A group holds f32 or f64 nodes of one output shape whose operands have
// that shape or one element (scalar constants go inline). It grows in
// graph order: a node joins the group(s) of its producers when the result
// stays within ewMaxOps instructions and ewMaxInputs inputs (the chunks of
// a bigger program no longer fit in L1) and creates no cycle; else it
// starts a group of its own. A value a group computes that a node outside
// reads is stored as an extra output, unless that reader is in another
// group for which the cost model (ewRecomputeCheaper: bytes moved against
// the ops to redo) says computing it again from the first group's inputs
// is cheaper than writing and reading it. Groups of one node stay as they
// are.
var FuseElementwise = &Pass{
	Name: "fuse-elementwise",
	Doc:  "fuse groups of element-wise ops into one cuvil::Elementwise loop, splitting them by a cost model",
	Run: func(m *ir.Model) error {
		return forGraphs(m, func(g *ir.Graph) error {
			return fuseElementwise(newRewriter(m, g))
		})
	},
}

// The group limits: instructions (temporaries of 2 KiB a chunk in f32
// must stay in L1), inputs (streams the loop reads at once) and the ops a
// group redoes for another (see ewRecomputeCheaper).
const (
	ewMaxOps       = 16
	ewMaxInputs    = 8
	ewMaxRecompute = 3
)

// ewOpCost is the compute term of the cost model per element, in bytes
// of memory traffic it costs about as much as: plain arithmetic is nearly
// free next to a load or store, divisions and roots take longer, and
// transcendental functions (evaluated in float64 by the kernel) much
// longer. An op missing here is not fused.
var ewOpCost = map[string]float64{
	"Add": 1, "Sub": 1, "Mul": 1, "Max": 1, "Min": 1, "Relu": 1, "Neg": 1, "Abs": 1,
	"Floor": 1, "Ceil": 1, "LeakyRelu": 1, "Clip": 2, "HardSwish": 2,
	"Div": 2, "Sqrt": 2, "Reciprocal": 2,
	"Exp": 8, "Log": 8, "Sigmoid": 8, "Tanh": 8, "Erf": 8, "Pow": 16, "Softplus": 16,
	"cuvil.Gelu": 8, "Swish": 8, "cuvil.Swish": 8, "Elu": 8, "cuvil.HardSwish": 2,
	"Mish": 16, "cuvil.Mish": 16,
}

// ewGroup is a group being built.
type ewGroup struct {
	members []*ir.Node // graph order
	recomp  []*ir.Node // members of other groups this one computes again
	shape   ir.Type
	ops     int // instructions
	dead    bool
}

// ewFusable reports whether n can be in a group: a fusable op with one
// f32/f64 output whose operands have its shape (one of them at least) or
// one element, the scalars of LeakyRelu/Clip constant, and an output that
// is not a single element (shape arithmetic is not worth a loop).
func ewFusable(n *ir.Node) bool {
	op := ewOpName(n)
	if _, ok := ewOpCost[op]; !ok || len(n.Outputs) != 1 || n.Outputs[0] == nil {
		return false
	}
	if (op == "Max" || op == "Min") && len(n.Inputs) != 2 || n.Attr("broadcast") != nil || n.Attr("axis") != nil {
		return false // variadic, or the legacy (opset < 7) broadcast
	}
	y := n.Outputs[0].Type
	if !y.Known() || (y.DType != ir.F32 && y.DType != ir.F64) || len(y.Shape) == 0 {
		return false
	}
	if c, ok := y.Shape.NumElements(); ok && c == 1 {
		return false
	}
	if op == "Clip" {
		if n.Version < 11 {
			return false // min/max attributes: rare, not worth a case
		}
		for _, v := range n.Inputs[1:] {
			if v != nil && !ewScalarConst(v) {
				return false
			}
		}
		return sameShape(n.Inputs[0], n.Outputs[0])
	}
	full := false
	for _, v := range n.Inputs {
		if v == nil || v.Type.DType != y.DType || !v.Type.Known() {
			return false
		}
		if sameShape(v, n.Outputs[0]) {
			full = true
		} else if c, ok := v.Type.Shape.NumElements(); !ok || c != 1 || len(v.Type.Shape) > len(y.Shape) {
			return false
		}
	}
	return full
}

// ewOpName is n's op as the cost table and the program name it.
func ewOpName(n *ir.Node) string {
	if n.Domain == ir.CuvilDomain {
		return "cuvil." + n.Op
	}
	if n.Domain != "" && n.Domain != "ai.onnx" {
		return ""
	}
	return n.Op
}

// ewScalarConst reports whether v is a one-element f32/f64 constant that
// a float32 attribute holds exactly (the program's inline constants).
func ewScalarConst(v *ir.Value) bool {
	f, ok := scalarConst(v)
	return ok && float64(float32(f)) == f || ok && math.IsNaN(f)
}

func fuseElementwise(r *rewriter) error {
	g := r.g
	pos := map[*ir.Node]int{}
	for i, n := range g.Nodes {
		pos[n] = i
	}
	groupOf := map[*ir.Node]*ewGroup{}
	var groups []*ewGroup
	for _, n := range g.Nodes {
		at(r.m, n)
		if !ewFusable(n) {
			continue
		}
		var cands []*ewGroup
		for _, v := range n.Inputs {
			if v == nil || v.Def == nil {
				continue // an omitted Clip bound, a graph input or constant
			}
			if gr := groupOf[v.Def]; gr != nil && gr.shape.Equal(n.Outputs[0].Type) && !slices.Contains(cands, gr) {
				cands = append(cands, gr)
			}
		}
		// All producers' groups at once, else the biggest one that fits.
		var join []*ewGroup
		if ewFits(r, groupOf, cands, n) && ewAcyclic(pos, groupOf, cands, n) {
			join = cands
		} else {
			slices.SortStableFunc(cands, func(a, b *ewGroup) int { return len(b.members) - len(a.members) })
			for _, c := range cands {
				if ewFits(r, groupOf, []*ewGroup{c}, n) && ewAcyclic(pos, groupOf, []*ewGroup{c}, n) {
					join = []*ewGroup{c}
					break
				}
			}
		}
		if len(join) == 0 {
			gr := &ewGroup{shape: n.Outputs[0].Type}
			groups = append(groups, gr)
			join = []*ewGroup{gr}
		}
		gr := join[0]
		for _, o := range join[1:] {
			for _, x := range o.members {
				groupOf[x] = gr
			}
			gr.members = append(gr.members, o.members...)
			gr.ops += o.ops
			o.dead = true
		}
		gr.members = append(gr.members, n)
		gr.ops += ewInstrs(n)
		groupOf[n] = gr
		slices.SortFunc(gr.members, func(a, b *ir.Node) int { return pos[a] - pos[b] })
	}
	groups = slices.DeleteFunc(groups, func(gr *ewGroup) bool { return gr.dead })
	// Cost model: a group may compute a small cone of another group's
	// nodes again instead of reading its result.
	readers := ewReaders{}
	for _, h := range groups {
		for _, x := range slices.Clone(h.members) {
			for _, t := range x.Inputs {
				if t == nil {
					continue
				}
				p := t.Def
				if p == nil || groupOf[p] == nil || groupOf[p] == h || slices.Contains(h.recomp, p) {
					continue
				}
				cone := ewCone(groupOf, groupOf[p], p)
				if ewRecomputeCheaper(r, groupOf, readers, h, t, cone) {
					for _, c := range cone {
						if !slices.Contains(h.recomp, c) {
							h.recomp = append(h.recomp, c)
							h.ops += ewInstrs(c)
						}
					}
				}
			}
		}
	}
	changed := false
	for _, gr := range groups {
		if len(gr.members)+len(gr.recomp) >= 2 {
			ewEmit(r, groupOf, pos, gr)
			changed = true
		}
	}
	if !changed {
		return nil
	}
	r.sweep()
	// A fused node sits where its last member was, but an extra output may
	// be read by a node between its members: restore a topological order
	// (ewAcyclic made sure there is one).
	err := sortNodes(g)
	r.refresh()
	return err
}

// ewReaders caches, per value, the groups other than its producer's that
// read it: n distinct ones (2 meaning two or more, or a reader in no
// group), only the one when n is 1.
type ewReaders map[*ir.Value]struct {
	n    int
	only *ewGroup
}

// other reports whether t has a reader outside its producer's group and h.
func (rs ewReaders) other(r *rewriter, groupOf map[*ir.Node]*ewGroup, t *ir.Value, h *ewGroup) bool {
	info, ok := rs[t]
	if !ok {
		def := groupOf[t.Def]
		for _, u := range r.uses[t] {
			g := groupOf[u]
			switch {
			case g == def:
			case g == nil:
				info.n = 2
			case info.n == 0:
				info.n, info.only = 1, g
			case info.only != g:
				info.n = 2
			}
			if info.n == 2 {
				break
			}
		}
		rs[t] = info
	}
	return info.n >= 2 || info.n == 1 && info.only != h
}

// ewInstrs is the number of program instructions n becomes.
func ewInstrs(n *ir.Node) int {
	if isOp(n, "Clip") {
		c := 0
		for _, v := range n.Inputs[1:] {
			if v != nil {
				c++
			}
		}
		return max(c, 1)
	}
	return 1
}

// ewExternal returns the non-constant-scalar inputs of the nodes ns that
// no node of ns computes, each once.
func ewExternal(ns []*ir.Node) []*ir.Value {
	in := map[*ir.Value]bool{}
	for _, n := range ns {
		in[n.Outputs[0]] = true
	}
	var ext []*ir.Value
	for _, n := range ns {
		for _, v := range n.Inputs {
			if v != nil && !in[v] && !ewScalarConst(v) && !slices.Contains(ext, v) {
				ext = append(ext, v)
			}
		}
	}
	return ext
}

// ewFits reports whether the groups gs with n stay within the limits.
func ewFits(r *rewriter, groupOf map[*ir.Node]*ewGroup, gs []*ewGroup, n *ir.Node) bool {
	ops := ewInstrs(n)
	ns := []*ir.Node{n}
	for _, gr := range gs {
		ops += gr.ops
		ns = append(ns, gr.members...)
	}
	return ops <= ewMaxOps && len(ewExternal(ns)) <= ewMaxInputs
}

// ewAcyclic reports whether merging n and the groups gs into one node
// keeps the graph acyclic once every group is one node: no input from
// outside the merged set may depend on a node inside it, where a node of
// another group depends on everything its group reads.
func ewAcyclic(pos map[*ir.Node]int, groupOf map[*ir.Node]*ewGroup, gs []*ewGroup, n *ir.Node) bool {
	set := map[*ir.Node]bool{n: true}
	first := pos[n]
	for _, gr := range gs {
		for _, x := range gr.members {
			set[x] = true
			first = min(first, pos[x])
		}
	}
	seen := map[*ir.Node]bool{}
	var reaches func(d *ir.Node) bool
	reads := func(d *ir.Node) bool {
		for _, v := range nodeReads(d) {
			if v != nil && reaches(v.Def) {
				return true
			}
		}
		return false
	}
	reaches = func(d *ir.Node) bool {
		if d == nil || seen[d] {
			return false
		}
		seen[d] = true
		if set[d] {
			return true
		}
		if gr := groupOf[d]; gr != nil {
			// Members of one group may sit on both sides of first.
			for _, x := range gr.members {
				if x != d && set[x] {
					return true
				}
				seen[x] = true
			}
			for _, x := range gr.members {
				if reads(x) {
					return true
				}
			}
			return false
		}
		return pos[d] >= first && reads(d)
	}
	for x := range set {
		for _, v := range x.Inputs {
			if v != nil && !set[v.Def] && reaches(v.Def) {
				return false
			}
		}
	}
	return true
}

// ewCone returns the members of gr that p's output depends on inside gr
// (p included), in graph order, or nil when they are more than
// ewMaxRecompute.
func ewCone(groupOf map[*ir.Node]*ewGroup, gr *ewGroup, p *ir.Node) []*ir.Node {
	var cone []*ir.Node
	var walk func(x *ir.Node)
	walk = func(x *ir.Node) {
		if x == nil || groupOf[x] != gr || slices.Contains(cone, x) {
			return
		}
		cone = append(cone, x)
		for _, v := range x.Inputs {
			if v != nil {
				walk(v.Def)
			}
		}
	}
	walk(p)
	if len(cone) > ewMaxRecompute {
		return nil
	}
	slices.SortFunc(cone, func(a, b *ir.Node) int { return slices.Index(gr.members, a) - slices.Index(gr.members, b) })
	return cone
}

// ewRecomputeCheaper is the cost model for value t, computed by the nodes
// cone of another group and read by group h. Per element, in bytes:
// storing costs h's read of t plus the other group's write of t when
// nothing else needs it; recomputing costs the reads of the cone's inputs
// h does not read already plus the cone's ops (ewOpCost). A reader
// outside any group needs t in memory anyway: there storing always wins,
// which is why only group readers get here.
func ewRecomputeCheaper(r *rewriter, groupOf map[*ir.Node]*ewGroup, readers ewReaders, h *ewGroup, t *ir.Value, cone []*ir.Node) bool {
	if len(cone) == 0 || h.ops+len(cone) > ewMaxOps {
		return false
	}
	size := float64(t.Type.DType.Size())
	store := size // h reads t
	other := r.outs[t] || readers.other(r, groupOf, t, h)
	if !other {
		store += size // the other group writes t only for h
	}
	ext := ewExternal(append(slices.Clone(h.members), h.recomp...))
	var newIn []*ir.Value
	recompute := 0.0
	for _, v := range ewExternal(cone) {
		if !slices.Contains(ext, v) {
			newIn = append(newIn, v)
			if sameShape(v, t) {
				recompute += size
			}
		}
	}
	if len(ext)+len(newIn) > ewMaxInputs {
		return false
	}
	for _, c := range cone {
		recompute += ewOpCost[ewOpName(c)]
	}
	return recompute < store
}

// ewEmit replaces gr's members by one cuvil::Elementwise node.
func ewEmit(r *rewriter, groupOf map[*ir.Node]*ewGroup, pos map[*ir.Node]int, gr *ewGroup) {
	prog := append(slices.Clone(gr.recomp), gr.members...)
	slices.SortStableFunc(prog, func(a, b *ir.Node) int { return pos[a] - pos[b] })
	inProg := map[*ir.Value]bool{}
	for _, x := range prog {
		inProg[x.Outputs[0]] = true
	}
	// Outputs: values of members read outside the group (by a node that
	// does not compute them itself) or graph outputs.
	var outs []*ir.Value
	for _, x := range gr.members {
		v := x.Outputs[0]
		need := r.outs[v]
		for _, u := range r.uses[v] {
			if h := groupOf[u]; h != gr && (h == nil || !slices.Contains(h.recomp, x)) {
				need = true
			}
		}
		if need {
			outs = append(outs, v)
		}
	}
	if len(outs) == 0 {
		r.kill(gr.members...) // all of it recomputed where it is read
		return
	}
	// Operands: inputs (one with the output shape first), constants,
	// results; encoded once the number of inputs is known.
	type operand struct {
		kind int // 0 input, 1 const, 2 result
		i    int
	}
	var (
		ins    []*ir.Value
		consts []float32
		ops    []string
		args   []operand
	)
	res := map[*ir.Value]int{}
	ref := func(v *ir.Value) operand {
		if k, ok := res[v]; ok {
			return operand{2, k}
		}
		if ewScalarConst(v) {
			f, _ := scalarConst(v)
			return operand{1, ewConstIndex(&consts, float32(f))}
		}
		if i := slices.Index(ins, v); i >= 0 {
			return operand{0, i}
		}
		ins = append(ins, v)
		return operand{0, len(ins) - 1}
	}
	for _, x := range prog {
		switch op := ewOpName(x); op {
		case "Clip":
			cur := ref(x.Inputs[0])
			for i, name := range []string{"Max", "Min"} {
				if b := x.Input(1 + i); b != nil {
					ops = append(ops, name)
					args = append(args, cur, ref(b))
					cur = operand{2, len(ops) - 1}
				}
			}
			if cur.kind != 2 { // no bounds: a copy
				ops = append(ops, "Max")
				args = append(args, cur, cur)
			}
		case "LeakyRelu":
			ops = append(ops, op)
			args = append(args, ref(x.Inputs[0]), operand{1, ewConstIndex(&consts, x.AttrFloat("alpha", 0.01))})
		case "Swish", "cuvil.Swish", "Elu":
			// x and alpha, like LeakyRelu.
			ops = append(ops, x.Op)
			args = append(args, ref(x.Inputs[0]), operand{1, ewConstIndex(&consts, x.AttrFloat("alpha", 1))})
		case "cuvil.HardSwish", "cuvil.Mish":
			ops = append(ops, x.Op)
			args = append(args, ref(x.Inputs[0]))
		case "cuvil.Gelu":
			name := "Gelu"
			if x.AttrString("approximate", "none") == "tanh" {
				name = "GeluTanh"
			}
			ops = append(ops, name)
			args = append(args, ref(x.Inputs[0]))
		default:
			ops = append(ops, op)
			for _, v := range x.Inputs {
				args = append(args, ref(v))
			}
		}
		res[x.Outputs[0]] = len(ops) - 1
	}
	// Input 0 must carry the output shape.
	if i := slices.IndexFunc(ins, func(v *ir.Value) bool { return sameShape(v, outs[0]) }); i > 0 {
		ins[0], ins[i] = ins[i], ins[0]
		for k, a := range args {
			if a.kind == 0 && a.i == 0 {
				args[k].i = i
			} else if a.kind == 0 && a.i == i {
				args[k].i = 0
			}
		}
	}
	enc := func(a operand) int64 {
		switch a.kind {
		case 0:
			return int64(a.i)
		case 1:
			return -int64(a.i) - 1
		}
		return int64(len(ins) + a.i)
	}
	var argv, outv []int64
	for _, a := range args {
		argv = append(argv, enc(a))
	}
	for _, v := range outs {
		outv = append(outv, enc(operand{2, res[v]}))
	}
	last := gr.members[len(gr.members)-1]
	fn := &ir.Node{Name: last.Name, Op: "Elementwise", Domain: ir.CuvilDomain, Version: ir.CuvilOpset,
		Inputs: ins, Outputs: outs}
	fn.SetAttr(&ir.Attr{Name: "ops", Kind: ir.AttrStrings, Strings: ops})
	fn.SetAttr(&ir.Attr{Name: "args", Kind: ir.AttrInts, Ints: argv})
	if len(consts) > 0 {
		fn.SetAttr(&ir.Attr{Name: "consts", Kind: ir.AttrFloats, Floats: consts})
	}
	fn.SetAttr(&ir.Attr{Name: "outputs", Kind: ir.AttrInts, Ints: outv})
	for _, v := range outs {
		v.Def = fn
	}
	useCuvil(r.m)
	r.record(fn, prog...)
	r.replaceNode(last, fn)
	for _, x := range gr.members {
		if x != last {
			r.kill(x)
		}
	}
}

// ewConstIndex returns c's index in consts, adding it when new.
func ewConstIndex(consts *[]float32, c float32) int {
	for i, x := range *consts {
		if math.Float32bits(x) == math.Float32bits(c) {
			return i
		}
	}
	*consts = append(*consts, c)
	return len(*consts) - 1
}
