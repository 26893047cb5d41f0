package templates

import (
	"math"
	"math/rand"
	"testing"
)

// mlRefTree is a pointer tree, the float64 reference the compiled forests
// are checked against.
type mlRefTree struct {
	leaf        bool
	target      int
	weight      float64
	feature     int
	mode        uint8
	split       float64
	set         []float64
	missTrue    bool
	left, right *mlRefTree // true, false
}

func (t *mlRefTree) eval(x []float64) *mlRefTree {
	for !t.leaf {
		v := x[t.feature]
		var r bool
		switch {
		case math.IsNaN(v):
			r = t.missTrue
		case t.mode == mlLEQ:
			r = v <= t.split
		case t.mode == mlLT:
			r = v < t.split
		case t.mode == mlGTE:
			r = v >= t.split
		case t.mode == mlGT:
			r = v > t.split
		case t.mode == mlEQ:
			r = v == t.split
		case t.mode == mlNEQ:
			r = v != t.split
		default:
			for _, s := range t.set {
				r = r || s == v
			}
		}
		if r {
			t = t.left
		} else {
			t = t.right
		}
	}
	return t
}

func mlRandTree(r *rand.Rand, depth, features, targets int) *mlRefTree {
	if depth == 0 || r.Intn(4) == 0 {
		return &mlRefTree{leaf: true, target: r.Intn(targets), weight: math.Round(r.NormFloat64()*100) / 16}
	}
	t := &mlRefTree{feature: r.Intn(features), mode: uint8(r.Intn(7)), split: math.Round(r.NormFloat64()*4) / 4, missTrue: r.Intn(2) == 0}
	if t.mode == mlMEMBER {
		for k := r.Intn(3) + 1; k > 0; k-- {
			t.set = append(t.set, math.Round(r.NormFloat64()*4)/4)
		}
	}
	t.left, t.right = mlRandTree(r, depth-1, features, targets), mlRandTree(r, depth-1, features, targets)
	return t
}

// mlEncodeV5 lays trees out as TreeEnsemble (opset 5) attributes, nodes in
// preorder.
func mlEncodeV5(trees []*mlRefTree) Attrs {
	var feat, tn, fn, tl, fl, lt, roots []int64
	var modes, splits, lw, members []float64
	var miss []int64
	var leaf func(t *mlRefTree) int64
	leaf = func(t *mlRefTree) int64 {
		lt = append(lt, int64(t.target))
		lw = append(lw, t.weight)
		return int64(len(lt) - 1)
	}
	var node func(t *mlRefTree) int64
	node = func(t *mlRefTree) int64 {
		i := len(feat)
		feat = append(feat, int64(t.feature))
		modes = append(modes, float64(t.mode))
		splits = append(splits, t.split)
		m := int64(0)
		if t.missTrue {
			m = 1
		}
		miss = append(miss, m)
		if t.mode == mlMEMBER {
			members = append(append(members, t.set...), math.NaN())
		}
		tn, fn, tl, fl = append(tn, 0), append(fn, 0), append(tl, 0), append(fl, 0)
		for side, c := range []*mlRefTree{t.left, t.right} {
			var id, isLeaf int64
			if c.leaf {
				id, isLeaf = leaf(c), 1
			} else {
				id = node(c)
			}
			if side == 0 {
				tn[i], tl[i] = id, isLeaf
			} else {
				fn[i], fl[i] = id, isLeaf
			}
		}
		return int64(i)
	}
	for _, t := range trees {
		if t.leaf {
			// A single-leaf tree: a node whose two children are that leaf.
			l := leaf(t)
			i := len(feat)
			feat, modes, splits, miss = append(feat, 0), append(modes, 0), append(splits, 0), append(miss, 0)
			tn, fn, tl, fl = append(tn, l), append(fn, l), append(tl, 1), append(fl, 1)
			roots = append(roots, int64(i))
			continue
		}
		roots = append(roots, node(t))
	}
	ten := func(dt DType, v []float64) *Tensor {
		t := &Tensor{}
		t.Resize(dt, len(v))
		for i, x := range v {
			ewSetF64(t, i, x)
		}
		return t
	}
	a := Attrs{"nodes_featureids": feat, "nodes_truenodeids": tn, "nodes_falsenodeids": fn,
		"nodes_trueleafs": tl, "nodes_falseleafs": fl, "leaf_targetids": lt, "tree_roots": roots,
		"nodes_modes": ten(U8, modes), "nodes_splits": ten(F64, splits), "leaf_weights": ten(F64, lw),
		"nodes_missing_value_tracks_true": miss}
	if len(members) > 0 {
		a["membership_values"] = ten(F64, members)
	}
	return a
}

