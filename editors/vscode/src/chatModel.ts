// The conversation of the chat view, built from reika/transcript events as
// they stream (or from reika.transcript after a reload), as blocks of HTML:
// the user's requests, replies rendered from Markdown, reasoning and tool
// calls collapsible, tool results shortened with a way to show them whole,
// and notes, folds, sheds and errors as blocks of their own. No 'vscode'
// import: unit-tested in plain node.

import { formatTokens } from './chip';
import { escapeHtml, renderMarkdown, withCodeActions } from './markdown';
import { sameMessage } from './messages';
import { TranscriptEvent } from './protocol';
import { formatArgs } from './transcript';

/** One block of the view: its id and its HTML. */
export interface ChatBlock {
	id: number;
	kind: string;
	html: string;
}

type Entry =
	| { kind: 'user'; ev: TranscriptEvent }
	| { kind: 'assistant' | 'reasoning'; ev: TranscriptEvent; streaming: boolean; cut?: boolean }
	| { kind: 'tool'; call: TranscriptEvent; result?: TranscriptEvent; cut?: boolean }
	| { kind: 'result'; ev: TranscriptEvent }
	| { kind: 'note' | 'fold' | 'shed' | 'info' | 'error'; ev: TranscriptEvent }
	| { kind: 'session'; session: string }
	| { kind: 'local'; text: string };

/** What a turn the server never finished had streamed, and what the chat
 * said of it. The server's log does not hold it (the process died before
 * the round was logged), so the extension keeps it (cutTurns.ts) and puts
 * it back where it was when a window reload rebuilds the chat from
 * reika.transcript. */
export interface CutTurn {
	session: string;
	turn: number;
	/** The assistant and reasoning text as far as it streamed. */
	texts: TranscriptEvent[];
	/** The error line the chat showed after it. */
	error: string;
}

interface Block {
	id: number;
	entry: Entry;
	html: string;
}

/** How much of a tool result shows before "Show all". */
export const resultPreviewLines = 8;
export const resultPreviewChars = 1200;

function roundKey(ev: TranscriptEvent): string {
	return `${ev.session}\u0000${ev.turn}\u0000${ev.round}`;
}

/**
 * The chat's conversation. Streamed chunks (delta) grow one block; the
 * full message that follows replaces it. A tool result joins the block of
 * its call. Changed blocks are collected until taken, so the view sends
 * only what changed.
 */
export class Conversation {
	private blocks: Block[] = [];
	private nextId = 1;
	/** The open streamed block per session, turn, round and kind. */
	private readonly streaming = new Map<string, Block>();
	/** Tool blocks of a round still waiting for their results. */
	private readonly pending = new Map<string, Block[]>();
	private lastSession = '';
	private changed = new Set<number>();
	private lastCall: TranscriptEvent | undefined;

	/** The number of blocks. */
	get length(): number {
		return this.blocks.length;
	}

	/** The session of the newest event, '' before any. */
	get session(): string {
		return this.lastSession;
	}

	/** The newest tool call, for the approval it may be waiting for. */
	get latestToolCall(): TranscriptEvent | undefined {
		return this.lastCall;
	}

	add(ev: TranscriptEvent): void {
		if (ev.session !== '' && ev.session !== this.lastSession) {
			if (this.lastSession !== '' || this.blocks.length > 0) {
				this.push({ kind: 'session', session: ev.session });
			}
			this.lastSession = ev.session;
		}
		switch (ev.kind) {
			case 'assistant':
			case 'reasoning':
				this.addText(ev);
				return;
			case 'tool_call': {
				this.lastCall = ev;
				const b = this.push({ kind: 'tool', call: ev });
				const key = roundKey(ev);
				this.pending.set(key, [...(this.pending.get(key) ?? []), b]);
				return;
			}
			case 'tool_result': {
				const key = roundKey(ev);
				const waiting = this.pending.get(key) ?? [];
				const at = waiting.findIndex((b) => b.entry.kind === 'tool' && b.entry.call.tool === ev.tool);
				if (at < 0) {
					this.push({ kind: 'result', ev });
					return;
				}
				const b = waiting[at]!;
				waiting.splice(at, 1);
				if (b.entry.kind === 'tool') {
					b.entry.result = ev;
				}
				this.update(b);
				return;
			}
			case 'user':
				this.push({ kind: 'user', ev });
				return;
			default: {
				// The server's message that said the same (a fold's) came
				// first: this block takes its place.
				const last = this.blocks[this.blocks.length - 1];
				if (last?.entry.kind === 'info' && last.entry.ev.session === '' && sameMessage(last.entry.ev.text, ev.text)) {
					last.entry = { kind: ev.kind, ev };
					this.update(last);
					return;
				}
				this.push({ kind: ev.kind, ev });
			}
		}
	}

