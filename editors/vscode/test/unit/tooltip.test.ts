import * as assert from 'node:assert/strict';
import { test } from 'node:test';
import { Status } from '../../src/protocol';
import { describeWindowSource, escapeMarkdown, fenceFor, statusMenu, tooltipMarkdown } from '../../src/tooltip';

function status(over: Partial<Status> = {}): Status {
	return {
		text: 'ctx 16k/24k (81% of 20k)',
		tooltip: '',
		level: 'warning',
		busy: false,
		size: 16000,
		window: 24000,
		shedPoint: 19756,
		percent: 81,
		windowSource: 'endpoint',
		model: 'qwen3-coder',
		session: 'sess-1',
		...over,
	};
}

const breakdown = [
	'window       24000 (from the engine)',
	'reserve       2048',
	'shed point   19756',
	'shed target  13829',
	'model        qwen3-coder',
].join('\n');

test('the server breakdown is kept verbatim as preformatted text', () => {
	const md = tooltipMarkdown(status({ tooltip: breakdown }));
	assert.ok(md.startsWith('**Reika** · ctx 16k/24k \\(81% of 20k\\)'), md);
	assert.ok(md.includes('```text\n' + breakdown + '\n```'), md);
	assert.ok(md.includes('Above 80% of the shed point'), md);
	assert.ok(md.endsWith('Click for: Compact context · Cancel · Show chat'), md);
	// No fallback table when the server sent a breakdown.
	assert.ok(!md.includes('| window from |'), md);
});

test('without a server breakdown the fields make a table', () => {
	const md = tooltipMarkdown(status({ level: 'ok', busy: true }));
	assert.ok(md.includes('| size | 16,000 tokens \\(16k\\) |'), md);
	assert.ok(md.includes('| window | 24,000 tokens \\(24k\\) |'), md);
	assert.ok(md.includes('| shed point | 19,756 tokens \\(20k\\), 81% used |'), md);
	assert.ok(md.includes(`| window from | ${escapeMarkdown(describeWindowSource('endpoint'))} |`), md);
	assert.ok(md.includes('| model | qwen3\\-coder |'), md);
	assert.ok(md.includes('A turn is running'), md);
	assert.ok(!md.includes('Above 80%'), md);
});

test('no known window: the table says how to set one', () => {
	const md = tooltipMarkdown(status({ level: 'ok', window: null, shedPoint: null, percent: null, windowSource: 'none', text: 'ctx 16k' }));
	assert.ok(!md.includes('| window |'), md);
	assert.ok(!md.includes('| shed point |'), md);
	assert.ok(md.includes('set reika\\.contextWindow'), md);
});

test('error level explains itself', () => {
	assert.ok(tooltipMarkdown(status({ level: 'error' })).includes('unreachable'));
});

test('a breakdown holding backticks cannot close the fence', () => {
	const text = 'a ``` b';
	assert.equal(fenceFor(text), '````');
	assert.equal(fenceFor('plain'), '```');
	const md = tooltipMarkdown(status({ tooltip: text }));
	assert.ok(md.includes('````text\na ``` b\n````'), md);
});

test('server text cannot inject Markdown or icons', () => {
	const md = tooltipMarkdown(status({ text: '[x](command:evil) $(zap)', tooltip: '' }));
	assert.ok(md.includes('\\[x\\]\\(command:evil\\) $\\(zap\\)'), md);
});

test('a waiting approval is explained and offered first in the menu', () => {
	assert.ok(tooltipMarkdown(status(), 1).includes('waiting for your approval'));
	assert.ok(!tooltipMarkdown(status(), 0).includes('waiting for your approval'));
	assert.equal(statusMenu(status(), true, 2)[0]?.id, 'approvals');
	assert.ok(!statusMenu(status(), true, 0).some((a) => a.id === 'approvals'));
});

test('every window source has words', () => {
	for (const s of ['setting', 'endpoint', 'catalog', 'overflow', 'none'] as const) {
		assert.ok(describeWindowSource(s).length > 5, s);
	}
});

test('the click menu offers compact, cancel and the transcript', () => {
	const ids = statusMenu(status(), true).map((a) => a.id);
	assert.deepEqual(ids.slice(0, 3), ['compact', 'cancel', 'transcript']);
	const idle = statusMenu(status({ busy: false }), true).find((a) => a.id === 'cancel');
	const busy = statusMenu(status({ busy: true }), true).find((a) => a.id === 'cancel');
	assert.equal(idle?.description, 'no turn is running');
	assert.equal(busy?.description, 'stop the running turn');
	// A stopped server can only be restarted or inspected.
	assert.deepEqual(
		statusMenu(undefined, false).map((a) => a.id),
		['restart', 'log', 'settings', 'transcript'],
	);
});
