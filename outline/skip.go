package outline

import (
	"bytes"
	"path"
	"regexp"
	"strings"
)

// vendorDirs are directories of code the workspace did not write: the repo
// map skips them.
var vendorDirs = map[string]bool{
	"vendor": true, "node_modules": true, "third_party": true, "third-party": true, "thirdparty": true,
	"bower_components": true, "jspm_packages": true, "Pods": true, "Carthage": true,
	"venv": true, "site-packages": true, "__pycache__": true,
	"testdata": true, // fixtures, by Go's convention
}

// lockFiles are generated manifests the repo map leaves out.
var lockFiles = map[string]bool{
	"package-lock.json": true, "npm-shrinkwrap.json": true, "yarn.lock": true, "pnpm-lock.yaml": true,
	"bun.lockb": true, "bun.lock": true, "Cargo.lock": true, "go.sum": true, "go.work.sum": true,
	"poetry.lock": true, "Pipfile.lock": true, "uv.lock": true, "pdm.lock": true, "Gemfile.lock": true,
	"composer.lock": true, "flake.lock": true, "mix.lock": true, "pubspec.lock": true, "Podfile.lock": true,
	"packages.lock.json": true, "gradle.lockfile": true,
}

// assetExts are files with nothing for a model to read in a map: images,
// archives, fonts, compiled objects, media.
var assetExts = map[string]bool{
	".png": true, ".jpg": true, ".jpeg": true, ".gif": true, ".ico": true, ".bmp": true, ".webp": true,
	".svg": true, ".pdf": true, ".zip": true, ".gz": true, ".tgz": true, ".bz2": true, ".xz": true,
	".zst": true, ".tar": true, ".jar": true, ".war": true, ".class": true, ".so": true, ".dylib": true,
	".dll": true, ".exe": true, ".a": true, ".o": true, ".obj": true, ".pyc": true, ".pyo": true,
	".woff": true, ".woff2": true, ".ttf": true, ".otf": true, ".eot": true, ".mp3": true, ".mp4": true,
	".wav": true, ".ogg": true, ".webm": true, ".mov": true, ".avi": true, ".wasm": true, ".map": true,
	".db": true, ".sqlite": true, ".bin": true, ".dat": true, ".pem": true, ".der": true, ".p12": true,
	".syso": true, ".lockb": true,
}

// skipDir reports whether the repo map skips a directory: vendored code,
// fixtures, and hidden directories (.git, .venv, .idea, .cache...).
func skipDir(name string) bool {
	return vendorDirs[name] || strings.HasPrefix(name, ".") && name != "."
}

// skipFile reports whether the repo map leaves a file out by its name:
// lockfiles, assets, minified bundles, hidden files.
func skipFile(rel string) bool {
	base := path.Base(rel)
	if lockFiles[base] || strings.HasPrefix(base, ".") {
		return true
	}
	ext := strings.ToLower(path.Ext(base))
	if assetExts[ext] {
		return true
	}
	return strings.HasSuffix(base, ".min.js") || strings.HasSuffix(base, ".min.css") || strings.HasSuffix(base, ".min.mjs")
}

var goGenerated = regexp.MustCompile(`(?m)^// Code generated .* DO NOT EDIT\.$`)

// IsGenerated reports whether src is generated or minified code, which a
// repo map leaves out: Go's "// Code generated ... DO NOT EDIT." line, an
// "@generated" marker or a "generated ... do not edit" comment in the
// first ten lines,
// or lines averaging more than 300 bytes (a minified bundle).
func IsGenerated(src []byte) bool {
	head := src
	if len(head) > 4096 {
		head = head[:4096]
	}
	if goGenerated.Match(head) {
		return true
	}
	// Other generators' notices sit in a comment in the first lines.
	for i, line := range bytes.SplitN(head, []byte("\n"), 11) {
		if i == 10 {
			break
		}
		l := bytes.ToLower(bytes.TrimSpace(line))
		if !(bytes.HasPrefix(l, []byte("//")) || bytes.HasPrefix(l, []byte("#")) || bytes.HasPrefix(l, []byte("/*")) ||
			bytes.HasPrefix(l, []byte("*")) || bytes.HasPrefix(l, []byte("--"))) {
			continue
		}
		if bytes.Contains(l, []byte("@generated")) {
			return true
		}
		// Not a comment about such a notice: "// writes \"Code generated...\""
		if bytes.Contains(l, []byte("generated")) && !bytes.ContainsAny(l, "\"'`") &&
			(bytes.Contains(l, []byte("do not edit")) || bytes.Contains(l, []byte("do not modify"))) {
			return true
		}
	}
	if len(src) > 4096 {
		lines := bytes.Count(src, []byte{'\n'}) + 1
		if len(src)/lines > 300 {
			return true
		}
	}
	return false
}
