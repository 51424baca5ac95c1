package codegraph

/*
#include <stdint.h>
#include <stdbool.h>
#include <stdlib.h>

// The tree-sitter C API, declared here rather than included: the library and
// grammars are compiled into the binary by github.com/smacker/go-tree-sitter
// (imported by the language files), so only the prototypes are needed.
typedef struct TSLanguage TSLanguage;
typedef struct TSParser TSParser;
typedef struct TSTree TSTree;
typedef struct TSQuery TSQuery;
typedef struct TSQueryCursor TSQueryCursor;
typedef struct { uint32_t context[4]; const void *id; const TSTree *tree; } TSNode;
typedef struct { TSNode node; uint32_t index; } TSQueryCapture;
typedef struct { uint32_t row; uint32_t column; } TSPoint;
typedef struct {
	uint32_t start_byte, old_end_byte, new_end_byte;
	TSPoint start_point, old_end_point, new_end_point;
} TSInputEdit;
typedef struct { uint32_t id; uint16_t pattern_index; uint16_t capture_count; const TSQueryCapture *captures; } TSQueryMatch;

extern TSParser *ts_parser_new(void);
extern void ts_parser_delete(TSParser *);
extern bool ts_parser_set_language(TSParser *, const TSLanguage *);
extern TSTree *ts_parser_parse_string(TSParser *, const TSTree *, const char *, uint32_t);
extern void ts_parser_reset(TSParser *);
extern void ts_tree_delete(TSTree *);
extern void ts_tree_edit(TSTree *, const TSInputEdit *);
extern TSNode ts_tree_root_node(const TSTree *);
extern bool ts_node_has_error(TSNode);
extern uint32_t ts_node_start_byte(TSNode);
extern uint32_t ts_node_end_byte(TSNode);
extern TSQuery *ts_query_new(const TSLanguage *, const char *, uint32_t, uint32_t *, int *);
extern void ts_query_delete(TSQuery *);
extern uint32_t ts_query_capture_count(const TSQuery *);
extern const char *ts_query_capture_name_for_id(const TSQuery *, uint32_t, uint32_t *);
extern TSQueryCursor *ts_query_cursor_new(void);
extern void ts_query_cursor_delete(TSQueryCursor *);
extern void ts_query_cursor_exec(TSQueryCursor *, const TSQuery *, TSNode);
extern bool ts_query_cursor_next_match(TSQueryCursor *, TSQueryMatch *);
extern void ts_query_cursor_set_max_start_depth(TSQueryCursor *, uint32_t);
extern uint32_t ts_node_descendant_count(TSNode);
extern uint16_t ts_node_symbol(TSNode);
extern uint16_t ts_language_symbol_for_name(const TSLanguage *, const char *, uint32_t, bool);
extern uint32_t ts_node_child_count(TSNode);
extern TSNode ts_node_child(TSNode, uint32_t);
extern bool ts_node_is_named(TSNode);
typedef struct { const void *tree; const void *id; uint32_t context[3]; } TSTreeCursor;
extern TSTreeCursor ts_tree_cursor_new(TSNode);
extern void ts_tree_cursor_delete(TSTreeCursor *);
extern void ts_tree_cursor_reset(TSTreeCursor *, TSNode);
extern TSNode ts_tree_cursor_current_node(const TSTreeCursor *);
extern bool ts_tree_cursor_goto_first_child(TSTreeCursor *);
extern bool ts_tree_cursor_goto_next_sibling(TSTreeCursor *);
extern bool ts_tree_cursor_goto_parent(TSTreeCursor *);

typedef struct {
	uint32_t *data;
	size_t len, cap;
	int has_error;
	int ok;
	uint32_t safe_end; // with split: where the next part starts (0: no progress possible)
	int forced;        // with force: safe_end was cut inside a top-level node
	// Set by the caller: only[id*only_words ...] is the bitset of node
	// symbols capture id keeps when only_ids[id] is set (NULL: no filters).
	const uint64_t *only;
	const uint8_t *only_ids;
	uint32_t only_words, only_n;
	// Set by the caller: kids[id*CL_KID_MAX*2 ...] are the children rules
	// of capture id (see cl_kids), kids_n the ids covered (NULL: none).
	const uint16_t *kids;
	uint32_t kids_n;
	TSTreeCursor kid_cursor; // cl_kids' (when kid_cursor_set), reset for each node
	int kid_cursor_set;
	// Set by the caller: the sub query (see cl_run_sub), NULL for none;
	// sub_cap is the main query's capture id marking the nodes it runs
	// from, sub_base the id its own captures are reported under.
	const TSQuery *sub;
	TSQueryCursor *sub_cursor;
	uint32_t sub_cap, sub_base;
} cl_result;

// CL_KID_MAX is how many children rules one capture may have.
#define CL_KID_MAX 16

// cl_keep_node reports whether node n passes capture id's filter.
static int cl_keep_node(const cl_result *r, uint32_t id, TSNode n) {
	if (id >= r->only_n || !r->only_ids[id]) return 1;
	uint32_t s = ts_node_symbol(n);
	return s / 64 < r->only_words && ((r->only[id * r->only_words + s / 64] >> (s % 64)) & 1);
}

// cl_reserve makes room for n more values in r.
static int cl_reserve(cl_result *r, size_t n) {
	if (r->len + n <= r->cap) return 1;
	size_t nc = r->cap ? r->cap * 2 : 8192;
	while (nc < r->len + n) nc *= 2;
	uint32_t *nd = realloc(r->data, nc * sizeof(uint32_t));
	if (!nd) return 0;
	r->data = nd;
	r->cap = nc;
	return 1;
}

// cl_push_match appends m to r, its sub-th capture (-1: none) replaced by
// node sub: room for the whole match is made once.
static int cl_push_match_ids(cl_result *r, const TSQueryMatch *m, int sub, TSNode subnode, uint32_t id_base) {
	if (!cl_reserve(r, 2 + 3 * (size_t)m->capture_count)) return 0;
	uint32_t *d = r->data + r->len;
	*d++ = m->pattern_index;
	*d++ = m->capture_count;
	for (uint16_t i = 0; i < m->capture_count; i++) {
		TSNode nd = (int)i == sub ? subnode : m->captures[i].node;
		uint32_t start = ts_node_start_byte(nd);
		*d++ = m->captures[i].index + id_base;
		*d++ = start;
		*d++ = ts_node_end_byte(nd);
	}
	r->len = (size_t)(d - r->data);
	return 1;
}

static int cl_push_match(cl_result *r, const TSQueryMatch *m, int sub, TSNode subnode) {
	return cl_push_match_ids(r, m, sub, subnode, 0);
}

// cl_kids appends m once for every node its k-th capture's children rules
// reach, that capture replaced by the node (when it passes the capture's
// filter): rule (outer, 0) takes every named child of a captured outer node,
// rule (outer, inner) every named child of its named children of type inner.
// `(_) @object.kids` with rules (boolean_operator, 0) finds what
// `(boolean_operator (_) @object)` finds, without a pattern step for the
// operator, whose analysis ts_query_new pays for every process and whose
// alternations the cursor runs as one state per branch (see language.captureKids).
static int cl_kids(cl_result *r, const TSQueryMatch *m, int k) {
	uint32_t id = m->captures[k].index;
	const uint16_t *rule = r->kids + id * CL_KID_MAX * 2;
	TSNode n = m->captures[k].node;
	uint16_t sym = ts_node_symbol(n);
	// A tree cursor, not ts_node_child(n, i): that costs O(i), which would
	// make an argument list of many arguments quadratic.
	TSTreeCursor *tc = &r->kid_cursor;
	for (int j = 0; j < CL_KID_MAX && rule[2 * j]; j++) {
		if (rule[2 * j] != sym) continue;
		uint16_t inner = rule[2 * j + 1];
		if (!r->kid_cursor_set) {
			*tc = ts_tree_cursor_new(n);
			r->kid_cursor_set = 1;
		} else {
			ts_tree_cursor_reset(tc, n);
		}
		if (!ts_tree_cursor_goto_first_child(tc)) continue;
		do {
			TSNode c = ts_tree_cursor_current_node(tc);
			if (!ts_node_is_named(c)) continue;
			if (!inner) {
				if (cl_keep_node(r, id, c) && !cl_push_match(r, m, k, c)) return 0;
				continue;
			}
			if (ts_node_symbol(c) != inner || !ts_tree_cursor_goto_first_child(tc)) continue;
			do {
				TSNode g = ts_tree_cursor_current_node(tc);
				if (ts_node_is_named(g) && cl_keep_node(r, id, g) && !cl_push_match(r, m, k, g)) return 0;
			} while (ts_tree_cursor_goto_next_sibling(tc));
			ts_tree_cursor_goto_parent(tc);
		} while (ts_tree_cursor_goto_next_sibling(tc));
	}
	return 1;
}

// CL_BAND is how many levels of the tree one query pass starts matches in.
//
// A tree-sitter query cursor keeps an in-progress state for every pattern
// started at every ancestor of the node it visits, and looks at each of them
// at every node: on deeply nested code (f(f(f(...))) 10,000 levels deep) that
// is quadratic. So a pass starts matches only in CL_BAND levels
// (ts_query_cursor_set_max_start_depth) and the nodes just below the band
// get passes of their own, which keeps the states per node bounded and the
// whole run linear. A pattern started inside a band still finishes below it
// (the cursor descends as far as its steps need), and one that starts just
// below it is found by the next pass: no match is lost or found twice. A
// file no deeper than the band (every ordinary file) gets one pass, exactly
// as before.
#define CL_BAND 96

typedef struct {
	TSNode *data;
	size_t len, cap;
} cl_nodes;

static int cl_nodes_push(cl_nodes *s, TSNode n) {
	if (s->len == s->cap) {
		size_t nc = s->cap ? s->cap * 2 : 64;
		TSNode *nd = realloc(s->data, nc * sizeof(TSNode));
		if (!nd) return 0;
		s->data = nd;
		s->cap = nc;
	}
	s->data[s->len++] = n;
	return 1;
}

// cl_below_band appends to out the visible descendants of n exactly band+1
// levels below it (none when band is UINT32_MAX, one unbounded pass). A subtree with fewer descendants than the levels still to
// go cannot reach that depth and is not entered, so on ordinary code this
// looks at a handful of nodes near the top of the tree.
static int cl_below_band(TSNode n, uint32_t band, cl_nodes *out) {
	if (band == UINT32_MAX) return 1;
	const uint32_t want = band + 1;
	if (ts_node_descendant_count(n) <= want) return 1;
	TSTreeCursor tc = ts_tree_cursor_new(n);
	uint32_t depth = 0;
	int ok = 1;
	for (;;) {
		TSNode cur = ts_tree_cursor_current_node(&tc);
		int descend = 0;
		if (depth == want) {
			if (!cl_nodes_push(out, cur)) { ok = 0; break; }
		} else if (ts_node_descendant_count(cur) - 1 >= want - depth) {
			descend = 1;
		}
		if (descend && ts_tree_cursor_goto_first_child(&tc)) {
			depth++;
			continue;
		}
		while (depth > 0 && !ts_tree_cursor_goto_next_sibling(&tc)) {
			ts_tree_cursor_goto_parent(&tc);
			depth--;
		}
		if (depth == 0) break;
	}
	ts_tree_cursor_delete(&tc);
	return ok;
}

// Flags of a capture id for cl_run's match loop; CL_FLAGS_MAX is the most
// capture ids whose table cl_run keeps on its stack (more are malloc'ed).
#define CL_FLAG_ONLY 1
#define CL_FLAG_KIDS 2
#define CL_FLAG_SUB 4
#define CL_FLAGS_MAX 256

// cl_flags fills fl with the flags of capture ids 0..n-1 and returns it.
static const uint8_t *cl_flags(const cl_result *r, uint8_t *fl, uint32_t n) {
	for (uint32_t id = 0; id < n; id++) {
		uint8_t f = 0;
		if (r->only && id < r->only_n && r->only_ids[id]) f |= CL_FLAG_ONLY;
		if (r->kids && id < r->kids_n && r->kids[id * CL_KID_MAX * 2]) f |= CL_FLAG_KIDS;
		if (r->sub && id == r->sub_cap) f |= CL_FLAG_SUB;
		fl[id] = f;
	}
	return fl;
}

// cl_before reports whether a capture of m starts before safe (split
// parts keep only those matches: see cl_run).
static int cl_before(const TSQueryMatch *m, uint32_t safe) {
	for (uint16_t i = 0; i < m->capture_count; i++) {
		if (ts_node_start_byte(m->captures[i].node) < safe) return 1;
	}
	return 0;
}

// cl_run_sub runs the sub query from each node of subs (in order), its
// matches only starting at that node (max start depth 0), and appends them
// with their capture ids moved to sub_base. A pattern of the main query
// that starts at a big node and waits for something among its children
// (the statements of a module, of a class body) is an in-progress state
// the main cursor looks at for every node of that subtree (python3.11:
// 2.6 of the 12.3 million state visits); run from the node itself, the
// sub query's cursor descends only where one of its states needs to.
static int cl_run_sub(cl_result *r, const cl_nodes *subs, int split, uint32_t safe) {
	TSQueryCursor *c = r->sub_cursor;
	for (size_t i = 0; i < subs->len; i++) {
		ts_query_cursor_set_max_start_depth(c, 0);
		ts_query_cursor_exec(c, r->sub, subs->data[i]);
		TSQueryMatch m;
		while (ts_query_cursor_next_match(c, &m)) {
			if (split && !cl_before(&m, safe)) continue;
			if (!cl_push_match_ids(r, &m, -1, (TSNode){0}, r->sub_base)) return 0;
		}
	}
	return 1;
}

// cl_run parses src and runs q over the tree, returning every match as
// [pattern, capture count, (capture id, start byte, end byte)...]: one C call
// per file instead of several per captured node. A match whose filter capture
// (r->only, see language.captureTypes) holds a node of another type is left
// out: one wildcard step and this check instead of an alternation, which
// tree-sitter runs as one in-progress state per branch. Matches come in document
// order within each band (see CL_BAND); the bands of a deep file follow one
// another.
// The result buffer r is reused from call to call (its data grows and is
// kept), so large files do not cost a fresh allocation each time.
//
// When old is not NULL it is the previous tree of the same file, already
// edited with ts_tree_edit: tree-sitter then re-parses incrementally, reusing
// the unchanged subtrees. When keep is set the new tree is returned (the
// caller owns it) instead of being deleted.
//
// With split set, src is one part of a larger file cut at an arbitrary
// line: its last top-level node may be incomplete, so the matches that lie
// wholly inside it are dropped, safe_end is set to where it starts (the next
// part begins there) and has_error only covers the nodes before it.
// cl_line_cut returns where to cut a part whose single top-level node runs
// past its end: the latest start, before n, of a node on the part's right
// edge (the last child, its last child, ...) or one of their children, that
// begins its line (only blanks before it). 0 when there is none.
static uint32_t cl_line_cut(TSNode root, const char *src, uint32_t n) {
	uint32_t best = 0;
	TSNode node = root;
	for (int depth = 0; depth < 100000; depth++) {
		uint32_t kids = ts_node_child_count(node);
		if (kids == 0) break;
		TSNode next = ts_node_child(node, kids - 1);
		for (uint32_t i = kids; i-- > 0;) {
			TSNode ch = ts_node_child(node, i);
			uint32_t s = ts_node_start_byte(ch);
			if (s >= n) continue;
			uint32_t j = s;
			while (j > 0 && (src[j-1] == ' ' || src[j-1] == '\t')) j--;
			if (s > best && j > 0 && src[j-1] == '\n') best = j;
			next = ch;
			break;
		}
		if (ts_node_end_byte(next) < n) break;
		node = next;
	}
	return best;
}

// With force set (a part at its largest size whose only top-level node is
// not finished), cl_run cuts inside that node (cl_line_cut) and sets
// forced, instead of returning safe_end 0.
static TSTree *cl_run(TSParser *p, TSQueryCursor *c, const TSQuery *q, const char *src, uint32_t n, cl_result *r, TSTree *old, int keep, uint32_t band, int split, int force) {
	r->len = 0;
	r->has_error = 0;
	r->ok = 0;
	r->forced = 0;
	TSTree *t = ts_parser_parse_string(p, old, src, n);
	if (!t) {
		ts_parser_reset(p);
		return NULL;
	}
	TSNode root = ts_tree_root_node(t);
	r->has_error = ts_node_has_error(root);
	r->ok = 1;
	uint32_t safe = n;
	if (split) {
		uint32_t kids = ts_node_child_count(root);
		safe = kids >= 2 ? ts_node_start_byte(ts_node_child(root, kids - 1)) : 0;
		r->safe_end = safe;
		r->has_error = 0;
		// A cursor walk: ts_node_child(root, i) costs O(i), which made
		// this quadratic in the top-level statements of a part.
		if (kids >= 2) {
			TSTreeCursor tc = ts_tree_cursor_new(root);
			uint32_t i = 0;
			if (ts_tree_cursor_goto_first_child(&tc)) {
				do {
					if (ts_node_has_error(ts_tree_cursor_current_node(&tc))) { r->has_error = 1; break; }
				} while (++i + 1 < kids && ts_tree_cursor_goto_next_sibling(&tc));
			}
			ts_tree_cursor_delete(&tc);
		}
		if (safe == 0 && force) {
			safe = cl_line_cut(root, src, n);
			if (safe == 0) { // no node starts a line: cut after the last whole line
				for (uint32_t j = n - 1; j > 0 && safe == 0; j--) {
					if (src[j-1] == '\n') safe = j;
				}
			}
			r->safe_end = safe;
			r->forced = safe > 0;
		}
		if (safe == 0) {
			ts_tree_delete(t);
			return NULL;
		}
	}
	ts_query_cursor_set_max_start_depth(c, band);
	// What each capture id is to the match loop (filter, children, sub
	// query marker): one table instead of a loop over the captures for each.
	uint8_t flbuf[CL_FLAGS_MAX];
	uint32_t nfl = ts_query_capture_count(q);
	uint8_t *flmem = nfl <= CL_FLAGS_MAX ? flbuf : malloc(nfl);
	const uint8_t *fl = flmem ? cl_flags(r, flmem, nfl) : NULL;
	cl_nodes todo = {0}, subs = {0};
	if (!fl || !cl_nodes_push(&todo, root)) r->ok = -1;
	for (size_t next = 0; r->ok > 0 && next < todo.len; next++) {
		TSNode top = todo.data[next];
		ts_query_cursor_exec(c, q, top);
		TSQueryMatch m;
		while (ts_query_cursor_next_match(c, &m)) {
			if (split && !cl_before(&m, safe)) continue;
			// One look at each capture: the sub-query marker (s), the
			// first children capture (k), and every other filter capture's
			// node against its types (keep).
			int k = -1, s = -1, keep = 1;
			for (uint16_t i = 0; i < m.capture_count; i++) {
				uint32_t id = m.captures[i].index;
				uint8_t f = id < nfl ? fl[id] : 0;
				if (!f) continue;
				if ((f & CL_FLAG_SUB) && s < 0) s = i;
				if ((f & CL_FLAG_KIDS) && k < 0) {
					k = i;
				} else if ((f & CL_FLAG_ONLY) && !cl_keep_node(r, id, m.captures[i].node)) {
					keep = 0;
				}
			}
			if (s >= 0) { // a node to run the sub query from, not a match
				if (!cl_nodes_push(&subs, m.captures[s].node)) { r->ok = -1; break; }
				continue;
			}
			if (!keep) continue;
			if (k >= 0 ? !cl_kids(r, &m, k) : !cl_push_match(r, &m, -1, (TSNode){0})) { r->ok = -1; break; }
		}
		if (r->ok > 0 && !cl_below_band(top, band, &todo)) r->ok = -1;
	}
	if (r->ok > 0 && subs.len > 0 && !cl_run_sub(r, &subs, split, safe)) r->ok = -1;
	free(todo.data);
	free(subs.data);
	if (flmem != flbuf) free(flmem);
	if (keep && r->ok > 0) return t;
	ts_tree_delete(t);
	return NULL;
}

static cl_result *cl_result_new(void) { return calloc(1, sizeof(cl_result)); }
static void cl_result_free(cl_result *r) {
	if (!r) return;
	if (r->kid_cursor_set) ts_tree_cursor_delete(&r->kid_cursor);
	free(r->data);
	free(r);
}

static TSQuery *cl_query_new(const TSLanguage *l, const char *src, uint32_t n, uint32_t *off, int *typ) {
	return ts_query_new(l, src, n, off, typ);
}
*/
import "C"

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unsafe"

	sitter "github.com/smacker/go-tree-sitter"
)

