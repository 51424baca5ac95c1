package gguf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func TestWriteReadLlama(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tiny.gguf")
	c := TinyLlama()
	c.Type = TypeQ8_0
	if err := WriteLlama(path, c); err != nil {
		t.Fatal(err)
	}
	g, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if g.Architecture() != "llama" || g.Name() != "codeloom-tiny" || g.ContextLength() != 2048 || g.EmbeddingLength() != 64 {
		t.Fatalf("metadata: %s %s %d %d", g.Architecture(), g.Name(), g.ContextLength(), g.EmbeddingLength())
	}
	if g.FileType() != "Q8_0" {
		t.Fatalf("file type %q", g.FileType())
	}
	if g.ChatTemplate() != ChatMLTemplate {
		t.Fatalf("chat template %q", g.ChatTemplate())
	}
	if n := g.ArrayLen("tokenizer.ggml.tokens"); n != BaseVocab {
		t.Fatalf("vocab %d", n)
	}
	want := uint64(2*64*BaseVocab + 64 + 2*(2*64+64*64*2+64*32*2+3*64*128))
	if g.ParameterCount() != want {
		t.Fatalf("params %d want %d", g.ParameterCount(), want)
	}
	if len(g.Tensors) != 3+2*9 {
		t.Fatalf("tensors %d", len(g.Tensors))
	}
}

func TestReadRejectsBadFiles(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.gguf")
	if err := WriteLlama(good, TinyLlama()); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(good)
	cases := map[string]struct {
		data []byte
		want error
	}{
		"empty":         {nil, ErrNotGGUF},
		"text":          {[]byte("hello world, not a model"), ErrNotGGUF},
		"header only":   {data[:20], ErrTruncated},
		"half metadata": {data[:len(data)/20], ErrTruncated},
		"missing data":  {data[:len(data)-100], ErrTruncated},
		"bad version":   {append([]byte("GGUF\x09\x00\x00\x00"), data[8:]...), ErrCorrupt},
		"huge kv count": {append(append([]byte{}, data[:16]...), append([]byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}, data[24:]...)...), ErrCorrupt},
	}
	for name, c := range cases {
		p := filepath.Join(dir, name)
		os.WriteFile(p, c.data, 0o644)
		_, err := ReadFile(p)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: got %v, want %v", name, err, c.want)
		}
	}
	if _, err := ReadFile(filepath.Join(dir, "absent.gguf")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("absent: %v", err)
	}
	if _, err := ReadFile(dir); err == nil {
		t.Errorf("directory accepted")
	}
}

func TestF16(t *testing.T) {
	cases := map[float32]uint16{0: 0, 1: 0x3c00, -2: 0xc000, 65504: 0x7bff, 1e9: 0x7c00, 6.1035156e-05: 0x0400, 5.9604645e-08: 0x0001, 0.333333: 0x3555}
	for f, want := range cases {
		if got := F32ToF16(f); got != want {
			t.Errorf("F32ToF16(%g) = %#04x, want %#04x", f, got, want)
		}
	}
	if F32ToF16(float32(math.NaN()))&0x7c00 != 0x7c00 {
		t.Error("NaN")
	}
}

func TestQuantiseRoundTrip(t *testing.T) {
	vals := make([]float32, 64)
	for i := range vals {
		vals[i] = float32(i-32) / 10
	}
	q8 := Encode(nil, vals, TypeQ8_0)
	q4 := Encode(nil, vals, TypeQ4_0)
	if len(q8) != 2*34 || len(q4) != 2*18 {
		t.Fatalf("sizes %d %d", len(q8), len(q4))
	}
	// decode q8_0 block 0 and compare
	d := f16ToF32(uint16(q8[0]) | uint16(q8[1])<<8)
	for j := 0; j < 32; j++ {
		got := d * float32(int8(q8[2+j]))
		if math.Abs(float64(got-vals[j])) > 0.02 {
			t.Fatalf("q8 value %d: %g vs %g", j, got, vals[j])
		}
	}
	d4 := f16ToF32(uint16(q4[0]) | uint16(q4[1])<<8)
	for j := 0; j < 16; j++ {
		lo := float32(int(q4[2+j]&0xf)-8) * d4
		hi := float32(int(q4[2+j]>>4)-8) * d4
		if math.Abs(float64(lo-vals[j])) > 0.25 || math.Abs(float64(hi-vals[j+16])) > 0.25 {
			t.Fatalf("q4 value %d: %g/%g vs %g/%g", j, lo, hi, vals[j], vals[j+16])
		}
	}
}

