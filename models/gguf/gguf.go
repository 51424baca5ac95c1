// Package gguf reads and writes GGUF model files in pure Go: the header
// (metadata and tensor table) is read without touching the weights, and the
// file is validated (magic, version, sane sizes, tensor data inside the file)
// before any native code sees it. The writer produces small models for tests
// and benchmarks.
package gguf

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"
)

// Magic is the first four bytes of every GGUF file.
const Magic = "GGUF"

// Value types of GGUF metadata.
const (
	typeUint8   uint32 = 0
	typeInt8    uint32 = 1
	typeUint16  uint32 = 2
	typeInt16   uint32 = 3
	typeUint32  uint32 = 4
	typeInt32   uint32 = 5
	typeFloat32 uint32 = 6
	typeBool    uint32 = 7
	typeString  uint32 = 8
	typeArray   uint32 = 9
	typeUint64  uint32 = 10
	typeInt64   uint32 = 11
	typeFloat64 uint32 = 12
)

// Limits protecting the reader against corrupt headers.
const (
	maxKV         = 1 << 16
	maxTensors    = 1 << 20
	maxStringLen  = 64 << 20
	maxArrayLen   = 1 << 26
	maxDims       = 4
	keepArrayLen  = 1 << 10 // arrays longer than this are counted, not kept
	defaultAlign  = 32
	maxHeaderSize = 1 << 30
)

// ErrNotGGUF is returned for files that do not start with the GGUF magic.
var ErrNotGGUF = errors.New("not a GGUF file")

// ErrTruncated is returned when the file ends before its header or tensor data does.
var ErrTruncated = errors.New("GGUF file is truncated")

// ErrCorrupt is returned for headers with impossible values.
var ErrCorrupt = errors.New("GGUF header is corrupt")

// Array is a metadata array. Elements are kept only for short arrays
// (Values is nil for long ones, e.g. a tokenizer's vocabulary); Len is always set.
type Array struct {
	Type   uint32
	Len    uint64
	Values []any
}

// TensorInfo describes one tensor of the file.
type TensorInfo struct {
	Name   string
	Dims   []uint64 // ne0 first
	Type   TensorType
	Offset uint64 // relative to the start of the data section
}

// Elements is the number of values in the tensor.
func (t TensorInfo) Elements() uint64 {
	n := uint64(1)
	for _, d := range t.Dims {
		n *= d
	}
	return n
}

// Bytes is the tensor's size in the file.
func (t TensorInfo) Bytes() uint64 {
	return t.Type.RowBytes(t.Elements())
}

// File is a parsed GGUF header.
type File struct {
	Version    uint32
	KV         map[string]any // uint8…float64, bool, string or Array
	Tensors    []TensorInfo
	Alignment  uint64
	DataOffset uint64 // where tensor data starts
	Size       int64  // file size
	// DuplicateTokens counts repeated strings in tokenizer.ggml.tokens
	// (llama.cpp aborts the process on such a vocabulary).
	DuplicateTokens int
}

// ReadFile reads and validates the header of the GGUF file at path.
func ReadFile(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("gguf %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("gguf %s: %w", path, err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("gguf %s: not a regular file", path)
	}
	g, err := Read(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("gguf %s: %w", path, err)
	}
	return g, nil
}

