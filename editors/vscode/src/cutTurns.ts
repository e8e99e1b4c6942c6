// The turns a dead server cut off, kept in the workspace's state so that
// a window reload, which rebuilds the chat from the server's log, still
// shows what they had streamed (the log never got it). No 'vscode' import:
// unit-tested in plain node with a Map for the state.

import type { CutTurn } from './chatModel';

/** The part of vscode.Memento used here. */
export interface StateStore {
	get<T>(key: string): T | undefined;
	update(key: string, value: unknown): Thenable<void> | Promise<void>;
}

/** The state key; the newest maxCutTurns are kept. */
export const cutTurnsKey = 'reika.cutTurns';
export const maxCutTurns = 20;

export class CutTurns {
	constructor(private readonly store: StateStore) {}

	/** The kept turns, oldest first. */
	all(): CutTurn[] {
		const v = this.store.get<unknown>(cutTurnsKey);
		return Array.isArray(v) ? v.filter(isCutTurn) : [];
	}

	/** Keeps one more (the oldest go beyond maxCutTurns). */
	add(c: CutTurn): Promise<void> {
		const kept = this.all().filter((x) => x.session !== c.session || x.turn !== c.turn);
		return Promise.resolve(this.store.update(cutTurnsKey, [...kept, c].slice(-maxCutTurns)));
	}
}

function isCutTurn(v: unknown): v is CutTurn {
	const c = v as CutTurn;
	return (
		typeof v === 'object' &&
		v !== null &&
		typeof c.session === 'string' &&
		typeof c.turn === 'number' &&
		typeof c.error === 'string' &&
		Array.isArray(c.texts)
	);
}
