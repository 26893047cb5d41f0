package templates

import "fmt"

// Sequences and optionals travel in the same *Tensor slots as tensors, so
// kernels keep the signature func(*Node) error and graph inputs and outputs
// keep the type *Tensor: a sequence is a Tensor whose Data is a *Sequence,
// an optional one whose Data is an *OptionalValue. Their DType is the dtype of
// the innermost tensor elements and their Shape is empty.

// Sequence is the Data of a Tensor holding an ONNX sequence of tensors.
// Elems are owned by the sequence: kernels copy tensors into and out of it,
// so no two values share memory. spare keeps element tensors that a
// shorter sequence no longer uses, for reuse by the next run.
type Sequence struct {
	Elems []*Tensor
	spare []*Tensor
}

// OptionalValue is the Data of a Tensor holding an ONNX optional: Value is nil
// for an empty optional, else a tensor or a sequence (a Tensor holding a
// *Sequence). keep retains the value's memory while the optional is empty.
type OptionalValue struct {
	Value *Tensor
	keep  *Tensor
}

// IsSequence reports whether t holds a sequence.
func (t *Tensor) IsSequence() bool {
	_, ok := t.Data.(*Sequence)
	return ok
}

// IsOptional reports whether t holds an optional.
func (t *Tensor) IsOptional() bool {
	_, ok := t.Data.(*OptionalValue)
	return ok
}

// Seq returns the sequence t holds; it panics when t holds something else.
func (t *Tensor) Seq() *Sequence { return t.Data.(*Sequence) }

// Opt returns the optional t holds; it panics when t holds something else.
func (t *Tensor) Opt() *OptionalValue { return t.Data.(*OptionalValue) }

// NewSequence returns a Tensor holding a sequence of copies of elems, with
// elements of dtype dt (used when elems is empty).
func NewSequence(dt DType, elems ...*Tensor) *Tensor {
	t := &Tensor{}
	s := MakeSequence(t, dt)
	for _, e := range elems {
		CopyValue(s.Append(), e)
	}
	return t
}

// NewOptional returns a Tensor holding an optional of a copy of v (none
// when v is nil), with elements of dtype dt.
func NewOptional(dt DType, v *Tensor) *Tensor {
	t := &Tensor{}
	o := MakeOptional(t, dt)
	if v != nil {
		CopyValue(o.Set(), v)
	}
	return t
}

// MakeSequence turns t into an empty sequence of elements of dtype dt,
// reusing the sequence t held before (its element tensors become spares).
func MakeSequence(t *Tensor, dt DType) *Sequence {
	s, ok := t.Data.(*Sequence)
	if !ok {
		s = &Sequence{}
		t.Data = s
	}
	s.Truncate(0)
	t.DType = dt
	t.Shape = t.Shape[:0]
	return s
}

// MakeOptional turns t into an empty optional of elements of dtype dt,
// reusing the optional t held before.
func MakeOptional(t *Tensor, dt DType) *OptionalValue {
	o, ok := t.Data.(*OptionalValue)
	if !ok {
		o = &OptionalValue{}
		t.Data = o
	}
	o.Clear()
	t.DType = dt
	t.Shape = t.Shape[:0]
	return o
}

// Len is the number of elements.
func (s *Sequence) Len() int { return len(s.Elems) }

// Append adds an element at the end and returns it for the caller to fill
// (a spare tensor when there is one, so steady-state runs do not allocate).
func (s *Sequence) Append() *Tensor {
	var e *Tensor
	if k := len(s.spare); k > 0 {
		e = s.spare[k-1]
		s.spare = s.spare[:k-1]
	} else {
		e = &Tensor{}
	}
	s.Elems = append(s.Elems, e)
	return e
}

// Insert adds an element at position i (0 <= i <= Len) and returns it.
func (s *Sequence) Insert(i int) *Tensor {
	e := s.Append()
	copy(s.Elems[i+1:], s.Elems[i:len(s.Elems)-1])
	s.Elems[i] = e
	return e
}

// Truncate keeps the first n elements; the rest become spares.
func (s *Sequence) Truncate(n int) {
	for i := len(s.Elems) - 1; i >= n; i-- {
		s.spare = append(s.spare, s.Elems[i])
		s.Elems[i] = nil
	}
	s.Elems = s.Elems[:n]
}

