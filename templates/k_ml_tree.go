package templates

import (
	"math"
	"slices"
)

// Tree ensembles of ai.onnx.ml: TreeEnsemble (opset 5), TreeEnsembleClassifier
// and TreeEnsembleRegressor (opsets 1 and 3). All three are first compiled
// into one flat form, mlForest (parallel node arrays, leaves as ranges of a
// target/weight list), once per node; evaluation walks those arrays and never
// looks at the attributes again.

// Branch modes (TreeEnsemble's nodes_modes numbering).
const (
	mlLEQ uint8 = iota
	mlLT
	mlGTE
	mlGT
	mlEQ
	mlNEQ
	mlMEMBER
)

// mlForest is a compiled tree ensemble. Node i is nodes[i*mlNodeStride:]:
// feature, true child, false child, mode, missing-goes-true, and the range
// of its set in members (MEMBER nodes). A child reference c >= 0 is a node
// index, c < 0 is leaf -c-1; leaf l adds weights[k] to targets[k] for k in
// leafLo[l]:leafLo[l+1]. The compile-trees pass stores exactly these arrays
// as the node's packed_* tensor attributes (weights.bin), so a generated
// package reads them in place.
type mlForest struct {
	nodes     []int32
	split     []float64
	members   []float64
	roots     []int32
	leafLo    []int32
	targets   []int32
	weights   []float64
	nFeatures int // features the nodes read: 1 + the largest feature id
}

const mlNodeStride = 7

// addNode appends one branch node.
func (f *mlForest) addNode(feature int32, split float64, mode uint8, missTrue bool, t, e int32, setLo, setHi int) {
	m := int32(0)
	if missTrue {
		m = 1
	}
	f.nodes = append(f.nodes, feature, t, e, int32(mode), m, int32(setLo), int32(setHi))
	f.split = append(f.split, split)
}

func (f *mlForest) numNodes() int { return len(f.split) }

func mlChild(isLeaf bool, i int) int32 {
	if isLeaf {
		return int32(-i - 1)
	}
	return int32(i)
}

// leaf returns the leaf that row x reaches from child reference c.
func (f *mlForest) leaf(c int32, x []float64) int {
	for c >= 0 {
		nd := f.nodes[int(c)*mlNodeStride : int(c)*mlNodeStride+mlNodeStride]
		v := x[nd[0]]
		var r bool
		if math.IsNaN(v) {
			r = nd[4] != 0
		} else {
			s := f.split[c]
			switch uint8(nd[3]) {
			case mlLEQ:
				r = v <= s
			case mlLT:
				r = v < s
			case mlGTE:
				r = v >= s
			case mlGT:
				r = v > s
			case mlEQ:
				r = v == s
			case mlNEQ:
				r = v != s
			case mlMEMBER:
				r = slices.Contains(f.members[nd[5]:nd[6]], v)
			}
		}
		if r {
			c = nd[1]
		} else {
			c = nd[2]
		}
	}
	return int(-c - 1)
}

// Aggregation functions.
const (
	mlAvg = iota
	mlSum
	mlMin
	mlMax
)

// accumulate evaluates every tree on x and aggregates the leaf weights
// into acc (len = targets), which it initialises.
func (f *mlForest) accumulate(x []float64, acc []float64, agg int) {
	init := 0.0
	switch agg {
	case mlMin:
		init = math.Inf(1)
	case mlMax:
		init = math.Inf(-1)
	}
	for i := range acc {
		acc[i] = init
	}
	seen := false
	for _, r := range f.roots {
		l := f.leaf(r, x)
		for k := f.leafLo[l]; k < f.leafLo[l+1]; k++ {
			t, w := f.targets[k], f.weights[k]
			switch agg {
			case mlMin:
				acc[t] = math.Min(acc[t], w)
			case mlMax:
				acc[t] = math.Max(acc[t], w)
			default:
				acc[t] += w
			}
			seen = true
		}
	}
	if agg == mlAvg && len(f.roots) > 0 {
		for i := range acc {
			acc[i] /= float64(len(f.roots))
		}
	}
	if (agg == mlMin || agg == mlMax) && !seen {
		clear(acc)
	}
	for i, v := range acc {
		if math.IsInf(v, 0) && (agg == mlMin || agg == mlMax) {
			acc[i] = 0 // a target no tree reached
		}
	}
}

