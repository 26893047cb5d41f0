package onnx

import (
	"fmt"
	"os"
	"path/filepath"

	"google.golang.org/protobuf/proto"

	"github.com/cuvil/cuvil/ir"
	pb "github.com/cuvil/cuvil/ir/onnx/onnxpb"
)

// ReadTensorFile reads a serialized TensorProto (the input_K.pb and
// output_K.pb files of ONNX test data). External data, if any, is read
// relative to the file's folder.
func ReadTensorFile(path string) (*ir.Tensor, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	t, err := decodeTensor(b, filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// DecodeTensor decodes a serialized TensorProto; external data is refused.
func DecodeTensor(b []byte) (*ir.Tensor, error) { return decodeTensor(b, "") }

func decodeTensor(b []byte, dir string) (*ir.Tensor, error) {
	tp := &pb.TensorProto{}
	if err := proto.Unmarshal(b, tp); err != nil {
		return nil, fmt.Errorf("not a TensorProto: %v", err)
	}
	return tensorFromProto(tp, dir)
}

// EncodeTensor serializes a tensor as a TensorProto (numbers in raw_data).
func EncodeTensor(t *ir.Tensor) ([]byte, error) {
	tp, err := tensorToProto(t)
	if err != nil {
		return nil, err
	}
	return proto.MarshalOptions{Deterministic: true}.Marshal(tp)
}

// WriteTensorFile writes a tensor as a serialized TensorProto.
func WriteTensorFile(path string, t *ir.Tensor) error {
	b, err := EncodeTensor(t)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// Data is one value of test data: a tensor, a sequence, or an optional.
// The files do not say which (a SequenceProto and a TensorProto can hold
// the same bytes), so readers pass the kind the model declares for the
// input or output; nested elements carry their own kind in the file.
type Data struct {
	Kind   ir.TypeKind // TensorKind, SequenceKind or OptionalKind
	Name   string
	Tensor *ir.Tensor // TensorKind
	Seq    []*Data    // SequenceKind: the elements
	Opt    *Data      // OptionalKind: the value, nil for none
}

// ReadDataFile reads a test data file holding a value of the given kind:
// a TensorProto, SequenceProto or OptionalProto.
func ReadDataFile(path string, kind ir.TypeKind) (*Data, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	d, err := decodeData(b, kind, filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return d, nil
}

// DecodeData decodes a test data value of the given kind.
func DecodeData(b []byte, kind ir.TypeKind) (*Data, error) { return decodeData(b, kind, "") }

func decodeData(b []byte, kind ir.TypeKind, dir string) (*Data, error) {
	switch kind {
	case ir.TensorKind:
		t, err := decodeTensor(b, dir)
		if err != nil {
			return nil, err
		}
		return &Data{Kind: ir.TensorKind, Name: t.Name, Tensor: t}, nil
	case ir.SequenceKind:
		sp := &pb.SequenceProto{}
		if err := proto.Unmarshal(b, sp); err != nil {
			return nil, fmt.Errorf("not a SequenceProto: %v", err)
		}
		return seqFromProto(sp, dir)
	case ir.OptionalKind:
		op := &pb.OptionalProto{}
		if err := proto.Unmarshal(b, op); err != nil {
			return nil, fmt.Errorf("not an OptionalProto: %v", err)
		}
		return optFromProto(op, dir)
	}
	return nil, fmt.Errorf("test data of kind %d is not supported (want tensor, sequence or optional)", kind)
}

func seqFromProto(sp *pb.SequenceProto, dir string) (*Data, error) {
	d := &Data{Kind: ir.SequenceKind, Name: sp.GetName(), Seq: []*Data{}}
	switch pb.SequenceProto_DataType(sp.GetElemType()) {
	case pb.SequenceProto_TENSOR, pb.SequenceProto_UNDEFINED:
		if sp.GetElemType() == 0 && (len(sp.SequenceValues) > 0 || len(sp.OptionalValues) > 0) {
			return nil, fmt.Errorf("sequence %q: elem_type is undefined but it holds non-tensor values", sp.GetName())
		}
		for _, tp := range sp.TensorValues {
			t, err := tensorFromProto(tp, dir)
			if err != nil {
				return nil, fmt.Errorf("sequence %q: %w", sp.GetName(), err)
			}
			d.Seq = append(d.Seq, &Data{Kind: ir.TensorKind, Name: t.Name, Tensor: t})
		}
	case pb.SequenceProto_SEQUENCE:
		for _, s := range sp.SequenceValues {
			e, err := seqFromProto(s, dir)
			if err != nil {
				return nil, err
			}
			d.Seq = append(d.Seq, e)
		}
	case pb.SequenceProto_OPTIONAL:
		for _, o := range sp.OptionalValues {
			e, err := optFromProto(o, dir)
			if err != nil {
				return nil, err
			}
			d.Seq = append(d.Seq, e)
		}
	default:
		return nil, fmt.Errorf("sequence %q: elements of elem_type %d are not supported (want tensor, sequence or optional)", sp.GetName(), sp.GetElemType())
	}
	return d, nil
}

func optFromProto(op *pb.OptionalProto, dir string) (*Data, error) {
	d := &Data{Kind: ir.OptionalKind, Name: op.GetName()}
	var err error
	switch pb.OptionalProto_DataType(op.GetElemType()) {
	case pb.OptionalProto_UNDEFINED:
		// none
	case pb.OptionalProto_TENSOR:
		if op.TensorValue == nil {
			return nil, fmt.Errorf("optional %q: elem_type is tensor but tensor_value is missing", op.GetName())
		}
		var t *ir.Tensor
		t, err = tensorFromProto(op.TensorValue, dir)
		if err == nil {
			d.Opt = &Data{Kind: ir.TensorKind, Name: t.Name, Tensor: t}
		}
	case pb.OptionalProto_SEQUENCE:
		if op.SequenceValue == nil {
			return nil, fmt.Errorf("optional %q: elem_type is sequence but sequence_value is missing", op.GetName())
		}
		d.Opt, err = seqFromProto(op.SequenceValue, dir)
	case pb.OptionalProto_OPTIONAL:
		if op.OptionalValue == nil {
			return nil, fmt.Errorf("optional %q: elem_type is optional but optional_value is missing", op.GetName())
		}
		d.Opt, err = optFromProto(op.OptionalValue, dir)
	default:
		return nil, fmt.Errorf("optional %q: a value of elem_type %d is not supported (want tensor, sequence or optional)", op.GetName(), op.GetElemType())
	}
	if err != nil {
		return nil, fmt.Errorf("optional %q: %w", op.GetName(), err)
	}
	return d, nil
}

// EncodeData serializes a test data value as a TensorProto, SequenceProto
// or OptionalProto according to its kind.
func EncodeData(d *Data) ([]byte, error) {
	var m proto.Message
	var err error
	switch d.Kind {
	case ir.TensorKind:
		m, err = dataTensor(d)
	case ir.SequenceKind:
		m, err = seqToProto(d)
	case ir.OptionalKind:
		m, err = optToProto(d)
	default:
		err = fmt.Errorf("test data of kind %d is not supported", d.Kind)
	}
	if err != nil {
		return nil, err
	}
	return proto.MarshalOptions{Deterministic: true}.Marshal(m)
}

// WriteDataFile writes a test data value (see EncodeData).
func WriteDataFile(path string, d *Data) error {
	b, err := EncodeData(d)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

func dataTensor(d *Data) (*pb.TensorProto, error) {
	if d.Tensor == nil {
		return nil, fmt.Errorf("tensor data %q has no tensor", d.Name)
	}
	tp, err := tensorToProto(d.Tensor)
	if err != nil {
		return nil, err
	}
	if d.Name != "" {
		tp.Name = ptr(d.Name)
	}
	return tp, nil
}

func seqToProto(d *Data) (*pb.SequenceProto, error) {
	sp := &pb.SequenceProto{ElemType: ptr(int32(pb.SequenceProto_TENSOR))}
	if d.Name != "" {
		sp.Name = ptr(d.Name)
	}
	if len(d.Seq) > 0 {
		kind := d.Seq[0].Kind
		switch kind {
		case ir.SequenceKind:
			sp.ElemType = ptr(int32(pb.SequenceProto_SEQUENCE))
		case ir.OptionalKind:
			sp.ElemType = ptr(int32(pb.SequenceProto_OPTIONAL))
		}
		for i, e := range d.Seq {
			if e == nil || e.Kind != kind {
				return nil, fmt.Errorf("sequence %q: element %d is not of the same kind as element 0", d.Name, i)
			}
			var err error
			switch kind {
			case ir.TensorKind:
				var tp *pb.TensorProto
				tp, err = dataTensor(e)
				sp.TensorValues = append(sp.TensorValues, tp)
			case ir.SequenceKind:
				var s *pb.SequenceProto
				s, err = seqToProto(e)
				sp.SequenceValues = append(sp.SequenceValues, s)
			case ir.OptionalKind:
				var o *pb.OptionalProto
				o, err = optToProto(e)
				sp.OptionalValues = append(sp.OptionalValues, o)
			default:
				err = fmt.Errorf("sequence %q: elements of kind %d are not supported", d.Name, kind)
			}
			if err != nil {
				return nil, err
			}
		}
	}
	return sp, nil
}

func optToProto(d *Data) (*pb.OptionalProto, error) {
	op := &pb.OptionalProto{ElemType: ptr(int32(pb.OptionalProto_UNDEFINED))}
	if d.Name != "" {
		op.Name = ptr(d.Name)
	}
	if d.Opt == nil {
		return op, nil
	}
	var err error
	switch d.Opt.Kind {
	case ir.TensorKind:
		op.ElemType = ptr(int32(pb.OptionalProto_TENSOR))
		op.TensorValue, err = dataTensor(d.Opt)
	case ir.SequenceKind:
		op.ElemType = ptr(int32(pb.OptionalProto_SEQUENCE))
		op.SequenceValue, err = seqToProto(d.Opt)
	case ir.OptionalKind:
		op.ElemType = ptr(int32(pb.OptionalProto_OPTIONAL))
		op.OptionalValue, err = optToProto(d.Opt)
	default:
		err = fmt.Errorf("optional %q: a value of kind %d is not supported", d.Name, d.Opt.Kind)
	}
	return op, err
}
