package codegraph

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"runtime/debug"
	"sort"
	"strings"

	"codeloom/app/memory"
)

// ErrNeedsGraph reports that a Reader cannot answer a question from the
// persisted records alone; the caller opens the project (Open) instead.
var ErrNeedsGraph = errors.New("this question needs the whole graph")

// Reader answers queries from the persisted graph in place: the file is
// mapped read-only and a query reads only the sections it needs (each
// checked against its checksum on first use) and only the node and edge
// records it reaches, which it copies out; nothing else is decoded. Nodes
// and edges a Reader returns stay valid after Close. Not safe for
// concurrent use.
type Reader struct {
	root    string
	path    string
	secs    *snapSections
	release func() error

	soff  []uint32 // string table
	sdata []byte
	nw    []uint32 // node records
	n     int
	ew    []uint32 // edge records
	byID  []uint32
	files []uint32
	rows  map[int][]uint32 // out/in/children rows, by section
	made  []*Node          // nodes copied out, by position (allocated on first use)
	slab  []Node           // where copied-out nodes are allocated, a block at a time
	sbuf  []byte           // where their strings are copied, a block at a time
}

// OpenReader walks the project at root (stat only) and, when its persisted
// graph was built from exactly the state the walk finds, maps it and
// returns a Reader. It returns nil and no error when there is no persisted
// graph or it is stale (a file changed, was added or removed, .env or the
// extractor changed): the caller then uses Open, which rebuilds. A damaged
// or cut-off file is an error (Open reports and rebuilds it too).
func OpenReader(ctx context.Context, root string, opts Options) (*Reader, error) {
	abs, err := projectDir(root)
	if err != nil {
		return nil, err
	}
	if opts.NoCache {
		return nil, nil
	}
	if opts.MaxFileSize <= 0 {
		opts.MaxFileSize = DefaultMaxFileSize
	}
	p := &Project{root: abs, opts: opts, log: opts.Logger, langs: registry()}
	if p.log == nil {
		p.log = slog.Default()
	}
	p.byExt = langByExt(p.langs)
	// The walk comes first: a file changed after it makes the snapshot
	// (written later) not match, never a stale answer.
	wr, err := walk(ctx, abs, opts.MaxFileSize, p.byExt)
	if err != nil {
		return nil, err
	}
	want := p.headerFromWalk(wr)
	path := SnapshotPath(abs)
	data, release, err := mapFile(path, maxSnapSize)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read persisted graph %s: %w", path, err)
	}
	r := &Reader{root: abs, path: path, release: release, rows: map[int][]uint32{}}
	h, err := r.header(data)
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("read persisted graph %s: %w", path, err)
	}
	if !sameHeader(h, want) {
		r.Close()
		return nil, nil
	}
	for _, n := range wr.notes {
		p.log.Warn("codegraph walk", "root", abs, "note", n)
	}
	if _, err := memory.CheckProject(abs); err != nil {
		p.log.Warn("codegraph store check", "root", abs, "err", err)
	}
	return r, nil
}

// header parses the directory and the header section, turning a fault on
// the mapping into an error.
func (r *Reader) header(data []byte) (h *snapHeader, err error) {
	defer r.recoverBad(&err, debug.SetPanicOnFault(true))
	if r.secs, err = parseSnapshot(data); err != nil {
		return nil, err
	}
	return snapshotHeader(r.secs)
}

// Close unmaps the file.
func (r *Reader) Close() error {
	if r.release == nil {
		return nil
	}
	err := r.release()
	r.release, r.secs = nil, nil
	return err
}

// Root returns the project root (absolute).
func (r *Reader) Root() string { return r.root }

// errBadRecord is raised (as a panic, turned into an error by recoverBad)
// when a record refers outside the file.
var errBadRecord = errors.New("record refers outside the persisted graph")

// recoverBad turns a panic while reading the mapping (a bad index, or a
// fault if the file was cut under the mapping) into errSnapshot.
func (r *Reader) recoverBad(err *error, oldFault bool) {
	debug.SetPanicOnFault(oldFault)
	if x := recover(); x != nil {
		*err = fmt.Errorf("read persisted graph %s: %w: %v", r.path, errSnapshot, x)
	}
}

// loadNodes makes the string table and node records usable.
func (r *Reader) loadNodes() error {
	if r.secs == nil {
		return fmt.Errorf("read persisted graph %s: closed", r.path)
	}
	if r.nw != nil {
		return nil
	}
	soff, sdata, err := snapStrings(r.secs)
	if err != nil {
		return err
	}
	nw, err := r.secs.words(secNodes)
	if err != nil {
		return err
	}
	if len(nw)%nodeWords != 0 {
		return fmt.Errorf("%w: node records", errSnapshot)
	}
	r.soff, r.sdata, r.nw, r.n = soff, sdata, nw, len(nw)/nodeWords
	if r.nw == nil {
		r.nw = []uint32{}
	}
	return nil
}

// loadIndex adds the ID index and the file index.
func (r *Reader) loadIndex() error {
	if err := r.loadNodes(); err != nil {
		return err
	}
	if r.byID != nil {
		return nil
	}
	files, err := r.secs.words(secFiles)
	if err != nil {
		return err
	}
	byID, err := r.secs.words(secByID)
	if err != nil {
		return err
	}
	if len(files)%2 != 0 {
		return fmt.Errorf("%w: file index", errSnapshot)
	}
	r.files, r.byID = files, byID
	if r.byID == nil {
		r.byID = []uint32{}
	}
	return nil
}