// check validates a compiled forest: lengths, references, ranges, and
// that no walk can loop.
func (f *mlForest) check(n *Node) error {
	nn := int32(f.numNodes())
	if len(f.nodes) != int(nn)*mlNodeStride || len(f.leafLo) < 1 || len(f.weights) < len(f.targets) {
		return n.Errorf("malformed compiled trees")
	}
	nl := int32(len(f.leafLo) - 1)
	for l := 0; l < int(nl); l++ {
		if f.leafLo[l] < 0 || f.leafLo[l] > f.leafLo[l+1] || int(f.leafLo[l+1]) > len(f.targets) {
			return n.Errorf("malformed compiled trees: leaf %d", l)
		}
	}
	ok := func(c int32) bool { return c >= 0 && c < nn || c < 0 && -c-1 < nl }
	f.nFeatures = 0
	for i := int32(0); i < nn; i++ {
		nd := f.nodes[i*mlNodeStride : (i+1)*mlNodeStride]
		if !ok(nd[1]) || !ok(nd[2]) {
			return n.Errorf("tree node %d refers to a missing node or leaf", i)
		}
		if nd[0] < 0 || nd[3] < 0 || nd[3] > int32(mlMEMBER) || nd[5] < 0 || nd[5] > nd[6] || int(nd[6]) > len(f.members) {
			return n.Errorf("tree node %d: bad feature, mode or set", i)
		}
		f.nFeatures = max(f.nFeatures, int(nd[0])+1)
	}
	for _, r := range f.roots {
		if !ok(r) {
			return n.Errorf("tree root %d is out of range", r)
		}
	}
	// Walks must end: a cycle would loop forever. Depth-first from each
	// root.
	state := make([]uint8, nn)
	var visit func(c int32) bool
	visit = func(c int32) bool {
		if c < 0 || state[c] == 2 {
			return true
		}
		if state[c] == 1 {
			return false
		}
		state[c] = 1
		if !visit(f.nodes[c*mlNodeStride+1]) || !visit(f.nodes[c*mlNodeStride+2]) {
			return false
		}
		state[c] = 2
		return true
	}
	for _, r := range f.roots {
		if !visit(r) {
			return n.Errorf("the trees have a cycle")
		}
	}
	return nil
}

// mlPackedNames are the tensor attributes the compile-trees pass writes.
var mlPackedNames = [...]string{"packed_nodes", "packed_splits", "packed_members", "packed_roots", "packed_leaves", "packed_targets", "packed_weights"}

// MLPackForest compiles the trees of a TreeEnsemble, TreeEnsembleClassifier
// or TreeEnsembleRegressor node into the packed_* tensors its kernel reads
// (the compile-trees pass stores them in place of the tree attributes).
// Each tensor has at least one element (a trailing pad where empty).
func MLPackForest(n *Node) (map[string]*Tensor, error) {
	f, err := mlCompileFor(n)
	if err != nil {
		return nil, err
	}
	i32 := func(v []int32, shape ...int) *Tensor {
		if len(v) == 0 {
			v, shape = []int32{0}, []int{1}
		}
		return &Tensor{DType: I32, Shape: shape, Data: v}
	}
	f64 := func(v []float64) *Tensor {
		if len(v) == 0 {
			v = []float64{0}
		}
		return &Tensor{DType: F64, Shape: []int{len(v)}, Data: v}
	}
	k := f.numNodes()
	nodes := i32(f.nodes, k, mlNodeStride)
	if k == 0 {
		nodes = &Tensor{DType: I32, Shape: []int{1, mlNodeStride}, Data: make([]int32, mlNodeStride)}
	}
	return map[string]*Tensor{
		"packed_nodes": nodes, "packed_splits": f64(f.split), "packed_members": f64(f.members),
		"packed_roots": i32(f.roots, len(f.roots)), "packed_leaves": i32(f.leafLo, len(f.leafLo)),
		"packed_targets": i32(f.targets, len(f.targets)), "packed_weights": f64(f.weights),
	}, nil
}

