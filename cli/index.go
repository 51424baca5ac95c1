package cli

import "context"

// runIndex is a placeholder until its capability lands.
func runIndex(ctx context.Context, env Env, args []string) int { return notYet(env, "index") }
