package cli

import "context"

// runAsk is a placeholder until its capability lands.
func runAsk(ctx context.Context, env Env, args []string) int { return notYet(env, "ask") }
