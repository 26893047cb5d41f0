package passes

import "github.com/cuvil/cuvil/ir"

// Pass is one step of the pipeline. Run transforms the model in place (or,
// for an analysis that records its result on the IR, annotates it).
type Pass struct {
	Name     string // short, used by -d=<name>/<action>
	Doc      string // one line for the help text
	Required bool   // later passes or gen depend on it; cannot be turned off
	Run      func(*ir.Model) error
	// WithOptions, when set, is what the pipeline runs instead of Run: the
	// pass reads some of Run's Options (prepack: Options.Winograd). Run
	// then does the same with the zero Options (golden tests call it).
	WithOptions func(*ir.Model, Options) error
}

func (p *Pass) String() string { return p.Name }
