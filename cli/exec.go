package cli

import "context"

// runExec is a placeholder until its capability lands.
func runExec(ctx context.Context, env Env, args []string) int { return notYet(env, "exec") }
