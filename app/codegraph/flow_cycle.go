package codegraph

import "math"

// flowBusy is an evaluation of a flow source (mk) or of a parameter's
// values (pk, param set).
type flowBusy struct {
	mk    flowMemoKey
	pk    hintKey
	param bool
}

// Cycles. Values flow around loops (a parameter passed on to a function
// that passes it back; a variable assigned from itself): an evaluation that
// reaches one still in progress gets nothing from it, so its result can be
// incomplete. Such results (those that reached an evaluation below them on
// the stack) are memoised only until the lowest evaluation of the loop is
// done, which has then seen every value entering the loop; they are
// evaluated again when asked later (Tarjan's low link, without the
// components).

// enter pushes evaluation e; it returns its level and the low link to
// restore.
func (fe *flowEval) enter(e flowBusy) (lvl, low int) {
	fe.stack = append(fe.stack, e)
	low = fe.low
	fe.low = math.MaxInt
	return len(fe.stack) - 1, low
}

// leave pops the evaluation at lvl and reports that its result is partial
// (it reached an evaluation still in progress below it). When lvl closes
// the loops above it, the partial results memoised meanwhile are dropped.
func (fe *flowEval) leave(lvl, low int) (partial bool) {
	fe.stack = fe.stack[:lvl]
	if fe.low < lvl {
		fe.low = min(low, fe.low)
		return true
	}
	fe.low = low
	if len(fe.partial) > 0 && len(fe.stack) <= fe.partialAt {
		for _, e := range fe.partial {
			if e.param {
				delete(fe.params, e.pk)
			} else {
				delete(fe.memo, e.mk)
			}
		}
		fe.partial = fe.partial[:0]
		fe.partialAt = math.MaxInt
	}
	return false
}

// hitBusy records that evaluation e, still in progress, was reached again.
func (fe *flowEval) hitBusy(e flowBusy) {
	for i := len(fe.stack) - 1; i >= 0; i-- {
		if fe.stack[i] == e {
			fe.low = min(fe.low, i)
			fe.partialAt = min(fe.partialAt, i)
			return
		}
	}
}
