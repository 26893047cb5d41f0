package templates

import (
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"strings"
	"unsafe"
)

// This file is the same in every package cuvil generates: the input guards,
// the weight decoder and tensor copies that model.go calls.

// cuvilMaxElems bounds the elements of a tensor: 2^48, or 2^30 where int
// is 32 bits (so a product of dims never overflows int).
const cuvilMaxElems = 1 << 48 >> ((64 - 32<<(^uint(0)>>63)) / 32 * 18)

// cuvilDim is one declared dim of an input: a constant size (sym < 0) or
// an index into cuvilSymNames.
type cuvilDim struct {
	size int
	sym  int
}

// cuvilInputSpec is one graph input as the model declares it.
type cuvilInputSpec struct {
	name  string
	dtype DType
	dims  []cuvilDim
	key   DType // map key dtype (kind 3)
	kind  int   // 0 tensor, 1 sequence, 2 optional, 3 map (ir.TypeKind)
}

// cuvilConst says where a constant lives in weights.bin.
type cuvilConst struct {
	name  string
	dtype DType
	shape []int
	off   int
	size  int
	// stored is F16 for an F32 constant weights.bin holds as halves:
	// cuvilLoad widens it (cuvilWidenF16) into memory of its own.
	stored DType
}

// cuvilWidenF16 widens halves (little endian) into float32: WidenF16, set
// by the model's init where some constant is stored f16.
var cuvilWidenF16 func(dst []float32, src string)

var errCuvilClosed = errors.New("session is closed")

// cuvilCheckInput checks t against the declared dtype and shape. syms holds
// the size each symbolic dim took so far (-1 when not yet seen), so that
// inputs sharing a symbol must agree on its size.
// cuvilPanicError is the error Run returns for a panic inside a kernel (a
// bug in cuvil: please report it with the model).
func cuvilPanicError(at string, r any) error {
	if at == "" {
		at = "Run"
	}
	return fmt.Errorf("%s: internal error: %v", at, r)
}

func cuvilCheckInput(spec *cuvilInputSpec, t *Tensor, syms []int) error {
	if t == nil {
		return fmt.Errorf("input %q is nil", spec.name)
	}
	switch spec.kind {
	case 1:
		if !t.IsSequence() {
			return fmt.Errorf("input %q: Data is %T, want a *Sequence", spec.name, t.Data)
		}
		return nil
	case 2:
		if !t.IsOptional() {
			return fmt.Errorf("input %q: Data is %T, want an *OptionalValue", spec.name, t.Data)
		}
		return nil
	case 3:
		if !t.IsMap() {
			return fmt.Errorf("input %q: Data is %T, want a *MapValue (make it with NewMap)", spec.name, t.Data)
		}
		m := t.Map()
		if m.Keys.DType != spec.key || m.Values.DType != spec.dtype || len(m.Keys.Shape) != 1 || len(m.Values.Shape) != 1 ||
			m.Keys.Shape[0] != m.Values.Shape[0] || cuvilDataLen(&m.Keys) != m.Keys.Len() || cuvilDataLen(&m.Values) != m.Values.Len() {
			return fmt.Errorf("input %q: a map from %s to %s, want one from %s to %s", spec.name, m.Keys.DType.String(), m.Values.DType.String(), spec.key.String(), spec.dtype.String())
		}
		return nil
	}
	if t.IsSequence() || t.IsOptional() || t.IsMap() {
		return fmt.Errorf("input %q: Data is %T, want a tensor's slice", spec.name, t.Data)
	}
	if t.DType != spec.dtype {
		return fmt.Errorf("input %q: dtype is %s, want %s", spec.name, t.DType.String(), spec.dtype.String())
	}
	if len(t.Shape) != len(spec.dims) {
		return fmt.Errorf("input %q: rank is %d (shape %s), want %d", spec.name, len(t.Shape), t.ShapeString(), len(spec.dims))
	}
	for i, d := range spec.dims {
		have := t.Shape[i]
		if d.sym < 0 {
			if have != d.size {
				return fmt.Errorf("input %q: dim %d is %d, want %d", spec.name, i, have, d.size)
			}
			continue
		}
		if have < 0 {
			return fmt.Errorf("input %q: dim %d (%s) is %d, want >= 0", spec.name, i, cuvilSymNames[d.sym], have)
		}
		if syms[d.sym] >= 0 && syms[d.sym] != have {
			return fmt.Errorf("input %q: dim %d (%s) is %d, want %d as set by an earlier input", spec.name, i, cuvilSymNames[d.sym], have, syms[d.sym])
		}
		syms[d.sym] = have
	}
	count := 1
	for _, d := range t.Shape {
		if d != 0 && count > cuvilMaxElems/d {
			return fmt.Errorf("input %q: shape %s has more than 2^48 elements (2^30 on a 32-bit machine)", spec.name, t.ShapeString())
		}
		count *= d
	}
	if n := cuvilDataLen(t); n != t.Len() {
		if n < 0 {
			return fmt.Errorf("input %q: Data is %T, want the Go slice type of %s", spec.name, t.Data, t.DType.String())
		}
		return fmt.Errorf("input %q: Data has %d elements, shape %s wants %d", spec.name, n, t.ShapeString(), t.Len())
	}
	return nil
}