// Set makes the optional hold a value and returns it for the caller to
// fill.
func (o *OptionalValue) Set() *Tensor {
	if o.Value == nil {
		if o.keep == nil {
			o.keep = &Tensor{}
		}
		o.Value = o.keep
	}
	return o.Value
}

// Clear empties the optional.
func (o *OptionalValue) Clear() { o.Value = nil }

// CopyValue makes dst a deep copy of src, a tensor, sequence, optional or map,
// reusing dst's memory. Copying a value onto itself does nothing.
func CopyValue(dst, src *Tensor) {
	if dst == src {
		return
	}
	switch d := src.Data.(type) {
	case *Sequence:
		s := MakeSequence(dst, src.DType)
		for _, e := range d.Elems {
			CopyValue(s.Append(), e)
		}
	case *OptionalValue:
		o := MakeOptional(dst, src.DType)
		if d.Value != nil {
			CopyValue(o.Set(), d.Value)
		}
	case *MapValue:
		copyMap(dst, src, d)
	default:
		if dst.IsSequence() || dst.IsOptional() || dst.IsMap() {
			dst.Data = nil // a slot changing kind: start afresh
		}
		ewCopyTensor(dst, src)
	}
}

// ScalarInt reads the single element of an integer tensor (a Loop's trip
// count, an index).
func ScalarInt(t *Tensor) (int64, error) {
	if t.Len() != 1 || dataLen(t.Data) != 1 {
		return 0, fmt.Errorf("want a one-element tensor, have %s", t.String())
	}
	switch d := t.Data.(type) {
	case []int64:
		return d[0], nil
	case []int32:
		return int64(d[0]), nil
	case []int16:
		return int64(d[0]), nil
	case []int8:
		return int64(d[0]), nil
	case []uint8:
		return int64(d[0]), nil
	case []uint32:
		return int64(d[0]), nil
	case []uint64:
		return int64(d[0]), nil
	}
	return 0, fmt.Errorf("want an integer tensor, have %s", t.String())
}

// ScalarBool reads the single element of a condition tensor (bool, or any
// numeric dtype where non-zero is true).
func ScalarBool(t *Tensor) (bool, error) {
	if t.Len() != 1 || dataLen(t.Data) != 1 {
		return false, fmt.Errorf("want a one-element condition, have %s", t.String())
	}
	switch d := t.Data.(type) {
	case []bool:
		return d[0], nil
	case []float32:
		return d[0] != 0, nil
	case []float64:
		return d[0] != 0, nil
	}
	v, err := ScalarInt(t)
	return v != 0, err
}

// SetScalarI64 makes t the int64 scalar v.
func SetScalarI64(t *Tensor, v int64) {
	t.Resize(I64)
	t.I64()[0] = v
}

// SetScalarBool makes t the bool scalar v.
func SetScalarBool(t *Tensor, v bool) {
	t.Resize(Bool)
	t.Bool()[0] = v
}

// axisSplit returns, for a shape and an axis, the number of outer blocks,
// the axis length and the inner block size.
func axisSplit(shape []int, axis int) (outer, n, inner int) {
	outer, inner = 1, 1
	for _, d := range shape[:axis] {
		outer *= d
	}
	for _, d := range shape[axis+1:] {
		inner *= d
	}
	return outer, shape[axis], inner
}

// TakeSlice makes dst the slice of src at index i of axis, with that axis
// removed (a Scan body's view of one step).
func TakeSlice(dst, src *Tensor, axis, i int) error {
	if axis < 0 || axis >= len(src.Shape) || i < 0 || i >= src.Shape[axis] {
		return fmt.Errorf("slice %d of axis %d is outside %s", i, axis, src.String())
	}
	outer, n, inner := axisSplit(src.Shape, axis)
	var shape [8]int
	s := append(append(shape[:0], src.Shape[:axis]...), src.Shape[axis+1:]...)
	dst.Resize(src.DType, s...)
	for o := 0; o < outer; o++ {
		ewMove(dst.Data, o*inner, src.Data, (o*n+i)*inner, inner)
	}
	return nil
}

