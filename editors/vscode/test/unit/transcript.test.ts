import * as assert from 'node:assert/strict';
import { test } from 'node:test';
import { TranscriptEvent } from '../../src/protocol';
import { formatArgs, parseTranscriptEvent, renderEvent, Transcript } from '../../src/transcript';

function ev(over: Partial<TranscriptEvent>): TranscriptEvent {
	return { session: 's1', turn: 1, round: 1, kind: 'info', text: '', delta: false, ...over };
}

test('streamed assistant chunks grow one block, then the full message replaces it', () => {
	const t = new Transcript();
	t.add(ev({ kind: 'user', text: 'fix the bug' }));
	t.add(ev({ kind: 'assistant', text: 'Look', delta: true }));
	t.add(ev({ kind: 'assistant', text: 'ing at', delta: true }));
	const mid = t.render();
	assert.ok(mid.includes('### Reika\n\nLooking at'), mid);
	t.add(ev({ kind: 'assistant', text: 'Looking at a.go now.' }));
	const done = t.render();
	assert.ok(done.includes('### Reika\n\nLooking at a.go now.'), done);
	assert.equal(done.split('### Reika').length - 1, 1, 'one assistant block');
	assert.equal(t.length, 3, 'session header, user, assistant');
});

test('a final message without chunks is its own block, and a new round opens a new stream', () => {
	const t = new Transcript();
	t.add(ev({ kind: 'assistant', round: 1, text: 'one' }));
	t.add(ev({ kind: 'assistant', round: 2, text: 'tw', delta: true }));
	t.add(ev({ kind: 'assistant', round: 2, text: 'o', delta: true }));
	t.add(ev({ kind: 'assistant', round: 3, text: 'three', delta: true }));
	const out = t.render();
	const one = out.indexOf('one');
	const two = out.indexOf('two');
	const three = out.indexOf('three');
	assert.ok(one > 0 && two > one && three > two, out);
});

test('events render in order with their kinds', () => {
	const t = new Transcript();
	const events: TranscriptEvent[] = [
		ev({ kind: 'user', turn: 3, text: 'read a.go' }),
		ev({ kind: 'reasoning', text: 'I should\nread it' }),
		ev({ kind: 'tool_call', tool: 'read', args: { path: 'a.go' } }),
		ev({ kind: 'tool_result', tool: 'read', text: 'a.go lines 1-2 of 2\n1 package a\n2 ', tokens: 1234 }),
		ev({ kind: 'note', text: 'a.go declares package a' }),
		ev({ kind: 'shed', text: 'Read a.go lines 1-2 of 2', tokens: 900 }),
		ev({ kind: 'fold', text: 'Folded 12 rounds into a 1.3k-token recap', tokens: 1300 }),
		ev({ kind: 'info', text: 'engine back' }),
		ev({ kind: 'error', text: 'engine unreachable' }),
	];
	for (const e of events) {
		t.add(e);
	}
	const out = t.render();
	const want = [
		'# Session s1',
		'## You · turn 3\n\nread a.go',
		'> *thinking:* I should\n> read it',
		'**→ read** `{"path":"a.go"}`',
		'**← read** · 1.2k tokens\n\n```\na.go lines 1-2 of 2\n1 package a\n2 \n```',
		'> **Note** (what has been established)\n>\n> a.go declares package a',
		'**✂ Shed:** Read a.go lines 1-2 of 2 · 900 tokens',
		'**⇊ Folded:** Folded 12 rounds into a 1.3k-token recap · 1.3k tokens',
		'*engine back*',
		'**✖ Error:** engine unreachable',
	];
	let at = -1;
	for (const w of want) {
		const i = out.indexOf(w);
		assert.ok(i > at, `missing or out of order: ${JSON.stringify(w)}\n---\n${out}`);
		at = i;
	}
});

test('a tool result holding a fence cannot break out of its block', () => {
	const out = renderEvent(ev({ kind: 'tool_result', tool: 'read', text: '```go\nx\n```' }));
	assert.equal(out, '**← read**\n\n````\n```go\nx\n```\n````');
	assert.equal(renderEvent(ev({ kind: 'tool_result', tool: 'bash', text: '' })), '**← bash** (empty)');
});

test('long tool arguments are pretty-printed in a block', () => {
	const args = { path: 'a.go', content: 'x'.repeat(200) };
	const out = renderEvent(ev({ kind: 'tool_call', tool: 'write', args }));
	assert.ok(out.startsWith('**→ write**\n\n```json\n{\n  "path": "a.go",'), out);
	assert.equal(renderEvent(ev({ kind: 'tool_call', tool: 'glob' })), '**→ glob**');
	assert.equal(renderEvent(ev({ kind: 'tool_call', tool: 'grep', args: 'a`b' })), '**→ grep** ``a`b``');
});

test('formatArgs keeps strings and compacts objects', () => {
	assert.equal(formatArgs({ a: 1 }), '{"a":1}');
	assert.equal(formatArgs('{"a":1}'), '{"a":1}');
	assert.equal(formatArgs(undefined), '');
	assert.equal(formatArgs(null), '');
});

test('a new session gets a header; local lines are kept', () => {
	const t = new Transcript();
	t.add(ev({ session: 'a', kind: 'user', text: 'one' }));
	t.addLocal('New session b');
	t.add(ev({ session: 'b', kind: 'user', text: 'two' }));
	const out = t.render();
	assert.ok(out.indexOf('# Session a') < out.indexOf('*New session b*'), out);
	assert.ok(out.indexOf('*New session b*') < out.indexOf('# Session b'), out);
	const before = t.changes;
	t.clear();
	assert.ok(t.changes > before);
	assert.ok(t.render().includes('Nothing yet'));
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
