package harness

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/ir/onnx"
)

// The harness exchanges tensors in a tiny binary format that needs nothing
// but the standard library to read (harnessmain/main.go has the other half):
//
//	"CUVT"            4 bytes of magic
//	version           uint8, 1
//	dtype             uint8, ONNX TensorProto numbering
//	reserved          uint16, 0
//	rank              uint32
//	dims              rank × uint64
//	data              numeric and bool: the packed little-endian elements
//	                  (bool one byte; the float8 kinds, f4e2m1, e8m0, u4,
//	                  i4, u2 and i2 one byte each: the bit pattern, or the
//	                  value, int4/int2 sign-extended, as in ir.Tensor.Raw);
//	                  string: per element a uint32 byte length then the bytes
//
// All integers are little-endian. Sequences and optionals are version 2
// records that nest further records:
//
//	"CUVT"            4 bytes of magic
//	version           uint8, 2
//	kind              uint8, 'S' (sequence) or 'O' (optional)
//	dtype             uint8, the innermost tensors' dtype (an empty
//	                  sequence or a none optional still has one)
//	reserved          uint8, 0
//	count             uint32: the sequence's length; 0 (none) or 1 (some)
//	                  for an optional
//	elements          count records, each a tensor (version 1) or another
//	                  sequence or optional (version 2)
//
// A map is a version 2 record of kind 'M' whose dtype is the values'
// dtype and whose count is 2: a 1-D keys tensor (int64 or string) then a
// 1-D values tensor of the same length (version 1 records).
const tensorMagic = "CUVT"

// Kind tags of version 2 records.
const (
	recSequence = 'S'
	recOptional = 'O'
	recMap      = 'M'
)

// maxNesting bounds how deep sequences and optionals nest in a file.
const maxNesting = 16

// maxTensorBytes bounds what ReadTensor accepts, so a corrupt header cannot
// ask for an absurd allocation.
const maxTensorBytes = 1 << 34

// WriteTensor writes t in the harness format.
func WriteTensor(w io.Writer, t *ir.Tensor) error {
	if err := t.Check(); err != nil {
		return err
	}
	hdr := make([]byte, 0, 12+8*len(t.Shape))
	hdr = append(hdr, tensorMagic...)
	hdr = append(hdr, 1, byte(t.DType), 0, 0)
	hdr = binary.LittleEndian.AppendUint32(hdr, uint32(len(t.Shape)))
	for _, d := range t.Shape {
		hdr = binary.LittleEndian.AppendUint64(hdr, uint64(d))
	}
	if _, err := w.Write(hdr); err != nil {
		return err
	}
	if t.DType != ir.String {
		_, err := w.Write(t.Raw)
		return err
	}
	for _, s := range t.Strings {
		var n [4]byte
		binary.LittleEndian.PutUint32(n[:], uint32(len(s)))
		if _, err := w.Write(n[:]); err != nil {
			return err
		}
		if _, err := io.WriteString(w, s); err != nil {
			return err
		}
	}
	return nil
}

// ReadTensor reads one tensor in the harness format.
func ReadTensor(r io.Reader) (*ir.Tensor, error) {
	var hdr [12]byte
	if err := readHeader(r, hdr[:]); err != nil {
		return nil, err
	}
	if hdr[4] != 1 {
		return nil, fmt.Errorf("tensor format version %d, want 1 (a tensor)", hdr[4])
	}
	return readTensorBody(r, hdr)
}

// readHeader reads the 12 bytes every record starts with and checks the
// magic.
func readHeader(r io.Reader, hdr []byte) error {
	if _, err := io.ReadFull(r, hdr); err != nil {
		return fmt.Errorf("tensor header: %w", err)
	}
	if string(hdr[:4]) != tensorMagic {
		return errors.New("not a cuvil tensor file (bad magic)")
	}
	return nil
}

