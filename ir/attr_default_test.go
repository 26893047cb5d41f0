package ir

import (
	"strings"
	"testing"
)

// TestAttrDefaults: the typed readers give the node's attribute when set,
// else the table's default at the node's version (Softmax's axis is 1
// before 13 and -1 from 13), the zero value where the attribute does not
// exist at that version, and panic for an attribute the op never had.
func TestAttrDefaults(t *testing.T) {
	sm := func(v int, attrs ...*Attr) *Node { return &Node{Op: "Softmax", Version: v, Attrs: attrs} }
	if got := sm(11).IntAttr("axis"); got != 1 {
		t.Errorf("Softmax-11 axis = %d, want 1", got)
	}
	if got := sm(13).IntAttr("axis"); got != -1 {
		t.Errorf("Softmax-13 axis = %d, want -1", got)
	}
	if got := sm(13, &Attr{Name: "axis", Kind: AttrInt, I: 2}).IntAttr("axis"); got != 2 {
		t.Errorf("Softmax-13 axis=2 = %d", got)
	}
	am := &Node{Op: "ArgMax", Version: 11}
	if am.IntAttr("keepdims") != 1 || am.IntAttr("select_last_index") != 0 {
		t.Errorf("ArgMax-11: keepdims %d select_last_index %d", am.IntAttr("keepdims"), am.IntAttr("select_last_index"))
	}
	bn := &Node{Op: "BatchNormalization", Version: 15}
	if got := bn.FloatAttr("epsilon"); got != 1e-5 {
		t.Errorf("BatchNormalization epsilon = %v", got)
	}
	conv := &Node{Op: "Conv", Version: 11}
	if conv.StringAttr("auto_pad") != "NOTSET" || conv.IntAttr("group") != 1 || conv.IntsAttr("pads") != nil {
		t.Errorf("Conv: auto_pad %q group %d pads %v", conv.StringAttr("auto_pad"), conv.IntAttr("group"), conv.IntsAttr("pads"))
	}
	for _, f := range []func(){
		func() { conv.IntAttr("no_such") },
		func() { conv.IntAttr("auto_pad") }, // a string attribute read as int
	} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(r.(string), "Conv") {
					t.Errorf("recovered %v, want a panic naming Conv", r)
				}
			}()
			f()
		}()
	}
}
