// qcount: per-pattern work counters of a query over parsed files (instrumented query.c)
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "api.h"
extern unsigned long long qi_add[512], qi_visit[512], qi_copy[512], qi_cmp[512], qi_match[512], qi_leave[512];
const TSLanguage *tree_sitter_python(void);
static char *readall(const char *path, size_t *n) {
	FILE *f = fopen(path, "rb"); if (!f) return NULL;
	fseek(f, 0, SEEK_END); long l = ftell(f); fseek(f, 0, SEEK_SET);
	char *b = malloc(l + 1); *n = fread(b, 1, l, f); b[*n] = 0; fclose(f); return b;
}
int main(int argc, char **argv) {
	size_t qn; char *qsrc = readall(argv[1], &qn);
	uint32_t off; TSQueryError err;
	TSQuery *q = ts_query_new(tree_sitter_python(), qsrc, qn, &off, &err);
	if (!q) { fprintf(stderr, "query error %d at %u: %.60s\n", err, off, qsrc + off); return 1; }
	TSParser *p = ts_parser_new(); ts_parser_set_language(p, tree_sitter_python());
	TSQueryCursor *c = ts_query_cursor_new(); ts_query_cursor_set_max_start_depth(c, 96);
	char line[4096]; unsigned long long nodes = 0;
	while (fgets(line, sizeof line, stdin)) {
		line[strcspn(line, "\n")] = 0; size_t n; char *s = readall(line, &n); if (!s) continue;
		TSTree *t = ts_parser_parse_string(p, NULL, s, n);
		ts_query_cursor_exec(c, q, ts_tree_root_node(t));
		TSQueryMatch mm;
		while (ts_query_cursor_next_match(c, &mm)) qi_match[mm.pattern_index]++;
		ts_tree_delete(t); free(s);
	}
	uint32_t np = ts_query_pattern_count(q);
	unsigned long long T[6] = {0};
	for (uint32_t j = 0; j < np; j++) {
		uint32_t sb = ts_query_start_byte_for_pattern(q, j);
		const char *e = strchr(qsrc + sb, '\n'); int len = e ? (int)(e - (qsrc + sb)) : 80;
		printf("%u\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t%.*s\n", j, qi_visit[j], qi_leave[j], qi_add[j], qi_copy[j], qi_cmp[j], qi_match[j], len, qsrc + sb);
		T[0]+=qi_visit[j]; T[1]+=qi_leave[j]; T[2]+=qi_add[j]; T[3]+=qi_copy[j]; T[4]+=qi_cmp[j]; T[5]+=qi_match[j];
	}
	printf("total\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\n", T[0], T[1], T[2], T[3], T[4], T[5]);
	return 0;
}
