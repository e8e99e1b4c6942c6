// The protocol test, continued (protocol.test.ts says what it drives):
// edits of open files through the editor, cancelling a turn, an engine
// with no window, the status after compact and a new session, and the
// transcript a restarted server gives the chat. Shared helpers are in
// helpers.ts.

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import {
	CancellationTokenSource,
	LSPErrorCodes,
	MessageType,
	ResponseError,
} from 'vscode-languageserver-protocol/node';
import { chipText } from '../../src/chip';
import { unsavedEditMessage } from '../../src/editSave';
import { ServerCommands } from '../../src/protocol';
import { Conversation } from '../../src/chatModel';
import { hangGuardMs, isolatedEnv, LspSession } from './harness';
import {
	checkCapabilities,
	idle,
	initParams,
	inScratch,
	isStartingPlaceholder,
	lastStatus,
	script,
	startOnFakeEngine,
} from './helpers';
test('the agent edits open files through the editor, which saves them unless they had unsaved changes', { timeout: 4 * hangGuardMs }, (t) => inScratch(t, async ({ scratch, root, own }) => {
	const mainGo = path.join(root, 'main.go');
	const dirtyGo = path.join(root, 'dirty.go');
	const closedTxt = path.join(root, 'closed.txt');
	fs.writeFileSync(mainGo, 'package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Println("hi")\n}\n');
	fs.writeFileSync(dirtyGo, 'package dirty\n\n// on disk\n');
	const { s } = await startOnFakeEngine({ scratch, root, own }, ['-ctx', '16000', '-script', script('fakeengine-edits.json')], { approve: 'all' });
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
}));

test('a turn is cancelled from the progress and by reika.cancel; a second ask meanwhile is refused', { timeout: 4 * hangGuardMs }, (t) => inScratch(t, async ({ scratch, root, own }) => {
	const aGo = path.join(root, 'a.go');
	fs.writeFileSync(aGo, 'package a\n');
	const { s } = await startOnFakeEngine({ scratch, root, own }, ['-ctx', '16000', '-script', script('fakeengine-hold.json')]);
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
}));

test('an engine that reports no window: a warning at startup and the windowless chip', { timeout: 4 * hangGuardMs }, (t) => inScratch(t, async ({ scratch, root, own }) => {
	const big = Array.from({ length: 220 }, (_, i) => `line ${i + 1}: the quick brown fox jumps over the lazy dog`).join('\n');
	fs.writeFileSync(path.join(root, 'big.txt'), `${big}\n`);
	// A hosted endpoint's listing states no window, and a local host is
	// never looked up in the catalog.
	const { s } = await startOnFakeEngine({ scratch, root, own }, ['-shape', 'hosted', '-script', script('fakeengine-script.json')]);

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
}));

// docs/protocol.md: the status is sent "whenever busy/level/window changes", and
// busy says a turn runs: after reika.compact and reika.newSession the status
// item must stop spinning.
test(
	'the status is idle after compact and after a new session',
	{ timeout: 4 * hangGuardMs },
	(t) => inScratch(t, async ({ scratch, root, own }) => {
		// Large enough that the turns leave something to fold.
		const big = Array.from({ length: 400 }, (_, i) => `line ${i + 1}: the quick brown fox jumps over the lazy dog`).join('\n');
		fs.writeFileSync(path.join(root, 'big.txt'), `${big}\n`);
		const { s } = await startOnFakeEngine({ scratch, root, own }, ['-ctx', '16000', '-script', script('fakeengine-script.json')], { approve: 'all' });
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
	}),
);

// A window reload restarts the extension host and the server; the chat then
// asks the new server for the session's transcript (reika.transcript) and
// must show what it showed before.
test('a restarted server gives the chat the transcript it showed', { timeout: 4 * hangGuardMs }, (t) => inScratch(t, async ({ scratch, root, own }) => {
	const big = Array.from({ length: 220 }, (_, i) => `line ${i + 1}: the quick brown fox jumps over the lazy dog`).join('\n');
	fs.writeFileSync(path.join(root, 'big.txt'), `${big}\n`);
	const { s: first, settings, bin } = await startOnFakeEngine({ scratch, root, own }, ['-ctx', '16000', '-script', script('fakeengine-script.json')], { approve: 'all' });
	const empty = await first.execute(ServerCommands.transcript, []);
	assert.deepEqual(empty, { session: '', events: [], omitted: 0 }, 'no session yet');
	const r = await first.execute(ServerCommands.ask, [{ prompt: 'Read big.txt, then write out.txt.' }]);
	assert.equal(r.status, 'done', JSON.stringify(r));
	const live = first.transcript.filter((e) => !e.delta);
	const shown = new Conversation();
	first.transcript.forEach((e) => shown.add(e));
	assert.equal(await first.shutdown(), 0);

	const second = own(new LspSession(bin, root, isolatedEnv(scratch), settings));
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
}));