func f16ToF32(h uint16) float32 {
	sign := float32(1)
	if h&0x8000 != 0 {
		sign = -1
	}
	exp := int(h>>10) & 0x1f
	mant := float64(h & 0x3ff)
	if exp == 0 {
		return sign * float32(math.Ldexp(mant, -24))
	}
	return sign * float32(math.Ldexp(1+mant/1024, exp-15))
}

func TestSupportedArchitecture(t *testing.T) {
	if !SupportedArchitecture("llama") || !SupportedArchitecture("qwen2") || SupportedArchitecture("gptoss") {
		t.Fatal("architecture table")
	}
}

func TestDuplicateTokensCounted(t *testing.T) {
	p := filepath.Join(t.TempDir(), "d.gguf")
	long := make([]string, 2000) // longer than the kept-array limit
	for i := range long {
		long[i] = string(rune('a'+i%26)) + string(rune('A'+i/26))
	}
	long[1999] = long[0]
	if err := Write(p, []KV{{Key: "tokenizer.ggml.tokens", Value: long}}, nil); err != nil {
		t.Fatal(err)
	}
	g, err := ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if g.DuplicateTokens != 1 || g.ArrayLen("tokenizer.ggml.tokens") != 2000 {
		t.Fatalf("dups %d len %d", g.DuplicateTokens, g.ArrayLen("tokenizer.ggml.tokens"))
	}
}

// FuzzRead: no input makes the header reader panic, hang or allocate wildly.
func FuzzRead(f *testing.F) {
	var buf bytes.Buffer
	c := TinyLlama()
	c.Vocab = BaseVocab
	if err := WriteTo(&buf, []KV{{Key: "general.architecture", Value: "llama"}, {Key: "a", Value: []int32{1, 2}}, {Key: "s", Value: "x"}},
		[]TensorSpec{{Name: "w", Dims: []uint64{32, 2}, Type: TypeQ8_0}}); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte("GGUF\x03\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := Read(bytes.NewReader(data), int64(len(data)))
		if err == nil {
			// a header that parses has all its tensor data inside the input
			for _, ti := range g.Tensors {
				if g.DataOffset+ti.Offset+ti.Bytes() > uint64(len(data)) {
					t.Fatalf("tensor %s beyond the data", ti.Name)
				}
			}
		}
	})
}

// A corrupt string length in a tiny file is rejected as truncated before a
// buffer of that length is allocated.
func TestReadHugeStringLengthAllocatesLittle(t *testing.T) {
	var b []byte
	b = append(b, "GGUF"...)
	b = binary.LittleEndian.AppendUint32(b, 3)
	b = binary.LittleEndian.AppendUint64(b, 0)      // tensors
	b = binary.LittleEndian.AppendUint64(b, 1)      // metadata keys
	b = binary.LittleEndian.AppendUint64(b, 60<<20) // key length, under maxStringLen
	b = append(b, "general.name"...)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := Read(bytes.NewReader(b), int64(len(b)))
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrTruncated) {
		t.Fatalf("got %v, want %v", err, ErrTruncated)
	}
	if d := after.TotalAlloc - before.TotalAlloc; d > 8<<20 {
		t.Errorf("allocated %d bytes for a %d-byte file", d, len(b))
	}
}
