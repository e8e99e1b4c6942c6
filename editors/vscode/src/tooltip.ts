// The status item's tooltip (Markdown) and the actions its click offers.
// No 'vscode' import: unit-tested in plain node.

import { chipText, formatTokens, levelOf } from './chip';
import { Status, WindowSource } from './protocol';

/** Where the window came from, in words. */
export function describeWindowSource(source: WindowSource): string {
	switch (source) {
		case 'setting':
			return 'the contextWindow setting (or REIKA_CONTEXT_WINDOW)';
		case 'endpoint':
			return "the engine's model listing";
		case 'catalog':
			return 'the models.dev catalog';
		case 'overflow':
			return "the engine's context overflow error";
		case 'none':
			return 'unknown: set reika.contextWindow';
	}
}

/** Escapes Markdown so server text shows as written. */
export function escapeMarkdown(s: string): string {
	return s.replace(/[\\`*_{}[\]()#+\-.!|<>~]/g, (c) => `\\${c}`);
}

/** A fence longer than any run of backticks in text. */
export function fenceFor(text: string): string {
	let longest = 0;
	for (const m of text.matchAll(/`+/g)) {
		longest = Math.max(longest, m[0].length);
	}
	return '`'.repeat(Math.max(3, longest + 1));
}

function tokens(n: number): string {
	return `${n.toLocaleString('en-US')} tokens (${formatTokens(n)})`;
}

/** The tooltip as Markdown: the chip, the server's budget breakdown (window,
 * reserve, shed point, shed target, where the window came from, the model)
 * kept as preformatted text, and what a click does. Without a breakdown from
 * the server it is built from the status fields. */
export function tooltipMarkdown(s: Status, approvalsWaiting = 0): string {
	const chip = s.text.trim() !== '' ? s.text.trim() : chipText(s);
	const parts: string[] = [`**Reika** · ${escapeMarkdown(chip)}`];
	const level = levelOf(s);
	if (approvalsWaiting > 0) {
		parts.push('$(bell-dot) Reika is waiting for your approval: see the notification.');
	}
	if (s.busy) {
		parts.push('$(loading~spin) A turn is running.');
	}
	if (level === 'warning') {
		parts.push('$(warning) Above 80% of the shed point: old tool output will be shed soon.');
	} else if (level === 'error') {
		parts.push('$(error) The engine is unreachable or the last turn failed; see the message or the server log.');
	}
	if (s.tooltip.trim() !== '') {
		const fence = fenceFor(s.tooltip);
		parts.push(`${fence}text\n${s.tooltip.trimEnd()}\n${fence}`);
	} else {
		const rows: [string, string][] = [['size', tokens(s.size)]];
		if (s.window !== null) {
			rows.push(['window', tokens(s.window)]);
		}
		if (s.shedPoint !== null) {
			const pct = s.percent !== null ? `, ${s.percent}% used` : '';
			rows.push(['shed point', `${tokens(s.shedPoint)}${pct}`]);
		}
		rows.push(['window from', describeWindowSource(s.windowSource)]);
		if (s.model !== '') {
			rows.push(['model', s.model]);
		}
		if (s.session !== '') {
			rows.push(['session', s.session]);
		}
		const table = ['| | |', '|---|---|', ...rows.map(([k, v]) => `| ${k} | ${escapeMarkdown(v)} |`)];
		parts.push(table.join('\n'));
	}
	parts.push('Click for: Compact context · Cancel · Show chat');
	return parts.join('\n\n');
}

/** An action the status item's click offers. */
export interface MenuAction {
	id: 'approvals' | 'compact' | 'cancel' | 'transcript' | 'mode' | 'ask' | 'restart' | 'log' | 'settings';
	label: string;
	description?: string;
}

/** The status item's click menu. Without a running server only the actions
 * that can help (restart, log, the serverPath setting) are offered. */
export function statusMenu(s: Status | undefined, running: boolean, approvalsWaiting = 0): MenuAction[] {
	if (!running) {
		return [
			{ id: 'restart', label: '$(debug-restart) Restart the server' },
			{ id: 'log', label: '$(output) Show the server log' },
			{ id: 'settings', label: '$(gear) Set reika.serverPath' },
			{ id: 'transcript', label: '$(comment-discussion) Show chat' },
		];
	}
	const busy = s?.busy === true;
	const waiting: MenuAction[] =
		approvalsWaiting > 0 ? [{ id: 'approvals', label: '$(bell-dot) Show the approval Reika is waiting for' }] : [];
	return [
		...waiting,
		{
			id: 'compact',
			label: '$(fold) Compact context',
			description: 'write a note and fold old turns into a recap',
		},
		{
			id: 'cancel',
			label: '$(debug-stop) Cancel',
			description: busy ? 'stop the running turn' : 'no turn is running',
		},
		{ id: 'transcript', label: '$(comment-discussion) Show chat' },
		{ id: 'mode', label: '$(symbol-enum) Switch mode…', description: `now ${s?.mode !== undefined && s.mode !== '' ? s.mode : 'code'}` },
		{ id: 'ask', label: '$(comment-discussion) Ask…' },
	];
}
