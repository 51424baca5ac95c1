package codegraph

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// The cache stores fileData in a small hand-written binary form: gob's
// reflection made decoding the dominant cost of re-opening a project.
// Layout: a version byte, then fields in declaration order as uvarints,
// length-prefixed strings and counted lists.

const codecVersion = 1

type encoder struct{ b []byte }

func (e *encoder) u(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *encoder) i(v int64)  { e.b = binary.AppendVarint(e.b, v) }
func (e *encoder) s(v string) { e.u(uint64(len(v))); e.b = append(e.b, v...) }
func (e *encoder) bool(v bool) {
	if v {
		e.b = append(e.b, 1)
	} else {
		e.b = append(e.b, 0)
	}
}

// encodeFileData serialises fd for the cache.
func encodeFileData(fd *fileData) []byte {
	return appendFileData(make([]byte, 0, encodedSizeHint(fd)), fd)
}

// encodedSizeHint is about the encoded size of fd.
func encodedSizeHint(fd *fileData) int {
	return 256 + fd.Refs.Len()*16 + len(fd.Defs)*64
}

// appendFileData appends fd's encoding (encodeFileData's) to dst.
func appendFileData(dst []byte, fd *fileData) []byte {
	e := &encoder{b: dst}
	e.b = append(e.b, codecVersion)
	e.s(fd.Path)
	e.s(fd.Lang)
	e.i(fd.Size)
	e.i(fd.ModTime)
	e.b = binary.LittleEndian.AppendUint64(e.b, fd.Sum)
	e.i(int64(fd.Lines))
	e.bool(fd.Syntax)
	e.bool(fd.BadUTF8)
	e.u(uint64(len(fd.Defs)))
	for _, d := range fd.Defs {
		e.s(string(d.Kind))
		e.s(d.Name)
		e.i(int64(d.Parent))
		e.u(uint64(d.Start))
		e.u(uint64(d.End))
		e.i(int64(d.StartLine))
		e.i(int64(d.EndLine))
		e.s(d.Sig)
		e.s(d.Doc)
		e.b = binary.LittleEndian.AppendUint64(e.b, d.Hash)
		e.s(d.receiver())
		e.s(d.selfVar())
	}
	e.u(uint64(fd.Refs.Len()))
	for _, r := range fd.Refs.All() {
		e.u(uint64(r.Kind))
		e.s(r.Name)
		e.s(r.Object)
		e.i(int64(r.Def))
		e.i(int64(r.Line))
	}
	e.u(uint64(len(fd.Imports)))
	for _, im := range fd.Imports {
		e.s(im.Module)
		e.s(im.Name)
		e.s(im.Alias)
		e.bool(im.Wildcard)
		e.i(int64(im.Line))
		e.u(uint64(im.Start))
		e.u(uint64(im.End))
	}
	e.u(uint64(len(fd.Env)))
	for _, ev := range fd.Env {
		e.s(ev.Name)
		e.i(int64(ev.Def))
	}
	e.s(fd.Default)
	e.u(uint64(len(fd.Globals)))
	for _, gl := range fd.Globals {
		e.s(gl.Name)
		e.u(uint64(gl.Start))
		e.u(uint64(gl.End))
	}
	e.u(uint64(len(fd.Packages)))
	for _, p := range fd.Packages {
		e.s(p)
	}
	e.s(fd.Eco)
	return e.b
}

var errCorrupt = errors.New("corrupt cache entry")

type decoder struct {
	b   []byte
	err error
}

func (d *decoder) u() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errCorrupt
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) i() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.err = errCorrupt
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) s() string {
	return string(d.bs())
}

