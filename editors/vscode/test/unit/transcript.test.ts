import * as assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatArgs, parseTranscriptEvent } from '../../src/transcript';

test('formatArgs keeps strings and compacts objects', () => {
	assert.equal(formatArgs({ a: 1 }), '{"a":1}');
	assert.equal(formatArgs('{"a":1}'), '{"a":1}');
	assert.equal(formatArgs(undefined), '');
	assert.equal(formatArgs(null), '');
});

test('parseTranscriptEvent validates and keeps unknown kinds as info', () => {
	assert.deepEqual(
		parseTranscriptEvent({ session: 's', turn: 2, round: 3, kind: 'tool_call', text: '', delta: false, tool: 'read', args: { path: 'x' }, tokens: 5 }),
		{ session: 's', turn: 2, round: 3, kind: 'tool_call', text: '', delta: false, tool: 'read', args: { path: 'x' }, tokens: 5 },
	);
	assert.deepEqual(parseTranscriptEvent({ kind: 'telemetry', text: 'x' }), {
		session: '',
		turn: 0,
		round: 0,
		kind: 'info',
		text: '[telemetry] x',
		delta: false,
	});
	for (const bad of [null, 1, [], {}, { kind: 'user' }, { text: 'x' }]) {
		assert.equal(parseTranscriptEvent(bad), undefined, JSON.stringify(bad));
	}
});
