// The server's log lines (its stderr) in the extension's log: each at its
// own level instead of all as errors, without the server's timestamp (the
// output channel adds its own). No 'vscode' import: unit-tested in plain
// node.

export type LogLevel = 'error' | 'warn' | 'info';

export interface LogLine {
	level: LogLevel;
	text: string;
}

const goTimestamp = /^\d{4}\/\d{2}\/\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)? /;

/** The level and text of one line the server wrote to stderr. A bug or a
 * crash is an error; a failure it reports and goes on from is a warning;
 * everything else (requests, settings, the prefix-cache lines) is info. */
export function parseServerLine(line: string): LogLine {
	const text = line.replace(goTimestamp, '');
	if (/\bBUG\b|^panic: |^fatal error: |^reika-lsp: /.test(text)) {
		return { level: 'error', text };
	}
	if (/\b(error|errors|failed|fails|cannot|could not|denied|unreachable|not running|no agent)\b/i.test(text)) {
		return { level: 'warn', text };
	}
	return { level: 'info', text };
}
