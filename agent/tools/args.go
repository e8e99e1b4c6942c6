package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// args is a tool call's decoded arguments, read one parameter at a time so
// that every error names the parameter at fault. The first error sticks;
// later reads return zero values.
type args struct {
	fields map[string]json.RawMessage
	usage  string // the expected shape, e.g. `{"path": string, "start_line"?: integer}`
	err    error
}

// parseArgs decodes a tool call's JSON arguments. It is lenient where models
// commonly slip: empty arguments or null mean {}, arguments encoded twice (a
// JSON string holding the object) are unwrapped, and unknown parameters are
// ignored unless a required one is missing (then they are named, to point at
// a misspelling).
func parseArgs(raw json.RawMessage, usage string) *args {
	a := &args{usage: usage}
	data := bytes.TrimSpace(raw)
	if len(data) == 0 || bytes.Equal(data, []byte("null")) {
		data = []byte("{}")
	}
	if data[0] == '"' {
		var inner string
		if err := json.Unmarshal(data, &inner); err == nil {
			data = bytes.TrimSpace([]byte(inner))
			if len(data) == 0 {
				data = []byte("{}")
			}
		}
	}
	if err := json.Unmarshal(data, &a.fields); err != nil || a.fields == nil {
		problem := "not a JSON object"
		if se, ok := err.(*json.SyntaxError); ok {
			problem = fmt.Sprintf("malformed JSON at byte %d: %v", se.Offset, se)
		}
		a.err = fmt.Errorf("invalid arguments (%s); expected %s", problem, usage)
	}
	return a
}

func (a *args) fail(format string, v ...any) {
	if a.err == nil {
		a.err = fmt.Errorf("%s; expected %s", fmt.Sprintf(format, v...), a.usage)
	}
}

// present reports whether name was given with a value other than null.
func (a *args) present(name string) bool {
	v, ok := a.fields[name]
	return ok && !bytes.Equal(bytes.TrimSpace(v), []byte("null"))
}

// str reads a string parameter. A required one must be present; empty is
// allowed (callers check for it where it matters). Numbers and booleans are
// taken as their JSON text.
func (a *args) str(name string, required bool) string {
	if a.err != nil {
		return ""
	}
	if !a.present(name) {
		if required {
			a.missing(name)
		}
		return ""
	}
	v := bytes.TrimSpace(a.fields[name])
	if v[0] != '"' {
		if v[0] == '{' || v[0] == '[' {
			a.fail("parameter %q must be a string", name)
			return ""
		}
		return string(v)
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		a.fail("parameter %q must be a string", name)
	}
	return s
}

func (a *args) missing(name string) {
	var got []string
	for k := range a.fields {
		got = append(got, strconv.Quote(k))
	}
	slices.Sort(got)
	if len(got) == 0 {
		a.fail("missing required parameter %q", name)
		return
	}
	a.fail("missing required parameter %q (got %s)", name, strings.Join(got, ", "))
}

// integer reads an optional integer parameter: a JSON number (integral, so
// 12.0 passes), a numeric string ("12") or null.
func (a *args) integer(name string) (int, bool) {
	if a.err != nil || !a.present(name) {
		return 0, false
	}
	s := strings.TrimSpace(string(a.fields[name]))
	if strings.HasPrefix(s, `"`) {
		var str string
		if json.Unmarshal([]byte(s), &str) != nil {
			a.fail("parameter %q must be an integer", name)
			return 0, false
		}
		s = strings.TrimSpace(str)
		if s == "" {
			return 0, false
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f != math.Trunc(f) {
		a.fail("parameter %q must be an integer, not %s", name, truncate(s, 40))
		return 0, false
	}
	if f > math.MaxInt32 || f < math.MinInt32 {
		a.fail("parameter %q is out of range: %s", name, truncate(s, 40))
		return 0, false
	}
	return int(f), true
}

// boolean reads an optional boolean parameter: true/false, the strings
// "true"/"false", or null (false).
func (a *args) boolean(name string) bool {
	if a.err != nil || !a.present(name) {
		return false
	}
	switch strings.ToLower(strings.Trim(strings.TrimSpace(string(a.fields[name])), `"`)) {
	case "true", "1", "yes":
		return true
	case "false", "0", "no", "":
		return false
	}
	a.fail("parameter %q must be true or false", name)
	return false
}

// truncate cuts s to at most n bytes on a rune boundary, adding "…" when cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

// firstLine is the first non-blank line of s, trimmed and cut to n bytes.
func firstLine(s string, n int) string {
	for line := range strings.SplitSeq(s, "\n") {
		if t := strings.TrimSpace(line); t != "" {
			return truncate(t, n)
		}
	}
	return ""
}

// errResult is a tool error the model can fix.
func errResult(kind string, format string, v ...any) ctxwin.Result {
	msg := fmt.Sprintf(format, v...)
	return ctxwin.Result{Kind: kind, Text: "Error: " + msg, IsError: true, Summary: "Error: " + firstLine(msg, 200)}
}