// readTensorBody reads the rest of a version 1 record after its header.
func readTensorBody(r io.Reader, hdr [12]byte) (*ir.Tensor, error) {
	t := &ir.Tensor{DType: ir.DType(hdr[5])}
	if !t.DType.Valid() || (t.DType.Size() == 0 && t.DType != ir.String) {
		return nil, fmt.Errorf("unsupported dtype %d", hdr[5])
	}
	rank := binary.LittleEndian.Uint32(hdr[8:])
	if rank > 64 {
		return nil, fmt.Errorf("rank %d is too large", rank)
	}
	n := int64(1)
	t.Shape = make([]int64, rank)
	for i := range t.Shape {
		var d [8]byte
		if _, err := io.ReadFull(r, d[:]); err != nil {
			return nil, fmt.Errorf("tensor dims: %w", err)
		}
		t.Shape[i] = int64(binary.LittleEndian.Uint64(d[:]))
		if t.Shape[i] < 0 || t.Shape[i] > maxTensorBytes {
			return nil, fmt.Errorf("dim %d is %d", i, t.Shape[i])
		}
		n *= t.Shape[i]
		if n > maxTensorBytes {
			return nil, fmt.Errorf("shape %v is too large", t.Shape)
		}
	}
	if t.DType == ir.String {
		t.Strings = make([]string, n)
		for i := range t.Strings {
			var l [4]byte
			if _, err := io.ReadFull(r, l[:]); err != nil {
				return nil, fmt.Errorf("string %d: %w", i, err)
			}
			b := make([]byte, binary.LittleEndian.Uint32(l[:]))
			if _, err := io.ReadFull(r, b); err != nil {
				return nil, fmt.Errorf("string %d: %w", i, err)
			}
			t.Strings[i] = string(b)
		}
		return t, nil
	}
	size := n * int64(t.DType.Size())
	if size > maxTensorBytes {
		return nil, fmt.Errorf("shape %v of %s is too large", t.Shape, t.DType)
	}
	t.Raw = make([]byte, size)
	if _, err := io.ReadFull(r, t.Raw); err != nil {
		return nil, fmt.Errorf("tensor data: %w", err)
	}
	return t, nil
}

// WriteTensorFile writes t to path in the harness format.
func WriteTensorFile(path string, t *ir.Tensor) error {
	return writeFile(path, func(w io.Writer) error { return WriteTensor(w, t) })
}

