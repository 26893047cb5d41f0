package passes

// Pipeline is the ordered list of passes Run executes. Read it top to
// bottom; each entry says why it sits where it does.
var Pipeline = []*Pass{
	// First: every later pass and gen read Value.Type, and the importer only
	// knows the declared (untrusted) types.
	Shapes,
	// After shapes: folding Shape/Size and shape-arithmetic chains needs
	// shapes; it re-runs inference itself until nothing more folds.
	ConstFold,
	// After folding: folded nodes leave their producers (Shape, Gather,
	// Constant...) and unused initializers dead.
	DCE,
}
