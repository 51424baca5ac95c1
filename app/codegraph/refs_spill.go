package codegraph

import (
	"bufio"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"unsafe"
)

// refSpill holds the packed references of a last build's files
// (builder.final) in an unlinked temporary file from the start of the main
// resolution pass until each file is resolved. Every file's references are
// read by the passes before it (fillFileBuild's tables, the inheritance
// pass, argIndexSplit), but the main pass reads one file's at a time, its
// own: held in memory they were ≈ 85 MB of pyenv's stdlib's live heap at
// the start of that pass, where the cold index's collector had its
// highest goal. Each file's list is one record (ends, data, text; flat
// already) read back with one pread into a fresh array when the file is
// resolved (load), and dropped again once it is (finalTrim.done).
//
// The file is made in the project's .codeloom folder and unlinked at once:
// nothing is left behind if the process dies (one killed between the two
// steps leaves a file the next open removes, persist_tmp.go). When it
// cannot be made or written, the references stay in memory (the graph is
// the same); when one cannot be read back, the build fails (load).
type refSpill struct {
	f  *os.File
	at map[*fileBuild]spillRec
	// bufs: *[]uint32 arrays the lists' ends and data are read into, given
	// back when the file is done (release): fresh arrays for them were
	// ≈ 45 MB more for the collector through pyenv's main pass. The text
	// is read into an array of its own, as what the file's resolution
	// keeps (a sampled name…) may point into it.
	bufs sync.Pool
}

// spillBufKeep bounds the arrays kept for reuse (4-byte words).
const spillBufKeep = 1 << 18

// refsSpillPattern names the spill files: unlinked as soon as made, one is
// left only by a kill in between, and removed by the next open
// (removeStaleTemps).
const refsSpillPattern = "refs-spill-*"

// spillRec is where one file's list is in the spill file.
type spillRec struct {
	off              int64
	nEnds, nData, nT uint32
	n                int32
}

// size is the record's length in bytes.
func (r spillRec) size() int { return int(r.nEnds)*4 + int(r.nData) + int(r.nT) }

// spillRefs writes the references of files into an unlinked file in dir
// and drops them from memory; nil (references left in memory) when the
// file cannot be made or written.
func spillRefs(dir string, files []*fileBuild) *refSpill {
	f, err := createLockedTemp(dir, refsSpillPattern) // persist_tmp.go
	if err != nil {
		slog.Debug("references kept in memory", "err", err)
		return nil
	}
	if err := os.Remove(f.Name()); err != nil {
		slog.Debug("references kept in memory", "err", err)
		f.Close()
		return nil
	}
	// What the files' tables keep of their references' text is copied out
	// of it first, so that the text goes with the references.
	parallelFiles(files, (*fileBuild).ownTexts) // refs_keep.go
	s := &refSpill{f: f, at: make(map[*fileBuild]spillRec, len(files))}
	if err := s.write(files); err != nil {
		slog.Warn("references kept in memory: spill file not written", "dir", dir, "err", err)
		f.Close()
		return nil
	}
	for fb := range s.at {
		fb.fd.Refs = refList{}
	}
	return s
}

// write writes every file's list, recording where (nothing is dropped).
func (s *refSpill) write(files []*fileBuild) error {
	w := bufio.NewWriterSize(s.f, 1<<16)
	var off int64
	for _, fb := range files {
		if fb.fd == nil || fb.fd.Refs.n == 0 {
			continue
		}
		l := fb.fd.Refs
		r := spillRec{off: off, nEnds: uint32(len(l.ends)), nData: uint32(len(l.data)), nT: uint32(len(l.text)), n: l.n}
		if len(l.ends) > 0 {
			if _, err := w.Write(unsafe.Slice((*byte)(unsafe.Pointer(&l.ends[0])), len(l.ends)*4)); err != nil {
				return fmt.Errorf("spill %s: %w", fb.fd.Path, err)
			}
		}
		if _, err := w.Write(l.data); err != nil {
			return fmt.Errorf("spill %s: %w", fb.fd.Path, err)
		}
		if _, err := w.WriteString(l.text); err != nil {
			return fmt.Errorf("spill %s: %w", fb.fd.Path, err)
		}
		s.at[fb] = r
		off += int64(r.size())
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("spill: %w", err)
	}
	return nil
}

// load reads fb's references back (s may be nil: nothing was spilled). A
// read that fails (a disk error) leaves the file without references and
// is returned: the build that spilled them must then fail rather than
// return a graph short of that file's edges (finalTrim.load).
func (s *refSpill) load(fb *fileBuild) error {
	if s == nil {
		return nil
	}
	r, ok := s.at[fb] // (written before the pass: read concurrently only)
	if !ok {
		return nil
	}
	// Ends (4-byte aligned) and data in a reused array, then the text in
	// one of its own.
	head := int(r.nEnds)*4 + int(r.nData)
	need := (head + 3) / 4
	bp, _ := s.bufs.Get().(*[]uint32)
	if bp == nil || cap(*bp) < need {
		w := make([]uint32, need)
		bp = &w
	}
	words := (*bp)[:cap(*bp)]
	buf := unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), head)
	text := make([]byte, r.nT)
	_, err := s.f.ReadAt(buf, r.off)
	if err == nil && r.nT > 0 {
		_, err = s.f.ReadAt(text, r.off+int64(head))
	}
	if err != nil {
		s.bufs.Put(bp)
		return fmt.Errorf("read back the references of %s from the spill file in %s: %w", fb.fd.Path, filepath.Dir(s.f.Name()), err)
	}
	l := refList{n: r.n}
	l.ends = words[:r.nEnds] // (its capacity is the whole array: release gives it back)
	p := int(r.nEnds) * 4
	l.data = buf[p:head:head]
	if r.nT > 0 {
		l.text = unsafe.String(&text[0], int(r.nT))
	}
	fb.fd.Refs = l
	return nil
}

// release gives back the array fb's references were read into (s may be
// nil); they are not read after.
func (s *refSpill) release(fb *fileBuild) {
	if s == nil || fb.fd == nil {
		return
	}
	if _, ok := s.at[fb]; !ok {
		return
	}
	if e := fb.fd.Refs.ends; cap(e) > 0 && cap(e) <= spillBufKeep {
		w := e[:cap(e)]
		s.bufs.Put(&w)
	}
}

// close closes the spill file (s may be nil).
func (s *refSpill) close() {
	if s != nil {
		s.f.Close()
	}
}

// spillDir is where a project's build spills: its .codeloom folder ("":
// none, no spill).
func spillDir(root string) string {
	if root == "" {
		return ""
	}
	d := filepath.Join(root, ".codeloom")
	if st, err := os.Stat(d); err != nil || !st.IsDir() {
		return ""
	}
	return d
}
