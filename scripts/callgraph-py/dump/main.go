// Command dump indexes a folder with the code graph engine (no cache) and
// writes its node-link JSON to stdout: the static side of the call-graph
// oracle harness (scripts/callgraph-py.sh, scripts/callgraph-js.sh).
//
//	go run ./scripts/callgraph-py/dump DIR > graph.json
package main

import (
	"context"
	"fmt"
	"os"

	"codeloom/app/codegraph"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: dump DIR")
		os.Exit(2)
	}
	p, err := codegraph.Open(context.Background(), os.Args[1], codegraph.Options{NoCache: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, "dump:", err)
		os.Exit(1)
	}
	defer p.Close()
	if err := codegraph.WriteJSON(os.Stdout, p.Graph()); err != nil {
		fmt.Fprintln(os.Stderr, "dump:", err)
		os.Exit(1)
	}
}