// Read parses a GGUF header from r, whose total size is size bytes, and
// checks that every tensor's data lies within the file.
func Read(r io.Reader, size int64) (*File, error) {
	cr := &countReader{r: bufio.NewReaderSize(r, 1<<16), size: size}
	var magic [4]byte
	if _, err := io.ReadFull(cr, magic[:]); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, ErrNotGGUF
		}
		return nil, err
	}
	if string(magic[:]) != Magic {
		return nil, ErrNotGGUF
	}
	g := &File{KV: map[string]any{}, Alignment: defaultAlign, Size: size}
	var err error
	if g.Version, err = readU32(cr); err != nil {
		return nil, eof(err)
	}
	if g.Version < 2 || g.Version > 3 {
		return nil, fmt.Errorf("%w: unsupported GGUF version %d", ErrCorrupt, g.Version)
	}
	nTensors, err := readU64(cr)
	if err != nil {
		return nil, eof(err)
	}
	nKV, err := readU64(cr)
	if err != nil {
		return nil, eof(err)
	}
	if nTensors > maxTensors || nKV > maxKV {
		return nil, fmt.Errorf("%w: %d tensors, %d metadata keys", ErrCorrupt, nTensors, nKV)
	}
	for i := uint64(0); i < nKV; i++ {
		key, err := readString(cr)
		if err != nil {
			return nil, eof(err)
		}
		typ, err := readU32(cr)
		if err != nil {
			return nil, eof(err)
		}
		var dups *int
		if key == "tokenizer.ggml.tokens" {
			dups = &g.DuplicateTokens
		}
		v, err := readValue(cr, typ, true, dups)
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", key, eof(err))
		}
		g.KV[key] = v
	}
	if a, ok := g.KV["general.alignment"]; ok {
		n, ok := toUint(a)
		if !ok || n == 0 || n&(n-1) != 0 || n > 1<<20 {
			return nil, fmt.Errorf("%w: general.alignment %v", ErrCorrupt, a)
		}
		g.Alignment = n
	}
	g.Tensors = make([]TensorInfo, 0, min(nTensors, 1<<10)) // nTensors is untrusted
	for i := uint64(0); i < nTensors; i++ {
		var t TensorInfo
		if t.Name, err = readString(cr); err != nil {
			return nil, eof(err)
		}
		nd, err := readU32(cr)
		if err != nil {
			return nil, eof(err)
		}
		if nd == 0 || nd > maxDims {
			return nil, fmt.Errorf("%w: tensor %q has %d dimensions", ErrCorrupt, t.Name, nd)
		}
		elems := uint64(1)
		for d := uint32(0); d < nd; d++ {
			n, err := readU64(cr)
			if err != nil {
				return nil, eof(err)
			}
			if n == 0 || n > 1<<40 || elems > math.MaxUint64/n {
				return nil, fmt.Errorf("%w: tensor %q dimension %d", ErrCorrupt, t.Name, n)
			}
			elems *= n
			t.Dims = append(t.Dims, n)
		}
		typ, err := readU32(cr)
		if err != nil {
			return nil, eof(err)
		}
		t.Type = TensorType(typ)
		if !t.Type.Known() {
			return nil, fmt.Errorf("%w: tensor %q has unknown type %d", ErrCorrupt, t.Name, typ)
		}
		if bs := t.Type.BlockSize(); t.Dims[0]%bs != 0 {
			return nil, fmt.Errorf("%w: tensor %q row of %d is not a multiple of %s block size %d", ErrCorrupt, t.Name, t.Dims[0], t.Type, bs)
		}
		if t.Offset, err = readU64(cr); err != nil {
			return nil, eof(err)
		}
		if t.Offset%g.Alignment != 0 {
			return nil, fmt.Errorf("%w: tensor %q offset %d not aligned", ErrCorrupt, t.Name, t.Offset)
		}
		g.Tensors = append(g.Tensors, t)
	}
	if cr.n > maxHeaderSize {
		return nil, fmt.Errorf("%w: header of %d bytes", ErrCorrupt, cr.n)
	}
	g.DataOffset = (uint64(cr.n) + g.Alignment - 1) / g.Alignment * g.Alignment
	var end uint64 = g.DataOffset
	for _, t := range g.Tensors {
		e := g.DataOffset + t.Offset + t.Bytes()
		if e < g.DataOffset+t.Offset {
			return nil, fmt.Errorf("%w: tensor %q size overflows", ErrCorrupt, t.Name)
		}
		end = max(end, e)
	}
	if size >= 0 && end > uint64(size) {
		return nil, fmt.Errorf("%w: tensor data needs %d bytes, file has %d", ErrTruncated, end, size)
	}
	return g, nil
}

// eof maps end-of-file errors inside the header to ErrTruncated.
func eof(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return ErrTruncated
	}
	return err
}

type countReader struct {
	r    *bufio.Reader
	n    int64
	size int64 // total size of the input, < 0 when unknown
}

