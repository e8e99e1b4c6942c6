// The protocol test: the real reika-lsp binary, driven over stdio with the
// libraries the extension uses, against the standalone fake engine
// (agent/enginetest/cmd/fakeengine; its README documents the script files
// next to this one). docs/protocol.md is what it checks, and the extension's own
// modules (chip, transcript, settings, editSave) are what it checks with.
//
// The tests skip only when there is no Go toolchain to build the fake
// engine; REIKA_TEST_STRICT=1 (CI) or REIKA_PROTOCOL_TEST_REQUIRED=1 makes
// that a failure too. Nothing here waits for time to pass: every wait is
// for a message, under a hang guard.
//
// The scripts:
// - fakeengine-script.json: each ask reads big.txt, writes out.txt and
//   answers, in a loop, so three asks fill a 16k window; the note round of
//   a compact (tool_choice none) gets NOTE_TEXT.
// - fakeengine-edits.json: one ask that edits open and closed files and runs
//   commands that read them from disk.
// - fakeengine-hold.json: a prompt containing "hold" gets no answer until
//   the turn is cancelled.

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test, TestContext } from 'node:test';
import { pathToFileURL } from 'node:url';
import {
	CancellationTokenSource,
	CodeAction,
	CodeActionParams,
	Command,
	InitializeParams,
	InitializeResult,
	LSPErrorCodes,
	MessageType,
	ResponseError,
} from 'vscode-languageserver-protocol/node';
import { chipText } from '../../src/chip';
import { unsavedEditMessage } from '../../src/editSave';
import { CompactCodeAction, ServerCommands, Status, TranscriptEvent } from '../../src/protocol';
import { didChangeConfigurationParams, mapSettings, ServerSettingKey, ServerSettingsObject } from '../../src/settings';
import { Conversation } from '../../src/chatModel';
import {
	deadURL,
	FakeEngine,
	hangGuardMs,
	isolatedEnv,
	LspSession,
	mkTemp,
	pkgDir,
	serverBinary,
	startFakeEngine,
	strict,
	Unavailable,
} from './harness';

const script = (name: string): string => path.join(pkgDir, 'test', 'protocol', name);

