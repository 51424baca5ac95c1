#!/usr/bin/env python3
"""Adds per-pattern work counters to a copy of tree-sitter's query.c (argv[1],
rewritten in place): states added, visited at each node entered and left,
copied (alternation branches, splits), compared (longest-match dedup) and
matches. qcount.c prints them."""
import sys

p = sys.argv[1]
s = open(p).read()


def rep(old, new):
    global s
    assert old in s, old
    s = s.replace(old, new, 1)


rep('#include <wctype.h>', '#include <wctype.h>\nunsigned long long qi_add[512], qi_visit[512], qi_copy[512], qi_cmp[512], qi_match[512], qi_leave[512];\n')
rep('''  uint32_t start_depth = self->depth - step->depth;

  // Keep the states array''', '''  uint32_t start_depth = self->depth - step->depth;
  qi_add[pattern->pattern_index]++;

  // Keep the states array''')
rep('''  uint32_t state_index = (uint32_t)(state - self->states.contents);
  QueryState copy = *state;''', '''  uint32_t state_index = (uint32_t)(state - self->states.contents);
  qi_copy[state->pattern_index]++;
  QueryState copy = *state;''')
rep('''          state->has_in_progress_alternatives = false;
          copy_count = 0;
''', '''          state->has_in_progress_alternatives = false;
          copy_count = 0;
          qi_visit[state->pattern_index]++;
''')
rep('''            bool left_contains_right, right_contains_left;
            ts_query_cursor__compare_captures(''', '''            bool left_contains_right, right_contains_left;
            qi_cmp[state->pattern_index]++;
            ts_query_cursor__compare_captures(''')
rep('''          QueryStep *step = &self->query->steps.contents[state->step_index];

          // If a state completed its pattern inside of this node''', '''          QueryStep *step = &self->query->steps.contents[state->step_index];
          qi_leave[state->pattern_index]++;

          // If a state completed its pattern inside of this node''')
open(p, 'w').write(s)
