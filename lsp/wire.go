package lsp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// What the server reads from the client is decoded here, with
// encoding/json into small structs of the fields it uses, not into the
// protocol package's types: those are decoded with encoding/json/v2, which
// rejects a whole message when one nested field has an unexpected type —
// and Neovim sends an empty table as [] wherever the protocol expects {}.
// decodeParams skips a field of the wrong type and keeps the rest.
//
// What the server writes is either a protocol type (initialize's result,
// code actions, showMessage...) encoded by the protocol package, or the
// agent's own types (transcript events, status, command results) encoded
// with encoding/json into a json.RawMessage, which the codec sends verbatim.
// Their JSON is defined by their struct tags under encoding/json semantics
// (omitempty drops 0 and false), which json/v2 would not honour.

// decodeParams decodes raw into v leniently: absent, null and [] params are
// empty, and a field whose JSON type does not match is left at its zero
// value. Only JSON that does not parse is an error.
func decodeParams(raw []byte, v any) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" || isEmptyArray(raw) {
		return nil
	}
	err := json.Unmarshal(raw, v)
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		return nil
	}
	return err
}

// decodeStrict decodes raw into v and reports a field of the wrong type as
// an error naming it.
func decodeStrict(raw []byte, v any) error {
	err := json.Unmarshal(raw, v)
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		if typeErr.Field != "" {
			return fmt.Errorf("%s: want %s, got a JSON %s", typeErr.Field, typeErr.Type, typeErr.Value)
		}
		return fmt.Errorf("want %s, got a JSON %s", typeErr.Type, typeErr.Value)
	}
	return err
}

func isEmptyArray(raw []byte) bool {
	return len(raw) >= 2 && raw[0] == '[' && len(bytes.TrimSpace(raw[1:len(raw)-1])) == 0 && raw[len(raw)-1] == ']'
}

// errNotAnObject says a command's optional object argument was something
// else.
var errNotAnObject = errors.New("not an object")

// optionalObjectArg decodes a command's first argument into v when it is an
// object; no argument, null and [] (Neovim's empty table) leave v as it is.
// Anything else is errNotAnObject.
func optionalObjectArg(args []json.RawMessage, v any) error {
	if len(args) == 0 {
		return nil
	}
	raw := bytes.TrimSpace(args[0])
	switch {
	case string(raw) == "null" || isEmptyArray(raw):
		return nil
	case isObject(raw):
		return decodeStrict(raw, v)
	}
	return errNotAnObject
}

// isObject reports whether raw is a JSON object.
func isObject(raw []byte) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{'
}

// jsonResult encodes v with encoding/json for the wire.
func jsonResult(v any) (json.RawMessage, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, internalError("encoding the result: %v", err)
	}
	return b, nil
}

// codec is the conn's payload codec: raw JSON passes through verbatim,
// protocol types go through the protocol package's encoder.
type codec struct{}

func (codec) Marshal(v any) ([]byte, error) {
	switch m := v.(type) {
	case json.RawMessage:
		if m == nil {
			return []byte("null"), nil
		}
		return m, nil
	case jsonrpc2.RawMessage:
		if m == nil {
			return []byte("null"), nil
		}
		return m, nil
	}
	return protocol.Marshal(v)
}

func (codec) Unmarshal(data []byte, v any) error {
	switch p := v.(type) {
	case *json.RawMessage:
		*p = bytes.Clone(data)
		return nil
	case *jsonrpc2.RawMessage:
		*p = bytes.Clone(data)
		return nil
	}
	return protocol.Unmarshal(data, v)
}

// parseID reads a JSON-RPC id (an integer or a string) from raw JSON.
func parseID(raw json.RawMessage) (jsonrpc2.ID, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return jsonrpc2.ID{}, false
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return jsonrpc2.ID{}, false
		}
		return jsonrpc2.NewStringID(s), true
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return jsonrpc2.ID{}, false
	}
	return jsonrpc2.NewNumberID(n), true
}

// tokenKey turns a progress token (an integer or a string) into a map key;
// ok is false for anything else.
func tokenKey(raw json.RawMessage) (string, bool) {
	id, ok := parseID(raw)
	if !ok {
		return "", false
	}
	if n, isNum := id.Number(); isNum {
		return "n" + strconv.FormatInt(n, 10), true
	}
	s, _ := id.StringValue()
	return "s" + s, true
}

// Params of the notifications and requests the server reads.

type position struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

type lspRange struct {
	Start position `json:"start"`
	End   position `json:"end"`
}

type textDocumentID struct {
	URI     string `json:"uri"`
	Version int32  `json:"version"`
}

type initializeParams struct {
	RootURI          string `json:"rootUri"`
	RootPath         string `json:"rootPath"`
	WorkspaceFolders []struct {
		URI string `json:"uri"`
	} `json:"workspaceFolders"`
	InitializationOptions json.RawMessage `json:"initializationOptions"`
	Capabilities          struct {
		Workspace struct {
			ApplyEdit     bool `json:"applyEdit"`
			WorkspaceEdit struct {
				DocumentChanges    bool     `json:"documentChanges"`
				ResourceOperations []string `json:"resourceOperations"`
			} `json:"workspaceEdit"`
		} `json:"workspace"`
		Window struct {
			WorkDoneProgress bool            `json:"workDoneProgress"`
			ShowMessage      json.RawMessage `json:"showMessage"`
		} `json:"window"`
	} `json:"capabilities"`
	ClientInfo struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"clientInfo"`
}

type didOpenParams struct {
	TextDocument struct {
		URI        string `json:"uri"`
		LanguageID string `json:"languageId"`
		Version    int32  `json:"version"`
		Text       string `json:"text"`
	} `json:"textDocument"`
}

type contentChange struct {
	Range *lspRange `json:"range"`
	Text  string    `json:"text"`
}

type didChangeParams struct {
	TextDocument   textDocumentID  `json:"textDocument"`
	ContentChanges []contentChange `json:"contentChanges"`
}

type didCloseParams struct {
	TextDocument textDocumentID `json:"textDocument"`
}

type executeCommandParams struct {
	Command       string            `json:"command"`
	Arguments     []json.RawMessage `json:"arguments"`
	WorkDoneToken json.RawMessage   `json:"workDoneToken"`
}

type codeActionParams struct {
	TextDocument textDocumentID `json:"textDocument"`
	Context      struct {
		Only []string `json:"only"`
	} `json:"context"`
}

type progressCancelParams struct {
	Token json.RawMessage `json:"token"`
}

type didChangeConfigurationParams struct {
	Settings json.RawMessage `json:"settings"`
}
