package models

import (
	"errors"
	"fmt"
)

// ErrIncomplete marks a model answer that was cut off before the model ended
// it: the token limit was reached (finish_reason "length", the in-process
// engine's MaxTokens or context end), or a server's stream stopped without
// its end marker. Engines return the text produced so far together with an
// *IncompleteError, which matches ErrIncomplete with errors.Is. An incomplete
// answer must never be applied as if it were whole.
var ErrIncomplete = errors.New("the answer is incomplete")

// IncompleteError says why an answer is incomplete.
type IncompleteError struct {
	// Reason is "length" (a token limit), "context" (the context is full) or
	// "stream" (the server's stream ended without its end marker).
	Reason string
	// Limit is the token limit that was reached (0 when unknown).
	Limit int
}

// Reasons an answer is incomplete.
const (
	IncompleteLength  = "length"
	IncompleteContext = "context"
	IncompleteStream  = "stream"
)

func (e *IncompleteError) Error() string {
	switch e.Reason {
	case IncompleteLength:
		if e.Limit > 0 {
			return fmt.Sprintf("the answer was cut off at the limit of %d tokens", e.Limit)
		}
		return "the answer was cut off at the token limit"
	case IncompleteContext:
		return "the answer was cut off: the model's context is full"
	case IncompleteStream:
		return "the server's answer stream ended before the answer was finished"
	}
	return ErrIncomplete.Error() + ": " + e.Reason
}

// Is makes errors.Is(err, ErrIncomplete) true.
func (e *IncompleteError) Is(target error) bool { return target == ErrIncomplete }

// IsIncomplete reports whether err says the answer was cut off.
func IsIncomplete(err error) bool { return errors.Is(err, ErrIncomplete) }
