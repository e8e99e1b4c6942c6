package lsp

import (
	"context"
	"errors"
	"path/filepath"
)

// cmdSave answers reika.save: the whole conversation, unshed, as Markdown,
// at the path asked for (relative to the workspace root) or in the state
// directory.
func (s *server) cmdSave(ctx context.Context, p *executeCommandParams) (any, error) {
	var a struct {
		Path string `json:"path"`
	}
	if err := optionalObjectArg(p.Arguments, &a); errors.Is(err, errNotAnObject) {
		return nil, invalidParams(`reika.save: want [{"path"?: "..."}]`)
	} else if err != nil {
		return nil, invalidParams("reika.save: %v", err)
	}
	path := a.Path
	if path != "" && !filepath.IsAbs(path) {
		s.mu.Lock()
		path = filepath.Join(s.root, path)
		s.mu.Unlock()
	}
	svc, err := s.agent(ctx)
	if err != nil {
		return nil, err
	}
	out, err := svc.Save(path)
	if err != nil {
		return nil, requestFailed("reika.save: %v", err)
	}
	return jsonResult(struct {
		Path string `json:"path"`
	}{out})
}
