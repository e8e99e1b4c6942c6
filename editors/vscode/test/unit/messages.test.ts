import * as assert from 'node:assert/strict';
import { test } from 'node:test';
import { messageKey, repeatWindowMs, sameMessage, Toasts } from '../../src/messages';

const down = 'engine unreachable at http://127.0.0.1:8080/v1: dial tcp 127.0.0.1:8080: connect: connection refused';

test('the server announcing the engine down and the turn failing on it are one toast', () => {
	let now = 1000;
	const t = new Toasts(() => now);
	assert.equal(t.shouldShow(down), true, 'the server announces it');
	now += 10;
	assert.equal(t.shouldShow(`Reika: ${down}.`), false, "the ask's error says the same");
	assert.equal(t.shouldShow(`Reika: Ask failed: ${down}`), false, 'a wrapped one too');
	assert.equal(t.shouldShow('Reika: the prompt is empty'), true, 'another message shows');
	now += repeatWindowMs;
	assert.equal(t.shouldShow(down), true, 'after a while it may show again');
});

test('messageKey and sameMessage ignore the prefix, case, spacing and the full stop', () => {
	assert.equal(messageKey('  Reika:  Engine   DOWN. '), 'engine down');
	assert.ok(sameMessage('Reika: engine down', 'engine down.'));
	assert.ok(!sameMessage('ok', 'not ok at all'), 'short messages must be equal');
	assert.ok(!sameMessage('', 'x'));
});

test('after a turn succeeds (reset) the same failure toasts again', () => {
	const t = new Toasts(() => 1000);
	assert.equal(t.shouldShow(down), true);
	assert.equal(t.shouldShow(down), false);
	t.reset();
	assert.equal(t.shouldShow(down), true, 'the engine went down again: say so');
});
