package cli

import "context"

// runTest is a placeholder until its capability lands.
func runTest(ctx context.Context, env Env, args []string) int { return notYet(env, "test") }
