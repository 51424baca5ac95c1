package cli

import (
	"context"
	"flag"
	"fmt"
	"text/tabwriter"

	"codeloom/models"
)

// runModels implements `codeloom models [--json] [FOLDER...]`: the GGUF
// models found on this machine (~/models, LM Studio, the Hugging Face cache,
// llama.cpp's cache, Ollama's stores, and the folders given), read from
// their headers only, named as their stores name them: every NAME (and the
// aliases --json shows) is accepted by --model.
func runModels(ctx context.Context, env Env, args []string) int {
	fs := flag.NewFlagSet("models", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	asJSON := fs.Bool("json", false, "print the list as JSON")
	fs.Usage = func() {
		fmt.Fprintln(env.Stderr, "usage: codeloom models [--json] [FOLDER...]")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	for _, d := range fs.Args() {
		if code := checkDir(env, "models", d); code != ExitOK {
			return code
		}
	}
	found, err := models.Discover(ctx, models.DiscoverOptions{Folders: fs.Args()})
	if err != nil {
		fmt.Fprintf(env.Stderr, "codeloom models: %v\n", err)
		return ExitFailure
	}
	if *asJSON {
		if found == nil {
			found = []models.Found{}
		}
		if err := writeJSONValue(env.Stdout, found); err != nil {
			fmt.Fprintf(env.Stderr, "codeloom models: write: %v\n", err)
			return ExitFailure
		}
		return ExitOK
	}
	if len(found) == 0 {
		fmt.Fprintln(env.Stderr, "codeloom models: no GGUF models found (looked in ~/models, LM Studio, the Hugging Face and llama.cpp caches, and Ollama's stores)")
		return ExitOK
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME (--model)\tSOURCE\tARCH\tPARAMS\tQUANT\tCTX\tSIZE\tPATH")
	for _, f := range found {
		if f.Error != "" {
			fmt.Fprintf(tw, "%s\t%s\t-\t-\t-\t-\t-\t%s (unusable: %s)\n", f.Name, f.Source, f.Path, f.Error)
			continue
		}
		size := fmt.Sprintf("%.0f MB", float64(f.Size)/1e6)
		if f.Parts > 1 {
			size += fmt.Sprintf(" in %d parts", f.Parts)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", f.Name, f.Source, f.Architecture, humanCount(f.Parameters), f.FileType, f.ContextLength, size, f.Path)
	}
	if err := tw.Flush(); err != nil {
		fmt.Fprintf(env.Stderr, "codeloom models: write: %v\n", err)
		return ExitFailure
	}
	return ExitOK
}
