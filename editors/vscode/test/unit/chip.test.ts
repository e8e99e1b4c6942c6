import * as assert from 'node:assert/strict';
import { test } from 'node:test';
import { backgroundColorId, chipText, formatTokens, Icons, levelOf, parseStatus, percentOf, statusBarText } from '../../src/chip';
import { Status } from '../../src/protocol';

function status(over: Partial<Status> = {}): Status {
	return {
		text: '',
		tooltip: '',
		level: 'ok',
		busy: false,
		size: 16000,
		window: 24000,
		shedPoint: 19756,
		percent: 81,
		windowSource: 'endpoint',
		model: 'qwen3-coder',
		session: 's1',
		...over,
	};
}

test('formatTokens follows docs/design.md §3.10', () => {
	const cases: [number, string][] = [
		[0, '0'],
		[512, '512'],
		[999, '999'],
		[1000, '1.0k'],
		[1395, '1.4k'],
		[8789, '8.8k'],
		[9949, '9.9k'],
		[9960, '10k'], // one decimal would print 10.0k
		[10000, '10k'],
		[12556, '13k'],
		[16000, '16k'],
		[19756, '20k'],
		[24000, '24k'],
		[113356, '113k'],
	];
	for (const [n, want] of cases) {
		assert.equal(formatTokens(n), want, `formatTokens(${n})`);
	}
	assert.equal(formatTokens(-1), '?');
	assert.equal(formatTokens(Number.NaN), '?');
});

test('chipText renders the seed example and the windowless form', () => {
	assert.equal(chipText(status()), 'ctx 16k/24k (81% of 20k)');
	assert.equal(chipText(status({ window: null, shedPoint: null, percent: null })), 'ctx 16k');
	// The percentage is computed when the server leaves it out.
	assert.equal(chipText(status({ size: 8789, window: 16000, shedPoint: 12556, percent: null })), 'ctx 8.8k/16k (70% of 13k)');
	assert.equal(chipText(status({ shedPoint: null, percent: null })), 'ctx 16k/24k');
});

test('percentOf rounds to the nearest percent of the shed point', () => {
	assert.equal(percentOf(16000, 19756), 81);
	assert.equal(percentOf(0, 19756), 0);
	assert.equal(percentOf(100, 0), 0);
});

test('level maps to the only two status bar colours', () => {
	assert.equal(backgroundColorId('ok'), undefined);
	assert.equal(backgroundColorId('warning'), 'statusBarItem.warningBackground');
	assert.equal(backgroundColorId('error'), 'statusBarItem.errorBackground');
});

test('statusBarText names the product and uses the server text, a spinner while busy and a level icon', () => {
	assert.equal(statusBarText(status({ text: 'ctx 16k/24k (81% of 20k)', level: 'warning' })), `${Icons.warning} Reika ctx 16k/24k (81% of 20k)`);
	assert.equal(statusBarText(status({ busy: true, level: 'warning' })), `${Icons.busy} Reika ctx 16k/24k (81% of 20k)`);
	assert.equal(statusBarText(status({ level: 'error' })), `${Icons.error} Reika ctx 16k/24k (81% of 20k)`);
	assert.equal(statusBarText(status({ text: 'ctx 1k', window: null })), `${Icons.ok} Reika ctx 1k`);
});

test('a waiting approval shows a bell, even while busy', () => {
	assert.equal(statusBarText(status({ busy: true }), 1), `${Icons.approval} Reika ctx 16k/24k (81% of 20k) · approval needed`);
	assert.equal(statusBarText(status({ busy: true }), 0), `${Icons.busy} Reika ctx 16k/24k (81% of 20k)`);
});

test('parseStatus accepts the wire shape and fills what is missing', () => {
	const wire = {
		text: 'ctx 16k/24k (81% of 20k)',
		tooltip: 'window 24000',
		level: 'warning',
		busy: true,
		size: 16000,
		window: 24000,
		shedPoint: 19756,
		percent: 81,
		windowSource: 'endpoint',
		model: 'qwen3-coder',
		session: 'abc',
	};
	assert.deepEqual(parseStatus(wire), wire);
	const nulls = parseStatus({ text: 'ctx 1k', size: 1000, window: null, shedPoint: null, percent: null });
	assert.deepEqual(nulls, {
		text: 'ctx 1k',
		tooltip: '',
		level: 'ok',
		busy: false,
		size: 1000,
		window: null,
		shedPoint: null,
		percent: null,
		windowSource: 'none',
		model: '',
		session: '',
	});
	// No level from the server: warning from 80%.
	assert.equal(parseStatus({ size: 5, percent: 85 })?.level, 'warning');
	assert.equal(parseStatus({ size: 5, percent: 85, level: 'bogus' })?.level, 'warning');
	assert.equal(parseStatus({ size: 5, windowSource: 'elsewhere' })?.windowSource, 'none');
	for (const bad of [null, undefined, 3, 'x', [], {}, { busy: true }]) {
		assert.equal(parseStatus(bad), undefined, JSON.stringify(bad));
	}
});

test('levelOf falls back to the 80% rule', () => {
	assert.equal(levelOf({ level: 'error', percent: 10 }), 'error');
	assert.equal(levelOf({ level: undefined as unknown as 'ok', percent: 80 }), 'warning');
	assert.equal(levelOf({ level: undefined as unknown as 'ok', percent: 79 }), 'ok');
	assert.equal(levelOf({ level: undefined as unknown as 'ok', percent: null }), 'ok');
});
