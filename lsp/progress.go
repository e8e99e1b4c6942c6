package lsp

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.lsp.dev/protocol"
)

// maxHeldReports bounds the reports held while the client has not
// answered create.
const maxHeldReports = 64

// progressCreateTimeout bounds the wait for the client's answer to
// window/workDoneProgress/create.
const progressCreateTimeout = 10 * time.Second

// workProgress is the $/progress of one turn: on the client's workDoneToken
// when the request carried one, else on a token the server creates with
// window/workDoneProgress/create when the client supports it. begin always
// goes first (Neovim fails on a report without one), reports that come
// while the client has not answered create are held and sent after begin
// (the last maxHeldReports of them), and end is sent even when the turn
// ends before that answer.
// A nil *workProgress is valid and does nothing.
type workProgress struct {
	s      *server
	token  json.RawMessage
	key    string
	begin  progressValue
	client bool // the token is the client's: no create

	mu      sync.Mutex
	state   progressState // guarded by mu
	held    []string      // reports while creating; guarded by mu
	endText *string       // end requested while creating; guarded by mu
}

type progressState int

const (
	progressCreating progressState = iota // not begun: not started, or create sent and not answered
	progressActive                        // begin sent
	progressOff                           // the client refused create: nothing is sent
	progressEnded                         // end sent
)

type progressValue struct {
	Kind        string `json:"kind"`
	Title       string `json:"title,omitempty"`
	Cancellable bool   `json:"cancellable,omitempty"`
	Message     string `json:"message,omitempty"`
}

// newProgressLocked is the progress of a turn, not yet begun (start
// begins it); nil when the client gave no token and cannot create one.
// s.mu is held.
func (s *server) newProgressLocked(clientToken json.RawMessage, message string) *workProgress {
	begin := progressValue{Kind: "begin", Title: progressTitle, Cancellable: true, Message: message}
	if key, ok := tokenKey(clientToken); ok {
		return &workProgress{s: s, token: clientToken, key: key, begin: begin, client: true}
	}
	if !s.caps.workDoneProgress {
		return nil
	}
	name := "reika/progress/" + strconv.FormatInt(s.progressSeq.Add(1), 10)
	token, _ := json.Marshal(name)
	return &workProgress{s: s, token: token, key: "s" + name, begin: begin}
}

// start sends begin on the client's token, or asks the client to create
// the server's token (begin follows its answer).
func (p *workProgress) start() {
	if p == nil {
		return
	}
	if p.client {
		p.created(true)
		return
	}
	s := p.s
	s.goTracked(func() {
		ctx, cancel := context.WithTimeout(s.life, progressCreateTimeout)
		defer cancel()
		params := json.RawMessage(`{"token":` + string(p.token) + `}`)
		err := s.call(ctx, protocol.MethodWindowWorkDoneProgressCreate, params, nil)
		if err != nil {
			s.logf("lsp: window/workDoneProgress/create: %v (no progress for this turn)", err)
		}
		p.created(err == nil)
	})
}

// created is the client's answer to create.
func (p *workProgress) created(ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !ok {
		p.state = progressOff
		return
	}
	p.send(p.begin)
	p.state = progressActive
	for _, text := range p.held {
		p.send(progressValue{Kind: "report", Message: text})
	}
	p.held = nil
	if p.endText != nil {
		p.send(progressValue{Kind: "end", Message: *p.endText})
		p.state = progressEnded
	}
}

// reportText sends a report (or holds it until begin).
func (p *workProgress) reportText(text string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch p.state {
	case progressActive:
		p.send(progressValue{Kind: "report", Message: text})
	case progressCreating:
		if len(p.held) == maxHeldReports {
			p.held = p.held[1:]
		}
		p.held = append(p.held, text)
	}
}

// end sends end (or has it sent after begin).
func (p *workProgress) end(text string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch p.state {
	case progressActive:
		p.send(progressValue{Kind: "end", Message: text})
		p.state = progressEnded
	case progressCreating:
		p.endText = &text
	}
}

func (p *workProgress) send(v progressValue) {
	p.s.notifyJSON(protocol.MethodProgress, struct {
		Token json.RawMessage `json:"token"`
		Value progressValue   `json:"value"`
	}{p.token, v})
}

// shorten makes a prompt fit a progress message: its first line, at most
// 60 characters.
func shorten(prompt string) string {
	line, _, cut := strings.Cut(strings.TrimSpace(prompt), "\n")
	line = strings.Join(strings.Fields(line), " ")
	if r := []rune(line); len(r) > 60 {
		return string(r[:59]) + "…"
	}
	if cut {
		return line + " …"
	}
	return line
}
