// The protocol test: the real reika-lsp binary, driven over stdio with the
// libraries the extension uses, against the standalone fake engine
// (agent/enginetest/cmd/fakeengine). PROTOCOL.md is what it checks.
//
// When the binary does not serve LSP or the fake engine is not in the tree,
// each test skips and says why. REIKA_PROTOCOL_TEST_REQUIRED=1 turns those
// skips into failures.

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test, TestContext } from 'node:test';
import { pathToFileURL } from 'node:url';
import {
	CodeAction,
	CodeActionParams,
	Command,
	DidOpenTextDocumentParams,
	InitializeParams,
	InitializeResult,
	MessageType,
} from 'vscode-languageserver-protocol/node';
import { chipText } from '../../src/chip';
import { CompactCodeAction, ServerCommands, Status, TranscriptEvent } from '../../src/protocol';
import { mapSettings, ServerSettingKey, ServerSettingsObject } from '../../src/settings';
import { Transcript } from '../../src/transcript';
import {
	deadURL,
	hangGuardMs,
	isolatedEnv,
	LspSession,
	mkTemp,
	pkgDir,
	serverBinary,
	startFakeEngine,
	Unavailable,
} from './harness';

const required = process.env.REIKA_PROTOCOL_TEST_REQUIRED === '1';
const scriptFile = path.join(pkgDir, 'test', 'protocol', 'fakeengine-script.json');

/** Skips (or, when required, fails) on Unavailable; rethrows the rest. */
function skipIfUnavailable(t: TestContext, e: unknown): void {
	if (e instanceof Unavailable && !required) {
		const msg = `SKIPPED: ${e.message}`;
		process.stderr.write(`protocol test: ${msg}\n`);
		t.skip(msg.split('\n')[0]);
		return;
	}
	throw e;
}

/** The server's settings built the way the extension builds them. */
function settingsFor(user: Partial<Record<ServerSettingKey, unknown>>): ServerSettingsObject {
	const mapped = mapSettings((k) => user[k]);
	assert.deepEqual(mapped.problems, []);
	return mapped.settings;
}

function initParams(root: string, settings: ServerSettingsObject): InitializeParams {
	const rootUri = pathToFileURL(root).href;
	return {
		processId: process.pid,
		clientInfo: { name: 'reika protocol test' },
		rootUri,
		workspaceFolders: [{ uri: rootUri, name: path.basename(root) }],
		initializationOptions: { reika: settings },
		capabilities: {
			window: { workDoneProgress: true, showMessage: { messageActionItem: { additionalPropertiesSupport: false } } },
			workspace: { configuration: true, workspaceFolders: true, applyEdit: false },
			textDocument: {
				synchronization: { dynamicRegistration: false },
				codeAction: {
					codeActionLiteralSupport: {
						codeActionKind: { valueSet: ['', 'quickfix', 'refactor', 'source', CompactCodeAction.kind] },
					},
				},
			},
		},
	};
}

function open(session: LspSession, file: string, languageId: string): Promise<void> {
	const params: DidOpenTextDocumentParams = {
		textDocument: { uri: pathToFileURL(file).href, languageId, version: 1, text: fs.readFileSync(file, 'utf8') },
	};
	return session.sendNotification('textDocument/didOpen', params);
}

async function codeActions(session: LspSession, file: string, only?: string[]): Promise<(Command | CodeAction)[]> {
	const params: CodeActionParams = {
		textDocument: { uri: pathToFileURL(file).href },
		range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } },
		context: { diagnostics: [], ...(only !== undefined ? { only } : {}) },
	};
	return (await session.sendRequest<CodeActionParams, (Command | CodeAction)[] | null>('textDocument/codeAction', params)) ?? [];
}

function compactAction(actions: (Command | CodeAction)[]): CodeAction | undefined {
	return actions.find((a): a is CodeAction => 'kind' in a && a.title === CompactCodeAction.title);
}

function lastStatus(session: LspSession): Status | undefined {
	return session.statuses[session.statuses.length - 1];
}

function checkCapabilities(init: InitializeResult): void {
	const cmds = init.capabilities.executeCommandProvider?.commands ?? [];
	for (const c of Object.values(ServerCommands)) {
		assert.ok(cmds.includes(c), `executeCommandProvider lacks ${c}: ${JSON.stringify(cmds)}`);
	}
	assert.ok(init.capabilities.codeActionProvider, 'no codeActionProvider');
	assert.ok(init.capabilities.textDocumentSync !== undefined, 'no textDocumentSync');
}

