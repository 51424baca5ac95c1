package cli

import "context"

// runSearch is a placeholder until its capability lands.
func runSearch(ctx context.Context, env Env, args []string) int { return notYet(env, "search") }
