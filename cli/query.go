package cli

import "context"

// runQuery is a placeholder until its capability lands.
func runQuery(ctx context.Context, env Env, args []string) int { return notYet(env, "query") }
