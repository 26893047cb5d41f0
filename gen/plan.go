package gen

import (
	"fmt"

	"github.com/cuvil/cuvil/ir"
)

// A memory plan maps every value that a node computes to a buffer slot of
// the session. Values of the same dtype whose sizes are known at compile
// time and whose lifetimes do not overlap share a slot: NewSession
// allocates the slot once at the largest of their sizes, and each value's
// tensor is a view of it, so no Run ever resizes (or re-boxes) anything.
// A value lives from the node that defines it to the last node that reads
// it; graph outputs live to the end of Run. A node's outputs never share a
// slot with its own inputs, so kernels need not support aliasing. Values
// whose size depends on symbolic dims get a slot of their own, grown by
// Tensor.Resize on the first run at a shape.
type memPlan struct {
	slot  map[*ir.Value]int // value -> slot index
	slots []planSlot
}

type planSlot struct {
	dtype  ir.DType
	bytes  int64 // largest static size of the values placed here
	static bool  // every value placed here has a constant shape and known dtype
	values []*ir.Value
}

// StaticBytes is the sum of the slot sizes that are known at compile time.
func (p *memPlan) StaticBytes() int64 {
	var n int64
	for _, s := range p.slots {
		if s.static {
			n += s.bytes
		}
	}
	return n
}

// DynamicSlots counts slots whose size depends on symbolic dims.
func (p *memPlan) DynamicSlots() int {
	n := 0
	for _, s := range p.slots {
		if !s.static {
			n++
		}
	}
	return n
}

// staticBytes returns the byte size of a value when its type is fully known.
func staticBytes(v *ir.Value) (int64, bool) {
	t := v.Type
	if !t.Known() || t.DType.Size() == 0 {
		return 0, false
	}
	n, ok := t.Shape.NumElements()
	if !ok {
		return 0, false
	}
	return n * int64(t.DType.Size()), true
}

// planMemory assigns slots to the values defined by nodes of g. Nodes are in
// topological order; the plan follows it.
func planMemory(g *ir.Graph, isOutput map[*ir.Value]bool) (*memPlan, error) {
	lastUse := map[*ir.Value]int{}
	for i, n := range g.Nodes {
		for _, v := range n.Inputs {
			if v != nil {
				lastUse[v] = i
			}
		}
	}
	p := &memPlan{slot: map[*ir.Value]int{}}
	free := map[ir.DType][]int{} // free slot indices by dtype
	for i, n := range g.Nodes {
		for _, v := range n.Outputs {
			if v == nil {
				continue
			}
			if _, dup := p.slot[v]; dup {
				return nil, fmt.Errorf("gen: value %q is defined twice (node %q)", v.Name, n.Name)
			}
			size, static := staticBytes(v)
			dt := v.Type.DType
			k := -1
			if static {
				k = bestFit(p.slots, free[dt], size)
			}
			if k >= 0 {
				free[dt] = remove(free[dt], k)
			} else {
				k = len(p.slots)
				p.slots = append(p.slots, planSlot{dtype: dt, static: true})
			}
			s := &p.slots[k]
			s.values = append(s.values, v)
			if static {
				s.bytes = max(s.bytes, size)
			} else {
				s.static = false
			}
			p.slot[v] = k
		}
		// Release values whose last reader is this node, and outputs nobody
		// reads, only now: a node's outputs never reuse its inputs' slots.
		release := func(v *ir.Value) {
			k, ok := p.slot[v]
			if !ok || isOutput[v] || !p.slots[k].static {
				return
			}
			for _, f := range free[v.Type.DType] {
				if f == k {
					return
				}
			}
			free[v.Type.DType] = append(free[v.Type.DType], k)
		}
		for _, v := range n.Inputs {
			if v != nil && lastUse[v] == i {
				release(v)
			}
		}
		for _, v := range n.Outputs {
			if v != nil {
				if _, used := lastUse[v]; !used {
					release(v)
				}
			}
		}
	}
	return p, nil
}

// bestFit picks, among free slots, the smallest that holds size bytes,
// else the largest (it will grow).
func bestFit(slots []planSlot, free []int, size int64) int {
	best := -1
	for _, k := range free {
		b := int64(-1)
		if best >= 0 {
			b = slots[best].bytes
		}
		s := slots[k].bytes
		switch {
		case best < 0:
			best = k
		case s >= size && (b < size || s < b):
			best = k
		case b < size && s > b:
			best = k
		}
	}
	return best
}

func remove(list []int, k int) []int {
	out := list[:0:0]
	for _, x := range list {
		if x != k {
			out = append(out, x)
		}
	}
	return out
}
