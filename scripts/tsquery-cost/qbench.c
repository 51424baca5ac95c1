// qbench: parse files once, then time a tree-sitter query over all trees
// with subsets of its patterns (ts_query_disable_pattern).
// usage: qbench QUERYFILE REPS MODE < filelist (one path a line)
//   MODE all: every pattern; minus: all, and all minus each pattern;
//   only: each pattern alone (and none: the traversal alone);
//   dump: print every match (file, pattern, captures) for diffs.
// Thread CPU time, the least of REPS runs, configurations interleaved.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "api.h"

const TSLanguage *tree_sitter_python(void);

static double tcpu(void) {
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static char *readall(const char *path, size_t *n) {
	FILE *f = fopen(path, "rb");
	if (!f) return NULL;
	fseek(f, 0, SEEK_END);
	long l = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *b = malloc(l + 1);
	*n = fread(b, 1, l, f);
	b[*n] = 0;
	fclose(f);
	return b;
}

static TSTree **trees;
static int ntrees;

static TSQuery *compile(const char *src, size_t n) {
	uint32_t off;
	TSQueryError err;
	TSQuery *q = ts_query_new(tree_sitter_python(), src, n, &off, &err);
	if (!q) {
		fprintf(stderr, "query error %d at %u: %.60s\n", err, off, src + off);
		exit(1);
	}
	return q;
}

__attribute__((noinline)) double runq(TSQuery *q, long *matches, long *caps) {
	TSQueryCursor *c = ts_query_cursor_new();
	ts_query_cursor_set_max_start_depth(c, 96);
	double t0 = tcpu();
	long m = 0, k = 0;
	for (int i = 0; i < ntrees; i++) {
		ts_query_cursor_exec(c, q, ts_tree_root_node(trees[i]));
		TSQueryMatch mm;
		while (ts_query_cursor_next_match(c, &mm)) {
			m++;
			k += mm.capture_count;
		}
	}
	double t = tcpu() - t0;
	ts_query_cursor_delete(c);
	if (matches) *matches = m;
	if (caps) *caps = k;
	return t;
}

int main(int argc, char **argv) {
	if (argc < 4) return 2;
	size_t qn;
	char *qsrc = readall(argv[1], &qn);
	int reps = atoi(argv[2]);
	const char *mode = argv[3];
	char line[4096];
	int cap = 1024;
	trees = malloc(cap * sizeof *trees);
	TSParser *p = ts_parser_new();
	ts_parser_set_language(p, tree_sitter_python());
	double tp = 0;
	char **srcs = malloc(cap * sizeof *srcs);
	while (fgets(line, sizeof line, stdin)) {
		line[strcspn(line, "\n")] = 0;
		size_t n;
		char *s = readall(line, &n);
		if (!s) continue;
		double t0 = tcpu();
		TSTree *t = ts_parser_parse_string(p, NULL, s, n);
		tp += tcpu() - t0;
		if (ntrees == cap) {
			cap *= 2;
			trees = realloc(trees, cap * sizeof *trees);
			srcs = realloc(srcs, cap * sizeof *srcs);
		}
		srcs[ntrees] = s;
		trees[ntrees++] = t;
	}
	double t0 = tcpu();
	TSQuery *q = compile(qsrc, qn);
	double tc = tcpu() - t0;
	uint32_t np = ts_query_pattern_count(q);
	fprintf(stderr, "%d files parsed in %.3f s; query of %u patterns compiled in %.4f s\n", ntrees, tp, np, tc);
	if (!strcmp(mode, "dump")) {
		TSQueryCursor *c = ts_query_cursor_new();
		ts_query_cursor_set_max_start_depth(c, 96);
		for (int i = 0; i < ntrees; i++) {
			ts_query_cursor_exec(c, q, ts_tree_root_node(trees[i]));
			TSQueryMatch mm;
			while (ts_query_cursor_next_match(c, &mm)) {
				printf("%d %u", i, mm.pattern_index);
				for (int j = 0; j < mm.capture_count; j++) {
					uint32_t ln;
					const char *nm = ts_query_capture_name_for_id(q, mm.captures[j].index, &ln);
					printf(" %.*s:%u-%u", (int)ln, nm, ts_node_start_byte(mm.captures[j].node), ts_node_end_byte(mm.captures[j].node));
				}
				printf("\n");
			}
		}
		return 0;
	}
	if (!strcmp(mode, "all")) {
		double best = 1e9;
		long m, k;
		for (int r = 0; r < reps; r++) {
			double t = runq(q, &m, &k);
			if (t < best) best = t;
		}
		printf("all %.4f s matches %ld captures %ld\n", best, m, k);
		return 0;
	}
	// configurations: -1 = all (or empty for only); i = minus i / only i
	int nc = np + 1;
	TSQuery **qs = malloc(nc * sizeof *qs);
	double *best = malloc(nc * sizeof *best);
	long *mt = malloc(nc * sizeof *mt);
	int only = !strcmp(mode, "only");
	for (int i = 0; i < nc; i++) {
		qs[i] = compile(qsrc, qn);
		best[i] = 1e9;
		for (uint32_t j = 0; j < np; j++) {
			int keep = only ? (int)j == i - 1 : (int)j != i - 1;
			if (!keep) ts_query_disable_pattern(qs[i], j);
		}
	}
	for (int r = 0; r < reps; r++) {
		for (int i = 0; i < nc; i++) {
			long m;
			double t = runq(qs[i], &m, NULL);
			if (t < best[i]) best[i] = t;
			mt[i] = m;
		}
		fprintf(stderr, "rep %d done\n", r);
	}
	printf("%s base %.4f\n", only ? "empty" : "all", best[0]);
	for (uint32_t j = 0; j < np; j++) {
		uint32_t sb = ts_query_start_byte_for_pattern(q, j);
		const char *e = strchr(qsrc + sb, '\n');
		int len = e ? (int)(e - (qsrc + sb)) : 80;
		printf("%u\t%.4f\t%+.4f\t%ld\t%.*s\n", j, best[j + 1], only ? best[j + 1] - best[0] : best[0] - best[j + 1], mt[j + 1], len, qsrc + sb);
	}
	return 0;
}