// compiledQuery is a compiled query. It is immutable once compiled, so one query
// is shared by the runners of every worker (each with its own cursor).
type compiledQuery struct {
	lang  *C.TSLanguage
	query *C.TSQuery
	// sub is the query's sub query (see subQueryMarker), nil for none.
	sub *C.TSQuery
	// names are the capture names by id: the main query's, then the sub
	// query's (reported from id subBase on).
	names   []string
	subBase int
	subCap  int // the main query's capture id of subCapture (-1: none)
}

// subQueryMarker starts a query's sub query: the patterns after it run
// from each node the patterns before it capture as @sub (subCapture), and
// only start at that node (see cl_run_sub). They report their matches after
// the main query's, with their own capture names (which may not be filter
// or children captures). A pattern rooted at a big node that waits for
// something among its children (the statements of a module, of a class
// body) costs the main cursor a look at every node below it; from the sub
// query it costs a walk of those children.
const subQueryMarker = "\n;; sub query: run from @sub nodes\n"

// subCapture is the capture name marking the nodes the sub query runs from.
const subCapture = "sub"

// compileQuery compiles query (with its sub query, if it has one) for
// grammar.
func compileQuery(grammar *sitter.Language, query string) (*compiledQuery, error) {
	lp := langPtr(grammar)
	main, sub, hasSub := strings.Cut(query, subQueryMarker)
	q, names, err := compileOne(lp, main, 0)
	if err != nil {
		return nil, err
	}
	tq := &compiledQuery{lang: lp, query: q, names: names, subBase: len(names), subCap: slices.Index(names, subCapture)}
	if !hasSub {
		return tq, nil
	}
	if tq.subCap < 0 {
		tq.close()
		return nil, fmt.Errorf("query has a sub query but no @%s capture", subCapture)
	}
	if tq.sub, names, err = compileOne(lp, sub, len(main)+len(subQueryMarker)); err != nil {
		tq.close()
		return nil, err
	}
	tq.names = append(tq.names, names...)
	return tq, nil
}