// fits reports whether n more bytes can still be read from the input, so a
// corrupt length is rejected before a buffer of that length is allocated.
func (c *countReader) fits(n uint64) bool {
	return c.size < 0 || n <= uint64(max(c.size-c.n, 0))
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func (c *countReader) discard(n uint64) error {
	for n > 0 {
		k := int(min(n, 1<<20))
		d, err := c.r.Discard(k)
		c.n += int64(d)
		if err != nil {
			return err
		}
		n -= uint64(d)
	}
	return nil
}

func readU32(r io.Reader) (uint32, error) {
	var b [4]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b[:]), nil
}

func readU64(r io.Reader) (uint64, error) {
	var b [8]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b[:]), nil
}

func readString(r *countReader) (string, error) {
	n, err := readU64(r)
	if err != nil {
		return "", err
	}
	if n > maxStringLen {
		return "", fmt.Errorf("%w: string of %d bytes", ErrCorrupt, n)
	}
	if !r.fits(n) {
		return "", io.ErrUnexpectedEOF
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return "", err
	}
	return string(b), nil
}

// scalarSize is the byte size of fixed-size value types (0 for others).
func scalarSize(typ uint32) uint64 {
	switch typ {
	case typeUint8, typeInt8, typeBool:
		return 1
	case typeUint16, typeInt16:
		return 2
	case typeUint32, typeInt32, typeFloat32:
		return 4
	case typeUint64, typeInt64, typeFloat64:
		return 8
	}
	return 0
}

// readValue reads a value of type typ. For a string array, dups (when
// non-nil) receives the number of repeated strings.
func readValue(r *countReader, typ uint32, top bool, dups *int) (any, error) {
	switch typ {
	case typeString:
		return readString(r)
	case typeArray:
		if !top {
			return nil, fmt.Errorf("%w: nested array", ErrCorrupt)
		}
		et, err := readU32(r)
		if err != nil {
			return nil, err
		}
		n, err := readU64(r)
		if err != nil {
			return nil, err
		}
		if n > maxArrayLen {
			return nil, fmt.Errorf("%w: array of %d elements", ErrCorrupt, n)
		}
		a := Array{Type: et, Len: n}
		if dups != nil && et == typeString {
			seen := make(map[string]struct{}, n)
			for i := uint64(0); i < n; i++ {
				s, err := readString(r)
				if err != nil {
					return nil, err
				}
				if _, ok := seen[s]; ok {
					*dups++
				}
				seen[s] = struct{}{}
				if n <= keepArrayLen {
					a.Values = append(a.Values, s)
				}
			}
			return a, nil
		}
		if n > keepArrayLen {
			if sz := scalarSize(et); sz > 0 {
				return a, r.discard(sz * n)
			}
			if et != typeString {
				return nil, fmt.Errorf("%w: array of type %d", ErrCorrupt, et)
			}
			for i := uint64(0); i < n; i++ {
				l, err := readU64(r)
				if err != nil {
					return nil, err
				}
				if l > maxStringLen {
					return nil, fmt.Errorf("%w: string of %d bytes", ErrCorrupt, l)
				}
				if err := r.discard(l); err != nil {
					return nil, err
				}
			}
			return a, nil
		}
		a.Values = make([]any, 0, n)
		for i := uint64(0); i < n; i++ {
			v, err := readValue(r, et, false, nil)
			if err != nil {
				return nil, err
			}
			a.Values = append(a.Values, v)
		}
		return a, nil
	}
	var b [8]byte
	sz := scalarSize(typ)
	if sz == 0 {
		return nil, fmt.Errorf("%w: unknown value type %d", ErrCorrupt, typ)
	}
	if _, err := io.ReadFull(r, b[:sz]); err != nil {
		return nil, err
	}
	le := binary.LittleEndian
	switch typ {
	case typeUint8:
		return b[0], nil
	case typeInt8:
		return int8(b[0]), nil
	case typeBool:
		return b[0] != 0, nil
	case typeUint16:
		return le.Uint16(b[:]), nil
	case typeInt16:
		return int16(le.Uint16(b[:])), nil
	case typeUint32:
		return le.Uint32(b[:]), nil
	case typeInt32:
		return int32(le.Uint32(b[:])), nil
	case typeFloat32:
		return math.Float32frombits(le.Uint32(b[:])), nil
	case typeUint64:
		return le.Uint64(b[:]), nil
	case typeInt64:
		return int64(le.Uint64(b[:])), nil
	default: // typeFloat64
		return math.Float64frombits(le.Uint64(b[:])), nil
	}
}

