package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/reika-lsp/reika-lsp/agent"
)

// startAgent builds the agent in the background, once.
func (s *server) startAgent() {
	s.mu.Lock()
	if s.agentStarted {
		s.mu.Unlock()
		return
	}
	s.agentStarted = true
	editor := s.editorSettings
	s.mu.Unlock()
	s.goTracked(func() {
		defer close(s.ready)
		s.buildAgent(editor)
	})
}

// buildAgent loads the settings and calls NewAgent. On failure the status
// says why, at level error, and the server goes on without an agent.
func (s *server) buildAgent(editor json.RawMessage) {
	settings, err := s.loadSettings(editor)
	if err != nil {
		s.agentFailed(fmt.Errorf("settings: %w", err))
		return
	}
	svc, err := s.newAgent(settings)
	if err != nil {
		s.agentFailed(err)
		return
	}
	s.mu.Lock()
	if s.shutdownSeen.Load() {
		s.mu.Unlock()
		if err := svc.Close(); err != nil {
			s.logf("lsp: closing the agent: %v", err)
		}
		return
	}
	s.svc, s.svcErr = svc, nil
	s.debug = settings.Debug
	s.mu.Unlock()
	s.sendStatus(svc.Status(), true)
}

func (s *server) newAgent(settings agent.Settings) (svc agent.Service, err error) {
	if s.cfg.NewAgent == nil {
		return nil, errors.New("no agent is configured")
	}
	defer func() {
		if r := recover(); r != nil {
			svc, err = nil, fmt.Errorf("building the agent panicked: %v", r)
		}
	}()
	svc, err = s.cfg.NewAgent(agent.Options{
		Workspace: workspace{s},
		Approver:  approver{s},
		Events:    events{s},
		Settings:  settings,
		Logf:      s.logf,
	})
	if err == nil && svc == nil {
		err = errors.New("NewAgent returned no agent")
	}
	return svc, err
}

func (s *server) agentFailed(err error) {
	s.mu.Lock()
	s.svcErr = err
	s.mu.Unlock()
	s.logf("lsp: no agent: %v", err)
	s.showMessage(agent.LevelError, "Reika: "+err.Error())
	s.sendStatus(placeholderStatus(agent.LevelError, "Reika is not running: "+err.Error()), true)
}

// agent returns the agent, starting it if initialized never came and
// waiting for it to be built. The error says why there is none.
func (s *server) agent(ctx context.Context) (agent.Service, error) {
	s.startAgent()
	select {
	case <-s.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.svc == nil {
		reason := "the agent is not available"
		if s.svcErr != nil {
			reason = s.svcErr.Error()
		}
		return nil, requestFailed("Reika is not running: %s", reason)
	}
	return s.svc, nil
}

// currentAgent returns the agent if it is built, without waiting.
func (s *server) currentAgent() agent.Service {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.svc
}

// closeAgent closes the agent, once.
func (s *server) closeAgent() {
	s.mu.Lock()
	svc := s.svc
	s.svc = nil
	if svc != nil {
		s.svcErr = errors.New("the server is shutting down")
	}
	s.mu.Unlock()
	if svc != nil {
		if err := svc.Close(); err != nil {
			s.logf("lsp: closing the agent: %v", err)
		}
	}
}
