// The session history (reika.sessions, docs/protocol.md §3.9) as the
// extension shows it: a session's line in the picker, and a session opened
// read-only as Markdown. No 'vscode' import: unit-tested in plain node.

import { formatTokens } from './chip';
import { SessionInfo, TranscriptEvent } from './protocol';
import { toolSubject } from './chatModel';

/** The sessions of a list result, newest first as the server sends them;
 * what is not one is left out. */
export function parseSessions(raw: unknown): SessionInfo[] {
	const list = (raw as { sessions?: unknown } | null)?.sessions;
	if (!Array.isArray(list)) {
		return [];
	}
	const out: SessionInfo[] = [];
	for (const r of list as Record<string, unknown>[]) {
		if (r === null || typeof r !== 'object' || typeof r.id !== 'string' || r.id === '') {
			continue;
		}
		out.push({
			id: r.id,
			title: typeof r.title === 'string' ? r.title : '',
			started: typeof r.started === 'string' ? r.started : '',
			updated: typeof r.updated === 'string' ? r.updated : '',
			turns: typeof r.turns === 'number' ? r.turns : 0,
			bytes: typeof r.bytes === 'number' ? r.bytes : 0,
			current: r.current === true,
		});
	}
	return out;
}

/** A time as `2026-12-03 13:05` (local time); the text as sent when it is
 * not a time. */
export function shortTime(rfc3339: string, utc = false): string {
	const d = new Date(rfc3339);
	if (Number.isNaN(d.getTime())) {
		return rfc3339;
	}
	const p = (n: number): string => String(n).padStart(2, '0');
	const [y, mo, da, h, mi] = utc
		? [d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate(), d.getUTCHours(), d.getUTCMinutes()]
		: [d.getFullYear(), d.getMonth() + 1, d.getDate(), d.getHours(), d.getMinutes()];
	return `${y}-${p(mo)}-${p(da)} ${p(h)}:${p(mi)}`;
}

/** A size in bytes as `812 B`, `4.1 kB`, `2.3 MB`. */
export function formatBytes(n: number): string {
	if (n < 1000) {
		return `${n} B`;
	}
	if (n < 1_000_000) {
		return `${formatTokens(n).replace(/k$/, '')} kB`;
	}
	return `${(n / 1_000_000).toFixed(1)} MB`;
}

/** A session's line in the picker: its title, and when, how long, how big. */
export function sessionItem(s: SessionInfo, utc = false): { label: string; description: string; detail: string } {
	const turns = `${s.turns} ${s.turns === 1 ? 'turn' : 'turns'}`;
	return {
		label: `${s.current ? '$(arrow-right) ' : ''}${s.title !== '' ? s.title : '(no prompt yet)'}`,
		description: `${shortTime(s.updated, utc)} · ${turns} · ${formatBytes(s.bytes)}${s.current ? ' · current' : ''}`,
		detail: `${s.id} · started ${shortTime(s.started, utc)}`,
	};
}

/** A session's transcript as Markdown, to read (nothing in it runs). */
export function sessionMarkdown(s: Pick<SessionInfo, 'id' | 'title'>, events: readonly TranscriptEvent[], omitted = 0): string {
	const out = [`# ${s.title !== '' ? s.title : s.id}`, '', `_Session ${s.id}, read-only._`, ''];
	if (omitted > 0) {
		out.push(`_${omitted} older events are not shown._`, '');
	}
	const fence = (text: string): string => {
		const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
		const f = '`'.repeat(longest + 1);
		return `${f}\n${text.replace(/\n$/, '')}\n${f}`;
	};
	for (const ev of events) {
		switch (ev.kind) {
			case 'user':
				out.push('## You', '', ev.text, '');
				break;
			case 'assistant':
				if (ev.text.trim() !== '') {
					out.push('## Reika', '', ev.text, '');
				}
				break;
			case 'tool_call': {
				const subject = toolSubject(ev.tool ?? '', ev.args);
				out.push(`- **${ev.tool ?? 'tool'}**${subject !== '' ? ` ${subject.replace(/[\\`*_[\]<>]/g, (c) => `\\${c}`)}` : ''}`, '');
				break;
			}
			case 'tool_result':
				out.push(fence(ev.text), '');
				break;
			case 'reasoning':
				break;
			default:
				out.push(`_${ev.text.trim()}_`, '');
		}
	}
	return `${out.join('\n').trimEnd()}\n`;
}