// cuvilDataLen returns the length of t.Data, or -1 when its Go type does
// not match t.DType.
func cuvilDataLen(t *Tensor) int {
	switch d := t.Data.(type) {
	case []float32:
		if t.DType == F32 {
			return len(d)
		}
	case []float64:
		if t.DType == F64 {
			return len(d)
		}
	case []uint16:
		if t.DType == F16 || t.DType == BF16 || t.DType == U16 {
			return len(d)
		}
	case []int8:
		if t.DType == I8 || t.DType == I4 || t.DType == I2 {
			return len(d)
		}
	case []uint8:
		switch t.DType {
		case U8, U4, U2, F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, F4E2M1, F8E8M0:
			return len(d)
		}
	case []int16:
		if t.DType == I16 {
			return len(d)
		}
	case []int32:
		if t.DType == I32 {
			return len(d)
		}
	case []int64:
		if t.DType == I64 {
			return len(d)
		}
	case []uint32:
		if t.DType == U32 {
			return len(d)
		}
	case []uint64:
		if t.DType == U64 {
			return len(d)
		}
	case []bool:
		if t.DType == Bool {
			return len(d)
		}
	case []string:
		if t.DType == String {
			return len(d)
		}
	}
	return -1
}

// cuvilLittleEndian: this machine stores numbers as weights.bin does, so a
// numeric constant can be a view of the blob (a variable so that tests can
// take the copying path big-endian machines take).
var cuvilLittleEndian = func() bool { x := uint16(1); return *(*byte)(unsafe.Pointer(&x)) == 1 }()

// cuvilLoad fills out[i] from table[i] and the weights blob (the embedded
// weights.bin, or the file NewFromFile mapped). A numeric constant is a view
// of the blob, no copy, when the machine is little-endian and the constant
// is aligned for its Go type (gen aligns every offset to 64 bytes; the blob's
// start is aligned by the linker or the mapping); otherwise, and for bool
// and string constants and with copyAll, it is decoded into memory of its
// own. The views are read-only memory: kernels never write their inputs. It
// returns how many constants are views.
func cuvilLoad(blob string, table []cuvilConst, out []Tensor, copyAll bool) (views int, err error) {
	for i := range table {
		c := &table[i]
		if c.off < 0 || c.size < 0 || c.off > len(blob) || c.size > len(blob)-c.off {
			return 0, fmt.Errorf("weights.bin: constant %q at [%d,%d) is outside the %d-byte blob", c.name, c.off, c.off+c.size, len(blob))
		}
		b := blob[c.off : c.off+c.size]
		t := &out[i]
		n := 1
		for _, d := range c.shape {
			if d < 0 || d != 0 && n > cuvilMaxElems/d {
				return 0, fmt.Errorf("weights.bin: constant %q has a bad shape %v", c.name, c.shape)
			}
			n *= d
		}
		if c.stored == F16 && c.dtype == F32 {
			if len(b) != 2*n || cuvilWidenF16 == nil {
				return 0, fmt.Errorf("weights.bin: constant %q stored f16 has %d bytes, shape %v wants %d", c.name, len(b), c.shape, 2*n)
			}
			// 64-byte aligned, as the views of the blob are: the
			// kernels' panel loads would split cache lines otherwise.
			buf := make([]float32, n+16)
			a := 0
			if n > 0 {
				a = int((64 - uintptr(unsafe.Pointer(&buf[0]))%64) % 64 / 4)
			}
			d := buf[a : a+n : a+n]
			cuvilWidenF16(d, b)
			*t = Tensor{DType: F32, Shape: append(make([]int, 0, len(c.shape)), c.shape...), Data: d}
			continue
		}
		if c.dtype != String {
			if want := n * cuvilElemSize(c.dtype); len(b) != want || want == 0 && n != 0 {
				return 0, fmt.Errorf("weights.bin: constant %q has %d bytes, shape %v of %s wants %d", c.name, len(b), c.shape, c.dtype.String(), want)
			}
			if !copyAll && n > 0 {
				if v := cuvilWeightView(b, c.dtype, n); v != nil {
					*t = Tensor{DType: c.dtype, Shape: append(make([]int, 0, len(c.shape)), c.shape...), Data: v}
					views++
					continue
				}
			}
		}
		t.Resize(c.dtype, c.shape...)
		if err := cuvilDecodeInto(t, b, c.name); err != nil {
			return 0, err
		}
	}
	return views, nil
}

