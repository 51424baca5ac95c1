package codegraph

import "runtime/debug"

// buildGCPercent is the collector's growth target (GOGC) during a full
// build. The build keeps nearly everything it allocates until it ends (the
// live heap grows from the parsed records to the graph), so with the
// default 100 the heap reached twice the live set at the end: the peak of a
// cold index. A lower target bounds the peak nearer to what is live, at the
// cost of more collections: on pyenv's stdlib 25 took the peak RSS from
// 1.8 to 1.2 GB for about 10 % more CPU (50: 1.47 GB, +3 %; 40: 1.32 GB,
// +7 %; BENCHMARKS.md, "mem" section).
const buildGCPercent = 25

// tightenGC lowers the collector's target for the duration of a full build
// and returns what restores the caller's setting. A setting already at or
// below the target (or collection turned off) is left alone, and so is one
// changed by something else while the build ran.
func tightenGC() (restore func()) {
	const pct = buildGCPercent
	prev := debug.SetGCPercent(pct)
	if prev < 0 || prev <= pct {
		debug.SetGCPercent(prev)
		return func() {}
	}
	return func() {
		if cur := debug.SetGCPercent(prev); cur != pct {
			debug.SetGCPercent(cur)
		}
	}
}
