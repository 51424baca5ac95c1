package codegraph

import (
	"fmt"
	"testing"
)

// writeLog is a snapFileW in memory that records the size of every write.
type writeLog struct {
	memFile
	writes   int
	maxWrite int
}

func (w *writeLog) Write(p []byte) (int, error) {
	w.writes++
	w.maxWrite = max(w.maxWrite, len(p))
	return w.memFile.Write(p)
}

// synthGraph makes a graph of n function nodes in n/100 files (each with
// its file node), every function calling two others and one ID that is not
// a node, with distinct strings in every field, and one redefinition.
func synthGraph(n int) *Graph {
	g := &Graph{root: "/synth", children: map[string][]*Node{}, byFile: map[string][]*Node{}, fileNode: map[string]*Node{},
		envNames: map[string][]string{}, imports: map[string][]importSpan{}, globals: map[string][]globalRec{}}
	var file *Node
	for i := 0; i < n; i++ {
		path := fmt.Sprintf("pkg%d/mod%d.py", i/1000, i/100)
		if i%100 == 0 {
			file = &Node{ID: path, Kind: KindFile, Name: path, QualName: path, Path: path, Language: "python", StartLine: 1, EndLine: 400}
			g.nodes = append(g.nodes, file)
			g.fileNode[path] = file
			g.byFile[path] = append(g.byFile[path], file)
		}
		name := fmt.Sprintf("fn%d", i)
		nd := &Node{ID: path + "::" + name, Kind: KindFunction, Name: name, QualName: fmt.Sprintf("pkg%d.mod%d.%s", i/1000, i/100, name),
			Path: path, Language: "python", Signature: "def " + name + "(a, b):", Doc: fmt.Sprintf("Doc of %s, %d.", name, i),
			Hash: fmt.Sprintf("%016x", uint64(i)*0x9e3779b97f4a7c15), Parent: file.ID, StartLine: 1 + i%100*4, EndLine: 4 + i%100*4}
		g.nodes = append(g.nodes, nd)
		g.byFile[path] = append(g.byFile[path], nd)
		g.children[file.ID] = append(g.children[file.ID], nd)
		g.edges = append(g.edges, Edge{From: file.ID, To: nd.ID, Kind: EdgeContains, Line: nd.StartLine})
	}
	for i, nd := range g.nodes {
		if nd.Kind != KindFunction {
			continue
		}
		for _, j := range []int{(i * 7) % len(g.nodes), (i*13 + 5) % len(g.nodes)} {
			g.edges = append(g.edges, Edge{From: nd.ID, To: g.nodes[j].ID, Kind: EdgeCalls, Line: nd.StartLine + 1})
		}
		g.edges = append(g.edges, Edge{From: nd.ID, To: fmt.Sprintf("ext.lib%d.call", i%5000), Kind: EdgeUses, Line: nd.StartLine + 2})
	}
	// A redefinition: a second node with an earlier one's ID (the ID map
	// keeps the last), both listed.
	first := g.nodes[5]
	again := *first
	again.StartLine, again.EndLine = 900, 904
	g.nodes = append(g.nodes, &again)
	g.byFile[first.Path] = append(g.byFile[first.Path], &again)
	g.children[first.Parent] = append(g.children[first.Parent], &again)
	g.byID = nodePositions(g.nodes)
	return g
}

// TestSnapshotWrittenInPieces: the encoder hands the file the sections
// it makes a block at a time as they are made, so none of them is ever
// whole in memory (before, every section of the file was: 131 MB on
// pyenv). On a graph whose node records are 4.8 MB, edge records 5.1 MB
// and string bytes 8.5 MB, no piece of those sections, or of the string
// offsets, may exceed 2 MiB (measured: 1 MiB, the edges' block; the
// nodes' is 0.94 MiB, the strings' 64 KiB). What it still catches: one of
// those sections made whole before it is written. What it cannot see: the
// smaller sections made whole (a uint32 per node: ID order, children
// offsets; the varint rest), which are, nor a caller keeping the pieces
// after writing them. The file decodes to the graph.
func TestSnapshotWrittenInPieces(t *testing.T) {
	g := synthGraph(80_000)
	ranks := globalRanks(g)
	var w writeLog
	sink := newSnapSink(&w, nil)
	if err := encodeSnapshotTo(sink, &snapHeader{version: "synth"}, g, nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := writeRanks(sink, ranks, len(g.nodes), nil); err != nil {
		t.Fatal(err)
	}
	if err := sink.finish(); err != nil {
		t.Fatal(err)
	}
	secs, err := parseSnapshot(w.b)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []int{secNodes, secEdges, secStrData} {
		if secs.n[id] <= 4<<20 {
			t.Fatalf("section %d is %d bytes: too small for this test to see it written whole", id, secs.n[id])
		}
	}
	for _, id := range []int{secNodes, secEdges, secStrOff, secStrData} {
		if got := sink.sec[id].maxAdd; got > 2<<20 {
			t.Errorf("section %d (%d bytes) was written in a piece of %d bytes: made whole before it was written", id, secs.n[id], got)
		}
	}
	t.Logf("%d bytes in %d writes, the largest %d; nodes %d edges %d strOff %d strData %d", len(w.b), w.writes, w.maxWrite, secs.n[secNodes], secs.n[secEdges], secs.n[secStrOff], secs.n[secStrData])
	snap, err := decodeSnapshot(g.root, secs)
	if err != nil {
		t.Fatal(err)
	}
	graphsEqual(t, "synthetic graph written in pieces", g, snap.graph)
	if !sameFloats(snap.ranks, ranks) {
		t.Error("ranks differ after the round trip")
	}
	// The same bytes as encodeSnapshot's (the layout tests read).
	one, err := encodeSnapshot(&snapHeader{version: "synth"}, g, nil, ranks)
	if err != nil {
		t.Fatal(err)
	}
	if string(one) != string(w.b) {
		t.Error("encodeSnapshot lays the file out differently")
	}
}

// TestStrTableGrows: indexes follow first sight, survive the table's
// growth and lookups of strings that share a prefix or are empty.
func TestStrTableGrows(t *testing.T) {
	st := newStrTable(1)
	want := map[string]uint64{}
	for round := 0; round < 2; round++ {
		for i := 0; i < 5000; i++ {
			s := fmt.Sprintf("s%d", i%2500)
			if i == 17 {
				s = ""
			}
			got := st.id(s)
			if w, ok := want[s]; ok && got != w {
				t.Fatalf("%q: index %d, then %d", s, w, got)
			}
			want[s] = got
		}
	}
	if len(st.strs) != len(want) {
		t.Fatalf("%d strings for %d distinct", len(st.strs), len(want))
	}
	for s, i := range want {
		if st.strs[i] != s {
			t.Errorf("strs[%d] = %q, want %q", i, st.strs[i], s)
		}
	}
	if len(st.slots) < len(st.strs)*4/3 {
		t.Errorf("%d slots for %d strings: fuller than three quarters", len(st.slots), len(st.strs))
	}
}
