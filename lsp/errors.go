package lsp

import (
	"context"
	"errors"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// Every JSON-RPC error the server answers with is built here, so that each
// has a real code: a plain Go error would go out with code 0. A handler
// returns one of these, or any error, which handle passes through
// wireError.

// codeRequestFailed is LSP 3.17's RequestFailed, which jsonrpc2 does not
// define.
const codeRequestFailed jsonrpc2.Code = -32803

// errRequestCancelled answers a request that was cancelled
// ($/cancelRequest, reika.cancel, shutdown).
var errRequestCancelled = protocol.ErrRequestCancelled

// requestFailed is the error of a request the server understood but could
// not carry out.
func requestFailed(format string, args ...any) *jsonrpc2.Error {
	return jsonrpc2.Errorf(codeRequestFailed, format, args...)
}

// invalidParams is the error of a request whose params are wrong.
func invalidParams(format string, args ...any) *jsonrpc2.Error {
	return jsonrpc2.Errorf(jsonrpc2.InvalidParams, format, args...)
}

// invalidRequest is the error of a request that is wrong as a whole: not a
// JSON-RPC request, or not one the server takes in its state.
func invalidRequest(format string, args ...any) *jsonrpc2.Error {
	return jsonrpc2.Errorf(jsonrpc2.InvalidRequest, format, args...)
}

// parseError is the error of a message that is not JSON.
func parseError(format string, args ...any) *jsonrpc2.Error {
	return jsonrpc2.Errorf(jsonrpc2.ParseError, format, args...)
}

// internalError is the error of a request the server failed on: a panic,
// a result it could not encode.
func internalError(format string, args ...any) *jsonrpc2.Error {
	return jsonrpc2.Errorf(jsonrpc2.InternalError, format, args...)
}

// methodNotFound is the error of a request the server does not know.
func methodNotFound(method string) *jsonrpc2.Error {
	return jsonrpc2.Errorf(jsonrpc2.MethodNotFound, "method not found: %s", method)
}

// notInitialized is the error of a request before initialize.
func notInitialized(method string) *jsonrpc2.Error {
	return jsonrpc2.Errorf(jsonrpc2.ServerNotInitialized, "server not initialized: send initialize first (got %s)", method)
}

// wireError turns a handler's error into a JSON-RPC error with a code: a
// JSON-RPC error as it is, a cancelled request as RequestCancelled,
// anything else as RequestFailed.
func wireError(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	var wire *jsonrpc2.Error
	if errors.As(err, &wire) {
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
		return errRequestCancelled
	}
	return requestFailed("%v", err)
}

// errorMessage is the message of an error for a result: a JSON-RPC error's
// own message.
func errorMessage(err error) string {
	var wire *jsonrpc2.Error
	if errors.As(err, &wire) {
		return wire.Message
	}
	return err.Error()
}
