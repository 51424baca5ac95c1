//go:build linux

package codegraph

import (
	"encoding/binary"
	"io/fs"
	"unsafe"

	"golang.org/x/sys/unix"
)

// readDir reads the directory abs with one open, getdents and, for each
// entry want selects that the directory lists as a regular file, one
// fstatat relative to the directory's descriptor (no path lookup, symlinks
// not followed). An entry whose type the file system does not report is
// fstatat'ed for its type. follow is false for every directory below the
// root: a directory swapped for a symlink after its parent was read is then
// not followed (open fails with ELOOP and the directory is reported
// unreadable). Opening never blocks: O_DIRECTORY refuses a FIFO or device
// before it is opened.
func readDir(abs string, follow bool, want func(name string) bool) dirListing {
	var buf []byte
	return readDirBuf(abs, follow, want, &buf)
}

// readDirBuf is readDir reading the directory through *buf, which it
// allocates when empty and which the caller passes again for the next
// directory (a walk of 8,000 folders allocated and zeroed 16 KiB for each).
func readDirBuf(abs string, follow bool, want func(name string) bool, buf *[]byte) dirListing {
	flags := unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NONBLOCK | unix.O_CLOEXEC | unix.O_NOCTTY
	if !follow {
		flags |= unix.O_NOFOLLOW
	}
	fd, err := openRetry(abs, flags)
	if err != nil {
		return dirListing{err: &fs.PathError{Op: "open", Path: abs, Err: err}}
	}
	defer unix.Close(fd)
	var l dirListing
	var st unix.Stat_t
	if err := fstatRetry(fd, &st); err != nil {
		return dirListing{err: &fs.PathError{Op: "fstat", Path: abs, Err: err}}
	}
	l.id = dirID{dev: uint64(st.Dev), ino: st.Ino}
	if len(*buf) == 0 {
		*buf = make([]byte, 16<<10)
	}
	for {
		n, err := unix.Getdents(fd, *buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return dirListing{err: &fs.PathError{Op: "readdirent", Path: abs, Err: err}}
		}
		if n <= 0 {
			break
		}
		l.ents = parseDirents((*buf)[:n], l.ents)
	}
	sortEnts(l.ents)
	for i := range l.ents {
		e := &l.ents[i]
		if e.typ == fs.ModeIrregular { // DT_UNKNOWN: ask for the type
			if err := fstatatRetry(fd, e.name, &st); err != nil {
				e.typ = 0 // a regular-looking candidate: the stat below reports the error
			} else {
				e.typ = modeType(st.Mode)
			}
		}
		if e.typ != 0 || !want(e.name) {
			continue
		}
		e.stated = true
		if err := fstatatRetry(fd, e.name, &st); err != nil {
			e.statErr = &fs.PathError{Op: "lstat", Path: abs + "/" + e.name, Err: err}
			continue
		}
		if t := modeType(st.Mode); t != 0 {
			e.typ = t // replaced since the directory was read
			continue
		}
		e.size, e.modTime = st.Size, st.Mtim.Nano()
	}
	return l
}

// parseDirents appends the entries of a getdents64 buffer (linux_dirent64:
// ino u64, off s64, reclen u16, type u8, name NUL-terminated), without "."
// and "..". An unknown type is returned as fs.ModeIrregular.
func parseDirents(buf []byte, ents []dirEnt) []dirEnt {
	const nameOff = int(unsafe.Offsetof(unix.Dirent{}.Name))
	for len(buf) >= nameOff {
		reclen := int(binary.NativeEndian.Uint16(buf[16:18]))
		if reclen < nameOff || reclen > len(buf) {
			break
		}
		rec := buf[:reclen]
		buf = buf[reclen:]
		name := rec[nameOff:]
		for i, c := range name {
			if c == 0 {
				name = name[:i]
				break
			}
		}
		if len(name) == 0 || string(name) == "." || string(name) == ".." {
			continue
		}
		var typ fs.FileMode
		switch rec[18] {
		case unix.DT_REG:
			typ = 0
		case unix.DT_DIR:
			typ = fs.ModeDir
		case unix.DT_LNK:
			typ = fs.ModeSymlink
		case unix.DT_FIFO:
			typ = fs.ModeNamedPipe
		case unix.DT_SOCK:
			typ = fs.ModeSocket
		case unix.DT_CHR:
			typ = fs.ModeDevice | fs.ModeCharDevice
		case unix.DT_BLK:
			typ = fs.ModeDevice
		default:
			typ = fs.ModeIrregular
		}
		ents = append(ents, dirEnt{name: string(name), typ: typ})
	}
	return ents
}

// modeType turns a stat mode into fs.FileMode type bits (0 for a regular
// file).
func modeType(m uint32) fs.FileMode {
	switch m & unix.S_IFMT {
	case unix.S_IFREG:
		return 0
	case unix.S_IFDIR:
		return fs.ModeDir
	case unix.S_IFLNK:
		return fs.ModeSymlink
	case unix.S_IFIFO:
		return fs.ModeNamedPipe
	case unix.S_IFSOCK:
		return fs.ModeSocket
	case unix.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		return fs.ModeDevice
	}
	return fs.ModeIrregular
}

func openRetry(path string, flags int) (int, error) {
	for {
		fd, err := unix.Open(path, flags, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

func fstatRetry(fd int, st *unix.Stat_t) error {
	for {
		if err := unix.Fstat(fd, st); err != unix.EINTR {
			return err
		}
	}
}

func fstatatRetry(fd int, name string, st *unix.Stat_t) error {
	for {
		if err := unix.Fstatat(fd, name, st, unix.AT_SYMLINK_NOFOLLOW); err != unix.EINTR {
			return err
		}
	}
}
