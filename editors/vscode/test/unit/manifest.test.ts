import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { ExtensionCommands } from '../../src/ids';
import { ServerCommands } from '../../src/protocol';

const pkgDir = path.resolve(__dirname, '../../..');

interface Manifest {
	main: string;
	engines: { vscode: string };
	contributes: { commands: { command: string; title: string; category?: string }[] };
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
		'Reika: Show Transcript',
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
	const glue = new Set(['extension.ts', 'ctx.ts', 'commands.ts', 'statusItem.ts', 'transcriptView.ts']);
	const srcDir = path.join(pkgDir, 'src');
	for (const f of fs.readdirSync(srcDir)) {
		const text = fs.readFileSync(path.join(srcDir, f), 'utf8');
		const importsVscode = /from 'vscode(?:-languageclient[^']*)?'/.test(text);
		assert.equal(importsVscode, glue.has(f), `${f}: imports vscode = ${importsVscode}`);
	}
	assert.equal(pkg.main, './out/src/extension.js');
});
