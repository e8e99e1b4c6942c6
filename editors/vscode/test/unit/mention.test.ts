import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { test } from 'node:test';
import { filesGlob, insideRoot, mentions, rankFiles } from '../../src/mention';

test('@path words of the input are mentions; e-mail addresses and punctuation are not', () => {
	assert.deepEqual(mentions('look at @src/a.go, and @b.ts.'), ['src/a.go', 'b.ts']);
	assert.deepEqual(mentions('@README.md first'), ['README.md']);
	assert.deepEqual(mentions('mail me at a@b.c'), []);
	assert.deepEqual(mentions('just @ alone'), []);
});

test('the completion glob contains the query and drops glob characters', () => {
	assert.equal(filesGlob(''), '**/*');
	assert.equal(filesGlob('main'), '**/*main*');
	assert.equal(filesGlob('src/ma'), '**/src/ma*');
	assert.equal(filesGlob('a*{b}?'), '**/*ab*');
});

test('completions: a name starting with the query first, then the shorter path', () => {
	assert.deepEqual(rankFiles(['lib/domain.go', 'x/main_test.go', 'main.go', 'main.go'], 'main'), ['main.go', 'x/main_test.go', 'lib/domain.go']);
	assert.equal(rankFiles(Array.from({ length: 30 }, (_, i) => `f${i}.go`), 'f', 5).length, 5);
});

test('only paths inside the workspace resolve', () => {
	const root = path.resolve('/w/proj');
	assert.equal(insideRoot(root, 'a/b.go'), path.join(root, 'a', 'b.go'));
	assert.equal(insideRoot(root, '../other/x.go'), undefined);
	assert.equal(insideRoot(root, '/etc/passwd'), undefined);
	assert.equal(insideRoot(root, path.join(root, 'c.go')), path.join(root, 'c.go'));
	assert.equal(insideRoot(root, '.'), undefined);
});
