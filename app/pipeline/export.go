package pipeline

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"codeloom/app/memory"
)

// HistoryReader is the part of the memory store history export reads;
// *memory.Store satisfies it.
type HistoryReader interface {
	Activities(limit int) ([]memory.Activity, error)
	Exchanges(session string, limit int) ([]memory.Exchange, error)
	Approvals(limit int) ([]memory.Approval, error)
	Runs(limit int) ([]memory.RunRecord, error)
	Lessons(limit int) ([]memory.Lesson, error)
	Versions(path string, limit int) ([]memory.Version, error)
}

// SessionLog is the recorded history of one pipeline session (or, with an
// empty Session, of every session), oldest first.
type SessionLog struct {
	Session    string             `json:"session,omitempty"`
	Start      time.Time          `json:"start"`
	End        time.Time          `json:"end"`
	Activities []memory.Activity  `json:"activities"`
	Exchanges  []memory.Exchange  `json:"exchanges"`
	Approvals  []memory.Approval  `json:"approvals"`
	Runs       []memory.RunRecord `json:"runs"`
	Versions   []VersionInfo      `json:"versions"`
	Lessons    []memory.Lesson    `json:"lessons"`
}

// VersionInfo describes a kept previous version without its content.
type VersionInfo struct {
	ID     string    `json:"id"`
	Time   time.Time `json:"time"`
	Path   string    `json:"path"`
	Bytes  int       `json:"bytes"`
	Reason string    `json:"reason"`
}

// SessionOf returns the session an activity belongs to ("" if none).
func SessionOf(a memory.Activity) string {
	if !strings.HasPrefix(a.Detail, "session=") {
		return ""
	}
	s := strings.TrimPrefix(a.Detail, "session=")
	if i := strings.IndexByte(s, ';'); i >= 0 {
		s = s[:i]
	}
	return s
}

