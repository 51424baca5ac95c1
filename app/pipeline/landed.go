package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"codeloom/app/memory"
	"codeloom/app/patch"
)

// LandedBucket is the store bucket that keeps one record per patch the
// pipeline wrote (see Landed), written before the patch's files are.
const LandedBucket = "pipeline-landed"

// Journal is the part of the memory store that keeps Landed records;
// *memory.Store satisfies it.
type Journal interface {
	PutBlob(bucket, key string, val []byte) error
	ForEachBlob(bucket string, fn func(key string, val []byte) error) error
}

// ChangeStore is what rolling back and undoing need: the kept versions and
// the Landed records. *memory.Store satisfies it.
type ChangeStore interface {
	VersionStore
	Journal
}

// LandedFile is one file of a landed patch.
type LandedFile struct {
	Path       string `json:"path"`
	OldExists  bool   `json:"old_exists"`
	OldVersion string `json:"old_version"` // the kept version of the content before the patch
	NewExists  bool   `json:"new_exists"`
	NewSHA256  string `json:"new_sha256"` // of the content the patch wrote
}

// Landed records one patch the pipeline applied: which task (session) and
// role wrote it, why, and for every file where its previous content is kept.
// It is stored before the files are written, so a record whose files still
// hold their old content is a patch that never landed (the process died in
// between).
type Landed struct {
	ID      string       `json:"id"`
	Time    time.Time    `json:"time"`
	Session string       `json:"session"`
	Role    string       `json:"role"`
	Request string       `json:"request"`
	Summary string       `json:"summary"` // "modify a.py +1 -1" lines
	Files   []LandedFile `json:"files"`
	Commit  string       `json:"commit,omitempty"`  // the git commit holding it, with --commit
	Undone  string       `json:"undone,omitempty"`  // why it was reverted ("undo", "rollback of …")
	Revert  string       `json:"revert,omitempty"`  // the git commit that reverted it
	Changes int          `json:"changes,omitempty"` // number of files, for listings
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// newLandedID is a key that sorts by time.
func newLandedID(t time.Time, session string) string {
	return fmt.Sprintf("%020d-%s", t.UnixNano(), session)
}

// putLanded stores (or updates) a record.
func putLanded(j Journal, l *Landed) error {
	l.Changes = len(l.Files)
	data, err := json.Marshal(l)
	if err != nil {
		return fmt.Errorf("encode landed change: %w", err)
	}
	if err := j.PutBlob(LandedBucket, l.ID, data); err != nil {
		return fmt.Errorf("record landed change: %w", err)
	}
	return nil
}

// LandedChanges returns the recorded patches, oldest first: all of them, or
// those of one session (task) when session is not empty. Records that
// cannot be decoded are skipped.
func LandedChanges(j Journal, session string) ([]Landed, error) {
	var out []Landed
	err := j.ForEachBlob(LandedBucket, func(key string, val []byte) error {
		var l Landed
		if json.Unmarshal(val, &l) != nil {
			return nil
		}
		if session == "" || l.Session == session {
			out = append(out, l)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read landed changes: %w", err)
	}
	sort.SliceStable(out, func(i, k int) bool { return out[i].ID < out[k].ID })
	return out, nil
}

// recordLanded keeps the previous content of every file of a prepared
// changeset as a version, then stores the Landed record, each committed
// (fsynced) by the store before it returns. Only then may the files be
// written.
func (p *Pipeline) recordLanded(cs *patch.Changeset, role string) (*Landed, error) {
	now := time.Now().UTC()
	l := &Landed{ID: newLandedID(now, p.session), Time: now, Session: p.session, Role: role,
		Request: p.request(), Summary: strings.TrimSpace(cs.Summary())}
	for _, ch := range cs.Changes {
		v := memory.Version{Path: ch.Path, Content: ch.Old,
			Reason: fmt.Sprintf("before %s patch (%s) in session %s", role, ch.Action, p.session)}
		if p.cfg.Graph != nil && ch.OldExists {
			if n, ok := p.cfg.Graph.Graph().FileNode(ch.Path); ok {
				v.NodeID, v.NodeName = n.ID, n.QualName
			}
		}
		id, err := p.cfg.Memory.AddVersion(v)
		if err != nil {
			return nil, fmt.Errorf("record previous version of %s: %w", ch.Path, err)
		}
		l.Files = append(l.Files, LandedFile{Path: ch.Path, OldExists: ch.OldExists, OldVersion: id,
			NewExists: ch.NewExists, NewSHA256: sha(ch.New)})
	}
	if j, ok := p.cfg.Memory.(Journal); ok {
		if err := putLanded(j, l); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// request is the first request of the session.
func (p *Pipeline) request() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.original
}