// mlCompileFor compiles n's trees from its attributes, by op.
func mlCompileFor(n *Node) (*mlForest, error) {
	switch n.Op {
	case "TreeEnsemble":
		return mlCompileTreeEnsemble(n)
	case "TreeEnsembleClassifier":
		return mlCompileLegacyTrees(n, "class")
	case "TreeEnsembleRegressor":
		return mlCompileLegacyTrees(n, "target")
	}
	return nil, n.Errorf("not a tree ensemble")
}

// mlUnpackForest reads the packed_* attributes in place; ok is false when
// the node has none (compile-trees did not run: the kernel compiles the
// attributes itself).
func mlUnpackForest(n *Node) (*mlForest, bool, error) {
	nodes := n.Attrs.Tensor("packed_nodes")
	if nodes == nil {
		return nil, false, nil
	}
	var ts [len(mlPackedNames)]*Tensor
	for i, name := range mlPackedNames {
		if ts[i] = n.Attrs.Tensor(name); ts[i] == nil {
			return nil, true, n.Errorf("attribute %s is missing", name)
		}
	}
	i32 := func(t *Tensor) []int32 { v, _ := t.Data.([]int32); return v }
	f64 := func(t *Tensor) []float64 { v, _ := t.Data.([]float64); return v }
	k := len(f64(ts[1]))
	f := &mlForest{nodes: i32(ts[0]), split: f64(ts[1]), members: f64(ts[2]), roots: i32(ts[3]),
		leafLo: i32(ts[4]), targets: i32(ts[5]), weights: f64(ts[6])}
	if len(f.nodes) != k*mlNodeStride {
		return nil, true, n.Errorf("packed_nodes has %d values for %d splits", len(f.nodes), k)
	}
	return f, true, f.check(n)
}

// mlTensorF64 reads a numeric tensor attribute (nil: nil).
func mlTensorF64(t *Tensor) []float64 {
	if t == nil {
		return nil
	}
	out := make([]float64, t.Len())
	for i := range out {
		out[i] = ewF64At(t, i)
	}
	return out
}

// mlCompileTreeEnsemble compiles TreeEnsemble (opset 5) attributes.
func mlCompileTreeEnsemble(n *Node) (*mlForest, error) {
	a := n.Attrs
	feat, tn, fn := a.Ints("nodes_featureids"), a.Ints("nodes_truenodeids"), a.Ints("nodes_falsenodeids")
	tl, fl := a.Ints("nodes_trueleafs"), a.Ints("nodes_falseleafs")
	modes, splits := mlTensorF64(a.Tensor("nodes_modes")), mlTensorF64(a.Tensor("nodes_splits"))
	miss := a.Ints("nodes_missing_value_tracks_true")
	k := len(feat)
	for _, l := range [][]int64{tn, fn, tl, fl} {
		if len(l) != k {
			return nil, n.Errorf("the nodes_* lists differ in length")
		}
	}
	if len(modes) != k || len(splits) != k || len(miss) != 0 && len(miss) != k {
		return nil, n.Errorf("nodes_modes, nodes_splits or nodes_missing_value_tracks_true differ in length from nodes_featureids")
	}
	lt, lw := a.Ints("leaf_targetids"), mlTensorF64(a.Tensor("leaf_weights"))
	if len(lt) != len(lw) {
		return nil, n.Errorf("leaf_targetids has %d values, leaf_weights %d", len(lt), len(lw))
	}
	f := &mlForest{}
	var members []float64
	if t := a.Tensor("membership_values"); t != nil {
		members = mlTensorF64(t)
	}
	mpos := 0
	for i := 0; i < k; i++ {
		m := uint8(modes[i])
		if m > mlMEMBER {
			return nil, n.Errorf("node %d: unknown mode %d", i, m)
		}
		lo := len(f.members)
		if m == mlMEMBER {
			// The sets follow the order of the MEMBER nodes, each ended by a NaN.
			for ; mpos < len(members) && !math.IsNaN(members[mpos]); mpos++ {
				f.members = append(f.members, members[mpos])
			}
			if mpos >= len(members) {
				return nil, n.Errorf("membership_values has no NaN-terminated set for node %d", i)
			}
			mpos++
		}
		f.addNode(int32(feat[i]), splits[i], m, len(miss) > 0 && miss[i] != 0,
			mlChild(tl[i] != 0, int(tn[i])), mlChild(fl[i] != 0, int(fn[i])), lo, len(f.members))
	}
	for _, r := range a.Ints("tree_roots") {
		if r < 0 || int(r) >= k {
			return nil, n.Errorf("tree root %d out of range", r)
		}
		// A tree that is a single leaf: both children are the same leaf.
		if tl[r] != 0 && fl[r] != 0 && tn[r] == fn[r] {
			f.roots = append(f.roots, mlChild(true, int(tn[r])))
		} else {
			f.roots = append(f.roots, int32(r))
		}
	}
	for i := range lt {
		f.leafLo = append(f.leafLo, int32(i))
		f.targets = append(f.targets, int32(lt[i]))
		f.weights = append(f.weights, lw[i])
	}
	f.leafLo = append(f.leafLo, int32(len(lt)))
	return f, f.check(n)
}

