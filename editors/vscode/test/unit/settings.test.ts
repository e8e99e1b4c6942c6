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
	contributes: { configuration: { properties: Record<string, { markdownDescription?: string; description?: string }> } };
}

function manifest(): Manifest {
	return JSON.parse(fs.readFileSync(path.join(pkgDir, 'package.json'), 'utf8')) as Manifest;
}

test('the server keys match agent.SettingNames() in agent/settings.go', () => {
	const src = fs.readFileSync(path.join(repoRoot, 'agent', 'settings.go'), 'utf8');
	const block = /var settingKeys = \[\]struct\{[^}]*\}\{([\s\S]*?)\n\}/.exec(src);
	assert.ok(block, 'settingKeys not found in agent/settings.go');
	const goKeys = [...(block[1] ?? '').matchAll(/\{"(\w+)",/g)].map((m) => m[1]);
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
		model: 'ok-model',
	};
	const { settings, problems } = mapSettings((k) => user[k]);
	assert.deepEqual(settings, { model: 'ok-model' });
	assert.equal(problems.length, 7, problems.join('\n'));
	for (const k of ['baseUrl', 'apiKeyEnv', 'contextWindow', 'minGenTokens', 'debug', 'approve', 'profile']) {
		assert.ok(
			problems.some((p) => p.startsWith(`reika.${k}:`)),
			`no problem for ${k}:\n${problems.join('\n')}`,
		);
	}
	// A pasted key is never echoed.
	assert.ok(!problems.join('\n').includes('sk-secret-123'));
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