	/** Adds a line of the extension's own (a new session). */
	addLocal(text: string): void {
		this.push({ kind: 'local', text });
	}

	/** Adds an error the server did not put in the transcript (a turn that
	 * could not start), unless the newest block already says it. */
	addError(text: string): void {
		const last = this.blocks[this.blocks.length - 1]?.entry;
		if (last?.kind === 'error' && sameMessage(last.ev.text, text)) {
			return;
		}
		this.push({ kind: 'error', ev: { session: '', turn: 0, round: 0, kind: 'error', text, delta: false } });
	}

	/** Adds a message of the server's (window/showMessage) as an info
	 * line, unless one of the newest blocks already says it (a fold is a
	 * block of its own, and its message says the same). */
	addInfo(text: string): void {
		const recent = this.blocks.slice(-3).map((b) => b.entry);
		if (recent.some((e) => 'ev' in e && e.kind !== 'user' && sameMessage(e.ev.text, text))) {
			return;
		}
		this.push({ kind: 'info', ev: { session: '', turn: 0, round: 0, kind: 'info', text, delta: false } });
	}

	/** Ends the turn the server did not finish (it stopped): what streamed
	 * stays, marked as cut off, tools that never answered say so, and text
	 * says what happened. Returns what streamed, to keep across a reload;
	 * undefined when the chat shows no event of a session. */
	interrupt(text: string): CutTurn | undefined {
		const texts: TranscriptEvent[] = [];
		for (const b of this.streaming.values()) {
			if (b.entry.kind === 'assistant' || b.entry.kind === 'reasoning') {
				b.entry = { ...b.entry, streaming: false, cut: true };
				this.update(b);
				if (b.entry.ev.text.trim() !== '') {
					texts.push({ ...b.entry.ev, delta: false });
				}
			}
		}
		this.streaming.clear();
		for (const waiting of this.pending.values()) {
			for (const b of waiting) {
				if (b.entry.kind === 'tool') {
					b.entry = { ...b.entry, cut: true };
					this.update(b);
				}
			}
		}
		this.pending.clear();
		this.addError(text);
		const last = this.lastEvent();
		return last === undefined ? undefined : { session: last.session, turn: last.turn, texts, error: text };
	}

	/** Starts over with these events (a transcript from the server), with
	 * the cut turns of their sessions back after their turns' last events. */
	reset(events: readonly TranscriptEvent[], cuts: readonly CutTurn[] = []): void {
		this.clear();
		const after = new Map<number, CutTurn[]>();
		for (const c of cuts) {
			let at = -1;
			events.forEach((ev, i) => {
				if (ev.session === c.session && ev.turn === c.turn) {
					at = i;
				}
			});
			if (at >= 0) {
				after.set(at, [...(after.get(at) ?? []), c]);
			}
		}
		events.forEach((ev, i) => {
			this.add(ev);
			for (const c of after.get(i) ?? []) {
				for (const t of c.texts) {
					this.push({ kind: t.kind as 'assistant' | 'reasoning', ev: { ...t, delta: false }, streaming: false, cut: true });
				}
				this.addError(c.error);
			}
		});
	}

	/** The newest event of a session the chat shows. */
	private lastEvent(): TranscriptEvent | undefined {
		for (let i = this.blocks.length - 1; i >= 0; i--) {
			const e = this.blocks[i]!.entry;
			const ev = 'ev' in e ? e.ev : e.kind === 'tool' ? e.call : undefined;
			if (ev !== undefined && ev.session !== '') {
				return ev;
			}
		}
		return undefined;
	}

	clear(): void {
		this.blocks = [];
		this.streaming.clear();
		this.pending.clear();
		this.lastSession = '';
		this.lastCall = undefined;
		this.changed.clear();
	}

	/** Every block, in order. */
	all(): ChatBlock[] {
		return this.blocks.map(view);
	}

