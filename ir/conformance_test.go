package ir

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The ONNX backend node tests are real models for every operator and
// opset the spec tests. This file reads just enough of their protobuf (with
// a few lines of wire decoding, since ir imports nothing but std) to check
// the op table against them: every node's op is known at its opset, its
// input and output counts fit the schema's arity for that version, and its
// attributes exist at that version with the declared kind.

const onnxNodeTests = "../../shared/onnx-tests/node"

type pbField struct {
	num  int
	wire int
	v    uint64
	b    []byte
}

func pbFields(b []byte) ([]pbField, error) {
	var out []pbField
	for len(b) > 0 {
		key, n := binary.Uvarint(b)
		if n <= 0 {
			return nil, errors.New("bad varint")
		}
		b = b[n:]
		f := pbField{num: int(key >> 3), wire: int(key & 7)}
		switch f.wire {
		case 0:
			f.v, n = binary.Uvarint(b)
			if n <= 0 {
				return nil, errors.New("bad varint")
			}
			b = b[n:]
		case 1:
			if len(b) < 8 {
				return nil, errors.New("short fixed64")
			}
			b = b[8:]
		case 5:
			if len(b) < 4 {
				return nil, errors.New("short fixed32")
			}
			b = b[4:]
		case 2:
			l, n := binary.Uvarint(b)
			if n <= 0 || uint64(len(b)-n) < l {
				return nil, errors.New("bad length")
			}
			f.b = b[n : n+int(l)]
			b = b[n+int(l):]
		default:
			return nil, fmt.Errorf("wire type %d", f.wire)
		}
		out = append(out, f)
	}
	return out, nil
}

type pbNode struct {
	op, domain string
	nIn, nOut  int
	attrs      map[string]AttrKind
	graphs     [][]byte
}

// onnxAttrKinds maps AttributeProto.AttributeType to AttrKind.
var onnxAttrKinds = map[uint64]AttrKind{1: AttrFloat, 2: AttrInt, 3: AttrString, 4: AttrTensor, 5: AttrGraph,
	6: AttrFloats, 7: AttrInts, 8: AttrStrings, 9: AttrTensors, 10: AttrGraphs, 13: AttrTypeProto, 14: AttrTypeProtos}

func pbGraphNodes(graph []byte, out *[]pbNode) error {
	fs, err := pbFields(graph)
	if err != nil {
		return err
	}
	for _, f := range fs {
		if f.num != 1 || f.wire != 2 {
			continue
		}
		nf, err := pbFields(f.b)
		if err != nil {
			return err
		}
		n := pbNode{attrs: map[string]AttrKind{}}
		for _, g := range nf {
			switch g.num {
			case 1:
				n.nIn++
			case 2:
				n.nOut++
			case 4:
				n.op = string(g.b)
			case 7:
				n.domain = string(g.b)
			case 5:
				af, err := pbFields(g.b)
				if err != nil {
					return err
				}
				var name string
				var kind AttrKind
				for _, a := range af {
					switch a.num {
					case 1:
						name = string(a.b)
					case 20:
						kind = onnxAttrKinds[a.v]
						if a.v == 11 {
							kind = AttrTensor // sparse tensors: the table declares them as tensors
						}
					case 6:
						n.graphs = append(n.graphs, a.b)
					case 11:
						n.graphs = append(n.graphs, a.b)
					}
				}
				n.attrs[name] = kind
			}
		}
		*out = append(*out, n)
		for _, g := range n.graphs {
			if err := pbGraphNodes(g, out); err != nil {
				return err
			}
		}
	}
	return nil
}

