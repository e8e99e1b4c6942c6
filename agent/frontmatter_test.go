package agent

import (
	"strings"
	"testing"
)

func TestFrontmatterForms(t *testing.T) {
	tests := []struct {
		name, src, wantName, wantDesc, wantBody string
		wantTools                               []string
	}{
		{"plain", "---\nname: pdf\ndescription: Fill PDF forms\n---\n# Body\n", "pdf", "Fill PDF forms", "# Body\n", nil},
		{"quoted", "---\nname: \"pdf\"\ndescription: 'Fill: forms'\n---\nb", "pdf", "Fill: forms", "b", nil},
		{"folded", "---\nname: x\ndescription: >\n  one line\n  and more\n---\nb", "x", "one line and more", "b", nil},
		{"crlf and bom", "\xef\xbb\xbf---\r\nname: x\r\ndescription: d\r\n---\r\nbody\r\n", "x", "d", "body\n", nil},
		{"unquoted colon", "---\nname: x\ndescription: Use when: the user asks\n---\nb", "x", "Use when: the user asks", "b", nil},
		{"tools string", "---\ndescription: d\ntools: Read, Grep, Glob\n---\nb", "", "d", "b", []string{"Read", "Grep", "Glob"}},
		{"tools list", "---\ndescription: d\ntools:\n  - read\n  - grep\n---\nb", "", "d", "b", []string{"read", "grep"}},
		{"none", "# Just markdown\n", "", "", "# Just markdown\n", nil},
	}
	for _, tt := range tests {
		fm, body, err := parseFrontmatter([]byte(tt.src))
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if fm.Name != tt.wantName || fm.Description != tt.wantDesc || body != tt.wantBody {
			t.Errorf("%s: got name %q desc %q body %q", tt.name, fm.Name, fm.Description, body)
		}
		if strings.Join(fm.Tools, ",") != strings.Join(tt.wantTools, ",") {
			t.Errorf("%s: tools %q, want %q", tt.name, fm.Tools, tt.wantTools)
		}
	}
}

func TestFrontmatterUnclosed(t *testing.T) {
	_, _, err := parseFrontmatter([]byte("---\nname: x\ndescription: d\n"))
	if err == nil || !strings.Contains(err.Error(), "no closing") {
		t.Errorf("an unclosed frontmatter gave %v", err)
	}
	_, _, err = parseFrontmatter([]byte("---\n: : [\n---\nb"))
	if err == nil || !strings.Contains(err.Error(), "not YAML") {
		t.Errorf("garbage frontmatter gave %v", err)
	}
}