// writeFile creates path and writes it with write, removing it on failure.
func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	err = write(w)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// ReadTensorFile reads a harness-format tensor from path.
func ReadTensorFile(path string) (*ir.Tensor, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	t, err := ReadTensor(bufio.NewReader(f))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// WriteData writes a tensor, sequence, optional or map in the harness format
// (a tensor exactly as WriteTensor does). dt is the dtype of the innermost
// tensors, which the file records for sequences and optionals even when
// they hold none; Undefined takes it from the first tensor found.
func WriteData(w io.Writer, d *onnx.Data, dt ir.DType) error {
	return writeData(w, d, dt, 0)
}

func writeData(w io.Writer, d *onnx.Data, dt ir.DType, depth int) error {
	if d == nil {
		return errors.New("nil value")
	}
	if depth > maxNesting {
		return fmt.Errorf("values nest deeper than %d", maxNesting)
	}
	var kind byte
	var elems []*onnx.Data
	switch d.Kind {
	case ir.TensorKind:
		if d.Tensor == nil {
			return errors.New("tensor value without a tensor")
		}
		return WriteTensor(w, d.Tensor)
	case ir.SequenceKind:
		kind, elems = recSequence, d.Seq
	case ir.OptionalKind:
		kind = recOptional
		if d.Opt != nil {
			elems = []*onnx.Data{d.Opt}
		}
	case ir.MapKind:
		if d.Keys == nil || d.Values == nil {
			return errors.New("map value without keys or values")
		}
		kind = recMap
		elems = []*onnx.Data{{Kind: ir.TensorKind, Tensor: d.Keys}, {Kind: ir.TensorKind, Tensor: d.Values}}
		dt = d.Values.DType
	default:
		return fmt.Errorf("value of kind %s cannot be exchanged (want tensor, sequence, optional or map)", d.Kind)
	}
	if dt == ir.Undefined {
		dt = innerDType(d)
	}
	hdr := []byte(tensorMagic)
	hdr = append(hdr, 2, kind, byte(dt), 0)
	hdr = binary.LittleEndian.AppendUint32(hdr, uint32(len(elems)))
	if _, err := w.Write(hdr); err != nil {
		return err
	}
	for i, e := range elems {
		if err := writeData(w, e, dt, depth+1); err != nil {
			return fmt.Errorf("element %d: %w", i, err)
		}
	}
	return nil
}

// innerDType is the dtype of the first tensor inside d, Undefined when it
// holds none.
func innerDType(d *onnx.Data) ir.DType {
	switch {
	case d == nil:
	case d.Kind == ir.TensorKind && d.Tensor != nil:
		return d.Tensor.DType
	case d.Kind == ir.OptionalKind:
		return innerDType(d.Opt)
	case d.Kind == ir.MapKind && d.Values != nil:
		return d.Values.DType
	case d.Kind == ir.SequenceKind:
		for _, e := range d.Seq {
			if dt := innerDType(e); dt != ir.Undefined {
				return dt
			}
		}
	}
	return ir.Undefined
}

// ReadData reads a tensor, sequence or optional in the harness format.
// The dtype of an empty sequence or none optional is returned too (the
// value itself has no tensor to carry it).
func ReadData(r io.Reader) (*onnx.Data, ir.DType, error) {
	return readData(r, 0)
}

func readData(r io.Reader, depth int) (*onnx.Data, ir.DType, error) {
	var hdr [12]byte
	if err := readHeader(r, hdr[:]); err != nil {
		return nil, 0, err
	}
	switch hdr[4] {
	case 1:
		t, err := readTensorBody(r, hdr)
		if err != nil {
			return nil, 0, err
		}
		return &onnx.Data{Kind: ir.TensorKind, Tensor: t}, t.DType, nil
	case 2:
	default:
		return nil, 0, fmt.Errorf("tensor format version %d, want 1 or 2", hdr[4])
	}
	if depth >= maxNesting {
		return nil, 0, fmt.Errorf("values nest deeper than %d", maxNesting)
	}
	dt := ir.DType(hdr[6])
	if dt != ir.Undefined && !dt.Valid() {
		return nil, 0, fmt.Errorf("unsupported dtype %d", hdr[6])
	}
	n := binary.LittleEndian.Uint32(hdr[8:])
	d := &onnx.Data{}
	switch hdr[5] {
	case recSequence:
		d.Kind, d.Seq = ir.SequenceKind, []*onnx.Data{}
	case recOptional:
		d.Kind = ir.OptionalKind
		if n > 1 {
			return nil, 0, fmt.Errorf("optional holds %d values", n)
		}
	case recMap:
		if n != 2 {
			return nil, 0, fmt.Errorf("map record holds %d tensors, want 2 (keys, values)", n)
		}
		var kv [2]*ir.Tensor
		for i := range kv {
			var h [12]byte
			if err := readHeader(r, h[:]); err != nil {
				return nil, 0, err
			}
			if h[4] != 1 {
				return nil, 0, fmt.Errorf("map keys or values: version %d record, want a tensor", h[4])
			}
			t, err := readTensorBody(r, h)
			if err != nil {
				return nil, 0, err
			}
			kv[i] = t
		}
		if len(kv[0].Shape) != 1 || len(kv[1].Shape) != 1 || kv[0].Shape[0] != kv[1].Shape[0] || (kv[0].DType != ir.I64 && kv[0].DType != ir.String) {
			return nil, 0, fmt.Errorf("map of keys %s%v and values %s%v, want 1-D int64 or string keys and values of one length", kv[0].DType, kv[0].Shape, kv[1].DType, kv[1].Shape)
		}
		return &onnx.Data{Kind: ir.MapKind, Keys: kv[0], Values: kv[1]}, kv[1].DType, nil
	default:
		return nil, 0, fmt.Errorf("unknown value kind %q", hdr[5])
	}
	for i := uint32(0); i < n; i++ {
		e, _, err := readData(r, depth+1)
		if err != nil {
			return nil, 0, fmt.Errorf("element %d: %w", i, err)
		}
		if d.Kind == ir.OptionalKind {
			d.Opt = e
		} else {
			d.Seq = append(d.Seq, e)
		}
	}
	return d, dt, nil
}

// WriteDataFile writes d to path in the harness format (see WriteData).
func WriteDataFile(path string, d *onnx.Data, dt ir.DType) error {
	return writeFile(path, func(w io.Writer) error { return WriteData(w, d, dt) })
}

// ReadDataFile reads a harness-format value from path (see ReadData).
func ReadDataFile(path string) (*onnx.Data, ir.DType, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	d, dt, err := ReadData(bufio.NewReader(f))
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", path, err)
	}
	return d, dt, nil
}
