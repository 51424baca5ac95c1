package memory

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Record buckets, in the order they were introduced.
const (
	BucketActivity  = "activity"
	BucketRuns      = "runs"
	BucketExchanges = "exchanges"
	BucketApprovals = "approvals"
	BucketLessons   = "lessons"
	BucketVersions  = "versions"
)

var recordBuckets = []string{BucketActivity, BucketRuns, BucketExchanges, BucketApprovals, BucketLessons, BucketVersions}

// Activity is one entry of the module activity log: what ran, when, how long.
type Activity struct {
	ID       string        `json:"id"`
	Time     time.Time     `json:"time"`
	Module   string        `json:"module"` // e.g. "codegraph", "runtime", "pipeline"
	Action   string        `json:"action"` // e.g. "index", "exec", "gate:tests"
	Outcome  string        `json:"outcome"`
	Detail   string        `json:"detail,omitempty"`
	Duration time.Duration `json:"duration"`
}

// Sample is one point of a run's live metrics.
type Sample struct {
	At         time.Duration `json:"t"`
	CPUPercent float64       `json:"cpu"`
	RSS        int64         `json:"rss"`
}

// RunRecord is a finished subprocess run with its metrics.
type RunRecord struct {
	ID          string        `json:"id"`
	Start       time.Time     `json:"start"`
	Origin      string        `json:"origin"` // "exec", "test", "gate:tests", …
	Command     []string      `json:"command"`
	Dir         string        `json:"dir"`
	ExitCode    int           `json:"exit_code"`
	Signal      string        `json:"signal,omitempty"`
	Limit       string        `json:"limit,omitempty"` // which limit ended it, if any
	TimedOut    bool          `json:"timed_out,omitempty"`
	Err         string        `json:"error,omitempty"`
	Wall        time.Duration `json:"wall"`
	CPUUser     time.Duration `json:"cpu_user"`
	CPUSys      time.Duration `json:"cpu_sys"`
	PeakRSS     int64         `json:"peak_rss"`
	StdoutBytes int64         `json:"stdout_bytes"`
	StderrBytes int64         `json:"stderr_bytes"`
	Stdout      string        `json:"stdout,omitempty"`
	Stderr      string        `json:"stderr,omitempty"`
	Truncated   bool          `json:"truncated,omitempty"`
	Samples     []Sample      `json:"samples,omitempty"`
}

// Exchange is one prompt sent to a model role and its answer.
type Exchange struct {
	ID       string        `json:"id"`
	Time     time.Time     `json:"time"`
	Session  string        `json:"session"`
	Role     string        `json:"role"` // architect, coder, tester, debugger, …
	Prompt   string        `json:"prompt"`
	Answer   string        `json:"answer"`
	Model    string        `json:"model,omitempty"`
	Duration time.Duration `json:"duration"`
}

// Approval is a yes/no question put to the user and the answer.
type Approval struct {
	ID       string    `json:"id"`
	Time     time.Time `json:"time"`
	Session  string    `json:"session"`
	Question string    `json:"question"`
	Detail   string    `json:"detail,omitempty"`
	Answer   bool      `json:"answer"`
	Auto     bool      `json:"auto,omitempty"` // answered by --yes / autonomy, not a person
}

// Lesson is a lesson card: what a task needed, what failed, what fixed it.
type Lesson struct {
	ID          string    `json:"id"`
	Time        time.Time `json:"time"`
	Task        string    `json:"task"`
	Failure     string    `json:"failure,omitempty"`
	Fix         string    `json:"fix,omitempty"`
	DiffSummary string    `json:"diff_summary,omitempty"`
	Tags        []string  `json:"tags,omitempty"`
}

// Version is a previous content of a file (or of one node in it), kept so a
// change can be reverted.
type Version struct {
	ID       string    `json:"id"`
	Time     time.Time `json:"time"`
	Path     string    `json:"path"` // relative to the project root
	NodeID   string    `json:"node_id,omitempty"`
	NodeName string    `json:"node_name,omitempty"`
	Content  []byte    `json:"content"`
	Reason   string    `json:"reason,omitempty"` // "edit", "patch", "revert", …
}