// cuvilWeightView returns b as a slice of n elements of dt's Go type, or
// nil where it cannot be one: a big-endian machine, a misaligned address,
// and bool (whose bytes Go requires to be 0 or 1) and string dtypes.
func cuvilWeightView(b string, dt DType, n int) any {
	size := cuvilElemSize(dt)
	if !cuvilLittleEndian || size == 0 || len(b) != n*size || dt == Bool {
		return nil
	}
	p := unsafe.Pointer(unsafe.StringData(b))
	if uintptr(p)%uintptr(size) != 0 {
		return nil
	}
	switch dt {
	case F32:
		return unsafe.Slice((*float32)(p), n)
	case F64:
		return unsafe.Slice((*float64)(p), n)
	case F16, BF16, U16:
		return unsafe.Slice((*uint16)(p), n)
	case I16:
		return unsafe.Slice((*int16)(p), n)
	case I8, I4, I2:
		return unsafe.Slice((*int8)(p), n)
	case U8, U4, U2, F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, F4E2M1, F8E8M0:
		return unsafe.Slice((*uint8)(p), n)
	case I32:
		return unsafe.Slice((*int32)(p), n)
	case U32:
		return unsafe.Slice((*uint32)(p), n)
	case I64:
		return unsafe.Slice((*int64)(p), n)
	case U64:
		return unsafe.Slice((*uint64)(p), n)
	}
	return nil
}

// cuvilDecodeInto decodes b, a constant's bytes in weights.bin, into t
// (resized to the constant's dtype and shape).
func cuvilDecodeInto(t *Tensor, b string, name string) error {
	n := t.Len()
	if t.DType == String {
		s := t.Str()
		for j := 0; j < n; j++ {
			if len(b) < 4 || int(cuvilU32(b)) > len(b)-4 {
				return fmt.Errorf("weights.bin: string constant %q is truncated", name)
			}
			l := int(cuvilU32(b))
			// A copy: a string output may outlive a mapped file.
			s[j] = strings.Clone(b[4 : 4+l])
			b = b[4+l:]
		}
		return nil
	}
	u32 := func(j int) uint32 { return cuvilU32(b[4*j:]) }
	u64 := func(j int) uint64 { return uint64(cuvilU32(b[8*j:])) | uint64(cuvilU32(b[8*j+4:]))<<32 }
	switch d := t.Data.(type) {
	case []float32:
		for j := range d {
			d[j] = math.Float32frombits(u32(j))
		}
	case []float64:
		for j := range d {
			d[j] = math.Float64frombits(u64(j))
		}
	case []uint16:
		for j := range d {
			d[j] = uint16(b[2*j]) | uint16(b[2*j+1])<<8
		}
	case []int16:
		for j := range d {
			d[j] = int16(uint16(b[2*j]) | uint16(b[2*j+1])<<8)
		}
	case []int8:
		for j := range d {
			d[j] = int8(b[j])
		}
	case []uint8:
		copy(d, b)
	case []int32:
		for j := range d {
			d[j] = int32(u32(j))
		}
	case []uint32:
		for j := range d {
			d[j] = u32(j)
		}
	case []int64:
		for j := range d {
			d[j] = int64(u64(j))
		}
	case []uint64:
		for j := range d {
			d[j] = u64(j)
		}
	case []bool:
		for j := range d {
			d[j] = b[j] != 0
		}
	default:
		return fmt.Errorf("weights.bin: constant %q has unsupported dtype %s", name, t.DType.String())
	}
	return nil
}