// compileOne compiles src (which starts at byte at of the whole query, for
// error messages) and returns it with its capture names.
func compileOne(lp *C.TSLanguage, src string, at int) (*C.TSQuery, []string, error) {
	cq := C.CString(src)
	defer C.free(unsafe.Pointer(cq))
	var off C.uint32_t
	var typ C.int
	q := C.cl_query_new(lp, cq, C.uint32_t(len(src)), &off, &typ)
	if q == nil {
		return nil, nil, fmt.Errorf("query error type %d at offset %d: %.40q", int(typ), at+int(off), src[min(int(off), len(src)):])
	}
	n := int(C.ts_query_capture_count(q))
	names := make([]string, 0, n)
	for i := 0; i < n; i++ {
		var ln C.uint32_t
		s := C.ts_query_capture_name_for_id(q, C.uint32_t(i), &ln)
		names = append(names, C.GoStringN(s, C.int(ln)))
	}
	return q, names, nil
}

// symbol returns the grammar's symbol for a node type as a query names it
// (named: "identifier"; anonymous: "=="), 0 when there is none. It is the
// symbol a matched node of that type reports (ts_node_symbol), as tree-sitter
// resolves the names in a query.
func (q *compiledQuery) symbol(name string, named bool) uint16 {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	return uint16(C.ts_language_symbol_for_name(q.lang, cs, C.uint32_t(len(name)), C.bool(named)))
}