// mlCompileLegacyTrees compiles the (tree id, node id) addressed nodes of
// TreeEnsembleClassifier/Regressor; prefix is "class" or "target".
func mlCompileLegacyTrees(n *Node, prefix string) (*mlForest, error) {
	a := n.Attrs
	treeIDs, nodeIDs := a.Ints("nodes_treeids"), a.Ints("nodes_nodeids")
	feat, tn, fn := a.Ints("nodes_featureids"), a.Ints("nodes_truenodeids"), a.Ints("nodes_falsenodeids")
	modes := a.Strings("nodes_modes")
	vals := mlFloats64(a.Floats("nodes_values"))
	if t := a.Tensor("nodes_values_as_tensor"); t != nil {
		vals = mlTensorF64(t)
	}
	miss := a.Ints("nodes_missing_value_tracks_true")
	k := len(nodeIDs)
	if len(treeIDs) != k || len(modes) != k || len(feat) != k || len(tn) != k || len(fn) != k || len(vals) != k || len(miss) != 0 && len(miss) != k {
		return nil, n.Errorf("the nodes_* lists differ in length")
	}
	type key struct{ tree, node int64 }
	index := map[key]int{}
	for i := 0; i < k; i++ {
		index[key{treeIDs[i], nodeIDs[i]}] = i
	}
	// Leaves: a LEAF node's targets come from the <prefix>_* lists.
	lt, ln, lid := a.Ints(prefix+"_treeids"), a.Ints(prefix+"_nodeids"), a.Ints(prefix+"_ids")
	lw := mlFloats64(a.Floats(prefix + "_weights"))
	if t := a.Tensor(prefix + "_weights_as_tensor"); t != nil {
		lw = mlTensorF64(t)
	}
	if len(ln) != len(lt) || len(lid) != len(lt) || len(lw) != len(lt) {
		return nil, n.Errorf("the %s_* lists differ in length", prefix)
	}
	byLeaf := map[int][]int{}
	for j := range lt {
		i, ok := index[key{lt[j], ln[j]}]
		if !ok {
			return nil, n.Errorf("%s entry %d names tree %d node %d, which does not exist", prefix, j, lt[j], ln[j])
		}
		byLeaf[i] = append(byLeaf[i], j)
	}
	f := &mlForest{}
	nodeAt, leafAt := make([]int, k), make([]int, k)
	nb := 0
	for i := 0; i < k; i++ {
		if modes[i] == "LEAF" {
			leafAt[i] = len(f.leafLo)
			f.leafLo = append(f.leafLo, int32(len(f.targets)))
			for _, j := range byLeaf[i] {
				f.targets = append(f.targets, int32(lid[j]))
				f.weights = append(f.weights, lw[j])
			}
			continue
		}
		nodeAt[i] = nb
		nb++
	}
	f.leafLo = append(f.leafLo, int32(len(f.targets)))
	ref := func(i int) int32 {
		if modes[i] == "LEAF" {
			return mlChild(true, leafAt[i])
		}
		return int32(nodeAt[i])
	}
	roots := map[int64]int{}
	var order []int64
	for i := 0; i < k; i++ {
		if _, ok := roots[treeIDs[i]]; !ok {
			roots[treeIDs[i]] = i
			order = append(order, treeIDs[i])
		}
		if modes[i] == "LEAF" {
			continue
		}
		m, ok := map[string]uint8{"BRANCH_LEQ": mlLEQ, "BRANCH_LT": mlLT, "BRANCH_GTE": mlGTE, "BRANCH_GT": mlGT, "BRANCH_EQ": mlEQ, "BRANCH_NEQ": mlNEQ}[modes[i]]
		if !ok {
			return nil, n.Errorf("node %d: unknown mode %q", i, modes[i])
		}
		ti, ok1 := index[key{treeIDs[i], tn[i]}]
		fi, ok2 := index[key{treeIDs[i], fn[i]}]
		if !ok1 || !ok2 {
			return nil, n.Errorf("tree %d node %d: a child is missing", treeIDs[i], nodeIDs[i])
		}
		f.addNode(int32(feat[i]), vals[i], m, len(miss) > 0 && miss[i] != 0, ref(ti), ref(fi), 0, 0)
	}
	// A tree's root is its first node (the reference takes the lowest index).
	slices.Sort(order)
	for _, t := range order {
		f.roots = append(f.roots, ref(roots[t]))
	}
	return f, f.check(n)
}

