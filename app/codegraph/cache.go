package codegraph

import (
	"fmt"
	"hash/fnv"

	"codeloom/app/memory"
)

// BlobStore is the part of the project store the graph cache needs
// (*memory.Store satisfies it).
type BlobStore interface {
	GetBlob(bucket, key string) ([]byte, error)
	PutBlobs(bucket string, puts map[string][]byte, deletes []string) error
	ForEachBlob(bucket string, fn func(key string, val []byte) error) error
	DeleteBucket(bucket string) error
}

// Cache buckets: per-file parse results keyed by relative path, and the
// version of the extractor that wrote them.
const (
	cacheFilesBucket = "graph.files"
	cacheMetaBucket  = "graph.meta"
	cacheSchema      = "codegraph-cache/2"
)

// cacheVersion identifies the extractor: a change to any query or the record
// layout invalidates the cache.
func (p *Project) cacheVersion() string {
	h := fnv.New64a()
	h.Write([]byte(cacheSchema))
	for _, l := range p.langs {
		h.Write([]byte(l.name))
		h.Write([]byte(l.query))
	}
	return fmt.Sprintf("%s/%016x", cacheSchema, h.Sum64())
}

// withStore runs fn with the configured store, or opens the project's store
// for the duration of fn.
func (p *Project) withStore(fn func(BlobStore) error) error {
	return p.withStoreOpen(memory.OpenProject, fn)
}

// withStoreReader is withStore for reading only: beside another process
// that holds the store (the app, another CLI) it reads a snapshot of the
// last committed state instead of waiting and failing.
func (p *Project) withStoreReader(fn func(BlobStore) error) error {
	return p.withStoreOpen(memory.OpenProjectReader, fn)
}

func (p *Project) withStoreOpen(open func(string) (*memory.Store, error), fn func(BlobStore) error) error {
	if p.opts.Store != nil {
		return fn(p.opts.Store)
	}
	st, err := open(p.root)
	if err != nil {
		return err
	}
	ferr := fn(st)
	if cerr := st.Close(); ferr == nil {
		ferr = cerr
	}
	return ferr
}

// loadCache returns the cached parse results; nil (and no error) when the
// cache is disabled, empty or written by another extractor version.
func (p *Project) loadCache() (map[string]*fileData, error) {
	if p.opts.NoCache {
		return nil, nil
	}
	var out map[string]*fileData
	err := p.withStoreReader(func(s BlobStore) error {
		v, err := s.GetBlob(cacheMetaBucket, "version")
		if err != nil {
			return err
		}
		if string(v) != p.cacheVersion() {
			return nil
		}
		out = map[string]*fileData{}
		return s.ForEachBlob(cacheFilesBucket, func(key string, val []byte) error {
			fd, err := decodeFileData(val)
			if err == nil && fd.Path != key {
				err = fmt.Errorf("%w: entry names %q", errCorrupt, fd.Path)
			}
			if err != nil {
				// A damaged entry is re-parsed, not fatal.
				p.log.Warn("codegraph cache entry unreadable; re-parsing", "path", key, "err", err)
				return nil
			}
			out[key] = fd
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("load graph cache of %s: %w", p.root, err)
	}
	return out, nil
}

// cacheBatchBytes bounds the encoded records one transaction of a full
// cache save writes.
const cacheBatchBytes = 8 << 20

// saveCache writes changed entries and removes deleted ones; full rewrites
// the whole cache (after a version change).
//
// A full save (a cold index) writes the records in batches of sorted keys,
// each encoded just before its transaction, so that neither the encoded
// cache (as large as the cache file: 94 MB for go/src, 210 MB for pyenv's
// standard library and site-packages) nor the store's pages for all of it
// are held at once. The version is written last, as before; a save
// interrupted between batches leaves some records out, and a record is
// used only when its file's size and time still match (processOne), so a
// missing one is parsed again.
func (p *Project) saveCache(puts map[string]*fileData, deletes []string, full bool) error {
	if p.opts.NoCache {
		return nil
	}
	err := p.withStore(func(s BlobStore) error {
		if !full {
			enc := make(map[string][]byte, len(puts))
			for k, fd := range puts {
				enc[k] = encodeFileData(fd)
			}
			return s.PutBlobs(cacheFilesBucket, enc, deletes)
		}
		if err := s.DeleteBucket(cacheFilesBucket); err != nil {
			return err
		}
		// A batch's records are encoded one after another into one buffer
		// (each entry a slice of it, the store's until its transaction
		// commits): one allocation per batch instead of one per record,
		// each grown by doubling when its estimate was short.
		enc := map[string][]byte{}
		buf := make([]byte, 0, cacheBatchBytes+cacheBatchBytes/4)
		for _, k := range sortedKeys(puts) {
			start := len(buf)
			if n := encodedSizeHint(puts[k]); cap(buf)-start < n && start > 0 {
				// Would not fit: a new buffer (entries keep the old one).
				buf = make([]byte, 0, max(cacheBatchBytes+cacheBatchBytes/4, n))
				start = 0
			}
			buf = appendFileData(buf, puts[k])
			enc[k] = buf[start:len(buf):len(buf)]
			if len(buf) >= cacheBatchBytes {
				if err := s.PutBlobs(cacheFilesBucket, enc, nil); err != nil {
					return err
				}
				enc = map[string][]byte{}
				buf = make([]byte, 0, cacheBatchBytes+cacheBatchBytes/4)
			}
		}
		if err := s.PutBlobs(cacheFilesBucket, enc, deletes); err != nil {
			return err
		}
		return s.PutBlobs(cacheMetaBucket, map[string][]byte{"version": []byte(p.cacheVersion())}, nil)
	})
	if err != nil {
		return fmt.Errorf("save graph cache of %s: %w", p.root, err)
	}
	return nil
}