func toUint(v any) (uint64, bool) {
	switch x := v.(type) {
	case uint8:
		return uint64(x), true
	case uint16:
		return uint64(x), true
	case uint32:
		return uint64(x), true
	case uint64:
		return x, true
	case int8:
		return uint64(x), x >= 0
	case int16:
		return uint64(x), x >= 0
	case int32:
		return uint64(x), x >= 0
	case int64:
		return uint64(x), x >= 0
	}
	return 0, false
}

// String returns the string value of key ("" when absent or not a string).
func (g *File) String(key string) string {
	s, _ := g.KV[key].(string)
	return s
}

// Uint returns the unsigned integer value of key.
func (g *File) Uint(key string) (uint64, bool) {
	return toUint(g.KV[key])
}

// ArrayLen returns the length of the array value of key (0 when absent).
func (g *File) ArrayLen(key string) uint64 {
	a, _ := g.KV[key].(Array)
	return a.Len
}

// Architecture is general.architecture.
func (g *File) Architecture() string { return g.String("general.architecture") }

// Name is general.name (may be empty).
func (g *File) Name() string { return g.String("general.name") }

// ChatTemplate is tokenizer.chat_template (may be empty).
func (g *File) ChatTemplate() string { return g.String("tokenizer.chat_template") }

// ContextLength is <arch>.context_length (0 when absent).
func (g *File) ContextLength() int {
	n, _ := g.Uint(g.Architecture() + ".context_length")
	return int(n)
}

// EmbeddingLength is <arch>.embedding_length (0 when absent).
func (g *File) EmbeddingLength() int {
	n, _ := g.Uint(g.Architecture() + ".embedding_length")
	return int(n)
}

// ParameterCount is the total number of values in all tensors.
func (g *File) ParameterCount() uint64 {
	var n uint64
	for _, t := range g.Tensors {
		n += t.Elements()
	}
	return n
}

// TensorBytes is the total size of the tensor data.
func (g *File) TensorBytes() uint64 {
	var n uint64
	for _, t := range g.Tensors {
		n += t.Bytes()
	}
	return n
}

// FileType names the quantisation: general.file_type when present, else the
// most common tensor type weighted by size.
func (g *File) FileType() string {
	if n, ok := g.Uint("general.file_type"); ok {
		if s, ok := fileTypes[n]; ok {
			return s
		}
		return fmt.Sprintf("type %d", n)
	}
	bytes := map[TensorType]uint64{}
	for _, t := range g.Tensors {
		bytes[t.Type] += t.Bytes()
	}
	var best TensorType
	var bestN uint64
	types := make([]TensorType, 0, len(bytes))
	for t := range bytes {
		types = append(types, t)
	}
	sort.Slice(types, func(i, j int) bool { return types[i] < types[j] })
	for _, t := range types {
		if bytes[t] > bestN {
			best, bestN = t, bytes[t]
		}
	}
	if bestN == 0 {
		return ""
	}
	return strings.ToUpper(best.String())
}

// fileTypes maps llama.cpp's llama_ftype to names.
var fileTypes = map[uint64]string{
	0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1",
	10: "Q2_K", 11: "Q3_K_S", 12: "Q3_K_M", 13: "Q3_K_L", 14: "Q4_K_S", 15: "Q4_K_M",
	16: "Q5_K_S", 17: "Q5_K_M", 18: "Q6_K", 19: "IQ2_XXS", 20: "IQ2_XS", 21: "Q2_K_S",
	22: "IQ3_XS", 23: "IQ3_XXS", 24: "IQ1_S", 25: "IQ4_NL", 26: "IQ3_S", 27: "IQ3_M",
	28: "IQ2_S", 29: "IQ2_M", 30: "IQ4_XS", 31: "IQ1_M", 32: "BF16", 36: "TQ1_0", 37: "TQ2_0",
	38: "MXFP4_MOE",
}
