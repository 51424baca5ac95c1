//go:build linux

package codegraph

import (
	"encoding/binary"
	"io/fs"
	"reflect"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// dirent encodes one linux_dirent64 record.
func dirent(name string, typ byte) []byte {
	nameOff := int(unsafe.Offsetof(unix.Dirent{}.Name))
	n := (nameOff + len(name) + 1 + 7) &^ 7
	b := make([]byte, n)
	binary.NativeEndian.PutUint64(b[0:], 42)
	binary.NativeEndian.PutUint16(b[16:], uint16(n))
	b[18] = typ
	copy(b[nameOff:], name)
	return b
}

// parseDirents reads every record, drops . and .., maps each d_type and
// marks an unknown one (some file systems report DT_UNKNOWN) for a stat.
func TestParseDirents(t *testing.T) {
	var buf []byte
	for _, r := range []struct {
		name string
		typ  byte
	}{{".", unix.DT_DIR}, {"..", unix.DT_DIR}, {"a.py", unix.DT_REG}, {"d", unix.DT_DIR}, {"l", unix.DT_LNK},
		{"p", unix.DT_FIFO}, {"c", unix.DT_CHR}, {"b", unix.DT_BLK}, {"s", unix.DT_SOCK}, {"u.py", unix.DT_UNKNOWN}} {
		buf = append(buf, dirent(r.name, r.typ)...)
	}
	buf = append(buf, 1, 2, 3) // a cut-off record is ignored, not read past
	got := parseDirents(buf, nil)
	want := []dirEnt{{name: "a.py"}, {name: "d", typ: fs.ModeDir}, {name: "l", typ: fs.ModeSymlink},
		{name: "p", typ: fs.ModeNamedPipe}, {name: "c", typ: fs.ModeDevice | fs.ModeCharDevice}, {name: "b", typ: fs.ModeDevice},
		{name: "s", typ: fs.ModeSocket}, {name: "u.py", typ: fs.ModeIrregular}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parseDirents:\n got %+v\nwant %+v", got, want)
	}
}
