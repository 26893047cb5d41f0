package templates

import (
	"go/ast"
	"go/parser"
	"go/token"
	"sort"
	"strconv"
	"testing"
)

// TestRegistrySorted keeps registry.go's table in key order, so that a
// reader finds an op by scanning and a new op has one right place.
func TestRegistrySorted(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "registry.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	ast.Inspect(f, func(n ast.Node) bool {
		if kv, ok := n.(*ast.KeyValueExpr); ok {
			if lit, ok := kv.Key.(*ast.BasicLit); ok {
				k, _ := strconv.Unquote(lit.Value)
				keys = append(keys, k)
			}
		}
		return true
	})
	if len(keys) != len(Kernels) || len(keys) == 0 {
		t.Fatalf("registry.go lists %d keys, Kernels has %d", len(keys), len(Kernels))
	}
	if !sort.StringsAreSorted(keys) {
		for i := 1; i < len(keys); i++ {
			if keys[i] < keys[i-1] {
				t.Fatalf("registry.go: %q comes after %q", keys[i], keys[i-1])
			}
		}
	}
}
