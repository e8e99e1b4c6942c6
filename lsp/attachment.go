package lsp

import (
	"errors"
	"fmt"
	"strings"

	"github.com/reika-lsp/reika-lsp/agent"
)

// attachment reads the selection a reika.ask attaches: uri with range is
// that range (an empty range attaches nothing), uri alone is the whole
// document. The text is the open buffer's when the editor has one.
func (s *server) attachment(docURI string, r *lspRange) (*agent.Attachment, error) {
	if docURI == "" {
		if r != nil {
			return nil, errors.New("a range needs a uri")
		}
		return nil, nil
	}
	text, path, err := s.docs.byURIText(docURI)
	if err != nil {
		return nil, fmt.Errorf("reading the attached document: %w", err)
	}
	name := docURI
	if path != "" {
		name = s.relPath(path)
	}
	if r == nil {
		last := lineCount(text)
		if last > 1 && (strings.HasSuffix(text, "\n") || strings.HasSuffix(text, "\r")) {
			last-- // no line after the final line break
		}
		return &agent.Attachment{Path: name, StartLine: 1, EndLine: last, Text: text}, nil
	}
	start := offsetAt(text, r.Start.Line, r.Start.Character)
	end := offsetAt(text, r.End.Line, r.End.Character)
	if end < start {
		start, end = end, start
	}
	if start == end {
		return nil, nil
	}
	startLine, _ := positionAt(text, start)
	endLine, endChar := positionAt(text, end)
	if endChar == 0 && endLine > startLine {
		endLine-- // the selection ends at the start of a line: that line is not in it
	}
	return &agent.Attachment{Path: name, StartLine: startLine + 1, EndLine: endLine + 1, Text: text[start:end]}, nil
}