// close frees the compiled query; no runner may use it afterwards.
func (q *compiledQuery) close() {
	if q.query != nil {
		C.ts_query_delete(q.query)
		q.query = nil
	}
	if q.sub != nil {
		C.ts_query_delete(q.sub)
		q.sub = nil
	}
}

// tsRunner owns a C parser and query cursor for one language and runs a
// query (its own or a shared one); not safe for concurrent use.
type tsRunner struct {
	parser *C.TSParser
	q      *compiledQuery
	ownQ   bool // the query is closed with the runner
	// only and onlyIDs back res.only and res.only_ids (C memory, freed
	// with the runner).
	only    *C.uint64_t
	onlyIDs *C.uint8_t
	kids    *C.uint16_t // backs res.kids (C memory, freed with the runner)
	cursor  *C.TSQueryCursor
	sub     *C.TSQueryCursor // the sub query's (nil: none)
	res     *C.cl_result     // reused result buffer
	// onePass runs the query in one unbounded pass instead of bands of
	// CL_BAND levels (tests compare the two).
	onePass bool
	// chunkAt, chunkLen and maxPart are chunkThreshold, chunkSize and
	// maxPartSize (tests lower them).
	chunkAt, chunkLen, maxPart int
}

// langPtr extracts the C TSLanguage pointer of a go-tree-sitter Language
// (its only field).
func langPtr(l *sitter.Language) *C.TSLanguage {
	return *(**C.TSLanguage)(unsafe.Pointer(l))
}