func TestOpTableAgainstONNXNodeTests(t *testing.T) {
	models, _ := filepath.Glob(filepath.Join(onnxNodeTests, "*", "model.onnx"))
	if len(models) == 0 {
		t.Skip("ONNX backend node tests not found at " + onnxNodeTests)
	}
	seen := map[string]bool{}
	for _, path := range models {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		fs, err := pbFields(b)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		opset := int64(0)
		var nodes []pbNode
		for _, f := range fs {
			switch {
			case f.num == 8 && f.wire == 2:
				of, _ := pbFields(f.b)
				var domain string
				var v int64
				for _, o := range of {
					if o.num == 1 {
						domain = string(o.b)
					}
					if o.num == 2 {
						v = int64(o.v)
					}
				}
				if domain == "" || domain == "ai.onnx" {
					opset = v
				}
			case f.num == 7 && f.wire == 2:
				if err := pbGraphNodes(f.b, &nodes); err != nil {
					t.Fatalf("%s: %v", path, err)
				}
			}
		}
		test := filepath.Base(filepath.Dir(path))
		for _, n := range nodes {
			if n.domain != "" && n.domain != "ai.onnx" {
				continue
			}
			seen[n.op] = true
			s := LookupOp("", n.op)
			if s == nil {
				t.Errorf("%s: op %s is not in the table", test, n.op)
				continue
			}
			v, ok := s.VersionFor(opset)
			if !ok {
				if opset <= MaxOpset {
					t.Errorf("%s: %s has no version for opset %d (versions %v)", test, n.op, opset, s.Versions)
				}
				continue
			}
			minIn, maxIn, minOut, maxOut, _ := s.Arity(v)
			if n.nIn < minIn || (maxIn >= 0 && n.nIn > maxIn) {
				t.Errorf("%s: %s-%d has %d inputs, want %d..%d", test, n.op, v, n.nIn, minIn, maxIn)
			}
			if n.nOut < minOut || (maxOut >= 0 && n.nOut > maxOut) {
				t.Errorf("%s: %s-%d has %d outputs, want %d..%d", test, n.op, v, n.nOut, minOut, maxOut)
			}
			for name, kind := range n.attrs {
				a := s.AttrFor(name, v)
				switch {
				case a == nil:
					t.Errorf("%s: %s-%d has attribute %q the table lacks", test, n.op, v, name)
				case a.Kind != kind:
					t.Errorf("%s: %s-%d attribute %q is %s, table says %s", test, n.op, v, name, kind, a.Kind)
				}
			}
		}
	}
	// Ops the backend tests exercise, kept by hand so that losing one from
	// the table (or the test data) shows up here.
	var missing []string
	for _, op := range strings.Fields(conformanceOps) {
		if !seen[op] {
			missing = append(missing, op)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("ops listed as tested but not found in any model: %v", missing)
	}
}

const conformanceOps = `
Abs Acos Acosh Add And ArgMax ArgMin Asin Asinh Atan Atanh AveragePool
BatchNormalization Bernoulli BitShift BlackmanWindow Cast CastLike Ceil Celu
Clip Compress Concat Constant ConstantOfShape Conv
ConvInteger ConvTranspose Cos Cosh CumSum DFT DepthToSpace DequantizeLinear
Det Div Dropout DynamicQuantizeLinear Einsum Elu Equal Erf Exp Expand EyeLike
Flatten Floor GRU Gather GatherElements GatherND Gemm GlobalAveragePool
GlobalMaxPool Greater GreaterOrEqual GridSample HammingWindow HannWindow
HardSigmoid HardSwish Hardmax Identity If InstanceNormalization IsInf IsNaN
LRN LSTM LayerNormalization LeakyRelu Less LessOrEqual Log LogSoftmax Loop
MatMul MatMulInteger Max MaxPool MaxUnpool Mean MeanVarianceNormalization
MelWeightMatrix Min Mod Mul Neg NegativeLogLikelihoodLoss NonMaxSuppression
NonZero Not OneHot Optional OptionalGetElement OptionalHasElement Or PRelu Pad
Pow QLinearConv QLinearMatMul QuantizeLinear RNN Range Reciprocal ReduceL1
ReduceL2 ReduceLogSum ReduceLogSumExp ReduceMax ReduceMean ReduceMin
ReduceProd ReduceSum ReduceSumSquare Relu Reshape Resize ReverseSequence
RoiAlign Round STFT Scan Scatter ScatterElements ScatterND Selu SequenceAt
SequenceConstruct SequenceEmpty SequenceInsert SequenceLength
SequenceMap Shape Shrink Sigmoid Sign Sin Sinh Size Slice Softmax
SoftmaxCrossEntropyLoss Softplus Softsign SpaceToDepth Split
Sqrt Squeeze StringNormalizer Sub Sum Tan Tanh TfIdfVectorizer ThresholdedRelu
Tile TopK Transpose Trilu Unique Unsqueeze Upsample Where Xor
`