	/** The blocks added or changed since the last call, in order. */
	takeChanged(): ChatBlock[] {
		const out = this.blocks.filter((b) => this.changed.has(b.id)).map(view);
		this.changed.clear();
		return out;
	}

	private addText(ev: TranscriptEvent): void {
		const key = `${roundKey(ev)}\u0000${ev.kind}`;
		const open = this.streaming.get(key);
		if (ev.delta) {
			if (open !== undefined && (open.entry.kind === 'assistant' || open.entry.kind === 'reasoning')) {
				open.entry.ev = { ...open.entry.ev, text: open.entry.ev.text + ev.text };
				this.update(open);
				return;
			}
			const b = this.push({ kind: ev.kind as 'assistant' | 'reasoning', ev: { ...ev }, streaming: true });
			this.streaming.set(key, b);
			return;
		}
		if (open !== undefined) {
			this.streaming.delete(key);
			open.entry = { kind: ev.kind as 'assistant' | 'reasoning', ev: { ...ev }, streaming: false };
			this.update(open);
			return;
		}
		if (ev.kind === 'assistant' && ev.text.trim() === '') {
			return; // a round that only called tools says nothing
		}
		this.push({ kind: ev.kind as 'assistant' | 'reasoning', ev: { ...ev }, streaming: false });
	}

	private push(entry: Entry): Block {
		const b: Block = { id: this.nextId++, entry, html: renderEntry(entry) };
		this.blocks.push(b);
		this.changed.add(b.id);
		return b;
	}

	private update(b: Block): void {
		b.html = renderEntry(b.entry);
		this.changed.add(b.id);
	}
}

function view(b: Block): ChatBlock {
	return { id: b.id, kind: b.entry.kind, html: b.html };
}

/** The selection a request attached (the server appends it to the prompt
 * as a <selection file=… lines=…> element), split from the request. */
export function splitSelection(prompt: string): { text: string; file?: string; lines?: string; code?: string } {
	const m = /\n*<selection file="((?:[^"\\]|\\.)*)" lines="(\d+-\d+)">\n([\s\S]*?)\n?<\/selection>\s*$/.exec(prompt);
	if (m === null) {
		return { text: prompt };
	}
	let file = m[1]!;
	try {
		file = JSON.parse(`"${file}"`) as string;
	} catch {
		// keep it as written
	}
	return { text: prompt.slice(0, m.index), file, lines: m[2]!, code: m[3]! };
}

/** The argument a tool call is about, in a few words. */
export function toolSubject(tool: string, args: unknown): string {
	if (args === null || typeof args !== 'object') {
		return '';
	}
	const a = args as Record<string, unknown>;
	const str = (k: string): string => (typeof a[k] === 'string' ? (a[k] as string) : '');
	switch (tool) {
		case 'read': {
			const p = str('path');
			const from = typeof a.start_line === 'number' ? a.start_line : undefined;
			const to = typeof a.end_line === 'number' ? a.end_line : undefined;
			return from !== undefined || to !== undefined ? `${p} lines ${from ?? 1}-${to ?? 'end'}` : p;
		}
		case 'write':
		case 'edit':
			return str('path');
		case 'bash':
			return oneLine(str('command'), 80);
		case 'grep':
		case 'glob': {
			const where = str('path');
			return where !== '' ? `${str('pattern')} in ${where}` : str('pattern');
		}
		case 'fetch_url':
			return str('url');
		case 'subagent':
			return oneLine(str('task'), 80);
		default:
			return oneLine(formatArgs(args), 80);
	}
}

function oneLine(s: string, max: number): string {
	const first = s.split('\n')[0] ?? '';
	const more = s.includes('\n') ? ' …' : '';
	return first.length > max ? `${first.slice(0, max - 1)}…` : first + more;
}

/** The start of a tool result shown before "Show all", and whether it is
 * all of it. */
export function resultPreview(text: string): { preview: string; whole: boolean; lines: number } {
	const lines = text.split('\n');
	const n = text.endsWith('\n') ? lines.length - 1 : lines.length;
	// A read's result starts with a header line ("big.txt lines 1-220 of
	// 220"): the count is of the file's lines, not the header's too.
	const counted = readHeader.test(lines[0] ?? '') ? n - 1 : n;
	if (n <= resultPreviewLines + 2 && text.length <= resultPreviewChars) {
		return { preview: text, whole: true, lines: counted }; // hiding a line or two saves nothing
	}
	let preview = lines.slice(0, resultPreviewLines).join('\n');
	if (preview.length > resultPreviewChars) {
		preview = preview.slice(0, resultPreviewChars);
	}
	return { preview, whole: preview.length >= text.trimEnd().length, lines: counted };
}

