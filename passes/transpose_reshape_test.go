package passes

import (
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/cuvil/cuvil/ir"
)

// TestComposeThroughReshapeValues builds random Transpose -> Reshape ->
// Transpose chains whose Reshape splits and merges dims, runs
// fold-transpose, and checks, by moving element indices through both
// graphs, that the rewritten graph computes the same tensor.
func TestComposeThroughReshapeValues(t *testing.T) {
	r := rand.New(rand.NewSource(71))
	rewrote := 0
	for trial := 0; trial < 300; trial++ {
		rank := 2 + r.Intn(3)
		xs := make([]int64, rank)
		for i := range xs {
			xs[i] = []int64{1, 2, 3, 4, 6}[r.Intn(5)]
		}
		p1 := randPerm(r, rank)
		s1 := make([]int64, rank)
		for i, q := range p1 {
			s1[i] = xs[q]
		}
		// s2: split s1's dims into prime factors, then merge runs of them.
		var f []int64
		for _, d := range s1 {
			for _, p := range []int64{2, 3} {
				for d%p == 0 {
					f, d = append(f, p), d/p
				}
			}
		}
		var s2 []int64
		for i := 0; i < len(f); {
			k := 1 + r.Intn(3)
			prod := int64(1)
			for ; k > 0 && i < len(f); k, i = k-1, i+1 {
				prod *= f[i]
			}
			s2 = append(s2, prod)
		}
		if len(s2) == 0 {
			s2 = []int64{1}
		}
		if r.Intn(4) == 0 {
			slices.Reverse(s2) // usually no common refinement: must stay
		}
		p2 := randPerm(r, len(s2))
		b := newBuilder(t, 13)
		x := b.input("x", ir.F32, intsAny(xs)...)
		a := b.out("Transpose", "a", []*ir.Value{x}, aInts("perm", p1...))
		c := b.out("Reshape", "c", []*ir.Value{a, b.ints("s", s2...)})
		y := b.out("Transpose", "y", []*ir.Value{c}, aInts("perm", p2...))
		b.g.Outputs = []*ir.Value{y}
		if err := Shapes.Run(b.m); err != nil {
			t.Fatal(err)
		}
		want := evalMoves(b.g, xs)
		if err := FoldTranspose.Run(b.m); err != nil {
			t.Fatal(err)
		}
		if err := ir.Verify(b.m); err != nil {
			t.Fatalf("%v p1 %v -> %v p2 %v: %v", xs, p1, s2, p2, err)
		}
		ops := 0
		for _, n := range b.g.Nodes {
			if n.Op == "Transpose" {
				ops++
			}
		}
		if ops < 2 {
			rewrote++
		}
		got := evalMoves(b.g, xs)
		if !slices.Equal(got, want) {
			var sb strings.Builder
			ir.Print(&sb, b.m)
			t.Fatalf("%v p1 %v -> %v p2 %v: got %v, want %v\n%s", xs, p1, s2, p2, got, want, sb.String())
		}
	}
	if rewrote < 100 {
		t.Fatalf("only %d of 300 chains rewritten", rewrote)
	}
}

func randPerm(r *rand.Rand, n int) []int64 {
	p := make([]int64, n)
	for i, v := range r.Perm(n) {
		p[i] = int64(v)
	}
	return p
}

func intsAny(v []int64) []any {
	out := make([]any, len(v))
	for i, d := range v {
		out[i] = int(d)
	}
	return out
}

// evalMoves runs a graph of Transposes and Reshapes on x = 0, 1, 2, ...
// and returns its output's elements.
func evalMoves(g *ir.Graph, xs []int64) []int {
	n := 1
	for _, d := range xs {
		n *= int(d)
	}
	vals := map[*ir.Value][]int{g.Inputs[0]: make([]int, n)}
	for i := range vals[g.Inputs[0]] {
		vals[g.Inputs[0]][i] = i
	}
	for _, nd := range g.Nodes {
		in := vals[nd.Inputs[0]]
		switch nd.Op {
		case "Reshape":
			vals[nd.Outputs[0]] = in
		case "Transpose":
			shp, _ := nd.Inputs[0].Type.Shape.Consts()
			perm, _ := transposePerm(nd)
			out := make([]int, len(in))
			os := make([]int64, len(perm))
			for i, p := range perm {
				os[i] = shp[p]
			}
			idx := make([]int64, len(perm))
			for o := range out {
				rem := int64(o)
				for i := len(os) - 1; i >= 0; i-- {
					idx[i] = rem % os[i]
					rem /= os[i]
				}
				src := make([]int64, len(shp))
				for i, p := range perm {
					src[p] = idx[i]
				}
				off := int64(0)
				for i, d := range shp {
					off = off*d + src[i]
				}
				out[o] = in[off]
			}
			vals[nd.Outputs[0]] = out
		default:
			panic("evalMoves: " + nd.Op)
		}
	}
	return vals[g.Outputs[0]]
}

// TestMergeReshapedMaskValues checks the mask fuse-attention merges from
// swin's bias + reshaped window mask: element [w, h, i, j] must be
// B[0, h, i, j] + M[0, w, 0, i, j].
func TestMergeReshapedMaskValues(t *testing.T) {
	const W, H, L = 3, 2, 4
	bv := make([]float32, H*L*L)
	mv := make([]float32, W*L*L)
	for i := range bv {
		bv[i] = float32(i) / 8
	}
	for i := range mv {
		mv[i] = -float32(100 * (i % 3))
	}
	b := newBuilder(t, 13)
	q := b.input("q", ir.F32, W, H, L, 8)
	kt := b.input("kt", ir.F32, W, H, 8, L)
	v := b.input("v", ir.F32, W, H, L, 8)
	bias := b.constant("bias", ir.NewTensorF32([]int64{1, H, L, L}, bv))
	mask := b.constant("mask", ir.NewTensorF32([]int64{1, W, 1, L, L}, mv))
	s := b.out("MatMul", "s", []*ir.Value{q, kt})
	sb := b.out("Add", "sb", []*ir.Value{s, bias})
	r1 := b.out("Reshape", "r1", []*ir.Value{sb, b.ints("s5", 1, W, H, L, L)})
	sm := b.out("Add", "sm", []*ir.Value{r1, mask})
	r2 := b.out("Reshape", "r2", []*ir.Value{sm, b.ints("s4", W, H, L, L)})
	p := b.out("Softmax", "p", []*ir.Value{r2}, aInt("axis", -1))
	y := b.out("MatMul", "y", []*ir.Value{p, v})
	b.g.Outputs = []*ir.Value{y}
	if err := Shapes.Run(b.m); err != nil {
		t.Fatal(err)
	}
	if err := FuseAttention.Run(b.m); err != nil {
		t.Fatal(err)
	}
	var att *ir.Node
	for _, n := range b.g.Nodes {
		if n.Op == "Attention" {
			att = n
		}
	}
	if att == nil || len(att.Inputs) != 4 || !att.Inputs[3].IsConst() {
		t.Fatalf("no cuvil.Attention with a constant mask: %v", b.g.Nodes)
	}
	got := att.Inputs[3].Const.Float64s()
	for w := 0; w < W; w++ {
		for h := 0; h < H; h++ {
			for ij := 0; ij < L*L; ij++ {
				want := float64(bv[h*L*L+ij] + mv[w*L*L+ij])
				if g := got[(w*H+h)*L*L+ij]; g != want {
					t.Fatalf("mask[%d,%d,%d] = %v, want %v", w, h, ij, g, want)
				}
			}
		}
	}
}
