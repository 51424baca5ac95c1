package workflow

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"codeloom/models"
)

// DefaultDraftTries bounds how often Draft asks the model.
const DefaultDraftTries = 3

const draftInstructions = `You are the overseer. Decompose the user's request into a workflow: a YAML document with
id, description, version, inputs, outputs and steps. Each step has an id (letters, digits, _), a type and
the fields of its type:
  llm: prompt (a Go text/template; {{.name}} inserts an input or an earlier step's output), optional role
       (architect, coder, tester, debugger)
  run: command (a shell command string, or a list of arguments)
  approve: question (yes/no asked to the user)
  patch: patch (edit blocks for the project's files)
Optional step fields: output, timeout (e.g. 30s), retries, backoff, depends_on (list of step ids), group,
continue_on_error. Steps without dependencies between them run in parallel. Put concrete values in the
steps rather than inputs when the request gives them. Answer with the YAML in one fenced block.
Allowed types: %s.

Example:
` + "```yaml" + `
id: hello
description: greet in parallel, then join
version: "1"
inputs:
  - name: who
    default: world
outputs:
  - name: greeting
    value: "{{.joined}}"
steps:
  - id: hello
    type: run
    command: ["echo", "hello"]
  - id: name
    type: run
    command: ["echo", "{{.who}}"]
  - id: joined
    type: run
    command: ["echo", "{{.hello}}, {{.name}}!"]
` + "```"

var fenceRE = regexp.MustCompile("(?s)```(?:ya?ml)?[ \\t]*\\n(.*?)\\n```")

// extractYAML returns the first fenced block of answer, or the whole answer.
func extractYAML(answer string) string {
	if m := fenceRE.FindStringSubmatch(answer); m != nil {
		return m[1]
	}
	return strings.TrimSpace(answer)
}

// Draft asks the model to decompose request into a workflow of the given
// step types, validates the draft completely and, when it is invalid, asks
// again with the problems (at most tries times, DefaultDraftTries when 0).
// It returns the valid workflow and its YAML text; nothing runs here — the
// caller shows the draft and asks before running it.
func Draft(ctx context.Context, eng models.Engine, request string, types []string, tries int) (*Workflow, string, error) {
	if eng == nil {
		return nil, "", errors.New("draft workflow: no model")
	}
	if strings.TrimSpace(request) == "" {
		return nil, "", errors.New("draft workflow: empty request")
	}
	if tries <= 0 {
		tries = DefaultDraftTries
	}
	if len(types) == 0 {
		types = []string{TypeLLM, TypeRun, TypeApprove}
	}
	msgs := []models.Message{
		{Role: models.RoleSystem, Content: fmt.Sprintf(draftInstructions, strings.Join(types, ", "))},
		{Role: models.RoleUser, Content: "Request: " + request},
	}
	allowed := map[string]bool{}
	for _, t := range types {
		allowed[t] = true
	}
	var lastErr error
	for i := 0; i < tries; i++ {
		ans, err := eng.Generate(ctx, msgs, models.GenOptions{MaxTokens: 1500}, nil)
		if err != nil {
			return nil, "", fmt.Errorf("draft workflow: %w", err)
		}
		text := extractYAML(ans)
		w, err := Parse([]byte(text), "draft")
		if err == nil {
			err = Validate(w, types...)
		}
		if err == nil {
			var bad []string
			for _, s := range w.Steps {
				if !allowed[s.Type] {
					bad = append(bad, fmt.Sprintf("step %q: type %q is not allowed here (allowed: %s)", s.ID, s.Type, strings.Join(types, ", ")))
				}
			}
			if len(bad) > 0 {
				err = &ValidationError{Workflow: w.ID, Problems: bad}
			}
		}
		if err == nil {
			return w, text, nil
		}
		lastErr = err
		msgs = append(msgs,
			models.Message{Role: models.RoleAssistant, Content: ans},
			models.Message{Role: models.RoleUser, Content: "That workflow is not valid:\n" + err.Error() + "\nAnswer with the corrected YAML in one fenced block."})
	}
	return nil, "", fmt.Errorf("draft workflow: no valid draft after %d tries: %w", tries, lastErr)
}