// LogActivity appends an activity entry and returns its ID.
func (s *Store) LogActivity(a Activity) (string, error) {
	return s.appendRecord(BucketActivity, a.Time, func(id string, t time.Time) { a.ID = id; a.Time = t }, &a)
}

// Activities returns up to limit activity entries, newest first.
func (s *Store) Activities(limit int) ([]Activity, error) {
	return listRecords[Activity](s, BucketActivity, limit, nil)
}

// AddRun records a finished run and returns its ID.
func (s *Store) AddRun(r RunRecord) (string, error) {
	return s.appendRecord(BucketRuns, r.Start, func(id string, t time.Time) { r.ID = id; r.Start = t }, &r)
}

// Runs returns up to limit runs, newest first.
func (s *Store) Runs(limit int) ([]RunRecord, error) {
	return listRecords[RunRecord](s, BucketRuns, limit, nil)
}

// Run returns the run with the given ID.
func (s *Store) Run(id string) (RunRecord, error) {
	var r RunRecord
	return r, s.getRecord(BucketRuns, id, &r)
}

// AddExchange records a prompt and its answer and returns its ID.
func (s *Store) AddExchange(e Exchange) (string, error) {
	return s.appendRecord(BucketExchanges, e.Time, func(id string, t time.Time) { e.ID = id; e.Time = t }, &e)
}

// Exchanges returns up to limit exchanges of session (all sessions when
// session is empty), newest first.
func (s *Store) Exchanges(session string, limit int) ([]Exchange, error) {
	return listRecords(s, BucketExchanges, limit, func(e *Exchange) bool { return session == "" || e.Session == session })
}

// AddApproval records a yes/no answer and returns its ID.
func (s *Store) AddApproval(a Approval) (string, error) {
	return s.appendRecord(BucketApprovals, a.Time, func(id string, t time.Time) { a.ID = id; a.Time = t }, &a)
}

// Approvals returns up to limit approvals, newest first.
func (s *Store) Approvals(limit int) ([]Approval, error) {
	return listRecords[Approval](s, BucketApprovals, limit, nil)
}

// AddLesson stores a lesson card and returns its ID.
func (s *Store) AddLesson(l Lesson) (string, error) {
	return s.appendRecord(BucketLessons, l.Time, func(id string, t time.Time) { l.ID = id; l.Time = t }, &l)
}

// Lessons returns up to limit lesson cards, newest first.
func (s *Store) Lessons(limit int) ([]Lesson, error) {
	return listRecords[Lesson](s, BucketLessons, limit, nil)
}

// AddVersion keeps a previous content and returns its ID.
func (s *Store) AddVersion(v Version) (string, error) {
	return s.appendRecord(BucketVersions, v.Time, func(id string, t time.Time) { v.ID = id; v.Time = t }, &v)
}

// Versions returns up to limit versions of the file at path (all files when
// path is empty), newest first.
func (s *Store) Versions(path string, limit int) ([]Version, error) {
	return listRecords(s, BucketVersions, limit, func(v *Version) bool { return path == "" || v.Path == path })
}

// Version returns the version with the given ID.
func (s *Store) Version(id string) (Version, error) {
	var v Version
	return v, s.getRecord(BucketVersions, id, &v)
}

// getRecord decodes the record with ID id of bucket into out.
func (s *Store) getRecord(bucket, id string, out any) error {
	key, err := hex.DecodeString(id)
	if err != nil || len(key) != 16 {
		return fmt.Errorf("store %s: %q is not a record ID", s.path, id)
	}
	return s.view(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte(bucket))
		var v []byte
		if b != nil {
			v = b.Get(key)
		}
		if v == nil {
			return fmt.Errorf("store %s: no %s record %s", s.path, bucket, id)
		}
		if err := json.Unmarshal(v, out); err != nil {
			return fmt.Errorf("store %s: decode %s record %s: %w", s.path, bucket, id, err)
		}
		return nil
	})
}
