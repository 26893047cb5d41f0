package gen

import (
	"sort"
	"testing"

	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/passes"
	"github.com/cuvil/cuvil/templates"
)

// opExceptions are the ops of the op tables that lack a shape rule or a
// kernel on purpose, with the reason.
var opExceptions = map[string]string{
	"If":                                 "no kernel: gen lowers control flow to Go (control.go)",
	"Loop":                               "no kernel: gen lowers control flow to Go (control.go)",
	"Scan":                               "no kernel: gen lowers control flow to Go (control.go)",
	"SequenceMap":                        "no kernel: gen lowers control flow to Go (control.go)",
	"ai.onnx.preview.training::Gradient": "neither: the gradient pass rewrites it into backward nodes before shape inference",
	"cuvil::Attention":                   "no shape rule: made by fuse-attention after shape inference, with its output's type",
	"cuvil::FusedGemm":                   "no shape rule: made by fuse-gemm after shape inference, with its output's type",
	"cuvil::FusedMatMul":                 "no shape rule: made by fusion after shape inference, with its output's type",
	"cuvil::Gelu":                        "no shape rule: made by fuse-gelu after shape inference, with its output's type",
	"cuvil::LayerNorm":                   "no shape rule: made by fuse-layernorm after shape inference, with its output's type",
	"cuvil::SkipLayerNorm":               "no shape rule: made by fuse-layernorm after shape inference, with its output's type",
}

// TestEveryOpHasShapeRuleAndKernel walks every op of the op tables: each
// has a shape rule (passes) and a kernel (templates) unless opExceptions
// says why not, and no exception is stale.
func TestEveryOpHasShapeRuleAndKernel(t *testing.T) {
	rules := map[string]bool{}
	for _, op := range passes.InferableOps() {
		rules[op] = true
	}
	var missing []string
	seen := map[string]bool{}
	for _, s := range ir.Ops() {
		key := s.Name
		if s.Domain != "" && s.Domain != "ai.onnx" {
			key = s.Domain + "::" + s.Name
		}
		seen[key] = true
		_, kernel := templates.Kernels[key]
		_, excepted := opExceptions[key]
		switch {
		case excepted && rules[key] && kernel:
			t.Errorf("%s has a shape rule and a kernel now: drop its exception", key)
		case !excepted && !rules[key]:
			missing = append(missing, key+": no shape rule")
		case !excepted && !kernel:
			missing = append(missing, key+": no kernel")
		}
	}
	sort.Strings(missing)
	for _, m := range missing {
		t.Error(m)
	}
	for key := range opExceptions {
		if !seen[key] {
			t.Errorf("exception for %s, which no op table has", key)
		}
	}
}
