import * as assert from 'node:assert/strict';
import { test } from 'node:test';
import { expandSetting, resolveServerPath, ServerPathEnv } from '../../src/serverPath';

function env(files: string[], over: Partial<ServerPathEnv> = {}): ServerPathEnv {
	const set = new Set(files);
	return {
		setting: '',
		platform: 'linux',
		env: { PATH: '/usr/local/bin:/usr/bin' },
		home: '/home/u',
		workspaceFolder: '/work/proj',
		extensionPath: '/ext',
		isExecutable: (p) => set.has(p),
		...over,
	};
}

test('the setting wins and is expanded', () => {
	assert.deepEqual(resolveServerPath(env(['/home/u/bin/reika-lsp', '/usr/bin/reika-lsp'], { setting: '~/bin/reika-lsp' })), {
		ok: true,
		path: '/home/u/bin/reika-lsp',
		source: 'setting',
	});
	assert.equal(expandSetting('${workspaceFolder}/bin/reika-lsp', env([])), '/work/proj/bin/reika-lsp');
	assert.equal(expandSetting('bin/reika-lsp', env([])), '/work/proj/bin/reika-lsp');
	assert.equal(expandSetting('/opt/reika-lsp', env([])), '/opt/reika-lsp');
});

test('a set path that does not work is an error, not a fallback', () => {
	const r = resolveServerPath(env(['/usr/bin/reika-lsp'], { setting: '/nope/reika-lsp' }));
	assert.equal(r.ok, false);
	if (!r.ok) {
		assert.match(r.message, /reika\.serverPath is set to \/nope\/reika-lsp/);
		assert.deepEqual(r.searched, ['/nope/reika-lsp']);
	}
});

test('a bundled binary comes before PATH', () => {
	assert.deepEqual(resolveServerPath(env(['/ext/server/reika-lsp', '/usr/bin/reika-lsp'])), {
		ok: true,
		path: '/ext/server/reika-lsp',
		source: 'bundled',
	});
	assert.deepEqual(resolveServerPath(env(['/usr/bin/reika-lsp'])), { ok: true, path: '/usr/bin/reika-lsp', source: 'PATH' });
});

test('not found names what was searched', () => {
	const r = resolveServerPath(env([]));
	assert.equal(r.ok, false);
	if (!r.ok) {
		assert.match(r.message, /reika-lsp was not found/);
		assert.deepEqual(r.searched, ['/ext/server/reika-lsp', '/usr/local/bin/reika-lsp', '/usr/bin/reika-lsp']);
	}
});

test('Windows looks for reika-lsp.exe on Path', () => {
	const r = resolveServerPath(
		env(['C:\\tools\\reika-lsp.exe'], {
			platform: 'win32',
			env: { Path: 'C:\\Windows;C:\\tools', PATHEXT: '.EXE;.CMD' },
			home: 'C:\\Users\\u',
			workspaceFolder: 'C:\\proj',
			extensionPath: 'C:\\ext',
		}),
	);
	assert.deepEqual(r, { ok: true, path: 'C:\\tools\\reika-lsp.exe', source: 'PATH' });
});
