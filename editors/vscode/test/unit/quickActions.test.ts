import * as assert from 'node:assert/strict';
import { test } from 'node:test';
import { QuickActionKinds, quickActions } from '../../src/quickActions';

test('Ctrl+. lists Compact context once the server offers it, and Ask with a selection', () => {
	assert.deepEqual(quickActions({ hasSelection: false, invoked: true, compactOffered: true }), ['compact']);
	assert.deepEqual(quickActions({ hasSelection: true, invoked: true, compactOffered: true }), ['ask', 'compact']);
	assert.deepEqual(quickActions({ hasSelection: false, invoked: true, compactOffered: false }), []);
});

test('the lightbulb shows on its own only for a selection', () => {
	assert.deepEqual(quickActions({ hasSelection: false, invoked: false, compactOffered: true }), []);
	assert.deepEqual(quickActions({ hasSelection: true, invoked: false, compactOffered: true }), ['ask']);
});

test('context.only is respected: Source Action… and Refactor… get none of them', () => {
	for (const only of [['source'], ['refactor'], ['quickfix']]) {
		assert.deepEqual(quickActions({ hasSelection: true, invoked: true, compactOffered: true, only }), [], JSON.stringify(only));
	}
	assert.deepEqual(quickActions({ hasSelection: true, invoked: true, compactOffered: true, only: ['reika'] }), ['ask', 'compact']);
	assert.ok(!QuickActionKinds.compact.startsWith('source') && !QuickActionKinds.ask.startsWith('refactor'));
});
