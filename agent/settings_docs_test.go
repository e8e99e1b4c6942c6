package agent

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
)

// readmeSettingsRows renders the README's settings table rows from the
// settings table.
func readmeSettingsRows() string {
	var b strings.Builder
	for _, k := range settingsTable {
		env := k.env
		if k.envDoc != "" {
			env = k.envDoc
		}
		name := "`" + k.name + "`"
		if k.nameDoc != "" {
			name += " (" + k.nameDoc + ")"
		}
		b.WriteString("| `" + env + "` | " + name + " | " + k.def + " | " + k.doc + " |\n")
	}
	return b.String()
}

// TestSettingsDocs: the README's table, VS Code's contributed settings and
// the settings both editors send are the settings table's, in its order.
func TestSettingsDocs(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if want := readmeSettingsRows(); !strings.Contains(string(readme), want) {
		t.Errorf("the README's settings table is not the settings table's; want these rows together:\n%s", want)
	}

	var pkg struct {
		Contributes struct {
			Configuration struct {
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"configuration"`
		} `json:"contributes"`
	}
	data, err := os.ReadFile("../editors/vscode/package.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &pkg); err != nil {
		t.Fatal(err)
	}
	for _, name := range SettingNames() {
		if _, ok := pkg.Contributes.Configuration.Properties["reika."+name]; !ok {
			t.Errorf("editors/vscode/package.json does not contribute reika.%s", name)
		}
	}

	for _, c := range []struct{ file, re string }{
		{"../editors/vscode/src/settings.ts", `\{ key: '(\w+)', kind:`},
		{"../editors/nvim/lua/reika/protocol.lua", `\{ name = '(\w+)', type =`},
	} {
		src, err := os.ReadFile(c.file)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, m := range regexp.MustCompile(c.re).FindAllStringSubmatch(string(src), -1) {
			got = append(got, m[1])
		}
		if strings.Join(got, " ") != strings.Join(SettingNames(), " ") {
			t.Errorf("%s sends %v, the server's settings are %v", c.file, got, SettingNames())
		}
	}

	help, err := os.ReadFile("../editors/nvim/doc/reika.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range SettingNames() {
		if !regexp.MustCompile(`(?m)^\s+` + name + `\s+\(`).Match(help) {
			t.Errorf("editors/nvim/doc/reika.txt does not document %s", name)
		}
	}
}
