package cli

import "context"

// runTask is a placeholder until its capability lands.
func runTask(ctx context.Context, env Env, args []string) int { return notYet(env, "task") }
