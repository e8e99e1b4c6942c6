import * as assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseServerLine } from '../../src/serverLog';

test("the server's log lines keep their own level, without its timestamp", () => {
	assert.deepEqual(parseServerLine('2026/12/01 19:32:16.123456 lsp: initialize from Visual Studio Code 1.100.3'), {
		level: 'info',
		text: 'lsp: initialize from Visual Studio Code 1.100.3',
	});
	assert.deepEqual(parseServerLine('2026/12/01 19:32:16 reika: session log: write failed'), {
		level: 'warn',
		text: 'reika: session log: write failed',
	});
	assert.equal(parseServerLine('2026/12/01 19:32:16.1 lsp: BUG: panic handling initialize: x').level, 'error');
	assert.equal(parseServerLine('panic: runtime error: index out of range').level, 'error');
	assert.equal(parseServerLine('2026/12/01 19:32:16.1 reika-lsp: read stdin: closed').level, 'error');
	assert.equal(parseServerLine('lsp: engine unreachable at http://127.0.0.1:8080/v1').level, 'warn');
	assert.equal(parseServerLine('2026/12/01 19:32:16.1 lsp: <- workspace/executeCommand').level, 'info');
	assert.equal(parseServerLine('2026/12/01 19:32:16.1 reika: prefix cache: append, 312 tokens').level, 'info');
});