// mlRowsOf returns X as rows of float64 features: [N, C], or one row for
// a 1-D X.
func mlRowsOf(n *Node, X *Tensor) (rows, cols int, err error) {
	if !mlNumeric(X) || len(X.Shape) < 1 || len(X.Shape) > 2 {
		return 0, 0, n.Errorf("want a numeric [N, C] or [C] input")
	}
	if len(X.Shape) == 1 {
		return 1, X.Shape[0], nil
	}
	return X.Shape[0], X.Shape[1], nil
}

// mlForestCache is what the tree kernels keep in Node.Cache.
type mlForestCache struct {
	f        *mlForest
	row, acc []float64
}

func mlForestFor(n *Node) (*mlForestCache, error) {
	if c, ok := n.Cache.(*mlForestCache); ok {
		return c, nil
	}
	f, packed, err := mlUnpackForest(n)
	if err != nil {
		return nil, err
	}
	if !packed {
		if f, err = mlCompileFor(n); err != nil {
			return nil, err
		}
	}
	c := &mlForestCache{f: f}
	n.Cache = c
	return c, nil
}

// mlRow reads row r of X as float64 into c.row.
func (c *mlForestCache) readRow(n *Node, X *Tensor, r, cols int) error {
	if cols < c.f.nFeatures {
		return n.Errorf("input has %d features, the trees read feature %d", cols, c.f.nFeatures-1)
	}
	if cap(c.row) < cols {
		c.row = make([]float64, cols)
	}
	c.row = c.row[:cols]
	for j := range c.row {
		c.row[j] = ewF64At(X, r*cols+j)
	}
	return nil
}

