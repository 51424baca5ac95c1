package gguf

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
)

// KV is one metadata entry to write. Value may be a uint8…float64, bool,
// string, or a slice of one of those ([]string, []float32, []int32, …).
type KV struct {
	Key   string
	Value any
}

// TensorSpec is one tensor to write: its values are produced by Fill into a
// float32 slice of Elements() values and stored as Type.
type TensorSpec struct {
	Name string
	Dims []uint64 // ne0 first
	Type TensorType
	Fill func(dst []float32)
}

// Write writes a GGUF v3 file with the given metadata and tensors to path.
// Tensors are produced and written one at a time, so files larger than
// memory can be written.
func Write(path string, kvs []KV, tensors []TensorSpec) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write gguf %s: %w", path, err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("write gguf %s: %w", path, cerr)
		}
	}()
	if err := WriteTo(f, kvs, tensors); err != nil {
		return fmt.Errorf("write gguf %s: %w", path, err)
	}
	return nil
}

// WriteTo writes a GGUF v3 stream to w.
func WriteTo(w io.Writer, kvs []KV, tensors []TensorSpec) error {
	return writeTo(w, kvs, tensors, false)
}

// WriteSparse writes the header of a GGUF file and extends the file to its
// full size without writing tensor data (a sparse file of zeros): a large
// model for testing size and memory checks without using the disk.
func WriteSparse(path string, kvs []KV, tensors []TensorSpec) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write gguf %s: %w", path, err)
	}
	defer f.Close()
	if err := writeTo(f, kvs, tensors, true); err != nil {
		return fmt.Errorf("write gguf %s: %w", path, err)
	}
	end, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return fmt.Errorf("write gguf %s: %w", path, err)
	}
	var total uint64
	for _, t := range tensors {
		total += align(TensorInfo{Dims: t.Dims, Type: t.Type}.Bytes())
	}
	if err := f.Truncate(end + int64(total)); err != nil {
		return fmt.Errorf("write gguf %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write gguf %s: %w", path, err)
	}
	return nil
}

func writeTo(w io.Writer, kvs []KV, tensors []TensorSpec, sparse bool) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	cw := &countWriter{w: bw}
	le := binary.LittleEndian
	put := func(v any) { binary.Write(cw, le, v) }
	putStr := func(s string) { put(uint64(len(s))); io.WriteString(cw, s) }
	io.WriteString(cw, Magic)
	put(uint32(3))
	put(uint64(len(tensors)))
	put(uint64(len(kvs)))
	for _, kv := range kvs {
		putStr(kv.Key)
		if err := writeValue(cw, kv.Value, true); err != nil {
			return fmt.Errorf("key %s: %w", kv.Key, err)
		}
	}
	var off uint64
	for _, t := range tensors {
		info := TensorInfo{Name: t.Name, Dims: t.Dims, Type: t.Type}
		if !t.Type.Known() || info.Dims[0]%t.Type.BlockSize() != 0 {
			return fmt.Errorf("tensor %s: type %s does not fit dims %v", t.Name, t.Type, t.Dims)
		}
		putStr(t.Name)
		put(uint32(len(t.Dims)))
		for _, d := range t.Dims {
			put(d)
		}
		put(uint32(t.Type))
		put(off)
		off += align(info.Bytes())
	}
	cw.pad()
	if sparse {
		if cw.err != nil {
			return cw.err
		}
		return bw.Flush()
	}
	var buf []float32
	var out []byte
	for _, t := range tensors {
		info := TensorInfo{Name: t.Name, Dims: t.Dims, Type: t.Type}
		n := info.Elements()
		if uint64(cap(buf)) < n {
			buf = make([]float32, n)
		}
		buf = buf[:n]
		clear(buf)
		if t.Fill != nil {
			t.Fill(buf)
		}
		out = Encode(out[:0], buf, t.Type)
		if _, err := cw.Write(out); err != nil {
			return err
		}
		cw.pad()
	}
	if cw.err != nil {
		return cw.err
	}
	return bw.Flush()
}

func align(n uint64) uint64 { return (n + defaultAlign - 1) / defaultAlign * defaultAlign }

type countWriter struct {
	w   io.Writer
	n   uint64
	err error
}

func (c *countWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	c.n += uint64(n)
	c.err = err
	return n, err
}

func (c *countWriter) pad() {
	if r := c.n % defaultAlign; r != 0 {
		c.Write(make([]byte, defaultAlign-r))
	}
}