// newTSRunner compiles query for grammar into a runner that owns it.
func newTSRunner(grammar *sitter.Language, query string) (*tsRunner, error) {
	q, err := compileQuery(grammar, query)
	if err != nil {
		return nil, err
	}
	r, err := newQueryRunner(q)
	if err != nil {
		q.close()
		return nil, err
	}
	r.ownQ = true
	return r, nil
}

// newQueryRunner returns a runner of the shared query q.
func newQueryRunner(q *compiledQuery) (*tsRunner, error) {
	p := C.ts_parser_new()
	if !C.ts_parser_set_language(p, q.lang) {
		C.ts_parser_delete(p)
		return nil, errors.New("incompatible grammar version")
	}
	r := &tsRunner{parser: p, q: q, cursor: C.ts_query_cursor_new(), res: C.cl_result_new(), chunkAt: chunkThreshold, chunkLen: chunkSize, maxPart: maxPartSize}
	if r.res == nil {
		r.close()
		return nil, errors.New("out of memory")
	}
	if q.sub != nil {
		r.sub = C.ts_query_cursor_new()
		r.res.sub, r.res.sub_cursor = q.sub, r.sub
		r.res.sub_cap, r.res.sub_base = C.uint32_t(q.subCap), C.uint32_t(q.subBase)
	}
	return r, nil
}

