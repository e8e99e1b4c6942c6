import * as assert from 'node:assert/strict';
import { test } from 'node:test';
import { askArgs, askOutcome, selectionLabel, shorten } from '../../src/ask';

const range = { start: { line: 2, character: 0 }, end: { line: 9, character: 4 } };

test('askArgs attaches a selection only when there is one', () => {
	assert.deepEqual(askArgs('  explain  '), { prompt: 'explain' });
	assert.deepEqual(askArgs('explain', { uri: 'file:///a.go', range, label: 'a.go lines 3-10' }), {
		prompt: 'explain',
		uri: 'file:///a.go',
		range,
	});
	// An @file attaches the whole document: uri alone (docs/protocol.md §3.1).
	assert.deepEqual(askArgs('explain', { uri: 'file:///b.go', label: 'b.go' }), { prompt: 'explain', uri: 'file:///b.go' });
});

test('selectionLabel uses 1-based lines and drops an empty last line', () => {
	assert.equal(selectionLabel('a.go', range), 'a.go lines 3-10');
	assert.equal(selectionLabel('a.go', { start: { line: 2, character: 0 }, end: { line: 5, character: 0 } }), 'a.go lines 3-5');
	assert.equal(selectionLabel('a.go', { start: { line: 4, character: 1 }, end: { line: 4, character: 9 } }), 'a.go line 5');
});

test('shorten makes one line of at most max characters', () => {
	assert.equal(shorten('a\n  b'), 'a b');
	const long = shorten('x'.repeat(100), 10);
	assert.equal(long.length, 10);
	assert.ok(long.endsWith('…'));
});

test('askOutcome: done is silent, cancelled informs, error shows the server message', () => {
	assert.deepEqual(askOutcome({ session: 's', status: 'done' }), { kind: 'none' });
	assert.deepEqual(askOutcome({ session: 's', status: 'cancelled' }), { kind: 'info', message: 'Reika: turn cancelled.' });
	assert.deepEqual(askOutcome({ session: 's', status: 'error', message: 'a turn is running' }), {
		kind: 'error',
		message: 'Reika: a turn is running',
	});
	assert.equal(askOutcome(null).kind, 'error');
	assert.equal(askOutcome({ session: 's', status: 'weird' as 'done' }).kind, 'error');
});