/** The header line of a read tool's result (agent/tools/read.go). */
const readHeader = /^\S.* lines \d+-\d+ of \d+$/;

function tokensNote(ev: TranscriptEvent | undefined): string {
	return ev?.tokens !== undefined ? ` · ${formatTokens(ev.tokens)} tokens` : '';
}

function renderResult(ev: TranscriptEvent): string {
	const failed = /^Error\b/.test(ev.text);
	const cls = failed ? 'result failed' : 'result';
	if (ev.text === '') {
		return `<div class="${cls}"><div class="result-head">result: empty${tokensNote(ev)}</div></div>`;
	}
	const p = resultPreview(ev.text);
	const head = `<div class="result-head">result · ${p.lines} ${p.lines === 1 ? 'line' : 'lines'}${tokensNote(ev)}</div>`;
	if (p.whole) {
		return `<div class="${cls}">${head}<pre>${escapeHtml(ev.text)}</pre></div>`;
	}
	return (
		`<div class="${cls}">${head}<pre class="preview">${escapeHtml(p.preview)}</pre>` +
		`<pre class="whole" hidden>${escapeHtml(ev.text)}</pre>` +
		`<button class="expand" type="button" data-lines="${p.lines}">Show all ${p.lines} lines</button></div>`
	);
}

/** Renders one entry as the inner HTML of its block. */
function renderEntry(e: Entry): string {
	switch (e.kind) {
		case 'user': {
			const sel = splitSelection(e.ev.text);
			let html = `<div class="who">You</div><div class="md">${renderMarkdown(sel.text)}</div>`;
			if (sel.file !== undefined) {
				html +=
					`<details class="attachment"><summary>${escapeHtml(`${sel.file} lines ${sel.lines ?? ''}`)}</summary>` +
					`<pre>${escapeHtml(sel.code ?? '')}</pre></details>`;
			}
			return html;
		}
		case 'assistant':
			return (
				`<div class="md">${withCodeActions(renderMarkdown(e.ev.text))}</div>${e.streaming ? '<span class="cursor"></span>' : ''}` +
				(e.cut === true ? '<div class="cut">… (cut off: the server stopped)</div>' : '')
			);
		case 'reasoning':
			return (
				`<details class="reasoning"${e.streaming ? ' open' : ''}><summary>${e.streaming ? 'Thinking…' : 'Reasoning'}</summary>` +
				`<div class="md">${renderMarkdown(e.ev.text)}</div></details>`
			);
		case 'tool': {
			const name = e.call.tool ?? 'tool';
			const subject = toolSubject(name, e.call.args);
			const args = typeof e.call.args === 'object' && e.call.args !== null ? JSON.stringify(e.call.args, null, 2) : formatArgs(e.call.args);
			const summary =
				`<span class="tool-name">${escapeHtml(name)}</span>` +
				(subject !== '' ? ` <span class="tool-subject">${escapeHtml(subject)}</span>` : '') +
				(e.result === undefined ? (e.cut === true ? ' <span class="running">no result: the server stopped</span>' : ' <span class="running">running…</span>') : '');
			const call = `<details class="call"><summary>${summary}</summary><pre class="args">${escapeHtml(args)}</pre></details>`;
			return call + (e.result !== undefined ? renderResult(e.result) : '');
		}
		case 'result':
			return `<div class="tool-name">${escapeHtml(e.ev.tool ?? 'result')}</div>${renderResult(e.ev)}`;
		case 'note':
			return `<div class="label">Note · what has been established</div><div class="md">${renderMarkdown(e.ev.text)}</div>`;
		case 'fold':
			return `<span class="glyph">⇊</span> ${escapeHtml(e.ev.text.trim())}`;
		case 'shed':
			return `<span class="glyph">✂</span> ${escapeHtml(e.ev.text.trim())}`;
		case 'info':
			return escapeHtml(e.ev.text.trim());
		case 'error':
			return `<span class="glyph">✖</span> ${escapeHtml(e.ev.text.trim())}`;
		case 'session':
			return `Session ${escapeHtml(e.session)}`;
		case 'local':
			return escapeHtml(e.text);
	}
}