// keptTree is the syntax tree of a file kept after a parse, with the source
// it was parsed from, so that the next version of the file is parsed
// incrementally. Not safe for concurrent use; free with free.
type keptTree struct {
	tree *C.TSTree
	src  []byte
	lang *language
}

// free deletes the C tree.
func (k *keptTree) free() {
	if k != nil && k.tree != nil {
		C.ts_tree_delete(k.tree)
		k.tree = nil
	}
}

// point returns the row and column (in bytes) of byte offset off of src.
func point(src []byte, off int) C.TSPoint {
	row, lineStart := 0, 0
	for i := 0; i < off; i++ {
		if src[i] == '\n' {
			row++
			lineStart = i + 1
		}
	}
	return C.TSPoint{row: C.uint32_t(row), column: C.uint32_t(off - lineStart)}
}

// inputEdit describes old → src as one replaced span (common prefix and
// suffix kept), the form ts_tree_edit takes.
func inputEdit(old, src []byte) C.TSInputEdit {
	n := min(len(old), len(src))
	pre := 0
	for pre < n && old[pre] == src[pre] {
		pre++
	}
	suf := 0
	for suf < n-pre && old[len(old)-1-suf] == src[len(src)-1-suf] {
		suf++
	}
	oldEnd, newEnd := len(old)-suf, len(src)-suf
	return C.TSInputEdit{
		start_byte:    C.uint32_t(pre),
		old_end_byte:  C.uint32_t(oldEnd),
		new_end_byte:  C.uint32_t(newEnd),
		start_point:   point(old, pre),
		old_end_point: point(old, oldEnd),
		new_end_point: point(src, newEnd),
	}
}

