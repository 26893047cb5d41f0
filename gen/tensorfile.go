package gen

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/cuvil/cuvil/ir"
)

// The harness exchanges tensors in a tiny binary format that needs nothing
// but the standard library to read (gen/harnessmain has the other half):
//
//	"CUVT"            4 bytes of magic
//	version           uint8, 1
//	dtype             uint8, ONNX TensorProto numbering
//	reserved          uint16, 0
//	rank              uint32
//	dims              rank × uint64
//	data              numeric and bool: the packed little-endian elements
//	                  (bool one byte); string: per element a uint32 byte
//	                  length then the bytes
//
// All integers are little-endian.
const tensorMagic = "CUVT"

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
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, fmt.Errorf("tensor header: %w", err)
	}
	if string(hdr[:4]) != tensorMagic {
		return nil, errors.New("not a cuvil tensor file (bad magic)")
	}
	if hdr[4] != 1 {
		return nil, fmt.Errorf("tensor format version %d, want 1", hdr[4])
	}
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
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	err = WriteTensor(w, t)
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
