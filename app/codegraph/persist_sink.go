package codegraph

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
)

// snapHeadSize is where the first section starts: after the magic and the
// directory (numSections entries and its checksum), 8-byte aligned.
var snapHeadSize = align8(len(snapMagic) + 4 + numSections*dirEntrySize + 4)

// snapFileW is what a snapshot is laid out on: a file, or memFile.
type snapFileW interface {
	io.Writer
	io.WriterAt
}

// snapSink lays a snapshot out while it is encoded: each section is
// written (8-byte aligned, checksummed on the way) as soon as it is made,
// so the encoder can drop it before making the next one; the file is
// never held whole. The directory at the start is reserved first and
// filled in last (finish), so sections may come in any order (the reader
// goes by the directory's offsets). Errors are kept: the first one is
// returned by finish.
type snapSink struct {
	f     snapFileW
	w     *bufio.Writer
	off   int64 // bytes written so far
	cur   int   // the section being written (0 before the first)
	begun int
	sec   [numSections + 1]struct {
		off, n int64
		crc    uint32
		begun  bool
		maxAdd int // the largest piece added (tests)
	}
	hook func(string) // tests: told "snapshot-half-written" once half of the sections are begun
	err  error
}

func newSnapSink(f snapFileW, hook func(string)) *snapSink {
	s := &snapSink{f: f, w: bufio.NewWriterSize(f, 1<<20), hook: hook}
	s.write(make([]byte, snapHeadSize))
	return s
}

func (s *snapSink) write(b []byte) {
	if s.err != nil {
		return
	}
	n, err := s.w.Write(b)
	s.off += int64(n)
	s.err = err
}

// add appends b to section id; the sections are written one after the
// other (adding to a section ends the previous one), each at most once.
// b may be reused as soon as add returns.
func (s *snapSink) add(id int, b []byte) {
	if id != s.cur {
		if id < 1 || id > numSections || s.sec[id].begun {
			if s.err == nil {
				s.err = fmt.Errorf("encode graph: section %d written twice or unknown", id)
			}
			return
		}
		var zeros [8]byte
		s.write(zeros[:align8(int(s.off))-int(s.off)])
		s.cur, s.begun = id, s.begun+1
		s.sec[id].begun, s.sec[id].off = true, s.off
		if s.begun > numSections/2 && s.hook != nil {
			s.hook("snapshot-half-written") // the file has no directory yet
			s.hook = nil
		}
	}
	sec := &s.sec[id]
	sec.crc = crc32.Update(sec.crc, castagnoli, b)
	sec.n += int64(len(b))
	sec.maxAdd = max(sec.maxAdd, len(b))
	s.write(b)
}

// finish writes what is buffered and the directory. A section never added
// is empty.
func (s *snapSink) finish() error {
	if s.err != nil {
		return s.err
	}
	if err := s.w.Flush(); err != nil {
		return err
	}
	head := make([]byte, 0, snapHeadSize)
	head = append(head, snapMagic...)
	head = binary.LittleEndian.AppendUint32(head, numSections)
	for id := 1; id <= numSections; id++ {
		sec := s.sec[id]
		if !sec.begun {
			sec.off = int64(snapHeadSize)
		}
		head = binary.LittleEndian.AppendUint32(head, uint32(id))
		head = binary.LittleEndian.AppendUint32(head, sec.crc)
		head = binary.LittleEndian.AppendUint64(head, uint64(sec.off))
		head = binary.LittleEndian.AppendUint64(head, uint64(sec.n))
	}
	head = binary.LittleEndian.AppendUint32(head, crc32.Checksum(head, castagnoli))
	_, err := s.f.WriteAt(head, 0)
	return err
}

// memFile is a snapFileW in memory (tests, encodeSnapshot).
type memFile struct{ b []byte }

func (m *memFile) Write(p []byte) (int, error) {
	m.b = append(m.b, p...)
	return len(p), nil
}

func (m *memFile) WriteAt(p []byte, off int64) (int, error) {
	if off < 0 || off+int64(len(p)) > int64(len(m.b)) {
		return 0, fmt.Errorf("memFile: write at %d past the end (%d)", off, len(m.b))
	}
	return copy(m.b[off:], p), nil
}

// writeAtomic makes path's new content with fill through a synced
// temporary file in the same folder and a rename, so a reader (or a kill
// at any moment) sees either the old or the new complete file. hook
// (tests) is told "snapshot-synced" and "snapshot-renamed".
func writeAtomic(path string, hook func(string), fill func(f *os.File) error) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	// Locked while it exists, so a later open can tell it from one a
	// killed writer left (persist_tmp.go).
	f, err := createLockedTemp(dir, filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err := fill(f); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if !renameOpenTemp {
		if err := f.Close(); err != nil {
			return err
		}
	}
	if hook != nil {
		hook("snapshot-synced")
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	ok = true
	if renameOpenTemp {
		// Closed (and unlocked) only now that it has its final name.
		if err := f.Close(); err != nil {
			return err
		}
	}
	if hook != nil {
		hook("snapshot-renamed")
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// writeSnapshotFile encodes a snapshot of g straight into path
// (writeAtomic). The global ranks are computed (ranks) once everything
// else is written: the ranking arcs then never share the heap with the
// encoder's string table. hook (tests) is told "snapshot-half-written"
// while the temporary file is incomplete, "snapshot-ranking" and
// "snapshot-ranked" around the ranking, and "snapshot-encoded" when every
// section is written but the directory is not. It returns the ranks.
func writeSnapshotFile(path string, h *snapHeader, g *Graph, problems []Problem, ranks func(g *Graph) []float64, ec *encCache, hook func(string)) ([]float64, error) {
	var rs []float64
	err := writeAtomic(path, hook, func(f *os.File) error {
		w := newSnapSink(f, hook)
		if err := encodeSnapshotTo(w, h, g, problems, ec); err != nil {
			return err
		}
		if hook != nil {
			hook("snapshot-ranking")
		}
		rs = ranks(g)
		if hook != nil {
			hook("snapshot-ranked")
		}
		if err := writeRanks(w, rs, len(g.flatGraph().nodes), ec); err != nil {
			return err
		}
		if hook != nil {
			hook("snapshot-encoded")
		}
		return w.finish()
	})
	return rs, err
}

// encodeSnapshot serialises a graph with the header it stands for, as
// writeSnapshotFile lays it out, in one buffer (tests).
func encodeSnapshot(h *snapHeader, g *Graph, problems []Problem, ranks []float64) ([]byte, error) {
	var m memFile
	w := newSnapSink(&m, nil)
	if err := encodeSnapshotTo(w, h, g, problems, nil); err != nil {
		return nil, err
	}
	if err := writeRanks(w, ranks, len(g.flatGraph().nodes), nil); err != nil {
		return nil, err
	}
	if err := w.finish(); err != nil {
		return nil, err
	}
	return m.b, nil
}
