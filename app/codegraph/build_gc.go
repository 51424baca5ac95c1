package codegraph

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

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
	return setGCPercentIf(buildGCPercent, func(prev int) bool { return prev > buildGCPercent })
}

// smallIndexBytes is the most source a project may have for its index to
// run at smallGCPercent: python3.11's stdlib (11 MB of source) keeps at most
// ≈ 50 MB live through its cold index, pyenv's stdlib (17,000 files) and
// go/src, whose peaks the targets above bound, are far above it.
const smallIndexBytes = 16 << 20

// smallGCPercent is the collector's target while a small project is
// indexed: its heap is small (a few tens of MB), and twice the room above
// it takes a few collections of the ≈ 17 a cold index of python3.11 runs,
// 2–3 % of the index's CPU, for 10–15 MB more resident memory
// (BENCHMARKS.md, "ninth round").
const smallGCPercent = 200

// loosenGCIfSmall raises the collector's target to smallGCPercent for the
// index of a project with at most smallIndexBytes of source, when the
// caller's target is the default (100), and returns what restores it. A
// larger project, or a target of the caller's own, is left alone.
func loosenGCIfSmall(srcBytes int64) (restore func()) {
	if srcBytes > smallIndexBytes {
		return func() {}
	}
	return setGCPercentIf(smallGCPercent, func(prev int) bool { return prev == 100 })
}

// setGCPercentIf sets the collector's target to pct when apply holds for
// the setting it replaces, and returns what restores that setting, unless
// something else changed the target meanwhile; when apply does not hold,
// the setting is put back at once and restore does nothing.
func setGCPercentIf(pct int, apply func(prev int) bool) (restore func()) {
	prev := debug.SetGCPercent(pct)
	if !apply(prev) {
		debug.SetGCPercent(prev)
		return func() {}
	}
	return func() {
		if cur := debug.SetGCPercent(prev); cur != pct {
			debug.SetGCPercent(cur)
		}
	}
}

// liveHeapBelow reports whether the live heap runtime/metrics last marked
// (no stop-the-world read) is below n bytes, or cannot be read.
func liveHeapBelow(n uint64) bool {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return s[0].Value.Kind() != metrics.KindUint64 || s[0].Value.Uint64() < n
}

// buildGCMinLive is the live heap (after the parse, before the build) below
// which a build keeps the caller's GC target: a small project's peak is no
// concern, and the tighter target's extra collections would cost it the
// same ≈ 10 % of CPU for nothing (/usr/lib/python3.11 has ≈ 60 MB live).
const buildGCMinLive = 128 << 20

// tightenGCIfLarge is tightenGC for a build whose live heap is already at
// least buildGCMinLive (runtime/metrics' last-marked live heap, no
// stop-the-world read); otherwise it changes nothing.
func tightenGCIfLarge() (restore func()) {
	if liveHeapBelow(buildGCMinLive) {
		return func() {}
	}
	return tightenGC()
}

// resolveGCPercent is the collector's target while a tightened full build
// resolves references. The end of resolution is the peak of a large cold
// index (every file's tables, records and edges are live there; pyenv's
// stdlib: ≈ 780 MB), so the heap's room above the live set is the part of
// the peak a target sets: 15 instead of 25 took pyenv's peak RSS from
// ≈ 1.16 to ≈ 1.07 GB (BENCHMARKS.md, "peak2"). The extra collections are
// paid for by the build allocating less (build_final.go, fillFileBuild).
const resolveGCPercent = 15

// resolveGCFrom is the share of the files resolved after which the
// resolution's target applies: the live heap grows through the resolution,
// and only the collections near its end set the peak; the earlier ones at
// the tighter target would cost CPU for nothing. From half the files on,
// pyenv's peak was 1.06–1.10 GB for +2.6–3.8 % CPU against 1b21816's code;
// from three quarters on, 1.07–1.11 GB for +0.8 % (same runs, lead's
// fourth-round section in BENCHMARKS.md): issue 11 asks for no worse CPU.
const resolveGCFrom = 0.75

// resolveGCMinLive is the live heap (last marked, when resolveGCFrom of
// the files are resolved) below which the resolution keeps the build's
// target: go/src (≈ 300–400 MB live, peak ≈ 500–600 MB, already under twice the graph it
// keeps) paid ≈ 5 % more CPU for it and no lower peak. pyenv's stdlib had
// ≈ 650 MB live there; after the sixth round's cuts it marks 499–528 MB
// (and go/src's CLI build at most ≈ 200 MB), so the line sits between the
// two with room on both sides rather than just under pyenv.
const resolveGCMinLive = 400 << 20

// tightenResolveGCIfLarge is tightenResolveGC when the live heap is at
// least resolveGCMinLive; otherwise it changes nothing.
func tightenResolveGCIfLarge() (restore func()) {
	if liveHeapBelow(resolveGCMinLive) {
		return func() {}
	}
	return tightenResolveGC()
}

// tightenResolveGC lowers the collector's target to resolveGCPercent when
// it is buildGCPercent (a full build that tightenGC tightened: a large
// project), and returns what restores it. Any other setting (a small
// project, an update, a caller's own) is left alone.
func tightenResolveGC() (restore func()) {
	return setGCPercentIf(resolveGCPercent, func(prev int) bool { return prev == buildGCPercent })
}

// preSpillGCMinLive is the live heap (last marked, when a final build's
// files are filled) from which the build's collector runs at
// resolveGCPercent until the references are spilled (build_final.go): in
// between, every file's tables, references and the argument index are live
// at once, and on pyenv's stdlib (≈ 300 MB live at that point; go/src
// ≈ 150 MB) the collections there set the cold index's highest GC goal:
// 523 MB at GOGC 25, with ≈ 380 MB live once the references are on disk.
const preSpillGCMinLive = 256 << 20

// tightenPreSpillGCIfLarge is tightenResolveGC when the live heap is at
// least preSpillGCMinLive; otherwise it changes nothing.
func tightenPreSpillGCIfLarge() (restore func()) {
	if liveHeapBelow(preSpillGCMinLive) {
		return func() {}
	}
	r := tightenResolveGC()
	return func() {
		// The last collection before the spill marked the references as
		// live; restored on that mark, the build's target would let the
		// heap grow a quarter above it before the next one. One now marks
		// what is left (pyenv: ≈ 415 → 380 MB).
		runtime.GC()
		r()
	}
}