// Sessions lists the pipeline sessions recorded in the store, newest first.
func Sessions(r HistoryReader) ([]string, error) {
	acts, err := r.Activities(0)
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	seen := map[string]bool{}
	var out []string
	for _, a := range acts {
		if s := SessionOf(a); s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out, nil
}

// ExportSession gathers a session's records. Runs and versions carry no
// session ID: those recorded between the session's first and last activity
// are included. An empty session exports everything (limit records of each
// kind, 0 = all).
func ExportSession(r HistoryReader, session string, limit int) (*SessionLog, error) {
	log := &SessionLog{Session: session}
	acts, err := r.Activities(0)
	if err != nil {
		return nil, fmt.Errorf("export history: %w", err)
	}
	for _, a := range acts {
		if session == "" || SessionOf(a) == session {
			log.Activities = append(log.Activities, a)
		}
	}
	if session != "" && len(log.Activities) == 0 {
		return nil, fmt.Errorf("export history: no session %q in this project's memory", session)
	}
	if log.Exchanges, err = r.Exchanges(session, 0); err != nil {
		return nil, fmt.Errorf("export history: %w", err)
	}
	apps, err := r.Approvals(0)
	if err != nil {
		return nil, fmt.Errorf("export history: %w", err)
	}
	for _, a := range apps {
		if session == "" || a.Session == session {
			log.Approvals = append(log.Approvals, a)
		}
	}
	// time window of the session
	for i, a := range log.Activities {
		end := a.Time
		start := a.Time.Add(-a.Duration)
		if i == 0 || start.Before(log.Start) {
			log.Start = start
		}
		if end.After(log.End) {
			log.End = end
		}
	}
	in := func(t time.Time) bool {
		return session == "" || (!t.Before(log.Start.Add(-time.Second)) && !t.After(log.End.Add(time.Second)))
	}
	runs, err := r.Runs(0)
	if err != nil {
		return nil, fmt.Errorf("export history: %w", err)
	}
	for _, run := range runs {
		if in(run.Start) {
			run.Samples = nil
			log.Runs = append(log.Runs, run)
		}
	}
	vers, err := r.Versions("", 0)
	if err != nil {
		return nil, fmt.Errorf("export history: %w", err)
	}
	for _, v := range vers {
		if session == "" || strings.Contains(v.Reason, session) {
			log.Versions = append(log.Versions, VersionInfo{ID: v.ID, Time: v.Time, Path: v.Path, Bytes: len(v.Content), Reason: v.Reason})
		}
	}
	lessons, err := r.Lessons(0)
	if err != nil {
		return nil, fmt.Errorf("export history: %w", err)
	}
	for _, l := range lessons {
		if in(l.Time) {
			log.Lessons = append(log.Lessons, l)
		}
	}
	log.oldestFirst(limit)
	return log, nil
}

// oldestFirst sorts every list oldest first and keeps the newest limit.
func (l *SessionLog) oldestFirst(limit int) {
	keep := func(n int) int {
		if limit > 0 && n > limit {
			return n - limit
		}
		return 0
	}
	sort.SliceStable(l.Activities, func(i, j int) bool { return l.Activities[i].Time.Before(l.Activities[j].Time) })
	sort.SliceStable(l.Exchanges, func(i, j int) bool { return l.Exchanges[i].Time.Before(l.Exchanges[j].Time) })
	sort.SliceStable(l.Approvals, func(i, j int) bool { return l.Approvals[i].Time.Before(l.Approvals[j].Time) })
	sort.SliceStable(l.Runs, func(i, j int) bool { return l.Runs[i].Start.Before(l.Runs[j].Start) })
	sort.SliceStable(l.Versions, func(i, j int) bool { return l.Versions[i].Time.Before(l.Versions[j].Time) })
	sort.SliceStable(l.Lessons, func(i, j int) bool { return l.Lessons[i].Time.Before(l.Lessons[j].Time) })
	l.Activities = l.Activities[keep(len(l.Activities)):]
	l.Exchanges = l.Exchanges[keep(len(l.Exchanges)):]
	l.Approvals = l.Approvals[keep(len(l.Approvals)):]
	l.Runs = l.Runs[keep(len(l.Runs)):]
	l.Versions = l.Versions[keep(len(l.Versions)):]
	l.Lessons = l.Lessons[keep(len(l.Lessons)):]
}

// Markdown renders the log as a Markdown document.
func (l *SessionLog) Markdown() string {
	var b strings.Builder
	title := "CodeLoom history"
	if l.Session != "" {
		title = "CodeLoom session " + l.Session
	}
	fmt.Fprintf(&b, "# %s\n\n", title)
	if !l.Start.IsZero() {
		fmt.Fprintf(&b, "%s – %s\n\n", l.Start.Format(time.RFC3339), l.End.Format(time.RFC3339))
	}
	ts := func(t time.Time) string { return t.Local().Format("15:04:05") }
	cell := func(s string) string {
		s = strings.ReplaceAll(strings.TrimSpace(s), "\n", " ")
		return strings.ReplaceAll(clipText(s, 200), "|", "\\|")
	}
	if len(l.Activities) > 0 {
		b.WriteString("## Steps\n\n| time | action | outcome | duration | detail |\n|---|---|---|---|---|\n")
		for _, a := range l.Activities {
			detail := a.Detail
			if s := SessionOf(a); s != "" {
				detail = strings.TrimPrefix(strings.TrimPrefix(detail, "session="+s), "; ")
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", ts(a.Time), a.Action, a.Outcome, a.Duration.Round(time.Millisecond), cell(detail))
		}
		b.WriteString("\n")
	}
	if len(l.Approvals) > 0 {
		b.WriteString("## Questions\n\n")
		for _, a := range l.Approvals {
			ans := "no"
			if a.Answer {
				ans = "yes"
			}
			if a.Auto {
				ans += " (automatic)"
			}
			fmt.Fprintf(&b, "- %s %s → **%s**\n", ts(a.Time), a.Question, ans)
		}
		b.WriteString("\n")
	}
	if len(l.Exchanges) > 0 {
		b.WriteString("## Model exchanges\n\n")
		for _, e := range l.Exchanges {
			fmt.Fprintf(&b, "### %s %s (%s)\n\n<details><summary>prompt</summary>\n\n````\n%s\n````\n</details>\n\n````\n%s\n````\n\n",
				ts(e.Time), e.Role, e.Duration.Round(time.Millisecond), strings.TrimSpace(e.Prompt), strings.TrimSpace(e.Answer))
		}
	}
	if len(l.Runs) > 0 {
		b.WriteString("## Runs\n\n| time | origin | command | exit | wall | cpu | peak RSS |\n|---|---|---|---|---|---|---|\n")
		for _, r := range l.Runs {
			exit := fmt.Sprint(r.ExitCode)
			if r.Limit != "" {
				exit += " (" + r.Limit + ")"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %.1f MB |\n", ts(r.Start), r.Origin, cell(strings.Join(r.Command, " ")), exit,
				r.Wall.Round(time.Millisecond), (r.CPUUser + r.CPUSys).Round(time.Millisecond), float64(r.PeakRSS)/(1<<20))
		}
		b.WriteString("\n")
	}
	if len(l.Versions) > 0 {
		b.WriteString("## Previous versions kept\n\n")
		for _, v := range l.Versions {
			fmt.Fprintf(&b, "- %s `%s` (%d bytes) %s — id %s\n", ts(v.Time), v.Path, v.Bytes, v.Reason, v.ID)
		}
		b.WriteString("\n")
	}
	if len(l.Lessons) > 0 {
		b.WriteString("## Lessons\n\n")
		for _, le := range l.Lessons {
			b.WriteString(LessonMarkdown(le))
		}
	}
	return b.String()
}

// LessonMarkdown renders one lesson card.
func LessonMarkdown(l memory.Lesson) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### %s\n\n", strings.TrimSpace(l.Task))
	fmt.Fprintf(&b, "- when: %s\n", l.Time.Local().Format(time.RFC3339))
	if len(l.Tags) > 0 {
		fmt.Fprintf(&b, "- tags: %s\n", strings.Join(l.Tags, ", "))
	}
	if l.Failure != "" {
		fmt.Fprintf(&b, "- what failed: %s\n", l.Failure)
	}
	if l.DiffSummary != "" {
		fmt.Fprintf(&b, "- change: %s\n", strings.ReplaceAll(l.DiffSummary, "\n", "; "))
	}
	if l.Fix != "" {
		fmt.Fprintf(&b, "- what fixed it:\n\n```\n%s\n```\n", l.Fix)
	}
	b.WriteString("\n")
	return b.String()
}