func valueType(v any) (uint32, bool) {
	switch v.(type) {
	case uint8:
		return typeUint8, true
	case int8:
		return typeInt8, true
	case uint16:
		return typeUint16, true
	case int16:
		return typeInt16, true
	case uint32:
		return typeUint32, true
	case int32:
		return typeInt32, true
	case float32:
		return typeFloat32, true
	case bool:
		return typeBool, true
	case string:
		return typeString, true
	case uint64:
		return typeUint64, true
	case int64:
		return typeInt64, true
	case float64:
		return typeFloat64, true
	}
	return 0, false
}

func writeValue(w io.Writer, v any, withType bool) error {
	le := binary.LittleEndian
	arr := func(et uint32, n int, each func(i int) any) error {
		if withType {
			binary.Write(w, le, typeArray)
		}
		binary.Write(w, le, et)
		binary.Write(w, le, uint64(n))
		for i := 0; i < n; i++ {
			if err := writeValue(w, each(i), false); err != nil {
				return err
			}
		}
		return nil
	}
	switch x := v.(type) {
	case []string:
		return arr(typeString, len(x), func(i int) any { return x[i] })
	case []float32:
		return arr(typeFloat32, len(x), func(i int) any { return x[i] })
	case []int32:
		return arr(typeInt32, len(x), func(i int) any { return x[i] })
	case []uint32:
		return arr(typeUint32, len(x), func(i int) any { return x[i] })
	case []bool:
		return arr(typeBool, len(x), func(i int) any { return x[i] })
	}
	t, ok := valueType(v)
	if !ok {
		return fmt.Errorf("unsupported metadata value %T", v)
	}
	if withType {
		binary.Write(w, le, t)
	}
	switch x := v.(type) {
	case string:
		binary.Write(w, le, uint64(len(x)))
		_, err := io.WriteString(w, x)
		return err
	case bool:
		b := uint8(0)
		if x {
			b = 1
		}
		return binary.Write(w, le, b)
	default:
		return binary.Write(w, le, v)
	}
}

// Encode appends the encoding of vals as type t to dst. Supported: F32, F16,
// Q8_0 and Q4_0 (ggml's reference quantisers).
func Encode(dst []byte, vals []float32, t TensorType) []byte {
	le := binary.LittleEndian
	switch t {
	case TypeF32:
		for _, v := range vals {
			dst = le.AppendUint32(dst, math.Float32bits(v))
		}
	case TypeF16:
		for _, v := range vals {
			dst = le.AppendUint16(dst, F32ToF16(v))
		}
	case TypeQ8_0:
		for b := 0; b+32 <= len(vals); b += 32 {
			blk := vals[b : b+32]
			var amax float32
			for _, v := range blk {
				amax = max(amax, float32(math.Abs(float64(v))))
			}
			d := amax / 127
			id := float32(0)
			if d != 0 {
				id = 1 / d
			}
			dst = le.AppendUint16(dst, F32ToF16(d))
			for _, v := range blk {
				dst = append(dst, byte(int8(math.Round(float64(v*id)))))
			}
		}
	case TypeQ4_0:
		for b := 0; b+32 <= len(vals); b += 32 {
			blk := vals[b : b+32]
			var amax, mx float32
			for _, v := range blk {
				if a := float32(math.Abs(float64(v))); a > amax {
					amax, mx = a, v
				}
			}
			d := mx / -8
			id := float32(0)
			if d != 0 {
				id = 1 / d
			}
			dst = le.AppendUint16(dst, F32ToF16(d))
			for j := 0; j < 16; j++ {
				x0 := min(15, int8(blk[j]*id+8.5))
				x1 := min(15, int8(blk[j+16]*id+8.5))
				dst = append(dst, byte(x0)|byte(x1)<<4)
			}
		}
	default:
		panic(fmt.Sprintf("gguf.Encode: unsupported type %s", t))
	}
	return dst
}

// F32ToF16 converts to IEEE half precision, rounding to nearest even.
func F32ToF16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23&0xff) - 127 + 15
	mant := b & 0x7fffff
	switch {
	case b&0x7fffffff == 0:
		return sign
	case int32(b>>23&0xff) == 0xff: // inf or nan
		if mant != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	case exp >= 0x1f:
		return sign | 0x7c00
	case exp <= 0:
		if exp < -10 {
			return sign
		}
		mant |= 0x800000
		shift := uint32(14 - exp)
		half := uint32(1) << (shift - 1)
		r := mant >> shift
		rem := mant & (1<<shift - 1)
		if rem > half || rem == half && r&1 == 1 {
			r++
		}
		return sign | uint16(r)
	}
	r := uint32(exp)<<10 | mant>>13
	rem := mant & 0x1fff
	if rem > 0x1000 || rem == 0x1000 && r&1 == 1 {
		r++
	}
	return sign | uint16(r)
}
