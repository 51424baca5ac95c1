package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"

	"codeloom/app/pipeline"
)

// runLessons implements `codeloom lessons DIR [--json] [--limit N]`: the
// lesson cards the pipeline wrote (task, what failed, what fixed it, the
// change), newest first.
func runLessons(ctx context.Context, env Env, args []string) int {
	fs := flag.NewFlagSet("lessons", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	asJSON := fs.Bool("json", false, "print the lesson cards as JSON")
	limit := fs.Int("limit", 0, "at most this many cards (0 = all)")
	fs.Usage = func() {
		fmt.Fprintln(env.Stderr, "usage: codeloom lessons DIR [--json] [--limit N]")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(env.Stderr, "codeloom lessons: need exactly one folder (codeloom lessons DIR)")
		return ExitUsage
	}
	dir := fs.Arg(0)
	if code := checkDir(env, "lessons", dir); code != ExitOK {
		return code
	}
	st, ok, code := openHistory(env, "lessons", dir)
	if !ok {
		return code
	}
	defer st.Close()
	lessons, err := st.Lessons(*limit)
	if err != nil {
		fmt.Fprintf(env.Stderr, "codeloom lessons: %v\n", err)
		return ExitFailure
	}
	if *asJSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(lessons); err != nil {
			fmt.Fprintf(env.Stderr, "codeloom lessons: %v\n", err)
			return ExitFailure
		}
		return ExitOK
	}
	if len(lessons) == 0 {
		fmt.Fprintf(env.Stdout, "no lesson cards in %s yet\n", dir)
		return ExitOK
	}
	fmt.Fprintf(env.Stdout, "%d lesson card(s), newest first\n\n", len(lessons))
	for _, l := range lessons {
		fmt.Fprint(env.Stdout, pipeline.LessonMarkdown(l))
	}
	return ExitOK
}