// ShapeStacked makes dst the shape of n slices like src stacked along axis
// (a new axis), keeping its memory when it is large enough.
func ShapeStacked(dst, src *Tensor, axis, n int) error {
	if axis < 0 || axis > len(src.Shape) {
		return fmt.Errorf("axis %d is outside rank %d", axis, len(src.Shape)+1)
	}
	var shape [8]int
	s := append(append(append(shape[:0], src.Shape[:axis]...), n), src.Shape[axis:]...)
	dst.Resize(src.DType, s...)
	return nil
}

// PutSlice writes src as slice i along axis of dst, which ShapeStacked
// shaped.
func PutSlice(dst, src *Tensor, axis, i int) error {
	if len(dst.Shape) != len(src.Shape)+1 || dst.DType != src.DType {
		return fmt.Errorf("slice %s does not fit %s", src.String(), dst.String())
	}
	for k, d := range src.Shape {
		j := k
		if k >= axis {
			j++
		}
		if dst.Shape[j] != d {
			return fmt.Errorf("slice %s does not fit %s at axis %d", src.String(), dst.String(), axis)
		}
	}
	outer, n, inner := axisSplit(dst.Shape, axis)
	for o := 0; o < outer; o++ {
		ewMove(dst.Data, (o*n+i)*inner, src.Data, o*inner, inner)
	}
	return nil
}

// AppendStacked writes src as slice i (the i-th iteration's scan output
// of a Loop) along a new leading axis of dst. Iteration 0 sets the slice
// shape and makes room for hint slices (the trip count when known, else
// 0); later slices must match it. dst may hold more slices than written
// until FinishStacked trims it. When the trip count is known and reached,
// a session that has run the loop once does not allocate for it again.
func AppendStacked(dst, src *Tensor, i, hint int) error {
	if i == 0 {
		var shape [8]int
		s := append(append(shape[:0], max(hint, 1)), src.Shape...)
		dst.Resize(src.DType, s...)
	} else if dst.DType != src.DType || len(dst.Shape) != len(src.Shape)+1 {
		return fmt.Errorf("scan output of iteration %d is %s, earlier ones %s", i, src.String(), dst.String())
	}
	for k, d := range src.Shape {
		if dst.Shape[k+1] != d {
			return fmt.Errorf("scan output of iteration %d is %s, earlier ones %s", i, src.String(), dst.String())
		}
	}
	size := src.Len()
	if i >= dst.Shape[0] {
		n := max(2*dst.Shape[0], i+1)
		dst.Data = growData(dst.Data, n*size)
		dst.Shape[0] = n
	}
	ewMove(dst.Data, i*size, src.Data, 0, size)
	return nil
}

// FinishStacked trims a Loop's scan output to the count slices written.
func FinishStacked(dst *Tensor, count int) {
	if len(dst.Shape) == 0 || dst.Shape[0] == count {
		return
	}
	size := 1
	for _, d := range dst.Shape[1:] {
		size *= d
	}
	dst.Data = growData(dst.Data, count*size)
	dst.Shape[0] = count
}

// growData returns data resliced to n elements, reallocating with room to
// spare when its capacity is short.
func growData(data any, n int) any {
	switch d := data.(type) {
	case []float32:
		return growSlice(d, n)
	case []float64:
		return growSlice(d, n)
	case []uint16:
		return growSlice(d, n)
	case []int8:
		return growSlice(d, n)
	case []uint8:
		return growSlice(d, n)
	case []int16:
		return growSlice(d, n)
	case []int32:
		return growSlice(d, n)
	case []int64:
		return growSlice(d, n)
	case []uint32:
		return growSlice(d, n)
	case []uint64:
		return growSlice(d, n)
	case []bool:
		return growSlice(d, n)
	case []string:
		return growSlice(d, n)
	}
	panic("templates: unsupported tensor data")
}

func growSlice[T any](d []T, n int) []T {
	if cap(d) >= n {
		return d[:n]
	}
	e := make([]T, n, max(n, 2*cap(d), 16))
	copy(e, d)
	return e
}

// ScanLength returns the length of axis of a Scan's input.
func ScanLength(t *Tensor, axis int) (int, error) {
	if axis < 0 || axis >= len(t.Shape) {
		return 0, fmt.Errorf("axis %d is outside %s", axis, t.String())
	}
	return t.Shape[axis], nil
}