// run parses src and returns the flattened matches and whether the tree has
// syntax errors. The returned slice points into C memory owned by r and is
// valid only until the next call to run or close.
//
// When kt is not nil it is the file's kept tree: a tree left by the previous
// parse is edited and reused (incremental parse), and the new tree replaces
// it. Only trees without syntax errors are reused, so that error recovery
// can never make an incremental parse differ from a fresh one.
func (r *tsRunner) run(src []byte, kt *keptTree) ([]uint32, bool, error) {
	if len(src) == 0 {
		src = []byte{'\n'}
	}
	p := (*C.char)(unsafe.Pointer(&src[0]))
	var old *C.TSTree
	keep := C.int(0)
	if kt != nil {
		keep = 1
		if kt.tree != nil {
			e := inputEdit(kt.src, src)
			C.ts_tree_edit(kt.tree, &e)
			old = kt.tree
		}
	}
	band := C.uint32_t(C.CL_BAND)
	if r.onePass {
		band = C.UINT32_MAX
	}
	t := C.cl_run(r.parser, r.cursor, r.q.query, p, C.uint32_t(len(src)), r.res, old, keep, band, 0, 0)
	if kt != nil {
		kt.free()
		if t != nil && r.res.has_error == 0 {
			kt.tree, kt.src = t, src
		} else if t != nil {
			C.ts_tree_delete(t)
		}
	}
	switch {
	case r.res.ok == 0:
		return nil, false, errors.New("tree-sitter returned no tree")
	case r.res.ok < 0:
		return nil, false, errors.New("out of memory collecting query matches")
	}
	if r.res.len == 0 {
		return nil, r.res.has_error != 0, nil
	}
	return unsafe.Slice((*uint32)(unsafe.Pointer(r.res.data)), int(r.res.len)), r.res.has_error != 0, nil
}

// Files above chunkThreshold are parsed in parts of about chunkSize bytes:
// a tree-sitter tree costs about 60 times its source (a 50 MB file took
// 5 GB), so one tree per part bounds the parser's memory per worker. Each
// part ends before its last top-level node (which the cut may have split);
// the next part starts there. An ordinary file is one part.
//
// A part whose one top-level node does not end in it is widened (doubled)
// up to maxPartSize; past that the node itself is cut at a line where one of
// its statements or elements starts (see chunkedResult.forced): the parser's
// memory stays bounded whatever the file, at the price of an approximate
// index of that one node, which the caller reports. maxPartSize is one
// chunk: a 2 MB part's tree (~120 MB of C memory) on top of the references
// a huge file yields took a 6 MB one-function file past 512 MB.
const (
	chunkThreshold = 4 << 20
	chunkSize      = 1 << 20
	maxPartSize    = 1 << 20
)

// chunkedResult is what runChunked learnt besides the matches.
type chunkedResult struct {
	syntax bool // a part before the first forced cut had syntax errors
	// forced is the byte offset of the first cut made inside a top-level
	// node bigger than maxPartSize (-1: none); bigNode is that node's start.
	forced, bigNode int
}

// runChunked parses src part by part, calling consume with each part's
// matches (as run returns them, valid only during the call) and the part's
// byte offset in src.
func (r *tsRunner) runChunked(src []byte, consume func(flat []uint32, base uint32)) (chunkedResult, error) {
	res := chunkedResult{forced: -1, bigNode: -1}
	size := r.chunkLen
	inBig := false // the previous part was cut inside a big node
	for base := 0; base < len(src); {
		end := len(src)
		if base+size < len(src) {
			end = base + size
			if i := bytes.IndexByte(src[end:], '\n'); i >= 0 {
				end += i + 1
			} else {
				end = len(src)
			}
		}
		last := end == len(src)
		part := src[base:end]
		split := C.int(0)
		if !last {
			split = 1
		}
		band := C.uint32_t(C.CL_BAND)
		if r.onePass {
			band = C.UINT32_MAX
		}
		force := C.int(0)
		if size >= r.maxPart {
			force = 1
		}
		C.cl_run(r.parser, r.cursor, r.q.query, (*C.char)(unsafe.Pointer(&part[0])), C.uint32_t(len(part)), r.res, nil, 0, band, split, force)
		if !last && r.res.safe_end == 0 && r.res.ok > 0 {
			size *= 2 // one top-level node bigger than the part: widen it
			continue
		}
		switch {
		case r.res.ok == 0:
			return res, errors.New("tree-sitter returned no tree")
		case r.res.ok < 0:
			return res, errors.New("out of memory collecting query matches")
		}
		// A part that starts inside a big node parses out of context, and
		// so may the next ones (where the node ends is unknown): their
		// syntax errors are the cuts', not the file's.
		if res.forced < 0 {
			res.syntax = res.syntax || r.res.has_error != 0
		}
		if r.res.len > 0 {
			consume(unsafe.Slice((*uint32)(unsafe.Pointer(r.res.data)), int(r.res.len)), uint32(base))
		}
		if last {
			break
		}
		if r.res.forced != 0 && res.forced < 0 {
			res.forced, res.bigNode = base+int(r.res.safe_end), base
		}
		inBig = r.res.forced != 0
		base += int(r.res.safe_end)
		if !inBig {
			size = r.chunkLen
		}
	}
	return res, nil
}

