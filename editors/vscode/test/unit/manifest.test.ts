import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { ChatViewType, ExtensionCommands } from '../../src/ids';
import { ServerCommands } from '../../src/protocol';

const pkgDir = path.resolve(__dirname, '../../..');

interface Manifest {
	main: string;
	engines: { vscode: string };
	activationEvents: string[];
	contributes: {
		commands: { command: string; title: string; category?: string }[];
		menus: Record<string, { command: string; when?: string }[]>;
		keybindings: { command: string; key: string; mac?: string; when?: string }[];
		configuration: { properties: Record<string, { scope?: string }> };
	};
	devDependencies: Record<string, string>;
	dependencies: Record<string, string>;
}

const pkg = JSON.parse(fs.readFileSync(path.join(pkgDir, 'package.json'), 'utf8')) as Manifest;

test('the palette commands are the extension command table, titled as the issue asks', () => {
	const contributed = pkg.contributes.commands.map((c) => c.command).sort();
	assert.deepEqual(contributed, Object.values(ExtensionCommands).sort());
	const titles = pkg.contributes.commands.map((c) => `${c.category}: ${c.title}`);
	for (const t of [
		'Reika: Ask',
		'Reika: Compact Context',
		'Reika: Cancel',
		'Reika: Save Transcript',
		'Reika: New Session',
		'Reika: Show Chat',
	]) {
		assert.ok(titles.includes(t), `missing ${t}`);
	}
});

test("the server's command ids are never registered by the extension", () => {
	const server = new Set<string>(Object.values(ServerCommands));
	for (const id of Object.values(ExtensionCommands)) {
		assert.ok(!server.has(id), `${id} is a server command id`);
	}
	for (const c of pkg.contributes.commands) {
		assert.ok(!server.has(c.command), `${c.command} is contributed but is a server command id`);
	}
});

test('versions are pinned exactly and @types/vscode matches engines.vscode', () => {
	for (const [name, v] of Object.entries({ ...pkg.dependencies, ...pkg.devDependencies })) {
		assert.match(v, /^\d+\.\d+\.\d+$/, `${name}@${v} is not pinned`);
	}
	assert.equal(`^${pkg.devDependencies['@types/vscode']}`, pkg.engines.vscode);
});

test("only the glue modules import 'vscode'", () => {
	const glue = new Set(['extension.ts', 'ctx.ts', 'commands.ts', 'statusItem.ts', 'chatView.ts', 'approvalView.ts', 'turn.ts', 'client.ts', 'chatHtml.ts', 'editorHost.ts', 'sessions.ts', 'codeBlocks.ts', 'errorToasts.ts']);
	const srcDir = path.join(pkgDir, 'src');
	for (const f of fs.readdirSync(srcDir)) {
		const text = fs.readFileSync(path.join(srcDir, f), 'utf8');
		const importsVscode = /from 'vscode(?:-languageclient[^']*)?'/.test(text);
		assert.equal(importsVscode, glue.has(f), `${f}: imports vscode = ${importsVscode}`);
	}
	assert.equal(pkg.main, './out/src/extension.js');
});

const title = (id: string): string => pkg.contributes.commands.find((c) => c.command === id)?.title ?? '';

test('the editor context menu names Reika (menus show a title without its category)', () => {
	const items = pkg.contributes.menus['editor/context'] ?? [];
	assert.ok(items.length > 0);
	for (const item of items) {
		assert.match(title(item.command), /\bReika\b/, `${item.command} reads "${title(item.command)}" in the menu`);
	}
});

test('Status Actions (the status item click) and the context-menu Ask stay out of the palette', () => {
	const hidden = (pkg.contributes.menus.commandPalette ?? []).filter((m) => m.when === 'false').map((m) => m.command);
	assert.deepEqual(hidden.sort(), [ExtensionCommands.askAboutSelection, ExtensionCommands.statusActions].sort());
});

test('Ask has a default keybinding on every platform', () => {
	const kb = pkg.contributes.keybindings.find((k) => k.command === ExtensionCommands.ask);
	assert.ok(kb !== undefined && kb.key !== '' && kb.mac !== undefined && kb.mac !== '', JSON.stringify(kb));
	assert.equal(kb.when, undefined, 'it works from anywhere, the chat included');
});

test('every setting can be set in the User settings of a remote window (no machine scope)', () => {
	for (const [key, p] of Object.entries(pkg.contributes.configuration.properties)) {
		assert.ok(p.scope !== 'machine' && p.scope !== 'machine-overridable', `${key} has scope ${p.scope}`);
	}
});

test('the chat panel restores after a reload: its serializer activates the extension', () => {
	assert.ok(pkg.activationEvents.includes(`onWebviewPanel:${ChatViewType}`), JSON.stringify(pkg.activationEvents));
});

test('the README lists every command (title and id), keybinding and setting the manifest contributes', () => {
	const readme = fs.readFileSync(path.join(pkgDir, 'README.md'), 'utf8');
	for (const c of pkg.contributes.commands) {
		const row = `| **${c.category}: ${c.title}** | \`${c.command}\` |`;
		assert.ok(readme.includes(row), `README.md lacks the row ${row}`);
	}
	for (const k of pkg.contributes.keybindings) {
		for (const key of [k.key, k.mac].filter((x) => x !== undefined)) {
			assert.ok(readme.includes(`\`${key}\``), `README.md does not name the keybinding ${key} of ${k.command}`);
		}
	}
	for (const key of Object.keys(pkg.contributes.configuration.properties)) {
		assert.ok(readme.includes(`| \`${key}\` |`), `README.md lacks the settings row of ${key}`);
	}
});
