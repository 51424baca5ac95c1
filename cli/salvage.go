package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"sort"

	"codeloom/app/memory"
)

// runSalvage implements `codeloom salvage FILE [--json]`: what can still be
// read from a damaged store (one CodeLoom moved aside as
// codeloom.db.damaged-<time>). The file is only read.
func runSalvage(_ context.Context, env Env, args []string) int {
	fs := flag.NewFlagSet("salvage", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	asJSON := fs.Bool("json", false, "print every readable record as JSON (bucket → records, oldest first)")
	fs.Usage = func() {
		fmt.Fprintln(env.Stderr, "usage: codeloom salvage FILE [--json]   (FILE: a .codeloom/codeloom.db.damaged-* copy)")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return ExitUsage
	}
	sv, err := memory.Salvage(fs.Arg(0))
	if err != nil {
		fmt.Fprintf(env.Stderr, "codeloom salvage: %v\n", err)
		return ExitFailure
	}
	if *asJSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(sv); err != nil {
			fmt.Fprintf(env.Stderr, "codeloom salvage: %v\n", err)
			return ExitFailure
		}
	} else {
		names := make([]string, 0, len(sv.Records))
		for n := range sv.Records {
			names = append(names, n)
		}
		sort.Strings(names)
		fmt.Fprintf(env.Stdout, "readable records in %s:\n", sv.File)
		for _, n := range names {
			fmt.Fprintf(env.Stdout, "  %-10s %d\n", n, len(sv.Records[n]))
		}
		fmt.Fprintln(env.Stdout, "(--json prints them)")
	}
	for _, p := range sv.Problems {
		fmt.Fprintf(env.Stderr, "unreadable: %s\n", p)
	}
	return ExitOK
}
