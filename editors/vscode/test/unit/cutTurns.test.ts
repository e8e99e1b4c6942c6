import * as assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CutTurn } from '../../src/chatModel';
import { CutTurns, cutTurnsKey, maxCutTurns, StateStore } from '../../src/cutTurns';

function store(): StateStore & { data: Map<string, unknown> } {
	const data = new Map<string, unknown>();
	return {
		data,
		get: <T>(k: string) => data.get(k) as T | undefined,
		update: async (k: string, v: unknown) => {
			data.set(k, v);
		},
	};
}

function cut(turn: number, session = 's1'): CutTurn {
	return { session, turn, texts: [{ session, turn, round: 1, kind: 'assistant', text: `t${turn}`, delta: false }], error: 'stopped' };
}

test('cut turns are kept in the workspace state, newest last, bounded, one per turn', async () => {
	const s = store();
	const c = new CutTurns(s);
	assert.deepEqual(c.all(), []);
	await c.add(cut(1));
	await c.add(cut(2));
	await c.add({ ...cut(1), error: 'again' });
	assert.deepEqual(c.all().map((x) => `${x.turn}:${x.error}`), ['2:stopped', '1:again']);
	// Another instance (a reloaded window) reads the same.
	assert.equal(new CutTurns(s).all().length, 2);
	for (let i = 10; i < 10 + maxCutTurns; i++) {
		await c.add(cut(i));
	}
	assert.equal(c.all().length, maxCutTurns);
	assert.equal(c.all()[0]!.turn, 10, 'the oldest went');
});

test('a state that is not a list of cut turns reads as none, or as its valid entries', () => {
	const s = store();
	s.data.set(cutTurnsKey, 'junk');
	assert.deepEqual(new CutTurns(s).all(), []);
	s.data.set(cutTurnsKey, [null, { session: 's' }, cut(3)]);
	assert.deepEqual(new CutTurns(s).all(), [cut(3)]);
});