// bs reads a length-prefixed string's bytes (aliasing the input).
func (d *decoder) bs() []byte {
	n := d.u()
	if d.err != nil || n > uint64(len(d.b)) {
		d.err = errCorrupt
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) u64() uint64 {
	if d.err != nil || len(d.b) < 8 {
		d.err = errCorrupt
		return 0
	}
	v := binary.LittleEndian.Uint64(d.b)
	d.b = d.b[8:]
	return v
}

func (d *decoder) bool() bool {
	if d.err != nil || len(d.b) < 1 {
		d.err = errCorrupt
		return false
	}
	v := d.b[0] == 1
	d.b = d.b[1:]
	return v
}

// count reads a list length, bounded by the bytes left (each element takes
// at least one byte), so corrupt input cannot make huge allocations.
func (d *decoder) count() int {
	n := d.u()
	if d.err == nil && n > uint64(len(d.b)) {
		d.err = errCorrupt
	}
	if d.err != nil {
		return 0
	}
	return int(n)
}

// decodeFileData parses a cache entry; any inconsistency is an error (the
// file is then parsed again).
func decodeFileData(b []byte) (*fileData, error) {
	if len(b) == 0 || b[0] != codecVersion {
		return nil, fmt.Errorf("%w: unknown version", errCorrupt)
	}
	d := &decoder{b: b[1:]}
	fd := &fileData{}
	fd.Path = d.s()
	fd.Lang = d.s()
	fd.Size = d.i()
	fd.ModTime = d.i()
	fd.Sum = d.u64()
	fd.Lines = int(d.i())
	fd.Syntax = d.bool()
	fd.BadUTF8 = d.bool()
	if n := d.count(); n > 0 {
		fd.Defs = make([]defRec, n)
		for k := range fd.Defs {
			df := &fd.Defs[k]
			df.Kind = Kind(d.s())
			df.Name = d.s()
			df.Parent = int32(d.i())
			df.Start = uint32(d.u())
			df.End = uint32(d.u())
			df.StartLine = int32(d.i())
			df.EndLine = int32(d.i())
			df.Sig = d.s()
			df.Doc = d.s()
			df.Hash = d.u64()
			recv := d.s()
			df.setRecv(recv, d.s())
			if df.Parent < -1 || int(df.Parent) >= k || df.Start > df.End {
				d.err = errCorrupt
			}
		}
	}
	if n := d.count(); n > 0 {
		pk := newRefPacker(n)
		for k := 0; k < n; k++ {
			kind := refKind(d.u())
			name := pk.strBytes(d.bs())
			obj := pk.strBytes(d.bs())
			def := int32(d.i())
			line := int32(d.i())
			if def < -1 || int(def) >= len(fd.Defs) {
				d.err = errCorrupt
			}
			if d.err != nil {
				break
			}
			pk.addIdx(kind, name, obj, def, line)
		}
		fd.Refs = pk.list()
	}
	if n := d.count(); n > 0 {
		fd.Imports = make([]importRec, n)
		for k := range fd.Imports {
			im := &fd.Imports[k]
			im.Module = d.s()
			im.Name = d.s()
			im.Alias = d.s()
			im.Wildcard = d.bool()
			im.Line = int32(d.i())
			im.Start = uint32(d.u())
			im.End = uint32(d.u())
			if im.Start > im.End {
				d.err = errCorrupt
			}
		}
	}
	if n := d.count(); n > 0 {
		fd.Env = make([]envRec, n)
		for k := range fd.Env {
			fd.Env[k].Name = d.s()
			fd.Env[k].Def = int32(d.i())
			if fd.Env[k].Def < -1 || int(fd.Env[k].Def) >= len(fd.Defs) {
				d.err = errCorrupt
			}
		}
	}
	fd.Default = d.s()
	if n := d.count(); n > 0 {
		fd.Globals = make([]globalRec, n)
		for k := range fd.Globals {
			fd.Globals[k].Name = d.s()
			fd.Globals[k].Start = uint32(d.u())
			fd.Globals[k].End = uint32(d.u())
			if fd.Globals[k].Start > fd.Globals[k].End {
				d.err = errCorrupt
			}
		}
	}
	if n := d.count(); n > 0 {
		fd.Packages = make([]string, n)
		for k := range fd.Packages {
			fd.Packages[k] = d.s()
		}
	}
	fd.Eco = d.s()
	if d.err == nil && len(d.b) != 0 {
		d.err = errCorrupt
	}
	if d.err != nil {
		return nil, d.err
	}
	return fd, nil
}
