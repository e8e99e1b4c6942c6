// Transcript events from the wire (reika/transcript, reika.transcript). The
// chat renders them (chatModel.ts). No 'vscode' import: unit-tested in
// plain node.

import { TranscriptEvent, TranscriptKind } from './protocol';

const kinds: readonly TranscriptKind[] = [
	'user',
	'assistant',
	'reasoning',
	'tool_call',
	'tool_result',
	'note',
	'shed',
	'fold',
	'info',
	'error',
];

/** Reads a transcript event from the wire; undefined when it is not one. An
 * unknown kind is kept as `info` so nothing the server says is lost. */
export function parseTranscriptEvent(raw: unknown): TranscriptEvent | undefined {
	if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
		return undefined;
	}
	const r = raw as Record<string, unknown>;
	if (typeof r.kind !== 'string' || typeof r.text !== 'string') {
		return undefined;
	}
	const known = kinds.find((k) => k === r.kind);
	const ev: TranscriptEvent = {
		session: typeof r.session === 'string' ? r.session : '',
		turn: typeof r.turn === 'number' ? r.turn : 0,
		round: typeof r.round === 'number' ? r.round : 0,
		kind: known ?? 'info',
		text: known !== undefined ? r.text : `[${r.kind}] ${r.text}`,
		delta: r.delta === true,
	};
	if (typeof r.tool === 'string' && r.tool !== '') {
		ev.tool = r.tool;
	}
	if (r.args !== undefined && r.args !== null) {
		ev.args = r.args;
	}
	if (typeof r.tokens === 'number' && r.tokens > 0) {
		ev.tokens = r.tokens;
	}
	return ev;
}

/** Compact JSON of tool arguments, for the tool call line. */
export function formatArgs(args: unknown): string {
	if (args === undefined || args === null) {
		return '';
	}
	if (typeof args === 'string') {
		return args;
	}
	try {
		return JSON.stringify(args);
	} catch {
		return String(args);
	}
}
