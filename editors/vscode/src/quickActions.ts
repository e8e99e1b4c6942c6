// The Reika actions of the lightbulb and Ctrl+. (Quick Fix…). The server
// offers Compact context as a source action (source.compactContext); VS
// Code lists source actions only under Source Action…, and for Ctrl+. does
// not even ask a provider that offers nothing else, so Ctrl+. found
// nothing. The extension adds a provider of its own: Ask Reika about the
// selection (what Copilot's lightbulb offers), and Compact context again
// under a kind of its own when the server offers it. No 'vscode' import:
// unit-tested in plain node.

/** The kinds of the extension's actions: outside quickfix, refactor and
 * source, so VS Code lists them under More Actions in Ctrl+. and never in
 * Source Action… or Refactor…. */
export const QuickActionKinds = {
	ask: 'reika.ask',
	compact: 'reika.compactContext',
} as const;

export type QuickAction = keyof typeof QuickActionKinds;

export interface QuickActionInput {
	/** The editor has a non-empty selection. */
	hasSelection: boolean;
	/** The user asked (Ctrl+. or a click on the lightbulb), rather than
	 * VS Code asking on its own to decide whether to show the lightbulb. */
	invoked: boolean;
	/** The server offered Compact context (the session has a turn). */
	compactOffered: boolean;
	/** The request's context.only kinds, if any. */
	only?: readonly string[];
}

function wanted(kind: string, only: readonly string[] | undefined): boolean {
	if (only === undefined || only.length === 0) {
		return true;
	}
	return only.some((k) => k === '' || kind === k || kind.startsWith(`${k}.`));
}

/** The actions to add. The lightbulb shows on its own only for a selection
 * (Ask), so it does not sit on every line once a session has a turn;
 * Ctrl+. lists Compact context as well. */
export function quickActions(i: QuickActionInput): QuickAction[] {
	const out: QuickAction[] = [];
	if (i.hasSelection && wanted(QuickActionKinds.ask, i.only)) {
		out.push('ask');
	}
	if (i.invoked && i.compactOffered && wanted(QuickActionKinds.compact, i.only)) {
		out.push('compact');
	}
	return out;
}
