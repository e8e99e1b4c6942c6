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
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { MessageType } from 'vscode-languageserver-protocol/node';
import { chipText } from '../../src/chip';
import { CompactCodeAction, ServerCommands, TranscriptEvent } from '../../src/protocol';
import { didChangeConfigurationParams, mapSettings, ServerSettingsObject } from '../../src/settings';
import { Conversation } from '../../src/chatModel';
import { deadURL, hangGuardMs, isolatedEnv, LspSession, serverBinary, startFakeEngine } from './harness';
import {
	checkCapabilities,
	codeActions,
	compactAction,
	idle,
	initParams,
	inScratch,
	isStartingPlaceholder,
	lastStatus,
	script,
	settingsFor,
	startOnFakeEngine,
} from './helpers';

test('the server keeps serving with the engine down', { timeout: 4 * hangGuardMs }, (t) => inScratch(t, async ({ scratch, root, own }) => {
	fs.writeFileSync(path.join(root, 'a.go'), 'package a\n');
	const bin = await serverBinary(scratch);
	const settings = settingsFor({ baseUrl: await deadURL(), model: 'absent-model', engineRetry: 0 }); // fail at once, no wait
	const session = own(new LspSession(bin, root, isolatedEnv(scratch), settings));
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
}));

test('reika.cacheReuse reaches the server: it refuses what the extension refuses and takes what it sends', { timeout: 6 * hangGuardMs }, (t) => inScratch(t, async ({ scratch, root, own }) => {
	const bin = await serverBinary(scratch);
	const engine = own(await startFakeEngine(scratch, ['-ctx', '16000']));

	// A value the extension reports and leaves out, sent anyway (as a
	// hand-written client would): the server refuses it with its own
	// error, so the two checks agree on it.
	const refused = mapSettings((k) => (k === 'cacheReuse' ? 'sometimes' : undefined));
	assert.deepEqual(refused.settings, {});
	assert.equal(refused.problems.length, 1, refused.problems.join('\n'));
	const bad = { baseUrl: engine.url, cacheReuse: 'sometimes' } as unknown as ServerSettingsObject;
	const session = own(new LspSession(bin, root, isolatedEnv(scratch), bad));
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
}));

test('ask, status, code action and compact against the fake engine', { timeout: 10 * hangGuardMs }, (t) => inScratch(t, async ({ scratch, root, own }) => {
	const mainGo = path.join(root, 'main.go');
	fs.writeFileSync(mainGo, 'package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Println("hi")\n}\n');
	// A file large enough that two reads cross the shed point of a 16k window
	// by the engine's own count (it has a tokenizer).
	const big = Array.from({ length: 400 }, (_, i) => `line ${i + 1}: the quick brown fox jumps over the lazy dog`).join('\n');
	fs.writeFileSync(path.join(root, 'big.txt'), `${big}\n`);
	const { s } = await startOnFakeEngine({ scratch, root, own }, ['-ctx', '16000', '-script', script('fakeengine-script.json')]);
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
}));
