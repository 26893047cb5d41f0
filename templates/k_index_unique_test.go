package templates

import (
	"math/rand"
	"sort"
	"testing"
)

func TestUnique(t *testing.T) {
	x := miscTensorF(F32, []float64{2, 1, 1, 3, 4, 3}, 6)
	for _, c := range []struct {
		sorted        int64
		y             []float64
		idx, inv, cnt []int64
	}{
		{0, []float64{2, 1, 3, 4}, []int64{0, 1, 3, 4}, []int64{0, 1, 1, 2, 3, 2}, []int64{1, 2, 2, 1}},
		{1, []float64{1, 2, 3, 4}, []int64{1, 0, 3, 4}, []int64{1, 0, 0, 2, 3, 2}, []int64{2, 1, 2, 1}},
	} {
		n := &Node{Op: "Unique", Version: 11, Attrs: Attrs{"sorted": c.sorted}, In: []*Tensor{x}, Out: []*Tensor{{}, {}, {}, {}}}
		miscRun(t, Unique, n)
		miscCheckClose(t, "Y", n.Out[0], c.y, []int{4}, 0)
		miscWantI64(t, "indices", n.Out[1], c.idx, []int{4})
		miscWantI64(t, "inverse", n.Out[2], c.inv, []int{6})
		miscWantI64(t, "counts", n.Out[3], c.cnt, []int{4})
	}
	// Along an axis, random data with repeated rows: check invariants
	// against a map-based reference.
	rng := rand.New(rand.NewSource(11))
	rows := [][]int64{{1, 0, 0}, {2, 3, 4}, {1, 0, 0}, {0, 5, 1}, {2, 3, 4}, {1, 0, -1}}
	order := rng.Perm(len(rows))
	var flat []int64
	for _, r := range order {
		flat = append(flat, rows[r]...)
	}
	// Transpose to [3, 6] and use axis -1 so the unique slices are columns.
	tr := make([]int64, len(flat))
	for i := 0; i < 6; i++ {
		for j := 0; j < 3; j++ {
			tr[j*6+i] = flat[i*3+j]
		}
	}
	n := &Node{Op: "Unique", Version: 11, Attrs: Attrs{"axis": int64(-1)}, In: []*Tensor{miscTensorI64(tr, 3, 6)}, Out: []*Tensor{{}, {}, {}, {}}}
	miscRun(t, Unique, n)
	keys := map[[3]int64]int{}
	var uniq [][3]int64
	for i := 0; i < 6; i++ {
		k := [3]int64{flat[i*3], flat[i*3+1], flat[i*3+2]}
		if _, ok := keys[k]; !ok {
			keys[k] = i
			uniq = append(uniq, k)
		}
	}
	sort.Slice(uniq, func(a, b int) bool {
		for j := 0; j < 3; j++ {
			if uniq[a][j] != uniq[b][j] {
				return uniq[a][j] < uniq[b][j]
			}
		}
		return false
	})
	ng := len(uniq)
	wy := make([]int64, 3*ng)
	var wIdx, wCnt []int64
	for g, u := range uniq {
		for j := 0; j < 3; j++ {
			wy[j*ng+g] = u[j]
		}
		wIdx = append(wIdx, int64(keys[u]))
		c := 0
		for i := 0; i < 6; i++ {
			if [3]int64{flat[i*3], flat[i*3+1], flat[i*3+2]} == u {
				c++
			}
		}
		wCnt = append(wCnt, int64(c))
	}
	var wInv []int64
	for i := 0; i < 6; i++ {
		k := [3]int64{flat[i*3], flat[i*3+1], flat[i*3+2]}
		for g, u := range uniq {
			if u == k {
				wInv = append(wInv, int64(g))
			}
		}
	}
	miscWantI64(t, "Y axis", n.Out[0], wy, []int{3, ng})
	miscWantI64(t, "indices axis", n.Out[1], wIdx, []int{ng})
	miscWantI64(t, "inverse axis", n.Out[2], wInv, []int{6})
	miscWantI64(t, "counts axis", n.Out[3], wCnt, []int{ng})
}
