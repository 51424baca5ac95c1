package cli

import "context"

// runLessons is a placeholder until its capability lands.
func runLessons(ctx context.Context, env Env, args []string) int { return notYet(env, "lessons") }
