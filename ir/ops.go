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
	Types       map[string][]DType
	Attrs       []AttrSpec
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
}

// AttrSpec is one attribute.
type AttrSpec struct {
	Name     string
	Kind     AttrKind
	Required bool
	Default  any // int64, float32, string, []int64, []float32 or nil
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
	for _, v := range s.Versions {
		if int64(v) <= opset {
			version = v
		}
	}
	return version, version > 0
}

// MaxOpset is the newest ai.onnx opset Cuvil supports.
const MaxOpset = 17

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
