// Command fakeengine runs agent/enginetest's fake inference engine as a
// process, for tests that drive the real reika-lsp binary (the editor
// tests). It prints the OpenAI-compatible base URL it listens on as the
// first line of stdout, then serves until interrupted or until stdin
// closes (with -stdin). See README.md for the script file format.
//
//	go run ./agent/enginetest/cmd/fakeengine -addr 127.0.0.1:0 -ctx 16000 -script FILE
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/reika-lsp/reika-lsp/agent/enginetest"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fakeengine", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:0", "address to listen on (port 0 picks a free one)")
	window := fs.Int("ctx", enginetest.DefaultWindow, "the context window (n_ctx / max_model_len) in tokens")
	shape := fs.String("shape", enginetest.ShapeLlamaCpp, "engine shape: llamacpp, llamacpp-2025, vllm, hosted, ollama, lmstudio")
	model := fs.String("model", enginetest.DefaultModel, "the model id the engine lists")
	script := fs.String("script", "", "JSON script file deciding the replies (default: answer \"ok\")")
	cpt := fs.Float64("chars-per-token", enginetest.DefaultCharsPerToken, "the fake tokenizer's prose density")
	code := fs.Float64("code-chars-per-token", 0, "tune the tokenizer so Go source comes out at this density (overrides -chars-per-token)")
	noTokenize := fs.Bool("no-tokenize", false, "serve no /tokenize or /apply-template")
	msPerToken := fs.Float64("prompt-ms-per-token", enginetest.DefaultPromptMSPerToken, "simulated prefill cost reported in timings.prompt_ms")
	apiKey := fs.String("api-key", "", "require this bearer token")
	errorLine := fs.Bool("stream-error-line", false, "report streamed overflows as pre-Oct-2025 llama.cpp did (an error: SSE line)")
	flat := fs.Bool("flat-errors", false, "vLLM: answer errors in the older flat form")
	slots := fs.Int("np", 1, "llama.cpp: the number of slots (-np), each with the whole -ctx")
	cacheReuse := fs.Int("cache-reuse", 0, "llama.cpp: --cache-reuse, the n_cache_reuse of requests that send none (0: chunk reuse off)")
	noShift := fs.Bool("no-shift", false, "llama.cpp: a model whose memory cannot shift, which refuses chunk reuse")
	watchStdin := fs.Bool("stdin", false, "exit when stdin closes")
	verbose := fs.Bool("v", false, "log each chat completion request to stderr")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "fakeengine: unexpected arguments %q\n", fs.Args())
		return 2
	}
	valid := false
	for _, s := range enginetest.Shapes {
		valid = valid || s == *shape
	}
	if !valid {
		fmt.Fprintf(stderr, "fakeengine: unknown shape %q (want one of %v)\n", *shape, enginetest.Shapes)
		return 2
	}
	opts := enginetest.Options{
		Shape: *shape, Window: *window, Model: *model, CharsPerToken: *cpt,
		PromptMSPerToken: *msPerToken, APIKey: *apiKey, StreamErrorLine: *errorLine, FlatErrors: *flat,
		CodeCharsPerToken: *code, NoTokenize: *noTokenize, Slots: *slots, CacheReuse: *cacheReuse, NoShift: *noShift,
	}
	if *script != "" {
		sc, err := enginetest.LoadScript(*script)
		if err != nil {
			fmt.Fprintf(stderr, "fakeengine: %v\n", err)
			return 1
		}
		opts.Script = sc
	}
	if *verbose {
		opts.Script = logRequests(opts.Script, stderr)
	}
	return serve(opts, *addr, *watchStdin, stdin, stdout, stderr)
}

// logRequests is script (nil: answer "ok") with a line on stderr for each
// chat completion request.
func logRequests(script enginetest.Script, stderr io.Writer) enginetest.Script {
	if script == nil {
		script = func(*enginetest.Request) enginetest.Reply { return enginetest.Text("ok") }
	}
	return func(r *enginetest.Request) enginetest.Reply {
		fmt.Fprintf(stderr, "fakeengine: request %d: %d messages, %d prompt tokens, tool_choice %q\n",
			r.Index, len(r.Messages), r.PromptTokens, r.ToolChoice)
		return script(r)
	}
}

// serve runs the engine on addr, prints its URL on stdout, and serves until
// SIGINT or SIGTERM, or until stdin closes when watchStdin is set. It
// returns the exit status.
func serve(opts enginetest.Options, addr string, watchStdin bool, stdin io.Reader, stdout, stderr io.Writer) int {
	srv, err := enginetest.Listen(opts, addr)
	if err != nil {
		fmt.Fprintf(stderr, "fakeengine: %v\n", err)
		return 1
	}
	defer srv.Close()
	fmt.Fprintln(stdout, srv.URL())
	if f, ok := stdout.(*os.File); ok {
		f.Sync()
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if watchStdin {
		go func() {
			io.Copy(io.Discard, stdin)
			stop()
		}()
	}
	<-ctx.Done()
	return 0
}
