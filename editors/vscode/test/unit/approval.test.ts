import * as assert from 'node:assert/strict';
import { test } from 'node:test';
import { commandFitsMessage, lineCount, parseApproval, proposedText } from '../../src/approval';

test('parseApproval reads the kind, the file and the detail of each tool', () => {
	assert.deepEqual(parseApproval('Reika wants to edit src/main.go (2 hunks)\n\n--- a/src/main.go\n+++ b/src/main.go\n@@ -1 +1 @@'), {
		kind: 'edit',
		summary: 'edit src/main.go (2 hunks)',
		detail: '--- a/src/main.go\n+++ b/src/main.go\n@@ -1 +1 @@',
		tool: 'edit',
		path: 'src/main.go',
	});
	const write = parseApproval('Reika wants to write notes (draft).txt (new file, 3 lines)\n\n+a');
	assert.equal(write.kind, 'edit');
	assert.equal(write.tool, 'write');
	assert.equal(write.path, 'notes (draft).txt');
	const run = parseApproval('Reika wants to run `go test ./...` …\n\ngo test ./...\ngo vet ./...');
	assert.deepEqual([run.kind, run.tool, run.detail], ['command', 'bash', 'go test ./...\ngo vet ./...']);
	assert.equal(parseApproval('Reika wants to fetch https://go.dev\n\nhttps://go.dev').kind, 'fetch');
	assert.equal(parseApproval('Reika wants to read /etc/hosts (outside the workspace)\n\n/etc/hosts').kind, 'outside');
	assert.equal(parseApproval('Reika wants to edit /tmp/x (outside the workspace)').kind, 'outside');
	assert.deepEqual(parseApproval('something else'), { kind: 'other', summary: 'something else', detail: '' });
});

test('a write proposes its content', () => {
	assert.deepEqual(proposedText('write', { path: 'a', content: 'new\n' }, undefined), { ok: true, text: 'new\n' });
	assert.deepEqual(proposedText('write', { path: 'a', content: '' }, 'old'), { ok: true, text: '' });
	assert.equal(proposedText('write', { path: 'a' }, 'old').ok, false);
});

test('an edit replaces its one occurrence, or every one with replace_all', () => {
	assert.deepEqual(proposedText('edit', { old_string: 'b', new_string: 'B' }, 'a b c'), { ok: true, text: 'a B c' });
	assert.deepEqual(proposedText('edit', { old_string: 'x', new_string: 'yx', replace_all: true }, 'x-x'), { ok: true, text: 'yx-yx' });
	assert.deepEqual(proposedText('edit', { old_string: 'x', new_string: 'y' }, 'x-x'), { ok: false, reason: 'old_string occurs 2 times' });
	assert.deepEqual(proposedText('edit', { old_string: 'z', new_string: 'y' }, 'x'), { ok: false, reason: 'old_string is not in the file' });
	assert.equal(proposedText('edit', { old_string: 'x', new_string: 'y' }, undefined).ok, false);
	assert.equal(proposedText('edit', { old_string: '', new_string: 'y' }, 'x').ok, false);
	assert.equal(proposedText('bash', {}, 'x').ok, false);
	// $& and friends are text, not replacement patterns.
	assert.deepEqual(proposedText('edit', { old_string: 'a', new_string: '$&$1' }, 'a'), { ok: true, text: '$&$1' });
});

test('an edit of a file with Windows line endings matches \\n as the tool does', () => {
	assert.deepEqual(proposedText('edit', { old_string: 'one\ntwo', new_string: 'uno\ndos' }, 'one\r\ntwo\r\nthree\r\n'), {
		ok: true,
		text: 'uno\r\ndos\r\nthree\r\n',
	});
});

test('a command fits the message when it is one short line', () => {
	assert.ok(commandFitsMessage('go test ./...'));
	assert.ok(!commandFitsMessage('set -e\ngo test ./...'));
	assert.ok(!commandFitsMessage('x'.repeat(161)));
	assert.equal(lineCount('a\nb\n'), 2);
});
