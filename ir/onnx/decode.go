package onnx

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/cuvil/cuvil/ir"
	pb "github.com/cuvil/cuvil/ir/onnx/onnxpb"
)

// DefaultMaxData bounds the tensor bytes a model may add beyond the file
// itself: external data read and sparse tensors expanded (LoadWith raises
// it).
const DefaultMaxData = 4 << 30

// LoadOptions are LoadWith's options.
type LoadOptions struct {
	// MaxData bounds the bytes of external data and of expanded sparse
	// tensors, together (0: DefaultMaxData; -1: no limit), so that a
	// small model cannot make the importer allocate terabytes.
	MaxData int64
	// MaxNodes bounds the nodes of all graphs once model-local functions
	// are inlined (0: DefaultMaxNodes; -1: no limit): a few kilobytes of
	// functions calling each other twice can stand for 2^40 nodes.
	MaxNodes int64
	// MaxDepth bounds how deep subgraphs (If, Loop, Scan bodies) nest
	// (0: DefaultMaxDepth; -1: no limit).
	MaxDepth int
	// NoExternalData refuses tensors stored outside the model file
	// (compile -sandbox): nothing but the model file itself is read.
	NoExternalData bool
}

// The default import limits on nodes and nesting.
const (
	DefaultMaxNodes = 1 << 21
	DefaultMaxDepth = 256
)

func (o LoadOptions) maxNodes() int64 {
	switch {
	case o.MaxNodes == 0:
		return DefaultMaxNodes
	case o.MaxNodes < 0:
		return math.MaxInt64
	}
	return o.MaxNodes
}

func (o LoadOptions) maxDepth() int {
	switch {
	case o.MaxDepth == 0:
		return DefaultMaxDepth
	case o.MaxDepth < 0:
		return math.MaxInt
	}
	return o.MaxDepth
}

// Load reads an .onnx file and imports it. External data is read relative
// to the file's folder. Errors start with the path.
func Load(path string) (*ir.Model, error) { return LoadWith(path, LoadOptions{}) }

// LoadWith is Load with options.
func LoadWith(path string, opt LoadOptions) (*ir.Model, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file (%s)", path, st.Mode().Type())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m, err := decodeWith(data, filepath.Dir(path), ir.LookupOp, opt)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	m.Path = path
	return m, nil
}

// Decode imports a model from the bytes of an .onnx file. dir is the
// folder external data is read from; "" refuses models with external data.
func Decode(data []byte, dir string) (*ir.Model, error) {
	return decode(data, dir, ir.LookupOp)
}

// DecodeWith is Decode with load options (limits).
func DecodeWith(data []byte, dir string, opt LoadOptions) (*ir.Model, error) {
	return decodeWith(data, dir, ir.LookupOp, opt)
}

// decode is Decode with the op table as a parameter, so tests can pin their
// own.
func decode(data []byte, dir string, lookup func(domain, op string) *ir.OpSchema) (*ir.Model, error) {
	return decodeWith(data, dir, lookup, LoadOptions{})
}

func decodeWith(data []byte, dir string, lookup func(domain, op string) *ir.OpSchema, opt LoadOptions) (*ir.Model, error) {
	mp, err := unmarshalModel(data)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	budget := opt.MaxData
	if budget == 0 {
		budget = DefaultMaxData
	}
	m, err := importModel(mp, dir, lookup, budget, opt)
	if err != nil {
		return nil, err
	}
	m.SourceHash = hex.EncodeToString(sum[:])
	return m, nil
}

// modelFields are the wire types of ModelProto's fields. A file whose first
// field is not one of them is not an ONNX model; checking the first field
// (rather than all) keeps fields added by newer ONNX versions acceptable.
var modelFields = map[protowire.Number]protowire.Type{
	1: protowire.VarintType, 2: protowire.BytesType, 3: protowire.BytesType,
	4: protowire.BytesType, 5: protowire.VarintType, 6: protowire.BytesType,
	7: protowire.BytesType, 8: protowire.BytesType, 14: protowire.BytesType,
	20: protowire.BytesType, 25: protowire.BytesType,
}

// unmarshalModel decodes a ModelProto, telling "not an ONNX file" from
// "truncated" by walking the top-level fields first: proto.Unmarshal alone
// reports both as the same opaque error, and accepts many non-ONNX files.
func unmarshalModel(data []byte) (*pb.ModelProto, error) {
	if len(data) == 0 {
		return nil, fmt.Errorf("not an ONNX model: the file is empty")
	}
	for b, first := data, true; len(b) > 0; first = false {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			if first {
				return nil, fmt.Errorf("not an ONNX model: the file does not start with a protobuf field")
			}
			return nil, fmt.Errorf("truncated or corrupt ONNX model: bad protobuf field tag at byte %d", len(data)-len(b))
		}
		if want, ok := modelFields[num]; first && (!ok || want != typ) {
			return nil, fmt.Errorf("not an ONNX model: the file starts with protobuf field %d (wire type %d), which a ModelProto does not have", num, typ)
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return nil, fmt.Errorf("truncated or corrupt ONNX model: field %d at byte %d of %d: %v", num, len(data)-len(b), len(data), protowire.ParseError(m))
		}
		b = b[n+m:]
	}
	mp := &pb.ModelProto{}
	if err := proto.Unmarshal(data, mp); err != nil {
		return nil, fmt.Errorf("corrupt ONNX model: %v", err)
	}
	if mp.Graph == nil {
		return nil, fmt.Errorf("not an ONNX model: it has no graph (ModelProto.graph)")
	}
	return mp, nil
}