// cuvilChecksum is the CRC-32 (Castagnoli) of a weights blob, the sum
// gen compiles into model.go.
func cuvilChecksum(blob string) uint32 {
	if blob == "" {
		return 0
	}
	return crc32.Checksum(unsafe.Slice(unsafe.StringData(blob), len(blob)), crc32.MakeTable(crc32.Castagnoli))
}

// cuvilU32 reads a little-endian uint32 at the start of b.
func cuvilU32(b string) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

func cuvilElemSize(dt DType) int {
	switch dt {
	case U8, I8, Bool, F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, U4, I4, F4E2M1, F8E8M0, U2, I2:
		// the 4- and 2-bit dtypes take a byte each in weights.bin
		return 1
	case U16, I16, F16, BF16:
		return 2
	case F32, I32, U32:
		return 4
	case F64, I64, U64:
		return 8
	}
	return 0
}

// cuvilCopyInto makes dst a copy of src, reusing dst's memory.
func cuvilCopyInto(dst, src *Tensor) {
	dst.Resize(src.DType, src.Shape...)
	switch d := dst.Data.(type) {
	case []float32:
		copy(d, src.Data.([]float32))
	case []float64:
		copy(d, src.Data.([]float64))
	case []uint16:
		copy(d, src.Data.([]uint16))
	case []int8:
		copy(d, src.Data.([]int8))
	case []uint8:
		copy(d, src.Data.([]uint8))
	case []int16:
		copy(d, src.Data.([]int16))
	case []int32:
		copy(d, src.Data.([]int32))
	case []int64:
		copy(d, src.Data.([]int64))
	case []uint32:
		copy(d, src.Data.([]uint32))
	case []uint64:
		copy(d, src.Data.([]uint64))
	case []bool:
		copy(d, src.Data.([]bool))
	case []string:
		copy(d, src.Data.([]string))
	}
}

// cuvilClone returns a copy of t that owns its memory.
func cuvilClone(t *Tensor) *Tensor {
	c := &Tensor{}
	CopyValue(c, t)
	return c
}

// cuvilAlloc returns a slice of n elements of dt's Go type: the buffer of
// a memory-plan slot.
func cuvilAlloc(dt DType, n int) any {
	var t Tensor
	t.Resize(dt, n)
	return t.Data
}

// cuvilViewAt returns elements [off, off+n) of an arena, with no capacity
// beyond them: a kernel that grew the value could not spill into its
// neighbours.
func cuvilViewAt(buf any, off, n int) any {
	switch d := buf.(type) {
	case []float32:
		return d[off : off+n : off+n]
	case []float64:
		return d[off : off+n : off+n]
	case []uint16:
		return d[off : off+n : off+n]
	case []int8:
		return d[off : off+n : off+n]
	case []uint8:
		return d[off : off+n : off+n]
	case []int16:
		return d[off : off+n : off+n]
	case []int32:
		return d[off : off+n : off+n]
	case []int64:
		return d[off : off+n : off+n]
	case []uint32:
		return d[off : off+n : off+n]
	case []uint64:
		return d[off : off+n : off+n]
	case []bool:
		return d[off : off+n : off+n]
	case []complex64:
		return d[off : off+n : off+n]
	case []complex128:
		return d[off : off+n : off+n]
	}
	panic(fmt.Sprintf("cuvilViewAt: unexpected buffer %T", buf))
}

// cuvilView returns the first n elements of a slot buffer. The view keeps
// the buffer's capacity; only one value lives in a slot at a time.
func cuvilView(buf any, n int) any {
	switch d := buf.(type) {
	case []float32:
		return d[:n]
	case []float64:
		return d[:n]
	case []uint16:
		return d[:n]
	case []int8:
		return d[:n]
	case []uint8:
		return d[:n]
	case []int16:
		return d[:n]
	case []int32:
		return d[:n]
	case []int64:
		return d[:n]
	case []uint32:
		return d[:n]
	case []uint64:
		return d[:n]
	case []bool:
		return d[:n]
	case []string:
		return d[:n]
	}
	panic(fmt.Sprintf("cuvilView: unexpected buffer %T", buf))
}

