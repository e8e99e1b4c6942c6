package agent

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Skills, modes and commands are Markdown files that may open with YAML
// frontmatter between two "---" lines, as Claude Code and the Agent Skills
// format write them. Other people write these files, so the parser takes
// what Claude Code takes: quoted or plain values, folded (">") and literal
// ("|") blocks, lists or comma-separated strings, CRLF line ends and a
// byte-order mark; and where the YAML itself is broken by an unquoted colon
// in a plain value ("description: Use when: ..."), it reads each top-level
// "key: value" line as it stands rather than refusing the file.

// frontmatter is the fields reika reads of any of these files.
type frontmatter struct {
	Name         string     `yaml:"name"`
	Description  string     `yaml:"description"`
	Tools        stringList `yaml:"tools"`
	AllowedTools stringList `yaml:"allowed-tools"`
	ArgumentHint string     `yaml:"argument-hint"`
}

// stringList is a YAML list of strings, or one string of comma- or
// space-separated names (Claude Code's "tools: Read, Grep, Glob").
type stringList []string

func (l *stringList) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		*l = splitNames(n.Value)
		return nil
	case yaml.SequenceNode:
		var out []string
		for _, c := range n.Content {
			if c.Kind != yaml.ScalarNode {
				return fmt.Errorf("line %d: a list of names holds something other than a name", c.Line)
			}
			out = append(out, splitNames(c.Value)...)
		}
		*l = out
		return nil
	}
	return fmt.Errorf("line %d: want a list of names or one string of them", n.Line)
}

// splitNames splits "Read, Grep Glob" into its names.
func splitNames(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' })
}

// parseFrontmatter splits data into its frontmatter and its Markdown body.
// A file without frontmatter is all body. An opening "---" without its
// closing line is an error.
func parseFrontmatter(data []byte) (fm frontmatter, body string, err error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	first, rest, _ := strings.Cut(text, "\n")
	if strings.TrimRight(first, " \t") != "---" {
		return fm, text, nil
	}
	var head string
	switch i := closingLine(rest); {
	case i < 0:
		return fm, "", errors.New(`the frontmatter opened by "---" on line 1 has no closing "---" line`)
	default:
		head = rest[:i]
		body = rest[i:]
		_, body, _ = strings.Cut(body, "\n") // the closing line
	}
	if yerr := yaml.Unmarshal([]byte(head), &fm); yerr != nil {
		loose, ok := looseFrontmatter(head)
		if !ok {
			return fm, "", fmt.Errorf("its frontmatter is not YAML: %v", yerr)
		}
		fm = loose
	}
	fm.Name, fm.Description = strings.TrimSpace(fm.Name), strings.TrimSpace(fm.Description)
	return fm, strings.TrimLeft(body, "\n"), nil
}

// closingLine is the offset in rest of the line "---" or "..." that ends
// the frontmatter, -1 when there is none.
func closingLine(rest string) int {
	off := 0
	for off <= len(rest) {
		line, _, found := strings.Cut(rest[off:], "\n")
		if t := strings.TrimRight(line, " \t"); t == "---" || t == "..." {
			return off
		}
		if !found {
			break
		}
		off += len(line) + 1
	}
	return -1
}

// looseFrontmatter reads broken YAML as top-level "key: value" lines, a
// line that starts with a space continuing the value before it. ok is
// false when no line has a known key.
func looseFrontmatter(head string) (fm frontmatter, ok bool) {
	vals := map[string]string{}
	key := ""
	for _, line := range strings.Split(head, "\n") {
		if key != "" && (strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t")) {
			vals[key] = strings.TrimSpace(vals[key] + " " + strings.TrimSpace(line))
			continue
		}
		k, v, found := strings.Cut(line, ":")
		if !found || strings.ContainsAny(k, " \t") {
			key = ""
			continue
		}
		key = k
		v = strings.TrimSpace(v)
		if v == ">" || v == "|" || v == ">-" || v == "|-" {
			v = ""
		}
		if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'') {
			v = v[1 : len(v)-1]
		}
		vals[k] = v
	}
	fm.Name, fm.Description, fm.ArgumentHint = vals["name"], vals["description"], vals["argument-hint"]
	fm.Tools, fm.AllowedTools = splitNames(strings.Trim(vals["tools"], "[]")), splitNames(strings.Trim(vals["allowed-tools"], "[]"))
	ok = vals["name"] != "" || vals["description"] != "" || vals["tools"] != ""
	return fm, ok
}
