package codegraph

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

// recordingStore is a BlobStore that keeps, for each PutBlobs call, the
// values as they were when the call was made, and the latest values.
type recordingStore struct {
	calls []map[string][]byte // values copied at the call
	live  map[string][]byte   // the slices given (checked after the save)
}

func (s *recordingStore) GetBlob(string, string) ([]byte, error) { return nil, nil }
func (s *recordingStore) PutBlobs(bucket string, puts map[string][]byte, _ []string) error {
	if bucket != cacheFilesBucket {
		return nil
	}
	cp := map[string][]byte{}
	for k, v := range puts {
		cp[k] = bytes.Clone(v)
		s.live[k] = v
	}
	s.calls = append(s.calls, cp)
	return nil
}
func (s *recordingStore) ForEachBlob(string, func(string, []byte) error) error { return nil }
func (s *recordingStore) DeleteBucket(string) error                            { return nil }

// A full cache save encodes a batch's records into shared buffers: every
// entry is exactly encodeFileData's bytes, when handed to the store and
// after the whole save (a later record never overwrites an earlier one's
// bytes), over several batches, with records larger than a batch among them.
func TestFullCacheSaveBatches(t *testing.T) {
	puts := map[string]*fileData{}
	for i := 0; i < 120; i++ {
		fd := &fileData{Path: fmt.Sprintf("m%03d.py", i), Lang: "python", Size: int64(i), Lines: i}
		doc := strings.Repeat(fmt.Sprintf("doc %d ", i), 1+(i%7)*4000) // 6 B … 170 KB
		if i%40 == 7 {
			doc = strings.Repeat("x", cacheBatchBytes+1000) // more than a batch
		}
		fd.Defs = []defRec{{Kind: KindFunction, Name: fmt.Sprintf("f%d", i), Parent: -1, Doc: doc, Sig: "()"}}
		fd.Refs = packRefs([]refRec{{Kind: refCall, Name: "g", Def: 0, Line: 2}})
		puts[fd.Path] = fd
	}
	st := &recordingStore{live: map[string][]byte{}}
	p := &Project{root: t.TempDir(), log: slog.Default(), opts: Options{Store: st}}
	if err := p.saveCache(puts, nil, true); err != nil {
		t.Fatal(err)
	}
	if len(st.calls) < 3 {
		t.Fatalf("%d store calls, want several batches", len(st.calls))
	}
	seen := 0
	for _, call := range st.calls {
		for k, v := range call {
			seen++
			want := encodeFileData(puts[k])
			if !bytes.Equal(v, want) {
				t.Fatalf("%s: entry given to the store differs from encodeFileData", k)
			}
			if !bytes.Equal(st.live[k], want) {
				t.Fatalf("%s: entry's bytes changed after it was given to the store", k)
			}
			if fd, err := decodeFileData(v); err != nil || fd.Defs[0].Doc != puts[k].Defs[0].Doc {
				t.Fatalf("%s: does not decode back (%v)", k, err)
			}
		}
	}
	if seen != len(puts) {
		t.Fatalf("%d entries written, want %d", seen, len(puts))
	}
}
