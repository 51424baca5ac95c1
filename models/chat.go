package models

import (
	"fmt"
	"strings"

	"github.com/ollama/ollama/api"
	"github.com/ollama/ollama/template"
)

// ChatFormat turns chat messages into the prompt text a model was trained on.
//
// It is chosen from the GGUF's tokenizer.chat_template (a Jinja template) in
// three steps: (1) ollama's template package, which maps the Jinja templates
// of known model families to equivalent Go templates (nearest by edit
// distance, as ollama itself does on import); (2) if no known template is
// close, recognising the family by its special-token markers (ChatML,
// Llama 3, Gemma, Phi-3, Zephyr, [INST]); (3) a plain "User:/Assistant:"
// transcript. A full Jinja interpreter was not used: the Go ecosystem has no
// maintained Jinja2 engine compatible with HF templates, and the families
// above cover the GGUF chat models in common use.
type ChatFormat struct {
	// Name identifies the format ("chatml", "llama3-instruct", "plain", …).
	Name string
	// Stop lists strings that end an assistant turn in this format.
	Stop []string
	tmpl *template.Template
	fn   func([]Message) string
}

// ChatFormatFor picks the format for a GGUF chat template ("" = plain).
func ChatFormatFor(jinja string) ChatFormat {
	if strings.TrimSpace(jinja) == "" {
		return plainFormat()
	}
	if named, err := template.Named(jinja); err == nil {
		if t, err := template.Parse(string(named.Bytes)); err == nil {
			f := ChatFormat{Name: named.Name, tmpl: t}
			if named.Parameters != nil {
				f.Stop = append(f.Stop, named.Parameters.Stop...)
			}
			return f
		}
	}
	has := func(s string) bool { return strings.Contains(jinja, s) }
	switch {
	case has("<|im_start|>"):
		return ChatFormat{Name: "chatml", Stop: []string{"<|im_end|>", "<|im_start|>"}, fn: chatml}
	case has("<|start_header_id|>"):
		return ChatFormat{Name: "llama3", Stop: []string{"<|eot_id|>", "<|start_header_id|>"}, fn: llama3}
	case has("<start_of_turn>"):
		return ChatFormat{Name: "gemma", Stop: []string{"<end_of_turn>", "<start_of_turn>"}, fn: gemma}
	case has("<|user|>") && has("<|end|>"):
		return ChatFormat{Name: "phi3", Stop: []string{"<|end|>", "<|user|>"}, fn: phi3}
	case has("<|user|>"):
		return ChatFormat{Name: "zephyr", Stop: []string{"</s>", "<|user|>"}, fn: zephyr}
	case has("[INST]"):
		return ChatFormat{Name: "inst", Stop: []string{"[INST]", "</s>"}, fn: inst}
	}
	return plainFormat()
}

func plainFormat() ChatFormat {
	return ChatFormat{Name: "plain", Stop: []string{"\nUser:", "\nSystem:"}, fn: plain}
}

// Render returns the prompt for msgs, ending where the assistant's answer begins.
func (f ChatFormat) Render(msgs []Message) (string, error) {
	if f.tmpl != nil {
		am := make([]api.Message, len(msgs))
		for i, m := range msgs {
			am[i] = api.Message{Role: m.Role, Content: m.Content}
		}
		var b strings.Builder
		if err := f.tmpl.Execute(&b, template.Values{Messages: am}); err != nil {
			return "", fmt.Errorf("chat template %s: %w", f.Name, err)
		}
		return b.String(), nil
	}
	if f.fn == nil {
		return plain(msgs), nil
	}
	return f.fn(msgs), nil
}

func chatml(msgs []Message) string {
	var b strings.Builder
	for _, m := range msgs {
		fmt.Fprintf(&b, "<|im_start|>%s\n%s<|im_end|>\n", m.Role, m.Content)
	}
	b.WriteString("<|im_start|>assistant\n")
	return b.String()
}

func llama3(msgs []Message) string {
	var b strings.Builder
	for _, m := range msgs {
		fmt.Fprintf(&b, "<|start_header_id|>%s<|end_header_id|>\n\n%s<|eot_id|>", m.Role, m.Content)
	}
	b.WriteString("<|start_header_id|>assistant<|end_header_id|>\n\n")
	return b.String()
}

// gemma has no system role: system text is prefixed to the first user turn.
func gemma(msgs []Message) string {
	var b strings.Builder
	var system string
	for _, m := range msgs {
		switch m.Role {
		case RoleSystem:
			system += m.Content + "\n\n"
		case RoleAssistant:
			fmt.Fprintf(&b, "<start_of_turn>model\n%s<end_of_turn>\n", m.Content)
		default:
			fmt.Fprintf(&b, "<start_of_turn>user\n%s%s<end_of_turn>\n", system, m.Content)
			system = ""
		}
	}
	b.WriteString("<start_of_turn>model\n")
	return b.String()
}

func phi3(msgs []Message) string {
	var b strings.Builder
	for _, m := range msgs {
		fmt.Fprintf(&b, "<|%s|>\n%s<|end|>\n", m.Role, m.Content)
	}
	b.WriteString("<|assistant|>\n")
	return b.String()
}

func zephyr(msgs []Message) string {
	var b strings.Builder
	for _, m := range msgs {
		fmt.Fprintf(&b, "<|%s|>\n%s</s>\n", m.Role, m.Content)
	}
	b.WriteString("<|assistant|>\n")
	return b.String()
}

func inst(msgs []Message) string {
	var b strings.Builder
	var system string
	for _, m := range msgs {
		switch m.Role {
		case RoleSystem:
			system += m.Content + "\n\n"
		case RoleAssistant:
			fmt.Fprintf(&b, " %s</s>", m.Content)
		default:
			fmt.Fprintf(&b, "[INST] %s%s [/INST]", system, m.Content)
			system = ""
		}
	}
	return b.String()
}

func plain(msgs []Message) string {
	var b strings.Builder
	for _, m := range msgs {
		role := "User"
		switch m.Role {
		case RoleSystem:
			role = "System"
		case RoleAssistant:
			role = "Assistant"
		}
		fmt.Fprintf(&b, "%s: %s\n\n", role, m.Content)
	}
	b.WriteString("Assistant:")
	return b.String()
}
