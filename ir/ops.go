package ir

// The op set is data: each ONNX operator Cuvil knows is declared once in
// opTable (ops_table.go), the way the Go compiler declares its generic ops.
// The importer resolves versions with it, the verifier checks arity and
// dtypes with it, shape inference and gen read its flags.

// OpSchema describes one operator across all its versions.
type OpSchema struct {
	Domain   string // "" for ai.onnx
	Name     string
	Versions []int // since_version of each version, ascending
	Inputs   []ArgSpec
	Outputs  []ArgSpec
	// Types maps a constraint letter used by ArgSpec.Type to the dtypes it
	// allows; inputs and outputs sharing a letter must share a dtype.
	Types map[string][]DType
	// Kinds maps a constraint letter to the kinds of value it admits when
	// that is not just tensors (sequences, optionals); for those, Types
	// lists the dtypes of the innermost tensor elements.
	Kinds map[string][]TypeKind
	Attrs []AttrSpec
	// Older gives the arity of versions whose formal inputs or outputs do
	// not line up with the latest ones (attributes that became inputs,
	// outputs that were dropped). The verifier checks only arity, not
	// dtypes, for those versions.
	Older       []OlderArity
	Elementwise bool // output element i depends only on input elements i (after broadcasting)
	Commutative bool
	Doc         string // one line
}

// ArgSpec is one formal input or output.
type ArgSpec struct {
	Name     string
	Type     string // constraint letter, e.g. "T"
	Optional bool
	Variadic bool // last formal only: zero or more (one or more unless Optional)
	// Heterogeneous variadic formals may bind values of different dtypes
	// to the same letter (Loop, If, Scan carried values).
	Heterogeneous bool
}

// OlderArity bounds the input and output counts of the versions below
// Until that have no later entry in OpSchema.Older. A max of -1 is
// unbounded.
type OlderArity struct {
	Until          int
	MinIn, MaxIn   int
	MinOut, MaxOut int
}

// AttrSpec is one attribute.
type AttrSpec struct {
	Name     string
	Kind     AttrKind
	Required bool
	Default  any // int64, float32, string, []int64, []float32, []string or nil
	// Since and Until bound the op versions that have this attribute:
	// Since <= version < Until; zero means no bound. An attribute whose
	// kind or default changed appears once per version range.
	Since, Until int
}

// InVersion reports whether the attribute exists at op version v.
func (a *AttrSpec) InVersion(v int) bool {
	return (a.Since == 0 || v >= a.Since) && (a.Until == 0 || v < a.Until)
}

// AttrFor returns the attribute spec in force at op version v, or nil.
func (s *OpSchema) AttrFor(name string, v int) *AttrSpec {
	for i := range s.Attrs {
		if a := &s.Attrs[i]; a.Name == name && a.InVersion(v) {
			return a
		}
	}
	return nil
}

// Arity returns the bounds on input and output counts at op version v;
// a max of -1 means unbounded. older is true when the bounds come from
// OpSchema.Older, i.e. the latest formals do not describe that version.
func (s *OpSchema) Arity(v int) (minIn, maxIn, minOut, maxOut int, older bool) {
	for _, o := range s.Older {
		if v < o.Until {
			return o.MinIn, o.MaxIn, o.MinOut, o.MaxOut, true
		}
	}
	minIn, maxIn = formalArity(s.Inputs)
	minOut, maxOut = formalArity(s.Outputs)
	return minIn, maxIn, minOut, maxOut, false
}

func formalArity(args []ArgSpec) (lo, hi int) {
	hi = len(args)
	if n := len(args); n > 0 && args[n-1].Variadic {
		hi = -1
	}
	// Only trailing optionals can be left out (an omitted optional before
	// a present one is an empty name, a nil input), so the minimum counts
	// up to the last required formal.
	for i := len(args) - 1; i >= 0; i-- {
		if !args[i].Optional {
			return i + 1, hi
		}
	}
	return 0, hi
}

// Formal returns the formal that actual argument i binds to, following
// the variadic last formal; ok is false past the end.
func Formal(args []ArgSpec, i int) (ArgSpec, bool) {
	if i < len(args) {
		return args[i], true
	}
	if n := len(args); n > 0 && args[n-1].Variadic {
		return args[n-1], true
	}
	return ArgSpec{}, false
}

// opTable is filled by ops_table.go.
var opTable = map[string]*OpSchema{}

func opKey(domain, name string) string {
	if domain == "ai.onnx" {
		domain = ""
	}
	return domain + "::" + name
}

func register(s *OpSchema) { opTable[opKey(s.Domain, s.Name)] = s }

// LookupOp returns the schema of an operator, or nil when Cuvil does not
// know it.
func LookupOp(domain, name string) *OpSchema { return opTable[opKey(domain, name)] }

// VersionFor returns the op version in force for an imported opset: the
// largest since_version <= opset. ok is false when the op did not exist yet
// at that opset or the opset is newer than Cuvil supports.
func (s *OpSchema) VersionFor(opset int64) (version int, ok bool) {
	if opset > MaxOpset && (s.Domain == "" || s.Domain == "ai.onnx") {
		return 0, false
	}
	if opset > MaxMLOpset && s.Domain == MLDomain {
		return 0, false
	}
	for _, v := range s.Versions {
		if int64(v) <= opset {
			version = v
		}
	}
	return version, version > 0
}

// MaxOpset is the newest ai.onnx opset Cuvil supports.
const MaxOpset = 27

// Ops returns every known schema, sorted by domain and name.
func Ops() []*OpSchema {
	out := make([]*OpSchema, 0, len(opTable))
	for _, s := range opTable {
		out = append(out, s)
	}
	sortSchemas(out)
	return out
}

func sortSchemas(s []*OpSchema) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && opKey(s[j].Domain, s[j].Name) < opKey(s[j-1].Domain, s[j-1].Name); j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}
