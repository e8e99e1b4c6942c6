import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import {
	configurationItem,
	didChangeConfigurationParams,
	explicitValue,
	ExtensionSettings,
	initializationOptions,
	mapSettings,
	ServerSettingKey,
	ServerSettings,
} from '../../src/settings';

const pkgDir = path.resolve(__dirname, '../../..');
const repoRoot = path.resolve(pkgDir, '../..');

interface Manifest {
	contributes: {
		configuration: {
			properties: Record<
				string,
				{ markdownDescription?: string; description?: string; type?: unknown; pattern?: string; default?: unknown }
			>;
		};
	};
}

function manifest(): Manifest {
	return JSON.parse(fs.readFileSync(path.join(pkgDir, 'package.json'), 'utf8')) as Manifest;
}

test('the server keys match agent.SettingNames() in agent/settings.go', () => {
	const src = fs.readFileSync(path.join(repoRoot, 'agent', 'settings.go'), 'utf8');
	const block = /var settingsTable = \[\]setting\{([\s\S]*?)\n\}/.exec(src);
	assert.ok(block, 'settingsTable not found in agent/settings.go');
	const goKeys = [...(block[1] ?? '').matchAll(/\{name: "(\w+)",/g)].map((m) => m[1]);
	assert.ok(goKeys.length >= 13, `parsed ${goKeys.length} keys`);
	assert.deepEqual(
		ServerSettings.map((s) => s.key),
		goKeys,
	);
});

test('package.json contributes every setting with a description, and nothing unknown', () => {
	const props = manifest().contributes.configuration.properties;
	const want = new Set([
		...ServerSettings.map((s) => `reika.${s.key}`),
		...Object.values(ExtensionSettings).map((k) => `reika.${k}`),
	]);
	assert.deepEqual(new Set(Object.keys(props)), want);
	for (const [key, p] of Object.entries(props)) {
		const d = p.markdownDescription ?? p.description ?? '';
		assert.ok(d.length > 20, `${key} has no description`);
	}
});

test('only what the user set is sent, converted and trimmed', () => {
	const user: Partial<Record<ServerSettingKey, unknown>> = {
		baseUrl: ' http://127.0.0.1:8080/v1 ',
		model: '',
		contextWindow: 24000,
		reasoningRounds: 0,
		maxTokens: '4096',
		minimal: false,
		approve: 'edits',
	};
	const { settings, problems } = mapSettings((k) => user[k]);
	assert.deepEqual(problems, []);
	assert.deepEqual(settings, {
		baseUrl: 'http://127.0.0.1:8080/v1',
		contextWindow: 24000,
		reasoningRounds: 0,
		maxTokens: 4096,
		minimal: false,
		approve: 'edits',
	});
});

test('unusable values are reported and left out', () => {
	const user: Partial<Record<ServerSettingKey, unknown>> = {
		baseUrl: 'localhost:8080',
		apiKeyEnv: 'sk-secret-123',
		contextWindow: -5,
		minGenTokens: 1.5,
		debug: 'yes',
		approve: 'never',
		profile: 7,
		cacheReuse: 'sometimes',
		model: 'ok-model',
	};
	const { settings, problems } = mapSettings((k) => user[k]);
	assert.deepEqual(settings, { model: 'ok-model' });
	assert.equal(problems.length, 8, problems.join('\n'));
	for (const k of ['baseUrl', 'apiKeyEnv', 'contextWindow', 'minGenTokens', 'debug', 'approve', 'profile', 'cacheReuse']) {
		assert.ok(
			problems.some((p) => p.startsWith(`reika.${k}:`)),
			`no problem for ${k}:\n${problems.join('\n')}`,
		);
	}
	// A pasted key is never echoed.
	assert.ok(!problems.join('\n').includes('sk-secret-123'));
});

// What cacheReuse turns into, as the server's cacheReuse() in
// agent/settings.go parses it; undefined: unset; 'problem': refused.
const cacheReuseCases: [unknown, SettingValueOrProblem][] = [
	['auto', 'auto'],
	[' AUTO ', 'auto'],
	['off', 'off'],
	['Off', 'off'],
	['64', 64],
	[' 8 ', 8],
	[1, 1],
	[256, 256],
	['', undefined],
	[null, undefined],
	['0', 'problem'],
	[0, 'problem'],
	[-8, 'problem'],
	['-8', 'problem'],
	[1.5, 'problem'],
	['1.5', 'problem'],
	['64k', 'problem'],
	['none', 'problem'],
	['99999999999999999999', 'problem'],
	[true, 'problem'],
];

type SettingValueOrProblem = string | number | undefined | 'problem';

test('cacheReuse takes auto, off or a chunk size of at least 1, and refuses the rest', () => {
	for (const [v, want] of cacheReuseCases) {
		const { settings, problems } = mapSettings((k) => (k === 'cacheReuse' ? v : undefined));
		if (want === 'problem') {
			assert.deepEqual(settings, {}, `${JSON.stringify(v)} was sent`);
			assert.equal(problems.length, 1, `${JSON.stringify(v)}: ${problems.join('\n')}`);
			assert.match(problems[0] ?? '', /^reika\.cacheReuse: want auto, off or a chunk size/);
		} else {
			assert.deepEqual(problems, [], `${JSON.stringify(v)}`);
			assert.deepEqual(settings, want === undefined ? {} : { cacheReuse: want }, `${JSON.stringify(v)}`);
		}
	}
});

test("the Settings UI's check of reika.cacheReuse agrees with the conversion on what it can type", () => {
	const p = manifest().contributes.configuration.properties['reika.cacheReuse'];
	assert.ok(p !== undefined && p.pattern !== undefined, 'reika.cacheReuse has a pattern');
	assert.equal(p.type, 'string', 'a text field: the Settings UI edits no union of types');
	const re = new RegExp(p.pattern);
	assert.ok(re.test(String(p.default)), `the default ${JSON.stringify(p.default)} passes the pattern`);
	// The canonical spellings: the pattern flags only what the server refuses.
	for (const v of ['', 'auto', 'off', '1', '8', '64', '4096']) {
		assert.ok(re.test(v), `pattern refuses ${JSON.stringify(v)}`);
	}
	for (const [v, want] of cacheReuseCases) {
		if (typeof v === 'string' && want === 'problem') {
			assert.ok(!re.test(v), `pattern lets ${JSON.stringify(v)} through, the server refuses it`);
		}
	}
});

test('explicitValue takes the most specific scope; defaults are not values', () => {
	assert.equal(explicitValue(undefined), undefined);
	assert.equal(explicitValue({}), undefined);
	assert.equal(explicitValue({ globalValue: 1 }), 1);
	assert.equal(explicitValue({ globalValue: 1, workspaceValue: 2 }), 2);
	assert.equal(explicitValue({ globalValue: 1, workspaceValue: 2, workspaceFolderValue: 3 }), 3);
	assert.equal(explicitValue({ globalValue: 1, workspaceValue: null }), null);
	const { settings } = mapSettings((k) => explicitValue(k === 'contextWindow' ? { globalValue: 8000, workspaceValue: null } : {}));
	assert.deepEqual(settings, {}, 'a cleared workspace value unsets the global one');
});

test('initializationOptions, didChangeConfiguration and workspace/configuration share one shape', () => {
	const s = { model: 'm', contextWindow: 16000 };
	assert.deepEqual(initializationOptions(s), { reika: { model: 'm', contextWindow: 16000 } });
	assert.deepEqual(didChangeConfigurationParams(s), { settings: { reika: { model: 'm', contextWindow: 16000 } } });
	assert.deepEqual(configurationItem('reika', s), { handled: true, value: s });
	assert.deepEqual(configurationItem(undefined, s), { handled: true, value: { reika: s } });
	assert.deepEqual(configurationItem('reika.model', s), { handled: true, value: 'm' });
	assert.deepEqual(configurationItem('reika.debug', s), { handled: true, value: null });
	assert.deepEqual(configurationItem('reika.serverPath', s), { handled: true, value: null });
	assert.deepEqual(configurationItem('editor', s), { handled: false, value: null });
	// The options object is a copy: later changes do not leak into it.
	const opts = initializationOptions(s);
	s.model = 'changed';
	assert.equal(opts.reika.model, 'm');
});
