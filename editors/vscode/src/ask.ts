// What Reika: Ask sends and what its answer means. No 'vscode' import:
// unit-tested in plain node.

import { Range } from 'vscode-languageserver-protocol';
import { AskArgs, AskResult } from './protocol';

/** An editor selection to attach, in LSP terms; without a range, the
 * whole document (an @file of the chat's input). */
export interface Selection {
	uri: string;
	range?: Range;
	/** For the prompt box, e.g. "a.go lines 3-10". */
	label: string;
}

/** The argument of reika.ask; a selection is attached when there is one. */
export function askArgs(prompt: string, selection?: Selection): AskArgs {
	const args: AskArgs = { prompt: prompt.trim() };
	if (selection !== undefined) {
		args.uri = selection.uri;
		if (selection.range !== undefined) {
			args.range = selection.range;
		}
	}
	return args;
}

/** "a.go lines 3-10" for a 0-based LSP range. A selection that ends at the
 * start of a line does not include that line. */
export function selectionLabel(fileName: string, range: Range): string {
	const first = range.start.line + 1;
	let last = range.end.line + 1;
	if (range.end.character === 0 && range.end.line > range.start.line) {
		last--;
	}
	return first === last ? `${fileName} line ${first}` : `${fileName} lines ${first}-${last}`;
}

/** Shortens text to one line of at most max characters. */
export function shorten(text: string, max = 60): string {
	const line = text.replace(/\s+/g, ' ').trim();
	return line.length <= max ? line : `${line.slice(0, max - 1)}…`;
}

export type Outcome = { kind: 'none' } | { kind: 'info' | 'error'; message: string };

/** What to tell the user when a turn ends. A finished turn needs no
 * message: its answer is in the transcript. */
export function askOutcome(r: AskResult | null | undefined): Outcome {
	if (r === null || r === undefined || typeof r !== 'object') {
		return { kind: 'error', message: 'Reika: the server gave no result for the request.' };
	}
	switch (r.status) {
		case 'done':
			return { kind: 'none' };
		case 'cancelled':
			return { kind: 'info', message: 'Reika: turn cancelled.' };
		case 'error':
			return { kind: 'error', message: `Reika: ${r.message ?? 'the turn failed.'}` };
		default:
			return { kind: 'error', message: `Reika: unexpected result ${JSON.stringify(r)}` };
	}
}