// importModel turns a decoded ModelProto into an ir.Model.
func importModel(mp *pb.ModelProto, dir string, lookup func(domain, op string) *ir.OpSchema, budget int64, opt LoadOptions) (*ir.Model, error) {
	m := &ir.Model{
		Opsets:    map[string]int64{},
		IRVersion: mp.GetIrVersion(),
		Producer:  strings.TrimSpace(mp.GetProducerName() + " " + mp.GetProducerVersion()),
		DocString: mp.GetDocString(),
	}
	for _, imp := range mp.OpsetImport {
		d := normDomain(imp.GetDomain())
		if _, dup := m.Opsets[d]; dup {
			return nil, fmt.Errorf("opset_import lists domain %q twice", displayDomain(d))
		}
		if imp.GetVersion() <= 0 {
			return nil, fmt.Errorf("opset_import: domain %q has version %d, want >= 1", displayDomain(d), imp.GetVersion())
		}
		m.Opsets[d] = imp.GetVersion()
	}
	if len(mp.OpsetImport) == 0 && mp.GetIrVersion() < 3 {
		// IR versions 1 and 2 predate opset_import: they mean ai.onnx opset 1.
		m.Opsets[""] = 1
	}
	if len(mp.MetadataProps) > 0 {
		m.Metadata = map[string]string{}
		for _, kv := range mp.MetadataProps {
			m.Metadata[kv.GetKey()] = kv.GetValue()
		}
	}
	im := &importer{
		dir:    dir,
		budget: budget,
		limits: opt,
		opsets: m.Opsets,
		lookup: lookup,
		funcs:  map[string]*pb.FunctionProto{},
		names:  map[string]bool{},
		syms:   map[string]bool{},
	}
	for _, f := range mp.Functions {
		key := funcKey(f.GetDomain(), f.GetName())
		if im.funcs[key] != nil {
			return nil, fmt.Errorf("function %q of domain %q is defined twice", f.GetName(), displayDomain(normDomain(f.GetDomain())))
		}
		im.funcs[key] = f
		for _, np := range f.Node {
			im.collectNode(np)
		}
	}
	im.collectGraph(mp.Graph)
	g, err := im.importGraph(mp.Graph, nil, nil, m.Opsets)
	if err != nil {
		return nil, err
	}
	m.Graph = g
	return m, nil
}

func normDomain(d string) string {
	if d == "ai.onnx" {
		return ""
	}
	return d
}

// displayDomain names a domain in messages: the default one is "ai.onnx",
// which reads better than "".
func displayDomain(d string) string {
	if d == "" {
		return "ai.onnx"
	}
	return d
}

func funcKey(domain, name string) string { return normDomain(domain) + "::" + name }

// collectGraph records every value name and dim symbol the model uses, so
// that names the importer invents (unk__N dims, inlined function values)
// never collide with the model's own.
func (im *importer) collectGraph(gp *pb.GraphProto) {
	for _, vis := range [][]*pb.ValueInfoProto{gp.Input, gp.Output, gp.ValueInfo} {
		for _, vi := range vis {
			im.names[vi.GetName()] = true
			im.collectType(vi.Type)
		}
	}
	for _, t := range gp.Initializer {
		im.names[t.GetName()] = true
	}
	for _, np := range gp.Node {
		im.collectNode(np)
	}
}

func (im *importer) collectNode(np *pb.NodeProto) {
	for _, s := range np.Input {
		im.names[s] = true
	}
	for _, s := range np.Output {
		im.names[s] = true
	}
	for _, a := range np.Attribute {
		if a.G != nil {
			im.collectGraph(a.G)
		}
		for _, sg := range a.Graphs {
			im.collectGraph(sg)
		}
	}
}

func (im *importer) collectType(tp *pb.TypeProto) {
	switch v := tp.GetValue().(type) {
	case *pb.TypeProto_TensorType:
		for _, d := range v.TensorType.GetShape().GetDim() {
			if p := d.GetDimParam(); p != "" {
				im.syms[p] = true
			}
		}
	case *pb.TypeProto_SequenceType:
		im.collectType(v.SequenceType.GetElemType())
	case *pb.TypeProto_OptionalType:
		im.collectType(v.OptionalType.GetElemType())
	case *pb.TypeProto_MapType:
		im.collectType(v.MapType.GetValueType())
	}
}

// freshDim names an unnamed dim. Numbering follows import order, so the
// same file always gets the same names.
func (im *importer) freshDim() string {
	for {
		s := fmt.Sprintf("unk__%d", im.unk)
		im.unk++
		if !im.syms[s] {
			im.syms[s] = true
			return s
		}
	}
}

// freshName returns a value name not used anywhere in the model.
func (im *importer) freshName(base string) string {
	for {
		s := fmt.Sprintf("%s__%d", base, im.fresh)
		im.fresh++
		if !im.names[s] {
			im.names[s] = true
			return s
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
