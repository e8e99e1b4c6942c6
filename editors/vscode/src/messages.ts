// One toast per problem. The server announces a condition once
// (window/showMessage: the engine is unreachable), and the turn that hits
// it fails with the same reason; the user should see it once, not as two
// near-identical error toasts. No 'vscode' import: unit-tested in plain
// node with an injected clock.

/** How long a shown message hides the same one again. */
export const repeatWindowMs = 60_000;

/** A message reduced to what tells it apart: no "Reika:" prefix, case,
 * spacing or final full stop. */
export function messageKey(text: string): string {
	return text
		.replace(/^\s*Reika:\s*/i, '')
		.replace(/\s+/g, ' ')
		.trim()
		.replace(/[.!]+$/, '')
		.toLowerCase();
}

/** Whether two messages say the same thing: equal, or one holds the
 * other (a turn's error wraps the server's announcement, or the reverse). */
export function sameMessage(a: string, b: string): boolean {
	const ka = messageKey(a);
	const kb = messageKey(b);
	if (ka === '' || kb === '') {
		return ka === kb;
	}
	return ka === kb || (Math.min(ka.length, kb.length) >= 16 && (ka.includes(kb) || kb.includes(ka)));
}

/** Remembers the messages shown, to skip one that repeats another shown in
 * the last repeatWindowMs. */
export class Toasts {
	private shown: { text: string; at: number }[] = [];

	constructor(private readonly now: () => number = Date.now) {}

	/** Whether to show text; when true it counts as shown now. */
	shouldShow(text: string): boolean {
		const t = this.now();
		this.shown = this.shown.filter((s) => t - s.at < repeatWindowMs);
		if (this.shown.some((s) => sameMessage(s.text, text))) {
			return false;
		}
		this.shown.push({ text, at: t });
		return true;
	}

	/** Forgets what was shown (the condition is over: a turn succeeded). */
	reset(): void {
		this.shown = [];
	}
}
