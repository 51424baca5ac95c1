package codegraph

// nodeLocs is the builder's table of where each node of a build is: a
// definition's file and index, a file node's file, a package's absence of
// one. Node IDs are 16 lower-case hex digits (nodeID), so the table is
// keyed by the 64-bit value they spell and holds a file number and an
// index in one more 64-bit word: 16 bytes an entry where a string key and
// a defLocation took 32 (pyenv's stdlib: ≈ 370 k nodes; the map took
// 24 MB at the peak of a cold index, this one ≈ 9 MB).
type nodeLocs struct {
	at    map[uint64]uint64 // ID's value → file number (0: a package) << 32 | uint32(index)
	other map[string]uint64 // the same for an ID of another form (none that nodeID makes; tests)
	files []*fileBuild      // by file number - 1 (fileBuild.locNum)
}

// newNodeLocs returns an empty table sized for about n nodes.
func newNodeLocs(n int) *nodeLocs {
	return &nodeLocs{at: make(map[uint64]uint64, n)}
}

// idValue returns the value a node ID spells, or false when id is not 16
// lower-case hex digits.
func idValue(id string) (uint64, bool) {
	if len(id) != 16 {
		return 0, false
	}
	var v uint64
	for i := 0; i < 16; i++ {
		c := id[i]
		d := c - '0' // (bytes wrap: one comparison rejects what lies below '0' too)
		if d > 9 {
			if d = c - 'a'; d > 5 {
				return 0, false
			}
			d += 10
		}
		v = v<<4 | uint64(d)
	}
	return v, true
}

// addFile gives fb a file number (keeping the one it had, when it replaces
// prev) and enters its file node and definitions.
func (t *nodeLocs) addFile(fb, prev *fileBuild) {
	if prev != nil && prev.locNum > 0 && int(prev.locNum) <= len(t.files) && t.files[prev.locNum-1] == prev {
		fb.locNum = prev.locNum
	} else {
		t.files = append(t.files, fb)
		fb.locNum = int32(len(t.files))
	}
	t.files[fb.locNum-1] = fb
	t.put(fb.fileID, fb.locNum, -1)
	for i, id := range fb.ids {
		t.put(id, fb.locNum, int32(i))
	}
}

// addPackage enters a package node (no file).
func (t *nodeLocs) addPackage(id string) { t.put(id, 0, -1) }

func (t *nodeLocs) put(id string, num, idx int32) {
	e := uint64(uint32(num))<<32 | uint64(uint32(idx))
	v, ok := idValue(id)
	if !ok {
		if t.other == nil {
			t.other = map[string]uint64{}
		}
		t.other[id] = e
		return
	}
	t.at[v] = e
}

// get returns where node id is (fb nil: a package), or false.
func (t *nodeLocs) get(id string) (l defLocation, ok bool) {
	if t == nil {
		return defLocation{}, false
	}
	var e uint64
	if v, hex := idValue(id); hex {
		e, ok = t.at[v]
	} else {
		e, ok = t.other[id]
	}
	if !ok {
		return defLocation{}, false
	}
	l = defLocation{idx: int32(uint32(e))}
	if num := int32(e >> 32); num > 0 {
		l.fb = t.files[num-1]
	}
	return l, true
}