// MLTreeEnsemble is ai.onnx.ml TreeEnsemble (opset 5): Y [N, n_targets]
// in X's dtype.
func MLTreeEnsemble(n *Node) error {
	X := n.Input(0)
	rows, cols, err := mlRowsOf(n, X)
	if err != nil {
		return err
	}
	c, err := mlForestFor(n)
	if err != nil {
		return err
	}
	nt := int(n.Attrs.Int("n_targets", 0))
	for _, t := range c.f.targets {
		if int(t) >= nt || t < 0 {
			return n.Errorf("leaf target %d out of range [0, %d)", t, nt)
		}
	}
	agg := int(n.Attrs.Int("aggregate_function", 1))
	if agg < mlAvg || agg > mlMax {
		return n.Errorf("aggregate_function %d: want 0-3", agg)
	}
	post := n.Attrs.Int("post_transform", 0)
	if post < 0 || post > 4 {
		return n.Errorf("post_transform %d: want 0-4", post)
	}
	out := n.Out[0]
	out.Resize(X.DType, rows, nt)
	if cap(c.acc) < nt {
		c.acc = make([]float64, nt)
	}
	acc := c.acc[:nt]
	for r := 0; r < rows; r++ {
		if err := c.readRow(n, X, r, cols); err != nil {
			return err
		}
		c.f.accumulate(c.row, acc, agg)
		mlPostTransform(acc, [...]string{"NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT"}[post])
		for j, v := range acc {
			ewSetF64(out, r*nt+j, v)
		}
	}
	return nil
}

// MLTreeEnsembleRegressor is ai.onnx.ml TreeEnsembleRegressor (1, 3):
// aggregated target weights plus base_values, float32 [N, n_targets].
func MLTreeEnsembleRegressor(n *Node) error {
	X := n.Input(0)
	rows, cols, err := mlRowsOf(n, X)
	if err != nil {
		return err
	}
	c, err := mlForestFor(n)
	if err != nil {
		return err
	}
	nt := int(n.Attrs.Int("n_targets", 1))
	for _, t := range c.f.targets {
		if int(t) >= nt || t < 0 {
			return n.Errorf("target id %d out of range [0, %d)", t, nt)
		}
	}
	agg, ok := map[string]int{"AVERAGE": mlAvg, "SUM": mlSum, "MIN": mlMin, "MAX": mlMax}[n.Attrs.String("aggregate_function", "SUM")]
	if !ok {
		return n.Errorf("aggregate_function %q: want AVERAGE, SUM, MIN or MAX", n.Attrs.String("aggregate_function", "SUM"))
	}
	base := mlBaseValues(n)
	if len(base) != 0 && len(base) != nt {
		return n.Errorf("%d base_values for %d targets", len(base), nt)
	}
	post := n.Attrs.String("post_transform", "NONE")
	out := n.Out[0]
	out.Resize(F32, rows, nt)
	o := out.F32()
	if cap(c.acc) < nt {
		c.acc = make([]float64, nt)
	}
	acc := c.acc[:nt]
	for r := 0; r < rows; r++ {
		if err := c.readRow(n, X, r, cols); err != nil {
			return err
		}
		c.f.accumulate(c.row, acc, agg)
		for j := range base {
			acc[j] += base[j]
		}
		if err := mlCheckPost(n, post); err != nil {
			return err
		}
		mlPostTransform(acc, post)
		for j, v := range acc {
			o[r*nt+j] = float32(v)
		}
	}
	return nil
}

func mlBaseValues(n *Node) []float64 {
	if t := n.Attrs.Tensor("base_values_as_tensor"); t != nil {
		return mlTensorF64(t)
	}
	return mlFloats64(n.Attrs.Floats("base_values"))
}