// The session's setup is data: model.go holds one table of node
// descriptors and one of memory-plan views, which NewSession walks, so
// that the generated code stays small to compile however many nodes the
// model has.

// cuvilNodeDesc is one kernel node: its identity, its inputs and outputs
// as cuvilRef references, and its attributes.
type cuvilNodeDesc struct {
	name     string
	op       string
	version  int
	in       []int32
	out      []int32
	attrList []cuvilAttr
	// hasAttrs: the node has attributes (Attrs is non-nil even when none
	// of them is stored, e.g. Optional's type).
	hasAttrs bool
}

// cuvilAttr is one attribute, typed: kind 0 int64 (i), 1 float32 (f), 2
// string (s), 3 []int64, 4 []float32, 5 []string, 6 a constant tensor
// (index i into the model's constants).
type cuvilAttr struct {
	name   string
	kind   uint8
	i      int64
	f      float32
	s      string
	ints   []int64
	floats []float32
	strs   []string
}

// A cuvilRef names a session tensor: -1 none, else index<<2 | where, where
// 0 the session's values, 1 its inputs, 2 the model's constants.
func cuvilRef(r int32, vals, inputs, consts []Tensor) *Tensor {
	if r < 0 {
		return nil
	}
	i := int(r >> 2)
	switch r & 3 {
	case 1:
		return &inputs[i]
	case 2:
		return &consts[i]
	}
	return &vals[i]
}

// cuvilSetupNodes fills nodes from their descriptors. The In and Out
// slices of all nodes share one backing array (each capped at its own
// length); attribute slices are copied, so that a session owns its
// attributes as it owns its tensors.
func cuvilSetupNodes(nodes []Node, descs []cuvilNodeDesc, vals, inputs, consts []Tensor, pool *WorkPool) {
	total := 0
	for i := range descs {
		total += len(descs[i].in) + len(descs[i].out)
	}
	refs := make([]*Tensor, total)
	for i := range descs {
		d := &descs[i]
		n := &nodes[i]
		n.Name, n.Op, n.Version, n.Pool = d.name, d.op, d.version, pool
		k := len(d.in)
		n.In = refs[:k:k]
		for j, r := range d.in {
			n.In[j] = cuvilRef(r, vals, inputs, consts)
		}
		refs = refs[k:]
		k = len(d.out)
		n.Out = refs[:k:k]
		for j, r := range d.out {
			n.Out[j] = cuvilRef(r, vals, inputs, consts)
		}
		refs = refs[k:]
		if !d.hasAttrs {
			continue
		}
		n.Attrs = make(Attrs, len(d.attrList))
		for _, a := range d.attrList {
			var v any
			switch a.kind {
			case 0:
				v = a.i
			case 1:
				v = a.f
			case 2:
				v = a.s
			case 3:
				v = append(make([]int64, 0, len(a.ints)), a.ints...)
			case 4:
				v = append(make([]float32, 0, len(a.floats)), a.floats...)
			case 5:
				v = append(make([]string, 0, len(a.strs)), a.strs...)
			case 6:
				v = &consts[a.i]
			}
			n.Attrs[a.name] = v
		}
	}
}

// cuvilViewDesc is one value of the memory plan: a view of n elements at
// offset off of arena number arena.
type cuvilViewDesc struct {
	val   int
	arena int
	dtype DType
	shape []int
	off   int
	n     int
}

// cuvilSetupViews makes the memory plan's values views of the arenas.
// Each value gets its own copy of its shape.
func cuvilSetupViews(vals []Tensor, arenas []any, views []cuvilViewDesc) {
	for i := range views {
		v := &views[i]
		vals[v.val] = Tensor{DType: v.dtype, Shape: append(make([]int, 0, len(v.shape)), v.shape...), Data: cuvilViewAt(arenas[v.arena], v.off, v.n)}
	}
}

//cuvil:model-go Everything below stands for what model.go declares, so that
// this file compiles and is tested in templates/; gen drops it on copy.

// cuvilSymNames are the symbolic dims of the inputs (model.go); here the
// one of gen_support_test.go's stand-in model.
var cuvilSymNames = []string{"n"}
