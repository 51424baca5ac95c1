package cli

import (
	"fmt"
	"io"
	"os"
	"runtime/pprof"
)

// envQueryProfile names a file to which `codeloom query` writes a CPU
// profile of the whole command (read it with `go tool pprof BIN FILE`).
const envQueryProfile = "CODELOOM_QUERY_CPUPROFILE"

// startQueryProfile starts the CPU profile CODELOOM_QUERY_CPUPROFILE asks
// for and returns the function that ends it; a profile that cannot be
// written is reported on stderr and the query still runs.
func startQueryProfile(stderr io.Writer) func() {
	path := os.Getenv(envQueryProfile)
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(stderr, "codeloom query: cpu profile: %v\n", err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintf(stderr, "codeloom query: cpu profile: %v\n", err)
		f.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			fmt.Fprintf(stderr, "codeloom query: cpu profile: %v\n", err)
		}
	}
}
