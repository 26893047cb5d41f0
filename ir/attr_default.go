package ir

import "fmt"

// The op table's attribute defaults are what every reader gets: a pass
// reads n.IntAttr("keepdims") instead of restating the default the table
// (ops_table.go) already declares, so the two cannot drift. The typed
// readers take the node's attribute when it is set with that kind, else the
// table's default for the node's op at its version (the zero value when the
// attribute has no default there, e.g. it does not exist at that version).
// An attribute the table does not declare for the op at any version is a
// programming error: they panic naming the op.

// TableAttr returns the op table's spec of attribute name at n's op
// version (nil when the attribute does not exist at that version), and
// whether the op declares the attribute at any version.
func (n *Node) TableAttr(name string) (spec *AttrSpec, declared bool) {
	s := LookupOp(n.Domain, n.Op)
	if s == nil {
		return nil, false
	}
	for i := range s.Attrs {
		if s.Attrs[i].Name == name {
			declared = true
			if s.Attrs[i].InVersion(n.Version) {
				return &s.Attrs[i], true
			}
		}
	}
	return nil, declared
}

// tableDefault returns the table's default of name for n (nil when none),
// panicking when the table does not declare name for n's op or declares it
// with another kind.
func (n *Node) tableDefault(name string, kind AttrKind) any {
	spec, declared := n.TableAttr(name)
	if !declared {
		panic(fmt.Sprintf("ir: the op table declares no attribute %q for %s (version %d)", name, n.opName(), n.Version))
	}
	if spec == nil {
		return nil
	}
	if spec.Kind != kind {
		panic(fmt.Sprintf("ir: %s's attribute %q is %s in the op table, read as %s", n.opName(), name, spec.Kind, kind))
	}
	return spec.Default
}

func (n *Node) opName() string {
	if n.Domain == "" {
		return n.Op
	}
	return n.Domain + "::" + n.Op
}

// IntAttr returns int attribute name, or the op table's default.
func (n *Node) IntAttr(name string) int64 {
	def := n.tableDefault(name, AttrInt)
	if a := n.Attr(name); a != nil && a.Kind == AttrInt {
		return a.I
	}
	d, _ := def.(int64)
	return d
}

// FloatAttr returns float attribute name, or the op table's default.
func (n *Node) FloatAttr(name string) float32 {
	def := n.tableDefault(name, AttrFloat)
	if a := n.Attr(name); a != nil && a.Kind == AttrFloat {
		return a.F
	}
	d, _ := def.(float32)
	return d
}

// StringAttr returns string attribute name, or the op table's default.
func (n *Node) StringAttr(name string) string {
	def := n.tableDefault(name, AttrString)
	if a := n.Attr(name); a != nil && a.Kind == AttrString {
		return a.S
	}
	d, _ := def.(string)
	return d
}

// IntsAttr returns ints attribute name, or the op table's default (nil
// when it has none: pads, strides... whose default depends on the rank are
// the reader's to fill).
func (n *Node) IntsAttr(name string) []int64 {
	def := n.tableDefault(name, AttrInts)
	if a := n.Attr(name); a != nil && a.Kind == AttrInts {
		return a.Ints
	}
	d, _ := def.([]int64)
	return d
}
