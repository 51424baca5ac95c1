package codegraph

// Breadth-first walks over the class hierarchy (bases for member lookups,
// subclasses for dispatch) run for a good share of all references; each used
// to allocate a map and a queue (dispatchTargets alone: 1.1 GB of the 3.8 GB
// a cold index of pyenv's corpus allocated). A classWalk is reusable scratch
// for one walk, taken from and returned to the builder's pool, so walks
// running in parallel (files are resolved on all CPUs) or nested (a walk's
// callback evaluating values that walk again) each get their own.

// classWalkLinear is the queue length up to which membership is a linear
// scan of the queue (no map at all: most hierarchies are a few classes).
const classWalkLinear = 24

// classWalkKeep bounds the scratch a walk may return to the pool: a walk of
// a huge hierarchy should not keep its queue and map alive for small ones.
const classWalkKeep = 4096

// classWalk is the visited set and queue of one breadth-first walk. Every
// visited class is in queue exactly once, in the order first seen.
type classWalk struct {
	queue  []string
	seen   map[string]struct{} // queue[:mapped] once the queue outgrew linear search
	mapped int
}

// getWalk returns empty scratch with start as the first visited class.
func (b *builder) getWalk(start string) *classWalk {
	w, _ := b.walks.Get().(*classWalk)
	if w == nil {
		w = &classWalk{}
	}
	w.queue = append(w.queue[:0], start)
	return w
}

// putWalk returns w to the pool (dropping outsized scratch).
func (b *builder) putWalk(w *classWalk) {
	if cap(w.queue) > classWalkKeep {
		w.queue = nil
	}
	if w.mapped > 0 {
		if w.mapped > classWalkKeep {
			w.seen = nil
		} else {
			clear(w.seen)
		}
		w.mapped = 0
	}
	for i := range w.queue {
		w.queue[i] = "" // do not keep IDs alive from the pool
	}
	w.queue = w.queue[:0]
	b.walks.Put(w)
}

// visit adds id to the walk unless it was visited; it reports whether id is
// new.
func (w *classWalk) visit(id string) bool {
	if len(w.queue) <= classWalkLinear {
		for _, q := range w.queue {
			if q == id {
				return false
			}
		}
	} else {
		if w.seen == nil {
			w.seen = make(map[string]struct{}, 2*len(w.queue))
		}
		for ; w.mapped < len(w.queue); w.mapped++ {
			w.seen[w.queue[w.mapped]] = struct{}{}
		}
		if _, ok := w.seen[id]; ok {
			return false
		}
		w.seen[id] = struct{}{}
		w.mapped++
	}
	w.queue = append(w.queue, id)
	return true
}
