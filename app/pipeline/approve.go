package pipeline

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
)

// Question kinds.
const (
	AskApply    = "apply"    // "Apply this patch?"
	AskRun      = "run"      // "Run this?" (generated code, gates, probes)
	AskConfirm  = "confirm"  // "Is this what you wanted?"
	AskGuidance = "guidance" // free text after max_fix_attempts, or "what is wrong?"
	AskNext     = "next"     // "Add another feature?"
	AskKind     = "kind"     // which kind of request this is, when no model decides
	AskRollback = "rollback" // "Roll back the N changes this task made?" after a failed task
)

// Question is something the pipeline asks the user.
type Question struct {
	Kind   string // one of the Ask* constants
	Title  string // the question, one line
	Detail string // what it is about: a diff, a command with its limits, gate output
}

// Approver answers yes/no questions.
type Approver interface {
	Approve(ctx context.Context, q Question) (bool, error)
}

// Guidance answers free-text questions; an empty answer means "stop".
type Guidance interface {
	Guide(ctx context.Context, q Question) (string, error)
}

// automatic is implemented by approvers that answer without a person; their
// answers are recorded with Auto set.
type automatic interface {
	Automatic() bool
}

// TerminalApprover asks on a terminal: the question and its detail are
// written to out, the answer read as a line from in ("y"/"yes" is yes,
// anything else no). It also implements Guidance. One goroutine reads in,
// so a question abandoned by a cancelled context does not steal the next
// answer.
type TerminalApprover struct {
	mu    sync.Mutex
	in    *bufio.Reader
	out   io.Writer
	once  sync.Once
	lines chan lineResult
	err   error // sticky end of input
}

type lineResult struct {
	s   string
	err error
}

// NewTerminalApprover returns an approver reading answers from in and
// writing questions to out.
func NewTerminalApprover(in io.Reader, out io.Writer) *TerminalApprover {
	return &TerminalApprover{in: bufio.NewReader(in), out: out, lines: make(chan lineResult)}
}

// readLine reads one answer line, giving up when ctx ends.
func (t *TerminalApprover) readLine(ctx context.Context) (string, error) {
	if t.err != nil {
		return "", t.err
	}
	t.once.Do(func() {
		go func() {
			for {
				s, err := t.in.ReadString('\n')
				if err != nil && s != "" && errors.Is(err, io.EOF) {
					t.lines <- lineResult{s: s}
					s = ""
				}
				if err != nil {
					if errors.Is(err, io.EOF) {
						err = errors.New("no answer: input closed")
					} else {
						err = fmt.Errorf("read answer: %w", err)
					}
					t.lines <- lineResult{err: err}
					return
				}
				t.lines <- lineResult{s: s}
			}
		}()
	})
	select {
	case <-ctx.Done():
		return "", fmt.Errorf("waiting for an answer: %w", ctx.Err())
	case r := <-t.lines:
		if r.err != nil {
			t.err = r.err
			return "", r.err
		}
		return strings.TrimSpace(r.s), nil
	}
}

// Approve implements Approver.
func (t *TerminalApprover) Approve(ctx context.Context, q Question) (bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if q.Detail != "" {
		fmt.Fprintf(t.out, "%s\n", strings.TrimRight(q.Detail, "\n"))
	}
	fmt.Fprintf(t.out, "%s [y/N] ", q.Title)
	s, err := t.readLine(ctx)
	if err != nil {
		fmt.Fprintln(t.out)
		return false, err
	}
	s = strings.ToLower(s)
	return s == "y" || s == "yes", nil
}

// Guide implements Guidance.
func (t *TerminalApprover) Guide(ctx context.Context, q Question) (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if q.Detail != "" {
		fmt.Fprintf(t.out, "%s\n", strings.TrimRight(q.Detail, "\n"))
	}
	fmt.Fprintf(t.out, "%s\n> ", q.Title)
	return t.readLine(ctx)
}

// AutoApprover answers yes without asking, for the question kinds in Yes
// (every kind except "next" when Yes is nil), and no to the rest. Every
// automatic answer is logged (and reported to Notify when set): never silent.
// As a Guidance it always answers "" (stop), so an autonomous run never loops
// forever.
type AutoApprover struct {
	Yes    map[string]bool
	Logger *slog.Logger
	Notify func(q Question, answer bool)
}

// Automatic marks the answers as not given by a person.
func (a *AutoApprover) Automatic() bool { return true }

// Approve implements Approver.
func (a *AutoApprover) Approve(ctx context.Context, q Question) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	yes := q.Kind != AskNext
	if a.Yes != nil {
		yes = a.Yes[q.Kind]
	}
	log := a.Logger
	if log == nil {
		log = slog.Default()
	}
	log.Info("auto-approval", "kind", q.Kind, "question", q.Title, "answer", yes)
	if a.Notify != nil {
		a.Notify(q, yes)
	}
	return yes, nil
}

// Guide implements Guidance: autonomous runs stop instead of guessing.
func (a *AutoApprover) Guide(ctx context.Context, q Question) (string, error) {
	if a.Notify != nil {
		a.Notify(q, false)
	}
	return "", ctx.Err()
}

// ScriptedApprover answers from per-kind queues, for tests. When a kind's
// queue is empty the answer is Default (and "" for guidance). Every question
// is kept in Asked.
type ScriptedApprover struct {
	mu       sync.Mutex
	Answers  map[string][]bool
	Guidance []string
	Default  bool
	Asked    []Question
}

// Approve implements Approver.
func (s *ScriptedApprover) Approve(ctx context.Context, q Question) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Asked = append(s.Asked, q)
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if qs := s.Answers[q.Kind]; len(qs) > 0 {
		s.Answers[q.Kind] = qs[1:]
		return qs[0], nil
	}
	return s.Default, nil
}

// Guide implements Guidance.
func (s *ScriptedApprover) Guide(ctx context.Context, q Question) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Asked = append(s.Asked, q)
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if len(s.Guidance) > 0 {
		g := s.Guidance[0]
		s.Guidance = s.Guidance[1:]
		return g, nil
	}
	return "", nil
}

// Questions returns a copy of the questions asked so far.
func (s *ScriptedApprover) Questions() []Question {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Question(nil), s.Asked...)
}

// AskedKind counts the questions of one kind asked so far.
func (s *ScriptedApprover) AskedKind(kind string) int {
	n := 0
	for _, q := range s.Questions() {
		if q.Kind == kind {
			n++
		}
	}
	return n
}