test('the server keeps serving with the engine down', { timeout: 4 * hangGuardMs }, async (t) => {
	const scratch = mkTemp('reika-proto-');
	const root = path.join(scratch, 'ws');
	fs.mkdirSync(root);
	fs.writeFileSync(path.join(root, 'a.go'), 'package a\n');
	let session: LspSession | undefined;
	try {
		const bin = await serverBinary(scratch);
		const settings = settingsFor({ baseUrl: await deadURL(), model: 'absent-model' });
		session = new LspSession(bin, root, isolatedEnv(scratch), settings);
		const init = await session.initialize(initParams(root, settings));
		checkCapabilities(init);
		const s = session;

		// Status arrives after initialized and says the engine is unreachable,
		// at the latest once a turn fails.
		await s.waitFor('a reika/status', () => lastStatus(s));
		await open(s, path.join(root, 'a.go'), 'go');

		// No turn yet: no Compact context.
		assert.equal(compactAction(await codeActions(s, path.join(root, 'a.go'))), undefined);

		assert.deepEqual(await s.execute(ServerCommands.cancel, []), { cancelled: false });

		const ask = await s.execute(ServerCommands.ask, [{ prompt: 'hello' }]);
		assert.equal(ask.status, 'error', JSON.stringify(ask));
		assert.ok((ask.message ?? '').length > 0, 'an agent command fails with a clear message');

		const status = await s.execute(ServerCommands.status, []);
		assert.equal(status.level, 'error', JSON.stringify(status));
		await s.waitFor('status level error', () => (lastStatus(s)?.level === 'error' ? true : undefined));
		await s.waitFor('a window/showMessage Error for the unreachable engine', () =>
			s.messages.find((m) => m.type === MessageType.Error),
		);

		assert.equal(await s.shutdown(), 0, 'exit code after shutdown');
	} catch (e) {
		skipIfUnavailable(t, e);
	} finally {
		session?.kill();
		fs.rmSync(scratch, { recursive: true, force: true });
	}
});