// loadRows makes compressed rows (off section, list section) usable.
func (r *Reader) loadRows(offID, listID int, limit int) error {
	if _, ok := r.rows[offID]; ok {
		return nil
	}
	off, err := r.secs.words(offID)
	if err != nil {
		return err
	}
	list, err := r.secs.words(listID)
	if err != nil {
		return err
	}
	if !checkRows(off, list, r.n, uint32(limit)) {
		return fmt.Errorf("%w: index section %d", errSnapshot, offID)
	}
	r.rows[offID], r.rows[listID] = off, list
	return nil
}

// loadEdges makes the edge records and both edge indexes usable.
func (r *Reader) loadEdges() error {
	if err := r.loadIndex(); err != nil {
		return err
	}
	if r.ew == nil {
		ew, err := r.secs.words(secEdges)
		if err != nil {
			return err
		}
		if len(ew)%edgeWords != 0 {
			return fmt.Errorf("%w: edge records", errSnapshot)
		}
		r.ew = ew
		if r.ew == nil {
			r.ew = []uint32{}
		}
	}
	ne := len(r.ew) / edgeWords
	if err := r.loadRows(secOutOff, secOutEdges, ne); err != nil {
		return err
	}
	if err := r.loadRows(secInOff, secInEdges, ne); err != nil {
		return err
	}
	return r.loadRows(secChildOff, secChildList, r.n)
}

// row returns entry i of compressed rows.
func (r *Reader) row(offID, listID, i int) []uint32 {
	off := r.rows[offID]
	return r.rows[listID][off[i]:off[i+1]]
}

// str returns string i as a view of the mapping (valid until Close).
func (r *Reader) str(i uint32) string {
	if int(i)+1 >= len(r.soff) {
		panic(errBadRecord)
	}
	return bstr(r.sdata[r.soff[i]:r.soff[i+1]])
}

// field returns string field f of node i as a view of the mapping.
func (r *Reader) field(i, f int) string { return r.str(r.nw[i*nodeWords+f]) }

// node copies node i out of the mapping (once; the same pointer after).
//
// Nodes and their strings are allocated in blocks (an rdeps answer can copy
// out 90k nodes): one allocation per block instead of two per node.
func (r *Reader) node(i int) *Node {
	if i < 0 || i >= r.n {
		panic(errBadRecord)
	}
	if r.made == nil {
		r.made = make([]*Node, r.n)
	}
	if n := r.made[i]; n != nil {
		return n
	}
	// One copy of all the node's strings, which its fields view.
	w := r.nw[i*nodeWords : (i+1)*nodeWords]
	size := 0
	for f := 0; f < nfStartLine; f++ {
		size += len(r.str(w[f]))
	}
	const nodeBlock, strBlock = 256, 64 << 10
	if cap(r.sbuf)-len(r.sbuf) < size {
		r.sbuf = make([]byte, 0, max(size, strBlock))
	}
	if len(r.slab) == cap(r.slab) {
		r.slab = make([]Node, 0, nodeBlock)
	}
	r.slab = r.slab[:len(r.slab)+1]
	n := &r.slab[len(r.slab)-1]
	fillNode(n, w, func(j uint32) string {
		s := r.str(j)
		at := len(r.sbuf)
		r.sbuf = append(r.sbuf, s...)
		return bstr(r.sbuf[at:len(r.sbuf):len(r.sbuf)])
	})
	r.made[i] = n
	return n
}

// pos returns the position Graph.byID gives id.
func (r *Reader) pos(id string) (int, bool) {
	k := sort.Search(len(r.byID), func(k int) bool { return r.field(int(r.byID[k]), nfID) >= id })
	if k < len(r.byID) && r.field(int(r.byID[k]), nfID) == id {
		return int(r.byID[k]), true
	}
	return 0, false
}

// fileNode returns the position of the file node of rel.
func (r *Reader) fileNode(rel string) (int, bool) {
	nf := len(r.files) / 2
	k := sort.Search(nf, func(k int) bool { return r.str(r.files[2*k]) >= rel })
	if k < nf && r.str(r.files[2*k]) == rel {
		return int(r.files[2*k+1]), true
	}
	return 0, false
}

// edgeEnd decodes an edge endpoint: a node position, or -1 and the ID.
func (r *Reader) edgeEnd(v uint32) (int, string) {
	if v&1 == 0 {
		return int(v >> 1), r.field(int(v>>1), nfID)
	}
	return -1, r.str(v >> 1)
}

// edge copies edge i out of the mapping.
func (r *Reader) edge(i uint32) Edge {
	w := r.ew[int(i)*edgeWords : int(i+1)*edgeWords]
	_, from := r.edgeEnd(w[0])
	_, to := r.edgeEnd(w[1])
	return Edge{From: strings.Clone(from), To: strings.Clone(to), Kind: EdgeKind(strings.Clone(r.str(w[2]))), Line: int(w[3])}
}

// Node returns the node with the given ID.
func (r *Reader) Node(id string) (n *Node, ok bool) {
	var err error
	func() {
		defer r.recoverBad(&err, debug.SetPanicOnFault(true))
		if err = r.loadIndex(); err != nil {
			return
		}
		var i int
		if i, ok = r.pos(id); ok {
			n = r.node(i)
		}
	}()
	return n, ok && err == nil
}

// ErrSnapshotUnreadable marks an error from a damaged or cut-off persisted
// graph (a Reader's answer is then not to be trusted; Open rebuilds it).
var ErrSnapshotUnreadable = errSnapshot