// MLTreeEnsembleClassifier is ai.onnx.ml TreeEnsembleClassifier (1, 3):
// per-class summed weights plus base_values, post-transformed, and the
// label of the largest score. With a single class id in use (binary
// models), the scores are [1 - s, s] (or [-s, s] before LOGISTIC/SOFTMAX),
// as the ONNX reference and ORT compute them.
func MLTreeEnsembleClassifier(n *Node) error {
	X := n.Input(0)
	rows, cols, err := mlRowsOf(n, X)
	if err != nil {
		return err
	}
	c, err := mlForestFor(n)
	if err != nil {
		return err
	}
	strs, ints := n.Attrs.Strings("classlabels_strings"), n.Attrs.Ints("classlabels_int64s")
	k := max(len(strs), len(ints))
	if k == 0 {
		return n.Errorf("no class labels (classlabels_int64s or classlabels_strings)")
	}
	ids := map[int32]bool{}
	for _, t := range c.f.targets {
		if t < 0 || int(t) >= max(k, 2) {
			return n.Errorf("class id %d out of range [0, %d)", t, k)
		}
		ids[t] = true
	}
	binary := len(ids) == 1
	post := n.Attrs.String("post_transform", "NONE")
	if err := mlCheckPost(n, post); err != nil {
		return err
	}
	base := mlBaseValues(n)
	width := k
	if binary && k == 1 {
		width = 2
	}
	labels, scores := n.Out[0], n.Out[1]
	if len(strs) > 0 {
		labels.Resize(String, rows)
	} else {
		labels.Resize(I64, rows)
	}
	if scores != nil {
		scores.Resize(F32, rows, width)
	}
	if cap(c.acc) < max(width, k, 2) {
		c.acc = make([]float64, max(width, k, 2))
	}
	acc := c.acc[:max(k, 2)]
	for r := 0; r < rows; r++ {
		if err := c.readRow(n, X, r, cols); err != nil {
			return err
		}
		c.f.accumulate(c.row, acc, mlSum)
		acc = acc[:k]
		for j := range base {
			if j < k {
				acc[j] += base[j]
			}
		}
		if binary {
			acc = c.acc[:width]
			var id int32
			for t := range ids {
				id = t
			}
			s := c.acc[id]
			acc[1] = s
			if post == "NONE" || post == "PROBIT" {
				acc[0] = 1 - s
			} else {
				acc[0] = -s
			}
		}
		mlPostTransform(acc, post)
		best := 0
		for j, v := range acc {
			if v > acc[best] {
				best = j
			}
		}
		switch {
		case len(strs) > 0:
			labels.Str()[r] = strs[min(best, len(strs)-1)]
		case len(ints) == 1:
			// One label (1): the positive class is 1, the other 0.
			labels.I64()[r] = 0
			if best == 1 {
				labels.I64()[r] = ints[0]
			}
		default:
			labels.I64()[r] = ints[best]
		}
		if scores != nil {
			for j, v := range acc {
				scores.F32()[r*width+j] = float32(v)
			}
		}
		acc = c.acc[:max(k, 2)]
	}
	return nil
}

func mlCheckPost(n *Node, post string) error {
	switch post {
	case "NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT":
		return nil
	}
	return n.Errorf("post_transform %q: want NONE, SOFTMAX, LOGISTIC, SOFTMAX_ZERO or PROBIT", post)
}

// mlPostTransform applies an ai.onnx.ml post_transform to one row of
// scores in place.
func mlPostTransform(v []float64, post string) {
	switch post {
	case "SOFTMAX":
		m := math.Inf(-1)
		for _, x := range v {
			m = math.Max(m, x)
		}
		s := 0.0
		for i, x := range v {
			v[i] = math.Exp(x - m)
			s += v[i]
		}
		for i := range v {
			v[i] /= s
		}
	case "LOGISTIC":
		for i, x := range v {
			v[i] = 1 / (1 + math.Exp(-x))
		}
	case "SOFTMAX_ZERO":
		// Softmax over the nonzero scores; zeros stay zero.
		m := math.Inf(-1)
		for _, x := range v {
			m = math.Max(m, x)
		}
		s := 0.0
		for i, x := range v {
			if x > 1e-7 || x < -1e-7 {
				v[i] = math.Exp(x - m)
			} else {
				v[i] = x * math.Exp(-m)
			}
			s += v[i]
		}
		for i := range v {
			if s == 0 {
				v[i] = 0.5
			} else {
				v[i] /= s
			}
		}
	case "PROBIT":
		for i, x := range v {
			v[i] = math.Sqrt2 * math.Erfinv(2*x-1)
		}
	}
}