/** Skips on Unavailable (no Go toolchain) unless strict; rethrows the rest. */
function skipIfUnavailable(t: TestContext, e: unknown): void {
	if (e instanceof Unavailable && !strict) {
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

/** initialize params with the capabilities VS Code's languageclient sends
 * for what the server uses. */
function initParams(root: string, settings: ServerSettingsObject): InitializeParams {
	const rootUri = pathToFileURL(root).href;
	return {
		processId: process.pid,
		clientInfo: { name: 'reika protocol test' },
		rootUri,
		workspaceFolders: [{ uri: rootUri, name: path.basename(root) }],
		initializationOptions: { reika: settings },
		capabilities: {
			window: { workDoneProgress: true, showMessage: { messageActionItem: { additionalPropertiesSupport: true } } },
			workspace: {
				configuration: true,
				workspaceFolders: true,
				applyEdit: true,
				workspaceEdit: { documentChanges: true, resourceOperations: ['create', 'rename', 'delete'] },
			},
			textDocument: {
				synchronization: { dynamicRegistration: true, didSave: true, willSave: true, willSaveWaitUntil: true },
				codeAction: {
					codeActionLiteralSupport: {
						codeActionKind: { valueSet: ['', 'quickfix', 'refactor', 'source', CompactCodeAction.kind] },
					},
				},
			},
		},
	};
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

/** The status the server sends before the engine has answered: while
 * the agent starts, `ctx –` with no size; then, until discovery finds the
 * window, the fixed prefix's size with no window (`ctx 2.4k`). */
function isStartingPlaceholder(st: Status): boolean {
	if (st.text === 'ctx –') {
		return st.size === 0 && st.window === null;
	}
	return st.window === null && st.windowSource === 'none' && st.size > 0 && st.text === chipText(st);
}

/** Resolves once the server's last status is not busy. */
function idle(s: LspSession): Promise<Status> {
	return s.waitFor('an idle status', () => {
		const st = lastStatus(s);
		return st !== undefined && !st.busy ? st : undefined;
	});
}

/** A workspace in a fresh temp folder; cleanup removes it. */
function workspace(): { scratch: string; root: string } {
	const scratch = mkTemp('reika-proto-');
	const root = path.join(scratch, 'ws');
	fs.mkdirSync(root);
	return { scratch, root };
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
	const { scratch, root } = workspace();
	fs.writeFileSync(path.join(root, 'a.go'), 'package a\n');
	let session: LspSession | undefined;
	try {
		const bin = await serverBinary(scratch);
		const settings = settingsFor({ baseUrl: await deadURL(), model: 'absent-model', engineRetry: 0 }); // fail at once, no wait
		session = new LspSession(bin, root, isolatedEnv(scratch), settings);
		const init = await session.initialize(initParams(root, settings));
		checkCapabilities(init);
		const s = session;

		// Status arrives after initialized and says the engine is unreachable,
		// at the latest once a turn fails.
		await s.waitFor('a reika/status', () => lastStatus(s));
		await s.open(path.join(root, 'a.go'), 'go');

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
		// One line each, not repeated while the condition holds.
		const errors = s.messages.filter((m) => m.type === MessageType.Error);
		assert.equal(errors.length, 1, JSON.stringify(errors));
		assert.ok(!errors[0]!.message.includes('\n'), 'one line');

		assert.equal(await s.shutdown(), 0, 'exit code after shutdown');
	} catch (e) {
		skipIfUnavailable(t, e);
	} finally {
		session?.kill();
		fs.rmSync(scratch, { recursive: true, force: true });
	}
});

test('reika.cacheReuse reaches the server: it refuses what the extension refuses and takes what it sends', { timeout: 6 * hangGuardMs }, async (t) => {
	const { scratch, root } = workspace();
	let session: LspSession | undefined;
	let engine: FakeEngine | undefined;
	try {
		const bin = await serverBinary(scratch);
		engine = await startFakeEngine(scratch, ['-ctx', '16000']);

		// A value the extension reports and leaves out, sent anyway (as a
		// hand-written client would): the server refuses it with its own
		// error, so the two checks agree on it.
		const refused = mapSettings((k) => (k === 'cacheReuse' ? 'sometimes' : undefined));
		assert.deepEqual(refused.settings, {});
		assert.equal(refused.problems.length, 1, refused.problems.join('\n'));
		const bad = { baseUrl: engine.url, cacheReuse: 'sometimes' } as unknown as ServerSettingsObject;
		session = new LspSession(bin, root, isolatedEnv(scratch), bad);
		const s = session;
		checkCapabilities(await s.initialize(initParams(root, bad)));
		const err = await s.waitFor("the server's error for the bad cacheReuse", () =>
			s.messages.find((m) => m.type === MessageType.Error && m.message.includes('cacheReuse')),
		);
		assert.match(err.message, /cacheReuse: want auto, off or a chunk size/);
		const failed = await s.waitFor('the error status', () => (lastStatus(s)?.level === 'error' ? s.statuses.length : undefined));

		// The value as the extension sends it (' 64 ' becomes 64): the server
		// takes it and builds the agent it could not build before.
		const good = settingsFor({ baseUrl: engine.url, cacheReuse: ' 64 ' });
		assert.equal(good.cacheReuse, 64);
		await s.sendNotification('workspace/didChangeConfiguration', didChangeConfigurationParams(good));
		const ready = await s.waitFor('a status without the error', () =>
			s.statuses.slice(failed).find((st) => st.level !== 'error'),
		);
		assert.ok(!ready.tooltip.includes('cacheReuse'), ready.tooltip);
		const r = await s.execute(ServerCommands.ask, [{ prompt: 'hello' }]);
		assert.equal(r.status, 'done', JSON.stringify(r));

		// "off" is taken by the running agent too: the server answers an
		// update it took with a status, one it refused with an error.
		const off = settingsFor({ baseUrl: engine.url, cacheReuse: 'OFF' });
		assert.equal(off.cacheReuse, 'off');
		const before = s.statuses.length;
		await s.sendNotification('workspace/didChangeConfiguration', didChangeConfigurationParams(off));
		await s.waitFor('the status after the update', () => (s.statuses.length > before ? true : undefined));
		const r2 = await s.execute(ServerCommands.ask, [{ prompt: 'hello again' }]);
		assert.equal(r2.status, 'done', JSON.stringify(r2));
		const errors = s.messages.filter((m) => m.type === MessageType.Error);
		assert.equal(errors.length, 1, JSON.stringify(errors));
		assert.equal(await s.shutdown(), 0);
	} catch (e) {
		skipIfUnavailable(t, e);
	} finally {
		session?.kill();
		engine?.stop();
		fs.rmSync(scratch, { recursive: true, force: true });
	}
});

test('ask, status, code action and compact against the fake engine', { timeout: 10 * hangGuardMs }, async (t) => {
	const { scratch, root } = workspace();
	const mainGo = path.join(root, 'main.go');
	fs.writeFileSync(mainGo, 'package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Println("hi")\n}\n');
	// A file large enough that two reads cross the shed point of a 16k window
	// by the engine's own count (it has a tokenizer).
	const big = Array.from({ length: 400 }, (_, i) => `line ${i + 1}: the quick brown fox jumps over the lazy dog`).join('\n');
	fs.writeFileSync(path.join(root, 'big.txt'), `${big}\n`);
	let session: LspSession | undefined;
	let engine: FakeEngine | undefined;
	try {
		const bin = await serverBinary(scratch);
		engine = await startFakeEngine(scratch, ['-ctx', '16000', '-script', script('fakeengine-script.json')]);
		const settings = settingsFor({ baseUrl: engine.url });
		session = new LspSession(bin, root, isolatedEnv(scratch), settings);
		const s = session;
		const init = await s.initialize(initParams(root, settings));
		checkCapabilities(init);
		await s.waitFor('the first reika/status', () => lastStatus(s));
		await s.open(mainGo, 'go');
		assert.equal(compactAction(await codeActions(s, mainGo)), undefined, 'Compact context before any turn');

		// Turn 1, with the selection attached and our own progress token.
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

		// Transcript: the user's prompt, the read, its result, the approved
		// write, the final assistant text after its streamed chunks.
		const kinds = (k: TranscriptEvent['kind'], from = 0): TranscriptEvent[] =>
			s.transcript.slice(from).filter((e) => e.kind === k);
		// The user event is the task as the model gets it, selection included.
		const user = kinds('user');
		assert.equal(user.length, 1, JSON.stringify(user));
		assert.ok(user[0]!.text.startsWith('Read big.txt, then write out.txt.'), user[0]!.text);
		assert.ok(user[0]!.text.includes('main.go') && user[0]!.text.includes('5-7'), `the selection's file and lines: ${user[0]!.text}`);
		assert.ok(user[0]!.text.includes('func main() {\n\tfmt.Println("hi")\n}'), `the selected text: ${user[0]!.text}`);
		assert.deepEqual(kinds('tool_call').map((e) => [e.tool, e.args]), [
			['read', { path: 'big.txt' }],
			['write', { path: 'out.txt', content: 'hello from the fake engine\n' }],
		]);
		const readResult = kinds('tool_result').find((e) => e.tool === 'read');
		assert.ok(readResult?.text.includes('line 220:'), 'the read result, whole');
		assert.ok((readResult?.tokens ?? 0) > 0, 'a tool result carries its size');
		const answer = kinds('assistant');
		assert.ok(answer.some((e) => e.delta), 'the answer streams in chunks');
		assert.deepEqual(answer.filter((e) => !e.delta).map((e) => e.text), ['Done: read big.txt and wrote out.txt.']);
		for (const e of s.transcript) {
			assert.equal(e.session, r1.session, 'every event names the session');
			assert.equal(e.turn, 1, 'every event of turn 1 says so');
		}
		// The chat shows the streamed turn, the answer once.
		const chat = new Conversation();
		s.transcript.forEach((e) => chat.add(e));
		const html = chat.all().map((b) => b.html).join('\n');
		assert.equal(html.split('Done: read big.txt and wrote out.txt.').length, 2, html);

		// Approval: window/showMessageRequest with the three actions; we
		// allowed for the session, so out.txt was written: a new file,
		// created through the editor (CreateFile) and saved by the extension.
		const prompt = s.prompts[0];
		assert.ok(prompt !== undefined, 'no approval prompt for write');
		assert.deepEqual(
			(prompt.actions ?? []).map((a) => a.title),
			['Allow', 'Allow for this session', 'Deny'],
		);
		assert.ok(prompt.message.includes('out.txt'), prompt.message);
		assert.equal(fs.readFileSync(path.join(root, 'out.txt'), 'utf8'), 'hello from the fake engine\n');
		assert.deepEqual(s.applyEdits.map((p) => p.label), ['Reika: write out.txt']);
		const outUri = pathToFileURL(path.join(root, 'out.txt')).href;
		assert.deepEqual(s.loaded, [outUri], 'the edit created out.txt in the editor');
		assert.deepEqual(s.saved, [outUri], 'the extension saved the new file');

		// Progress on our token: begin (cancellable) before any report, a
		// report per round, then end.
		const prog = await s.waitFor("the end of the turn's progress", () => {
			const p = s.progress.get(token) ?? [];
			return p[p.length - 1]?.kind === 'end' ? p : undefined;
		});
		const begin = prog[0];
		assert.equal(begin?.kind, 'begin');
		if (begin?.kind === 'begin') {
			assert.equal(begin.title, 'Reika');
			assert.equal(begin.cancellable, true);
			assert.equal(begin.message, 'Read big.txt, then write out.txt.');
		}
		const reports = prog.slice(1, -1);
		assert.ok(reports.length >= 2, `a report per round: ${JSON.stringify(prog)}`);
		for (const r of reports) {
			assert.equal(r.kind, 'report');
			assert.match(r.kind === 'report' ? (r.message ?? '') : '', /^round \d+ · .+ · ctx \S+\/16k \(\d+% of 13k\)$/);
		}
		assert.ok(
			reports.some((r) => r.kind === 'report' && r.message?.includes(' · read big.txt · ')),
			`a report names the round's tool: ${JSON.stringify(reports)}`,
		);

		// Status: busy during the turn, idle after, with the window from the
		// engine's listing; the chip agrees with the extension's formatter.
		assert.ok(s.statuses.some((st) => st.busy), 'a busy status during the turn');
		const after1 = await idle(s);
		assert.equal(after1.window, 16000);
		assert.equal(after1.windowSource, 'endpoint');
		assert.equal(after1.model, 'fake-coder');
		assert.equal(after1.session, r1.session);
		assert.ok(after1.size > 0);
		assert.deepEqual(await s.execute(ServerCommands.status, []), after1, 'reika.status equals the last notification');

		// Turns 2 and 3 read big.txt again: the window fills and old
		// results are shed.
		const sizes = [after1.size];
		for (const n of [2, 3]) {
			const from = s.transcript.length;
			const r = await s.execute(ServerCommands.ask, [{ prompt: `Again, turn ${n}.` }]);
			assert.equal(r.status, 'done', JSON.stringify(r));
			assert.ok(kinds('tool_call', from).some((e) => e.tool === 'read'), `turn ${n} read again`);
			const st = await s.execute(ServerCommands.status, []);
			assert.equal(st.busy, false);
			sizes.push(st.size);
		}
		assert.equal(s.prompts.length, 1, 'allowed for the session: asked once');
		const sheds = kinds('shed');
		assert.ok(sheds.length > 0, 'old tool output was shed');
		for (const e of sheds) {
			assert.match(e.text, /^Shed \d+ old results? /);
		}

		// Every status the server sent: its chip is the extension's chip
		// (the startup placeholder aside), its level follows the 80% rule.
		for (const st of s.statuses) {
			if (isStartingPlaceholder(st)) {
				continue;
			}
			assert.equal(st.text, chipText(st), `chip of ${JSON.stringify(st)}`);
			assert.match(st.text, /^ctx [0-9.]+k?\/16k \(\d+% of 13k\)$/);
			assert.equal(st.level, st.percent !== null && st.percent >= 80 ? 'warning' : 'ok', JSON.stringify(st));
		}
		// Crossing 80% of the shed point: one Warning each time, not
		// repeated while it holds.
		let crossings = 0;
		s.statuses.forEach((st, i) => {
			if (st.level === 'warning' && s.statuses[i - 1]?.level !== 'warning') {
				crossings++;
			}
		});
		assert.ok(crossings > 0, 'the window filled past 80% of the shed point');
		const warnings = s.messages.filter((m) => m.type === MessageType.Warning);
		assert.equal(warnings.length, crossings, JSON.stringify(warnings));
		for (const w of warnings) {
			assert.match(w.message, /\b\d+% of the shed point\b/);
			assert.ok(!w.message.includes('\n'), 'one line');
		}

		// The code action, as a client lists it.
		const action = compactAction(await codeActions(s, mainGo, [CompactCodeAction.kind]));
		assert.ok(action !== undefined, 'Compact context offered once a turn exists');
		assert.equal(action.kind, CompactCodeAction.kind);
		assert.equal(action.command?.command, CompactCodeAction.command);
		assert.equal(action.edit, undefined, 'no edit: works without codeAction/resolve');
		assert.equal(compactAction(await codeActions(s, mainGo, ['quickfix'])), undefined, 'context.only respected');

		// Run it as the extension does, on its own progress token: a note
		// round, then a fold of the older turns.
		const before = s.transcript.length;
		const compactToken = 'vscode-test-compact-1';
		const c = await s.execute(ServerCommands.compact, [], compactToken);
		assert.equal(c.folded, true, JSON.stringify(c));
		assert.match(c.message, /^Folded \d+ rounds? into a [0-9.]+k?-token recap$/);
		const compactEvents = s.transcript.slice(before);
		const note = compactEvents.findIndex((e) => e.kind === 'note');
		const fold = compactEvents.findIndex((e) => e.kind === 'fold');
		assert.ok(note >= 0 && fold > note, `note then fold: ${JSON.stringify(compactEvents.map((e) => e.kind))}`);
		assert.equal(compactEvents[note]!.text, 'NOTE_TEXT: big.txt has 220 numbered lines; out.txt was written.');
		assert.equal(compactEvents[fold]!.text, c.message);
		assert.equal(compactEvents[fold]!.tokens, c.recapTokens);
		assert.ok((c.recapTokens ?? 0) > 0, 'recap size');
		const infos = (): string[] => s.messages.filter((m) => m.type === MessageType.Info).map((m) => m.message);
		assert.deepEqual(infos(), [c.message], 'the fold as an Info message');
		const compactProgress = s.progress.get(compactToken) ?? [];
		assert.deepEqual(
			compactProgress.map((p) => p.kind),
			['begin', 'end'],
			JSON.stringify(compactProgress),
		);

		// Nothing left to fold.
		const again = await s.execute(ServerCommands.compact, []);
		assert.deepEqual(again, { folded: false, message: 'Nothing to fold' });
		assert.deepEqual(infos(), [c.message, 'Nothing to fold']);

		// Save keeps everything, unshed.
		const saved = path.join(scratch, 'saved.md');
		assert.deepEqual(await s.execute(ServerCommands.save, [{ path: saved }]), { path: saved });
		const md = fs.readFileSync(saved, 'utf8');
		assert.ok(md.includes('Read big.txt, then write out.txt.') && md.includes('Done: read big.txt'), 'save holds the conversation');
		assert.ok(md.includes('fmt.Println("hi")'), 'save holds the attached selection');
		for (const n of [1, 2, 3]) {
			assert.ok(md.includes(`## Turn ${n}`), `save holds turn ${n}`);
		}
		assert.equal(md.split('line 220:').length - 1, 3, 'save holds every read whole, shed or not');

		// A new session has no turns, so no Compact context.
		const fresh = await s.execute(ServerCommands.newSession, []);
		assert.ok(fresh.session !== '' && fresh.session !== r1.session, JSON.stringify(fresh));
		assert.equal(lastStatus(s)?.session, fresh.session, 'the status names the new session');
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

test('the agent edits open files through the editor, which saves them unless they had unsaved changes', { timeout: 4 * hangGuardMs }, async (t) => {
	const { scratch, root } = workspace();
	const mainGo = path.join(root, 'main.go');
	const dirtyGo = path.join(root, 'dirty.go');
	const closedTxt = path.join(root, 'closed.txt');
	fs.writeFileSync(mainGo, 'package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Println("hi")\n}\n');
	fs.writeFileSync(dirtyGo, 'package dirty\n\n// on disk\n');
	let session: LspSession | undefined;
	let engine: FakeEngine | undefined;
	try {
		const bin = await serverBinary(scratch);
		engine = await startFakeEngine(scratch, ['-ctx', '16000', '-script', script('fakeengine-edits.json')]);
		const settings = settingsFor({ baseUrl: engine.url, approve: 'all' });
		session = new LspSession(bin, root, isolatedEnv(scratch), settings);
		const s = session;
		checkCapabilities(await s.initialize(initParams(root, settings)));
		await s.waitFor('the first reika/status', () => lastStatus(s));
		const main = await s.open(mainGo, 'go');
		// The user typed into dirty.go and has not saved.
		const dirty = await s.open(dirtyGo, 'go', 'package dirty\n\n// typed by the user\n');
		assert.equal(dirty.dirty, true);

		const r = await s.execute(ServerCommands.ask, [{ prompt: 'Edit the files.' }]);
		assert.equal(r.status, 'done', JSON.stringify(r));
		const results = s.transcript.filter((e) => e.kind === 'tool_result');
		assert.deepEqual(
			results.map((e) => e.tool),
			['write', 'bash', 'edit', 'edit', 'bash', 'read', 'write'],
			JSON.stringify(results.map((e) => [e.tool, e.text])),
		);

		// Every write is a workspace/applyEdit, one labelled edit per write;
		// closed.txt did not exist: the edit created it in the editor, and the
		// extension saved it.
		assert.deepEqual(
			s.applyEdits.map((p) => p.label),
			['Reika: write main.go', 'Reika: write dirty.go', 'Reika: write dirty.go', 'Reika: write closed.txt'],
		);
		assert.equal(fs.readFileSync(closedTxt, 'utf8'), 'written to disk\n');
		const closedUri = pathToFileURL(closedTxt).href;
		assert.deepEqual(s.loaded, [closedUri]);

		// main.go had no unsaved changes: saved after the edit, before the
		// server heard it applied, so the command the agent ran next (cat)
		// saw the new text.
		const newMain = 'package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Println("hello from Reika")\n}\n';
		assert.equal(main.text, newMain);
		assert.equal(main.dirty, false);
		assert.equal(fs.readFileSync(mainGo, 'utf8'), newMain);
		assert.deepEqual(s.saved, [main.uri, closedUri]);
		assert.ok(results[1]!.text.includes('hello from Reika'), `cat main.go saw the edit: ${results[1]!.text}`);

		// dirty.go had unsaved changes: both edits are in the buffer, the
		// disk is untouched, and the user was told once.
		assert.equal(dirty.text, 'package dirty // edited twice\n\n// typed by the user, then edited by Reika\n');
		assert.equal(dirty.dirty, true);
		assert.equal(fs.readFileSync(dirtyGo, 'utf8'), 'package dirty\n\n// on disk\n');
		assert.deepEqual(s.warnings, [{ uri: dirty.uri, message: unsavedEditMessage('dirty.go') }]);
		assert.ok(results[4]!.text.includes('// on disk') && !results[4]!.text.includes('Reika'), `cat dirty.go: ${results[4]!.text}`);
		// The agent's own tools read the buffer.
		assert.ok(results[5]!.text.includes('edited twice') && results[5]!.text.includes('then edited by Reika'), results[5]!.text);

		assert.equal(await s.shutdown(), 0, 'exit code after shutdown');
	} catch (e) {
		skipIfUnavailable(t, e);
	} finally {
		session?.kill();
		engine?.stop();
		fs.rmSync(scratch, { recursive: true, force: true });
	}
});

test('a turn is cancelled from the progress and by reika.cancel; a second ask meanwhile is refused', { timeout: 4 * hangGuardMs }, async (t) => {
	const { scratch, root } = workspace();
	const aGo = path.join(root, 'a.go');
	fs.writeFileSync(aGo, 'package a\n');
	let session: LspSession | undefined;
	let engine: FakeEngine | undefined;
	try {
		const bin = await serverBinary(scratch);
		engine = await startFakeEngine(scratch, ['-ctx', '16000', '-script', script('fakeengine-hold.json')]);
		const settings = settingsFor({ baseUrl: engine.url });
		session = new LspSession(bin, root, isolatedEnv(scratch), settings);
		const s = session;
		checkCapabilities(await s.initialize(initParams(root, settings)));
		await s.waitFor('the first reika/status', () => lastStatus(s));
		await s.open(aGo, 'go');

		// The progress Cancel button: the extension cancels the request,
		// which sends $/cancelRequest.
		const source = new CancellationTokenSource();
		const held = s.execute(ServerCommands.ask, [{ prompt: 'hold on, first' }], 'vscode-test-hold-1', source.token);
		held.catch(() => undefined);
		await s.waitFor('the held turn to start', () => s.transcript.find((e) => e.kind === 'user' && e.text === 'hold on, first'));

		// Meanwhile the server answers other requests, and refuses a second turn.
		const mid = await s.execute(ServerCommands.status, []);
		assert.equal(mid.busy, true, JSON.stringify(mid));
		const second = await s.execute(ServerCommands.ask, [{ prompt: 'another' }]);
		assert.equal(second.status, 'error', JSON.stringify(second));
		assert.match(second.message ?? '', /turn is already running/);

		source.cancel();
		await assert.rejects(held, (e: unknown) => e instanceof ResponseError && e.code === LSPErrorCodes.RequestCancelled);
		await s.waitFor('the held progress to end', () => {
			const p = s.progress.get('vscode-test-hold-1') ?? [];
			return p[p.length - 1]?.kind === 'end' ? true : undefined;
		});
		await idle(s);

		// The Cancel command: reika.cancel stops the turn, which answers
		// cancelled.
		const held2 = s.execute(ServerCommands.ask, [{ prompt: 'hold on, second' }], 'vscode-test-hold-2');
		await s.waitFor('the second held turn to start', () => s.transcript.find((e) => e.kind === 'user' && e.text === 'hold on, second'));
		assert.deepEqual(await s.execute(ServerCommands.cancel, []), { cancelled: true });
		const r2 = await held2;
		assert.equal(r2.status, 'cancelled', JSON.stringify(r2));
		await idle(s);

		// And the next turn runs; once it has answered, nothing is left to
		// cancel.
		const r3 = await s.execute(ServerCommands.ask, [{ prompt: 'say ok' }]);
		assert.equal(r3.status, 'done', JSON.stringify(r3));
		assert.deepEqual(await s.execute(ServerCommands.cancel, []), { cancelled: false }, 'nothing left to cancel');

		assert.equal(await s.shutdown(), 0, 'exit code after shutdown');
	} catch (e) {
		skipIfUnavailable(t, e);
	} finally {
		session?.kill();
		engine?.stop();
		fs.rmSync(scratch, { recursive: true, force: true });
	}
});

test('an engine that reports no window: a warning at startup and the windowless chip', { timeout: 4 * hangGuardMs }, async (t) => {
	const { scratch, root } = workspace();
	const big = Array.from({ length: 220 }, (_, i) => `line ${i + 1}: the quick brown fox jumps over the lazy dog`).join('\n');
	fs.writeFileSync(path.join(root, 'big.txt'), `${big}\n`);
	let session: LspSession | undefined;
	let engine: FakeEngine | undefined;
	try {
		const bin = await serverBinary(scratch);
		// A hosted endpoint's listing states no window, and a local host is
		// never looked up in the catalog.
		engine = await startFakeEngine(scratch, ['-shape', 'hosted', '-script', script('fakeengine-script.json')]);
		const settings = settingsFor({ baseUrl: engine.url });
		session = new LspSession(bin, root, isolatedEnv(scratch), settings);
		const s = session;
		checkCapabilities(await s.initialize(initParams(root, settings)));

		const warning = await s.waitFor('the no-window warning', () =>
			s.messages.find((m) => m.type === MessageType.Warning),
		);
		assert.match(warning.message, /^No known context window\b/);
		assert.ok(!warning.message.includes('\n'), 'one line');

		const r = await s.execute(ServerCommands.ask, [{ prompt: 'Read big.txt, then write out.txt.' }]);
		assert.equal(r.status, 'done', JSON.stringify(r));
		const st = await idle(s);
		assert.equal(st.window, null);
		assert.equal(st.shedPoint, null);
		assert.equal(st.percent, null);
		assert.equal(st.windowSource, 'none');
		assert.equal(st.level, 'ok');
		assert.ok(st.size > 0);
		assert.equal(st.text, chipText(st));
		assert.match(st.text, /^ctx [0-9.]+k?$/);
		for (const x of s.statuses) {
			assert.ok(isStartingPlaceholder(x) || x.text === chipText(x), JSON.stringify(x));
		}
		assert.equal(s.messages.filter((m) => m.type === MessageType.Warning).length, 1, 'the warning is not repeated');

		const c = await s.execute(ServerCommands.compact, []);
		assert.equal(c.folded, false, JSON.stringify(c));
		assert.match(c.message, /^Nothing to fold\b/);
		assert.ok(s.messages.some((m) => m.type === MessageType.Info && m.message === c.message), 'compact says why, as Info');

		assert.equal(await s.shutdown(), 0, 'exit code after shutdown');
	} catch (e) {
		skipIfUnavailable(t, e);
	} finally {
		session?.kill();
		engine?.stop();
		fs.rmSync(scratch, { recursive: true, force: true });
	}
});

// docs/protocol.md: the status is sent "whenever busy/level/window changes", and
// busy says a turn runs: after reika.compact and reika.newSession the status
// item must stop spinning.
test(
	'the status is idle after compact and after a new session',
	{ timeout: 4 * hangGuardMs },
	async (t) => {
		const { scratch, root } = workspace();
		// Large enough that the turns leave something to fold.
		const big = Array.from({ length: 400 }, (_, i) => `line ${i + 1}: the quick brown fox jumps over the lazy dog`).join('\n');
		fs.writeFileSync(path.join(root, 'big.txt'), `${big}\n`);
		let session: LspSession | undefined;
		let engine: FakeEngine | undefined;
		try {
			const bin = await serverBinary(scratch);
			engine = await startFakeEngine(scratch, ['-ctx', '16000', '-script', script('fakeengine-script.json')]);
			const settings = settingsFor({ baseUrl: engine.url, approve: 'all' });
			session = new LspSession(bin, root, isolatedEnv(scratch), settings);
			const s = session;
			checkCapabilities(await s.initialize(initParams(root, settings)));
			for (const n of [1, 2, 3]) {
				assert.equal((await s.execute(ServerCommands.ask, [{ prompt: `Read big.txt, turn ${n}.` }])).status, 'done');
			}
			assert.equal((await idle(s)).busy, false);

			const c = await s.execute(ServerCommands.compact, []);
			assert.equal(c.folded, true, JSON.stringify(c));
			// The server sends its status before it answers.
			assert.equal((await s.execute(ServerCommands.status, [])).busy, false, 'reika.status after compact');
			assert.equal(lastStatus(s)?.busy, false, 'the last reika/status after compact');

			await s.execute(ServerCommands.newSession, []);
			assert.equal((await s.execute(ServerCommands.status, [])).busy, false, 'reika.status after a new session');
			assert.equal(lastStatus(s)?.busy, false, 'the last reika/status after a new session');

			assert.equal(await s.shutdown(), 0, 'exit code after shutdown');
		} catch (e) {
			skipIfUnavailable(t, e);
		} finally {
			session?.kill();
			engine?.stop();
			fs.rmSync(scratch, { recursive: true, force: true });
		}
	},
);

// A window reload restarts the extension host and the server; the chat then
// asks the new server for the session's transcript (reika.transcript) and
// must show what it showed before.
test('a restarted server gives the chat the transcript it showed', { timeout: 4 * hangGuardMs }, async (t) => {
	const { scratch, root } = workspace();
	const big = Array.from({ length: 220 }, (_, i) => `line ${i + 1}: the quick brown fox jumps over the lazy dog`).join('\n');
	fs.writeFileSync(path.join(root, 'big.txt'), `${big}\n`);
	let session: LspSession | undefined;
	let engine: FakeEngine | undefined;
	try {
		const bin = await serverBinary(scratch);
		engine = await startFakeEngine(scratch, ['-ctx', '16000', '-script', script('fakeengine-script.json')]);
		const settings = settingsFor({ baseUrl: engine.url, approve: 'all' });
		session = new LspSession(bin, root, isolatedEnv(scratch), settings);
		const first = session;
		checkCapabilities(await first.initialize(initParams(root, settings)));
		const empty = await first.execute(ServerCommands.transcript, []);
		assert.deepEqual(empty, { session: '', events: [], omitted: 0 }, 'no session yet');
		const r = await first.execute(ServerCommands.ask, [{ prompt: 'Read big.txt, then write out.txt.' }]);
		assert.equal(r.status, 'done', JSON.stringify(r));
		const live = first.transcript.filter((e) => !e.delta);
		const shown = new Conversation();
		first.transcript.forEach((e) => shown.add(e));
		assert.equal(await first.shutdown(), 0);

		session = new LspSession(bin, root, isolatedEnv(scratch), settings);
		const second = session;
		checkCapabilities(await second.initialize(initParams(root, settings)));
		const page = await second.execute(ServerCommands.transcript, [{}]);
		assert.equal(page.session, r.session);
		assert.equal(page.omitted, 0);
		assert.deepEqual(page.events, live, 'the events sent live, whole');
		const restored = new Conversation();
		restored.reset(page.events);
		assert.deepEqual(
			restored.all().map((b) => [b.kind, b.html]),
			shown.all().map((b) => [b.kind, b.html]),
			'the chat shows the same blocks',
		);

		// The page is bounded: the newest events that fit, the rest counted.
		const small = await second.execute(ServerCommands.transcript, [{ maxChars: 100 }]);
		assert.ok(small.omitted > 0 && small.events.length < live.length, JSON.stringify(small));
		assert.deepEqual(small.events, live.slice(live.length - small.events.length));
		assert.equal(await second.shutdown(), 0);
	} catch (e) {
		skipIfUnavailable(t, e);
	} finally {
		session?.kill();
		engine?.stop();
		fs.rmSync(scratch, { recursive: true, force: true });
	}
});
