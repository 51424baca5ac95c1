package models

import (
	"strings"
	"testing"

	"codeloom/models/gguf"
)

func TestChatFormatFor(t *testing.T) {
	msgs := []Message{{RoleSystem, "Be brief."}, {RoleUser, "Hi"}, {RoleAssistant, "Hello"}, {RoleUser, "Sum 2+2"}}
	cases := []struct {
		jinja, name string
		want        []string
	}{
		{gguf.ChatMLTemplate, "chatml", []string{"<|im_start|>system\nBe brief.<|im_end|>", "<|im_start|>user\nSum 2+2<|im_end|>\n<|im_start|>assistant\n"}},
		{"{{ bos_token }}{% for message in messages %}{{ '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n' + message['content'] | trim + '<|eot_id|>' }}{% endfor %}{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %} plus a long custom tail that no known template has, so that edit distance fails and markers decide ....................................................................", "llama3", []string{"<|start_header_id|>user<|end_header_id|>\n\nSum 2+2<|eot_id|>", "<|start_header_id|>assistant<|end_header_id|>\n\n"}},
		{"<start_of_turn> custom gemma-like template with a very long body that does not match anything known ...................................................................................................", "gemma", []string{"<start_of_turn>user\nBe brief.\n\nHi<end_of_turn>", "<start_of_turn>model\nHello<end_of_turn>", "<start_of_turn>model\n"}},
		{"", "plain", []string{"System: Be brief.", "User: Sum 2+2", "Assistant:"}},
		{"{{ something unknown }}", "plain", []string{"Assistant:"}},
	}
	for _, c := range cases {
		f := ChatFormatFor(c.jinja)
		if f.Name != c.name {
			t.Errorf("%.30q: format %q, want %q", c.jinja, f.Name, c.name)
			continue
		}
		got, err := f.Render(msgs)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q lacks %q", c.name, got, w)
			}
		}
		if !strings.HasSuffix(strings.TrimSpace(got), strings.TrimSpace(c.want[len(c.want)-1])) {
			t.Errorf("%s: prompt does not end with the assistant cue: %q", c.name, got)
		}
		if len(f.Stop) == 0 {
			t.Errorf("%s: no stop strings", c.name)
		}
	}
}