// setOnly makes the runner leave out the matches whose capture id i holds a
// node whose symbol is not in only[i] (nil: any node); see
// language.captureTypes.
func (r *tsRunner) setOnly(only [][]uint16) error {
	words := 0
	for _, syms := range only {
		for _, s := range syms {
			words = max(words, int(s)/64+1)
		}
	}
	n := len(only)
	bp, ip := C.calloc(C.size_t(max(n*words, 1)), 8), C.calloc(C.size_t(max(n, 1)), 1)
	if bp == nil || ip == nil {
		C.free(bp)
		C.free(ip)
		return fmt.Errorf("out of memory for the filter tables of %d captures", n)
	}
	bits := unsafe.Slice((*uint64)(bp), max(n*words, 1))
	ids := unsafe.Slice((*uint8)(ip), max(n, 1))
	for id, syms := range only {
		if syms == nil {
			continue
		}
		ids[id] = 1
		for _, s := range syms {
			bits[id*words+int(s)/64] |= 1 << (s % 64)
		}
	}
	r.freeOnly()
	r.only, r.onlyIDs = (*C.uint64_t)(unsafe.Pointer(&bits[0])), (*C.uint8_t)(unsafe.Pointer(&ids[0]))
	r.res.only, r.res.only_ids = r.only, r.onlyIDs
	r.res.only_words, r.res.only_n = C.uint32_t(words), C.uint32_t(n)
	return nil
}

// kidRule is a children rule of a capture (see cl_kids): the named
// children of a captured node of type outer, or (inner != 0) those of its
// named children of type inner.
type kidRule struct{ outer, inner uint16 }

// setKids makes the runner report a match whose capture id i has children
// rules kids[i] once for every node the rules reach from the captured node,
// in its place (nil: the match as it is); see language.captureKids.
func (r *tsRunner) setKids(kids [][]kidRule) error {
	n := len(kids)
	tp := C.calloc(C.size_t(max(n, 1)*C.CL_KID_MAX*2), 2)
	if tp == nil {
		return fmt.Errorf("out of memory for the children rules of %d captures", n)
	}
	tab := unsafe.Slice((*uint16)(tp), max(n, 1)*C.CL_KID_MAX*2)
	for id, rules := range kids {
		if len(rules) > C.CL_KID_MAX {
			C.free(unsafe.Pointer(&tab[0]))
			return fmt.Errorf("capture %d has %d children rules, at most %d", id, len(rules), C.CL_KID_MAX)
		}
		for j, k := range rules {
			tab[(id*C.CL_KID_MAX+j)*2], tab[(id*C.CL_KID_MAX+j)*2+1] = k.outer, k.inner
		}
	}
	r.freeKids()
	r.kids = (*C.uint16_t)(unsafe.Pointer(&tab[0]))
	r.res.kids, r.res.kids_n = r.kids, C.uint32_t(n)
	return nil
}

// freeKids frees setKids' table.
func (r *tsRunner) freeKids() {
	if r.kids != nil {
		C.free(unsafe.Pointer(r.kids))
		r.kids = nil
	}
	if r.res != nil {
		r.res.kids, r.res.kids_n = nil, 0
	}
}

// freeOnly frees setOnly's tables.
func (r *tsRunner) freeOnly() {
	if r.only != nil {
		C.free(unsafe.Pointer(r.only))
		C.free(unsafe.Pointer(r.onlyIDs))
		r.only, r.onlyIDs = nil, nil
	}
	if r.res != nil {
		r.res.only, r.res.only_ids, r.res.only_n = nil, nil, 0
	}
}

// close frees the C objects.
func (r *tsRunner) close() {
	r.freeOnly()
	r.freeKids()
	C.cl_result_free(r.res)
	r.res = nil
	C.ts_query_cursor_delete(r.cursor)
	if r.sub != nil {
		C.ts_query_cursor_delete(r.sub)
		r.sub = nil
	}
	if r.ownQ {
		r.q.close()
	}
	C.ts_parser_delete(r.parser)
}
