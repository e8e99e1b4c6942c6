package outline

import (
	"bytes"
	"path/filepath"
	"strings"
)

// Languages lists the languages outline knows, by the name Outline.Lang uses.
var Languages = []string{"go", "python", "javascript", "typescript", "tsx", "rust", "c", "cpp", "java", "ruby"}

var byExt = map[string]string{
	".go":      "go",
	".py":      "python",
	".pyi":     "python",
	".pyw":     "python",
	".js":      "javascript",
	".jsx":     "javascript",
	".mjs":     "javascript",
	".cjs":     "javascript",
	".ts":      "typescript",
	".mts":     "typescript",
	".cts":     "typescript",
	".tsx":     "tsx",
	".rs":      "rust",
	".c":       "c",
	".h":       "c", // retried as C++ when C parses it badly
	".cc":      "cpp",
	".cpp":     "cpp",
	".cxx":     "cpp",
	".c++":     "cpp",
	".hh":      "cpp",
	".hpp":     "cpp",
	".hxx":     "cpp",
	".h++":     "cpp",
	".ipp":     "cpp",
	".tpp":     "cpp",
	".inl":     "cpp",
	".cu":      "cpp",
	".cuh":     "cpp",
	".java":    "java",
	".rb":      "ruby",
	".rake":    "ruby",
	".gemspec": "ruby",
	".ru":      "ruby",
}

var byName = map[string]string{
	"Rakefile": "ruby",
	"Gemfile":  "ruby",
	"Podfile":  "ruby",
}

// Detect returns the language of the file at path, by its extension, its
// name, or for a file without an extension its #! line; "" when outline
// does not know it.
func Detect(path string, src []byte) string {
	base := filepath.Base(path)
	if l, ok := byName[base]; ok {
		return l
	}
	ext := strings.ToLower(filepath.Ext(base))
	if ext != "" {
		if ext == ".h" && filepath.Ext(base) == ".H" {
			return "cpp"
		}
		return byExt[ext]
	}
	return shebang(src)
}

// shebang maps a #! line to a language: python, ruby, node.
func shebang(src []byte) string {
	if !bytes.HasPrefix(src, []byte("#!")) {
		return ""
	}
	line := src
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	fields := strings.Fields(string(line[2:]))
	if len(fields) == 0 {
		return ""
	}
	prog := filepath.Base(fields[0])
	if prog == "env" {
		prog = ""
		for _, f := range fields[1:] {
			if !strings.HasPrefix(f, "-") {
				prog = f
				break
			}
		}
	}
	switch {
	case strings.HasPrefix(prog, "python"):
		return "python"
	case strings.HasPrefix(prog, "ruby"):
		return "ruby"
	case prog == "node" || prog == "nodejs" || prog == "deno" || prog == "bun":
		return "javascript"
	}
	return ""
}
