// The transcript as Markdown, built from reika/transcript events as they
// stream. No 'vscode' import: unit-tested in plain node.

import { formatTokens } from './chip';
import { fenceFor } from './tooltip';
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

function quote(text: string): string {
	return text
		.trimEnd()
		.split('\n')
		.map((l) => (l === '' ? '>' : `> ${l}`))
		.join('\n');
}

function fenced(text: string, lang = ''): string {
	const body = text.endsWith('\n') ? text : `${text}\n`;
	const fence = fenceFor(text);
	return `${fence}${lang}\n${body}${fence}`;
}

function inlineCode(text: string): string {
	let longest = 0;
	for (const m of text.matchAll(/`+/g)) {
		longest = Math.max(longest, m[0].length);
	}
	const fence = '`'.repeat(longest + 1);
	const pad = text.startsWith('`') || text.endsWith('`') ? ' ' : '';
	return `${fence}${pad}${text}${pad}${fence}`;
}

/** Tool calls whose arguments fit on a line are shown inline. */
const inlineArgsLimit = 160;

/** Renders one event (a full message, or the text streamed so far) as a
 * Markdown block. */
export function renderEvent(ev: TranscriptEvent): string {
	const toks = ev.tokens !== undefined ? ` · ${formatTokens(ev.tokens)} tokens` : '';
	switch (ev.kind) {
		case 'user':
			return `## You · turn ${ev.turn}\n\n${ev.text.trimEnd()}`;
		case 'assistant':
			return `### Reika\n\n${ev.text.trimEnd()}`;
		case 'reasoning':
			return `${quote(`*thinking:* ${ev.text}`)}`;
		case 'tool_call': {
			const name = ev.tool ?? 'tool';
			const args = formatArgs(ev.args);
			if (args === '') {
				return `**→ ${name}**`;
			}
			if (args.length <= inlineArgsLimit && !args.includes('\n')) {
				return `**→ ${name}** ${inlineCode(args)}`;
			}
			let pretty = args;
			if (typeof ev.args === 'object') {
				pretty = JSON.stringify(ev.args, null, 2);
			}
			return `**→ ${name}**\n\n${fenced(pretty, 'json')}`;
		}
		case 'tool_result': {
			const head = `**← ${ev.tool ?? 'result'}**${toks}`;
			return ev.text === '' ? `${head} (empty)` : `${head}\n\n${fenced(ev.text)}`;
		}
		case 'note':
			return quote(`**Note** (what has been established)\n\n${ev.text}`);
		case 'shed':
			return `**✂ Shed:** ${ev.text.trim()}${toks}`;
		case 'fold':
			return `**⇊ Folded:** ${ev.text.trim()}${toks}`;
		case 'info':
			return `*${ev.text.trim()}*`;
		case 'error':
			return `**✖ Error:** ${ev.text.trim()}`;
	}
}

interface Block {
	/** The key a streamed block is continued by, '' when complete. */
	streaming: string;
	ev: TranscriptEvent;
	text: string;
}

function streamKey(ev: TranscriptEvent): string {
	return `${ev.session}\u0000${ev.turn}\u0000${ev.round}\u0000${ev.kind}`;
}

/**
 * The transcript of a window: every event of every session, in order.
 * Streamed chunks (delta) grow one block; the full message that follows
 * replaces it. Rendering is cached per block, so a long transcript costs one
 * join per update.
 */
export class Transcript {
	private readonly blocks: Block[] = [];
	/** The open streamed block per stream key. */
	private readonly open = new Map<string, Block>();
	private lastSession = '';
	private version = 0;

	/** Counts changes, so a view can tell whether to redraw. */
	get changes(): number {
		return this.version;
	}

	get length(): number {
		return this.blocks.length;
	}

	add(ev: TranscriptEvent): void {
		this.version++;
		if (ev.session !== '' && ev.session !== this.lastSession) {
			this.lastSession = ev.session;
			this.push({ streaming: '', ev: { ...ev, kind: 'info', text: '' }, text: `# Session ${ev.session}` });
		}
		const key = streamKey(ev);
		const open = this.open.get(key);
		if (ev.delta) {
			if (open !== undefined) {
				open.ev = { ...open.ev, text: open.ev.text + ev.text };
				open.text = renderEvent(open.ev);
				return;
			}
			const block: Block = { streaming: key, ev: { ...ev }, text: renderEvent(ev) };
			this.open.set(key, block);
			this.push(block);
			return;
		}
		if (open !== undefined) {
			// The full message replaces what was streamed.
			this.open.delete(key);
			open.streaming = '';
			open.ev = { ...ev };
			open.text = renderEvent(ev);
			return;
		}
		this.push({ streaming: '', ev: { ...ev }, text: renderEvent(ev) });
	}

	/** Marks a line of the extension's own (a new session, a save) in the transcript. */
	addLocal(text: string): void {
		this.version++;
		this.push({ streaming: '', ev: localEvent(text), text: `*${text}*` });
	}

	/** The whole transcript as Markdown. */
	render(): string {
		if (this.blocks.length === 0) {
			return '# Reika transcript\n\nNothing yet. Run **Reika: Ask** to start a turn.\n';
		}
		return `${this.blocks.map((b) => b.text).join('\n\n')}\n`;
	}

	clear(): void {
		this.version++;
		this.blocks.length = 0;
		this.open.clear();
		this.lastSession = '';
	}

	private push(b: Block): void {
		this.blocks.push(b);
	}
}

function localEvent(text: string): TranscriptEvent {
	return { session: '', turn: 0, round: 0, kind: 'info', text, delta: false };
}
