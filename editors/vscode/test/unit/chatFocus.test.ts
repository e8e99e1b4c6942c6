import * as assert from 'node:assert/strict';
import { test } from 'node:test';
import { FocusGate } from '../../src/chatFocus';

test('a focus asked for while the view loads is held until the view is ready', () => {
	const g = new FocusGate();
	g.loading();
	assert.equal(g.request(), false, 'not sent to a view that may not listen yet');
	assert.equal(g.ready(), true, 'sent once the view is ready');
	assert.equal(g.ready(), false, 'and only once');
});

test('a focus asked for when the view is ready is sent at once', () => {
	const g = new FocusGate();
	assert.equal(g.ready(), false, 'nothing held');
	assert.equal(g.request(), true);
	assert.equal(g.ready(), false, 'nothing held for a later ready');
});

test('a view that loads again holds focus again, and keeps one already held', () => {
	const g = new FocusGate();
	g.ready();
	g.loading();
	assert.equal(g.request(), false);
	g.loading();
	assert.equal(g.ready(), true, 'the focus held across the second load');
	assert.equal(g.request(), true);
});

test('a view that loads and is ready without a request gets no focus', () => {
	const g = new FocusGate();
	g.loading();
	assert.equal(g.ready(), false);
});
