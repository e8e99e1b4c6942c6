// The real-editor test: the packaged extension (.vsix) installed in real
// VS Code — code-server 4.100.3, which is VS Code 1.100.3 in the browser —
// driven through Debian's Chromium with puppeteer-core, against the fake
// engine (agent/enginetest/cmd/fakeengine, scripted by
// fakeengine-editor.json). It does what a user does: the status item, Ask
// in the chat, an approved edit, a command approval, the warning colour,
// Compact context from Ctrl+. (first-turns.js); a killed server, window
// reloads, the settings UI, the engine going down, and an error toast that
// a later turn clears (restarts.js); the sidebar, slash commands, session
// history, code blocks' Insert and Apply, and a workspace's .mcp.json
// (views.js). harness.js starts and stops it all. Each step saves a
// screenshot.
//
// The tools come from .ci/prepare-vscode, which installs them into
// $REIKA_CACHE_DIR/vscode-editor; without them the test skips with a
// notice, and with REIKA_TEST_STRICT=1 (CI) that is a failure. Nothing here
// waits for time to pass: every wait is for something to show, under a
// hang guard.
'use strict';

const assert = require('node:assert/strict');
const { test } = require('node:test');
const { firstTurnSteps } = require('./first-turns');
const { restartSteps } = require('./restarts');
const { viewSteps } = require('./views');
const { startEditor, stopEditor, strict, unavailable } = require('./harness');

test('the extension in real VS Code (code-server) against the fake engine', { timeout: 15 * 60_000 }, async (t) => {
	const why = unavailable();
	if (why !== undefined) {
		if (strict) {
			assert.fail(`the real-editor test cannot run: ${why} (required: REIKA_TEST_STRICT=1)`);
		}
		process.stderr.write(`editor test: SKIPPED: ${why}\n`);
		t.skip(why);
		return;
	}
	const s = await startEditor();
	try {
		await firstTurnSteps(t, s);
		await restartSteps(t, s);
		await viewSteps(t, s);
	} finally {
		await stopEditor(s);
	}
});
