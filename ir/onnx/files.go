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
	Kind   ir.TypeKind // TensorKind, SequenceKind, OptionalKind or MapKind
	Name   string
	Tensor *ir.Tensor // TensorKind
	Seq    []*Data    // SequenceKind: the elements
	Opt    *Data      // OptionalKind: the value, nil for none
	// MapKind: the keys (1-D, I64 or String) and the values (1-D, as
	// long), entry i mapping Keys[i] to Values[i], in the file's order.
	Keys, Values *ir.Tensor
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
	case ir.MapKind:
		mp := &pb.MapProto{}
		if err := proto.Unmarshal(b, mp); err != nil {
			return nil, fmt.Errorf("not a MapProto: %v", err)
		}
		return mapFromProto(mp, dir)
	}
	return nil, fmt.Errorf("test data of kind %d is not supported (want tensor, sequence, optional or map)", kind)
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
	case pb.SequenceProto_MAP:
		for _, m := range sp.MapValues {
			e, err := mapFromProto(m, dir)
			if err != nil {
				return nil, fmt.Errorf("sequence %q: %w", sp.GetName(), err)
			}
			d.Seq = append(d.Seq, e)
		}
	default:
		return nil, fmt.Errorf("sequence %q: elements of elem_type %d are not supported (want tensor, sequence, map or optional)", sp.GetName(), sp.GetElemType())
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

// mapFromProto reads a MapProto: int64 or string keys, and values as a
// sequence of one scalar (or one-element) tensor per key, the way ONNX's
// numpy_helper.from_dict writes them, or of one tensor holding them all.
func mapFromProto(mp *pb.MapProto, dir string) (*Data, error) {
	d := &Data{Kind: ir.MapKind, Name: mp.GetName()}
	n := 0
	switch kt := ir.DType(mp.GetKeyType()); kt {
	case ir.I64:
		n = len(mp.Keys)
		d.Keys = ir.NewTensorInt64([]int64{int64(n)}, mp.Keys)
	case ir.String:
		n = len(mp.StringKeys)
		strs := make([]string, n)
		for i, k := range mp.StringKeys {
			strs[i] = string(k)
		}
		d.Keys = &ir.Tensor{DType: ir.String, Shape: []int64{int64(n)}, Strings: strs}
	default:
		return nil, fmt.Errorf("map %q: key_type %d is not supported (want int64 or string)", mp.GetName(), mp.GetKeyType())
	}
	if mp.Values == nil || (pb.SequenceProto_DataType(mp.Values.GetElemType()) != pb.SequenceProto_TENSOR && n > 0) {
		return nil, fmt.Errorf("map %q: values must be a sequence of tensors", mp.GetName())
	}
	vals := &ir.Tensor{Shape: []int64{int64(n)}}
	tvs := mp.Values.TensorValues
	for i, tp := range tvs {
		t, err := tensorFromProto(tp, dir)
		if err != nil {
			return nil, fmt.Errorf("map %q: value %d: %w", mp.GetName(), i, err)
		}
		if i == 0 {
			vals.DType = t.DType
		} else if t.DType != vals.DType {
			return nil, fmt.Errorf("map %q: value %d is %s, value 0 %s", mp.GetName(), i, t.DType, vals.DType)
		}
		vals.Raw = append(vals.Raw, t.Raw...)
		vals.Strings = append(vals.Strings, t.Strings...)
	}
	if len(tvs) > 0 && vals.NumElements() > 0 {
		if err := vals.Check(); err != nil {
			return nil, fmt.Errorf("map %q: %d keys, values %v", mp.GetName(), n, err)
		}
	}
	if n > 0 && len(tvs) == 0 {
		return nil, fmt.Errorf("map %q: %d keys and no values", mp.GetName(), n)
	}
	d.Values = vals
	return d, nil
}

func mapToProto(d *Data) (*pb.MapProto, error) {
	if d.Keys == nil || d.Values == nil || len(d.Keys.Shape) != 1 || len(d.Values.Shape) != 1 || d.Keys.Shape[0] != d.Values.Shape[0] {
		return nil, fmt.Errorf("map %q: want 1-D keys and values of one length", d.Name)
	}
	mp := &pb.MapProto{KeyType: ptr(int32(d.Keys.DType)), Values: &pb.SequenceProto{ElemType: ptr(int32(pb.SequenceProto_TENSOR))}}
	if d.Name != "" {
		mp.Name = ptr(d.Name)
	}
	n := int(d.Keys.Shape[0])
	switch d.Keys.DType {
	case ir.I64:
		mp.Keys = d.Keys.Int64s()
	case ir.String:
		for _, k := range d.Keys.Strings {
			mp.StringKeys = append(mp.StringKeys, []byte(k))
		}
	default:
		return nil, fmt.Errorf("map %q: keys of dtype %s are not supported", d.Name, d.Keys.DType)
	}
	size := d.Values.DType.Size()
	for i := 0; i < n; i++ {
		e := &ir.Tensor{DType: d.Values.DType}
		if d.Values.DType == ir.String {
			e.Strings = []string{d.Values.Strings[i]}
		} else {
			e.Raw = d.Values.Raw[i*size : (i+1)*size]
		}
		tp, err := tensorToProto(e)
		if err != nil {
			return nil, err
		}
		mp.Values.TensorValues = append(mp.Values.TensorValues, tp)
	}
	return mp, nil
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
	case ir.MapKind:
		m, err = mapToProto(d)
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
		case ir.MapKind:
			sp.ElemType = ptr(int32(pb.SequenceProto_MAP))
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
			case ir.MapKind:
				var m *pb.MapProto
				m, err = mapToProto(e)
				sp.MapValues = append(sp.MapValues, m)
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