func TestMLTreeEnsembleRandom(t *testing.T) {
	r := rand.New(rand.NewSource(21))
	for trial := 0; trial < 30; trial++ {
		features, targets, rows := 1+r.Intn(5), 1+r.Intn(4), 1+r.Intn(9)
		trees := make([]*mlRefTree, 1+r.Intn(5))
		for i := range trees {
			trees[i] = mlRandTree(r, 1+r.Intn(5), features, targets)
		}
		agg := r.Intn(4)
		a := mlEncodeV5(trees)
		a["n_targets"] = int64(targets)
		a["aggregate_function"] = int64(agg)
		x := &Tensor{}
		x.Resize(F64, rows, features)
		for i := range x.F64() {
			v := math.Round(r.NormFloat64()*4) / 4
			if r.Intn(10) == 0 {
				v = math.NaN()
			}
			x.F64()[i] = v
		}
		n := &Node{Op: "TreeEnsemble", Version: 5, Attrs: a, In: []*Tensor{x}, Out: []*Tensor{{}}}
		if trial%2 == 1 {
			// As compile-trees leaves it: packed arrays instead of the trees.
			packed, err := MLPackForest(n)
			if err != nil {
				t.Fatal(err)
			}
			b := Attrs{"n_targets": a["n_targets"], "aggregate_function": a["aggregate_function"]}
			for k, v := range packed {
				b[k] = v
			}
			n.Attrs = b
		}
		miscRun(t, MLTreeEnsemble, n)
		want := make([]float64, 0, rows*targets)
		for i := 0; i < rows; i++ {
			acc := make([]float64, targets)
			hit := make([]bool, targets)
			for _, tr := range trees {
				l := tr.eval(x.F64()[i*features : (i+1)*features])
				switch {
				case !hit[l.target] && (agg == mlMin || agg == mlMax):
					acc[l.target] = l.weight
				case agg == mlMin:
					acc[l.target] = math.Min(acc[l.target], l.weight)
				case agg == mlMax:
					acc[l.target] = math.Max(acc[l.target], l.weight)
				default:
					acc[l.target] += l.weight
				}
				hit[l.target] = true
			}
			if agg == mlAvg {
				for j := range acc {
					acc[j] /= float64(len(trees))
				}
			}
			want = append(want, acc...)
		}
		got := n.Out[0].F64()
		for i, w := range want {
			if math.Abs(got[i]-w) > 1e-12 {
				t.Fatalf("trial %d (agg %d): element %d = %g, want %g", trial, agg, i, got[i], w)
			}
		}
	}
}

func TestMLTreeEnsembleRegressorLegacy(t *testing.T) {
	// Tree 0: x0 <= 0.5 ? (leaf 1: t0 += 1, t1 += 2) : (leaf 2: t0 += -1);
	// tree 1 (ids not sorted in the lists): x1 > 0 ? leaf 7 (t1 += 10) : leaf 9 (t0 += 4).
	a := Attrs{
		"nodes_treeids":      []int64{1, 1, 1, 0, 0, 0},
		"nodes_nodeids":      []int64{5, 7, 9, 0, 1, 2},
		"nodes_featureids":   []int64{1, 0, 0, 0, 0, 0},
		"nodes_modes":        []string{"BRANCH_GT", "LEAF", "LEAF", "BRANCH_LEQ", "LEAF", "LEAF"},
		"nodes_values":       []float32{0, 0, 0, 0.5, 0, 0},
		"nodes_truenodeids":  []int64{7, 0, 0, 1, 0, 0},
		"nodes_falsenodeids": []int64{9, 0, 0, 2, 0, 0},
		"target_treeids":     []int64{0, 0, 0, 1, 1},
		"target_nodeids":     []int64{1, 1, 2, 7, 9},
		"target_ids":         []int64{0, 1, 0, 1, 0},
		"target_weights":     []float32{1, 2, -1, 10, 4},
		"n_targets":          int64(2),
		"base_values":        []float32{0.5, -0.5},
	}
	x := &Tensor{}
	x.Resize(F32, 3, 2)
	copy(x.F32(), []float32{0, 1, 1, -1, 0.5, 0})
	n := &Node{Op: "TreeEnsembleRegressor", Version: 3, Attrs: a, In: []*Tensor{x}, Out: []*Tensor{{}}}
	miscRun(t, MLTreeEnsembleRegressor, n)
	mlClose(t, "TreeEnsembleRegressor", n.Out[0].F32(), []float64{1.5, 11.5, 3.5, -0.5, 5.5, 1.5}, 0)
}
