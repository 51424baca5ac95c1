package cli

import "context"

// runHistory is a placeholder until its capability lands.
func runHistory(ctx context.Context, env Env, args []string) int { return notYet(env, "history") }