test('ask, status, code action and compact against the fake engine', { timeout: 10 * hangGuardMs }, async (t) => {
	const scratch = mkTemp('reika-proto-');
	const root = path.join(scratch, 'ws');
	fs.mkdirSync(root);
	const mainGo = path.join(root, 'main.go');
	fs.writeFileSync(mainGo, 'package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Println("hi")\n}\n');
	// A file large enough that three reads fill most of a 16k window.
	const big = Array.from({ length: 220 }, (_, i) => `line ${i + 1}: the quick brown fox jumps over the lazy dog`).join('\n');
	fs.writeFileSync(path.join(root, 'big.txt'), `${big}\n`);
	let session: LspSession | undefined;
	let engine: { stop(): void } | undefined;
	try {
		const bin = await serverBinary(scratch);
		const fake = await startFakeEngine(scratch, ['-ctx', '16000', '-script', scriptFile]);
		engine = fake;
		const settings = settingsFor({ baseUrl: fake.url });
		session = new LspSession(bin, root, isolatedEnv(scratch), settings);
		const s = session;
		const init = await s.initialize(initParams(root, settings));
		checkCapabilities(init);
		await s.waitFor('the first reika/status', () => lastStatus(s));
		await open(s, mainGo, 'go');
		assert.equal(compactAction(await codeActions(s, mainGo)), undefined, 'Compact context before any turn');

		// Turn 1, with the selection attached and our own progress token.
		const sizes: number[] = [];
		const token = 'vscode-test-ask-1';
		const r1 = await s.execute(
			ServerCommands.ask,
			[
				{
					prompt: 'Read big.txt, then write out.txt.',
					uri: pathToFileURL(mainGo).href,
					range: { start: { line: 4, character: 0 }, end: { line: 6, character: 1 } },
				},
			],
			token,
		);
		assert.equal(r1.status, 'done', JSON.stringify(r1));
		assert.ok(r1.session !== '', 'the ask result names its session');

		// Transcript: the user's prompt, the read, its result, the approval'd
		// write, the final assistant text.
		const kinds = (k: TranscriptEvent['kind']): TranscriptEvent[] => s.transcript.filter((e) => e.kind === k);
		assert.ok(kinds('user').some((e) => e.text.includes('Read big.txt')), 'user event');
		assert.ok(kinds('tool_call').some((e) => e.tool === 'read'), 'read tool call');
		assert.ok(kinds('tool_result').some((e) => e.tool === 'read' && e.text.includes('line 1:')), 'read tool result');
		const answer = kinds('assistant').filter((e) => !e.delta);
		assert.ok(answer.some((e) => e.text.includes('Done: read big.txt')), `final assistant text: ${JSON.stringify(answer)}`);
		for (const e of s.transcript) {
			assert.equal(e.session, r1.session, 'every event names the session');
		}
		// The extension's renderer shows the streamed turn.
		const rendered = new Transcript();
		s.transcript.forEach((e) => rendered.add(e));
		assert.ok(rendered.render().includes('Done: read big.txt'));

		// Approval: window/showMessageRequest with the three actions; we
		// allowed for the session, so out.txt was written.
		const prompt = s.prompts[0];
		assert.ok(prompt !== undefined, 'no approval prompt for write');
		assert.deepEqual(
			(prompt.actions ?? []).map((a) => a.title),
			['Allow', 'Allow for this session', 'Deny'],
		);
		assert.equal(fs.readFileSync(path.join(root, 'out.txt'), 'utf8'), 'hello from the fake engine\n');

		// Progress on our token: begin (cancellable) before any report, then end.
		const prog = await s.waitFor('the end of the turn\'s progress', () => {
			const p = s.progress.get(token) ?? [];
			return p[p.length - 1]?.kind === 'end' ? p : undefined;
		});
		assert.ok(prog.length >= 2, `progress on our token: ${JSON.stringify(prog)}`);
		const begin = prog[0];
		assert.equal(begin?.kind, 'begin');
		if (begin?.kind === 'begin') {
			assert.equal(begin.title, 'Reika');
			assert.equal(begin.cancellable, true);
		}
		assert.equal(prog[prog.length - 1]?.kind, 'end');
		assert.ok(prog.slice(1, -1).every((p) => p.kind === 'report'), 'only reports between begin and end');
		assert.ok(prog.some((p) => p.kind === 'report'), 'a report per round');

		// Status: busy during the turn, idle after, with the window from the
		// engine's listing; the chip agrees with the extension's formatter.
		assert.ok(s.statuses.some((st) => st.busy), 'a busy status during the turn');
		const after1 = await s.waitFor('an idle status', () => {
			const st = lastStatus(s);
			return st !== undefined && !st.busy ? st : undefined;
		});
		assert.equal(after1.window, 16000);
		assert.equal(after1.windowSource, 'endpoint');
		assert.ok(after1.size > 0);
		assert.equal(after1.text, chipText(after1), 'server chip vs extension formatter');
		assert.deepEqual(await s.execute(ServerCommands.status, []), after1, 'reika.status equals the last notification');
		sizes.push(after1.size);

		// Turns 2 and 3 fill the window.
		for (const n of [2, 3]) {
			const r = await s.execute(ServerCommands.ask, [{ prompt: `Again, turn ${n}.` }]);
			assert.equal(r.status, 'done', JSON.stringify(r));
			const st = await s.execute(ServerCommands.status, []);
			assert.equal(st.busy, false);
			sizes.push(st.size);
		}
		assert.equal(s.prompts.length, 1, 'allowed for the session: asked once');
		assert.ok(sizes[2]! > sizes[0]!, `the context grew: ${sizes.join(', ')}`);

		// The code action, as a client lists it.
		const action = compactAction(await codeActions(s, mainGo, [CompactCodeAction.kind]));
		assert.ok(action !== undefined, 'Compact context offered once a turn exists');
		assert.equal(action.kind, CompactCodeAction.kind);
		assert.equal(action.command?.command, CompactCodeAction.command);
		assert.equal(action.edit, undefined, 'no edit: works without codeAction/resolve');
		assert.equal(compactAction(await codeActions(s, mainGo, ['quickfix'])), undefined, 'context.only respected');

		// Run it: a note round, then a fold of the older turns.
		const before = s.transcript.length;
		const c = await s.execute(ServerCommands.compact, []);
		assert.equal(c.folded, true, JSON.stringify(c));
		assert.ok((c.recapTokens ?? 0) > 0, 'recap size');
		const compactEvents = s.transcript.slice(before);
		const note = compactEvents.findIndex((e) => e.kind === 'note');
		const fold = compactEvents.findIndex((e) => e.kind === 'fold');
		assert.ok(note >= 0 && fold > note, `note then fold: ${JSON.stringify(compactEvents.map((e) => e.kind))}`);
		assert.ok(compactEvents[note]!.text.includes('NOTE_TEXT'), 'the note is the engine reply to the note request');
		await s.waitFor('the fold message', () =>
			s.messages.find((m) => m.type === MessageType.Info && /^Folded \d+ rounds? into a /.test(m.message)),
		);

		// Save keeps everything, unshed.
		const saved = path.join(scratch, 'saved.md');
		assert.deepEqual(await s.execute(ServerCommands.save, [{ path: saved }]), { path: saved });
		const md = fs.readFileSync(saved, 'utf8');
		assert.ok(md.includes('Read big.txt, then write out.txt.') && md.includes('Done: read big.txt'), 'save holds the conversation');
		assert.ok(md.includes('line 220:'), 'save holds tool output whole');

		// A new session has no turns, so no Compact context.
		const fresh = await s.execute(ServerCommands.newSession, []);
		assert.ok(fresh.session !== '' && fresh.session !== r1.session, JSON.stringify(fresh));
		assert.equal(compactAction(await codeActions(s, mainGo)), undefined, 'no Compact context in a new session');
		assert.deepEqual(await s.execute(ServerCommands.cancel, []), { cancelled: false });

		assert.equal(await s.shutdown(), 0, 'exit code after shutdown');
	} catch (e) {
		skipIfUnavailable(t, e);
	} finally {
		session?.kill();
		engine?.stop();
		fs.rmSync(scratch, { recursive: true, force: true });
	}
});
