// The context chip and the status bar item's text and colour (docs/design.md
// §3.10). The server sends the chip text; these functions render the rest
// and stand in when a field is missing. No 'vscode' import: unit-tested in
// plain node.

import { Level, SlashCommand, Status, WindowSource } from './protocol';

/** Formats a token count as the chip does: ≥ 10000 as whole k, 1000–9999
 * with one decimal (8.8k), below as the number. */
export function formatTokens(n: number): string {
	if (!Number.isFinite(n) || n < 0) {
		return '?';
	}
	n = Math.round(n);
	if (n < 1000) {
		return String(n);
	}
	if (n < 10000) {
		const tenths = Math.round(n / 100);
		if (tenths < 100) {
			return `${Math.floor(tenths / 10)}.${tenths % 10}k`;
		}
	}
	return `${Math.round(n / 1000)}k`;
}

/** The percentage of the shed point a size fills, rounded. */
export function percentOf(size: number, shedPoint: number): number {
	if (shedPoint <= 0) {
		return 0;
	}
	return Math.round((size * 100) / shedPoint);
}

/** The chip: `ctx 16k/24k (81% of 20k)`, or `ctx 16k` with no known window. */
export function chipText(s: Pick<Status, 'size' | 'window' | 'shedPoint' | 'percent'>): string {
	const size = formatTokens(s.size);
	if (s.window === null || s.window <= 0) {
		return `ctx ${size}`;
	}
	const win = formatTokens(s.window);
	if (s.shedPoint === null || s.shedPoint <= 0) {
		return `ctx ${size}/${win}`;
	}
	const pct = s.percent ?? percentOf(s.size, s.shedPoint);
	return `ctx ${size}/${win} (${pct}% of ${formatTokens(s.shedPoint)})`;
}

/** The level to show: the server's, or warning from 80% of the shed point. */
export function levelOf(s: Pick<Status, 'level' | 'percent'>): Level {
	if (s.level === 'ok' || s.level === 'warning' || s.level === 'error') {
		return s.level;
	}
	return s.percent !== null && s.percent >= 80 ? 'warning' : 'ok';
}

/** The theme colour id of the status bar item's background; undefined for
 * the default. VS Code allows only these two for status bar items. */
export function backgroundColorId(level: Level): string | undefined {
	switch (level) {
		case 'warning':
			return 'statusBarItem.warningBackground';
		case 'error':
			return 'statusBarItem.errorBackground';
		default:
			return undefined;
	}
}

/** Icons (codicons) of the status bar item. */
export const Icons = {
	approval: '$(bell-dot)',
	busy: '$(loading~spin)',
	ok: '$(sparkle)',
	warning: '$(warning)',
	error: '$(error)',
} as const;

/** The product name the status bar item carries, so it is clear whose
 * chip it is among the others. */
export const ProductName = 'Reika';

/** The status bar item's text: a bell while an approval waits for the
 * user, a spinner while busy, else the level's icon; then the product
 * name and the chip. */
export function statusBarText(s: Status, approvalsWaiting = 0): string {
	const chip = s.text.trim() !== '' ? s.text.trim() : chipText(s);
	if (approvalsWaiting > 0) {
		return `${Icons.approval} ${ProductName} ${chip} · approval needed`;
	}
	const icon = s.busy ? Icons.busy : Icons[levelOf(s)];
	return `${icon} ${ProductName} ${chip}`;
}

const windowSources: readonly WindowSource[] = ['setting', 'endpoint', 'catalog', 'overflow', 'none'];

function num(v: unknown): number | null {
	return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

function str(v: unknown): string {
	return typeof v === 'string' ? v : '';
}

/** Reads a status from the wire. Missing or mistyped fields get neutral
 * values; anything that is not an object with a size or a text is rejected
 * (undefined) so a bad message cannot blank the item. */
export function parseStatus(raw: unknown): Status | undefined {
	if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
		return undefined;
	}
	const r = raw as Record<string, unknown>;
	const size = num(r.size);
	const text = str(r.text);
	if (size === null && text === '') {
		return undefined;
	}
	const level = r.level === 'ok' || r.level === 'warning' || r.level === 'error' ? r.level : undefined;
	const percent = num(r.percent);
	const source = windowSources.find((w) => w === r.windowSource) ?? 'none';
	return {
		text,
		tooltip: str(r.tooltip),
		level: level ?? (percent !== null && percent >= 80 ? 'warning' : 'ok'),
		busy: r.busy === true,
		size: size ?? 0,
		window: num(r.window),
		shedPoint: num(r.shedPoint),
		percent,
		windowSource: source,
		model: str(r.model),
		session: str(r.session),
		...(str(r.mode) !== '' ? { mode: str(r.mode) } : {}),
	};
}

/** The session's mode: the status's, else `code` (the server leaves it out
 * for code). */
export function modeOf(s: Pick<Status, 'mode'> | undefined): string {
	return s?.mode !== undefined && s.mode !== '' ? s.mode : 'code';
}

/** The slash commands of a reika.commands result; what is not one is
 * left out. */
export function parseCommands(raw: unknown): SlashCommand[] {
	const list = (raw as { commands?: unknown } | null)?.commands;
	if (!Array.isArray(list)) {
		return [];
	}
	const out: SlashCommand[] = [];
	for (const c of list as Record<string, unknown>[]) {
		if (c === null || typeof c !== 'object' || typeof c.name !== 'string' || c.name === '') {
			continue;
		}
		out.push({
			name: c.name,
			description: str(c.description),
			...(str(c.argumentHint) !== '' ? { argumentHint: str(c.argumentHint) } : {}),
			...(str(c.source) !== '' ? { source: str(c.source) } : {}),
		});
	}
	return out;
}
