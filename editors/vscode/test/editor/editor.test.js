// The real-editor test: the packaged extension (.vsix) installed in real
// VS Code — code-server 4.100.3, which is VS Code 1.100.3 in the browser —
// driven through Debian's Chromium with puppeteer-core, against the fake
// engine (agent/enginetest/cmd/fakeengine, scripted by
// fakeengine-editor.json). It does what a user does: the status item, Ask
// in the chat, an approved edit, a command approval, the warning colour,
// Compact context from Ctrl+., a killed server, a window reload, the
// settings UI, and the engine going down. Each step saves a screenshot.
//
// The tools come from .ci/prepare-vscode, which installs them into
// $REIKA_CACHE_DIR/vscode-editor; without them the test skips with a
// notice, and with REIKA_TEST_STRICT=1 (CI) that is a failure. Nothing here
// waits for time to pass: every wait is for something to show, under a
// hang guard.
'use strict';

const assert = require('node:assert/strict');
const { execFile, spawn } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const readline = require('node:readline');
const { test } = require('node:test');
const { codeBlockSteps } = require('./codeblocks');

const pkgDir = path.resolve(__dirname, '../..');
const repoRoot = path.resolve(pkgDir, '../..');
const strict = process.env.REIKA_TEST_STRICT === '1';
const cacheDir =
	process.env.REIKA_CACHE_DIR || path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'reika-lsp');
const toolsDir = path.join(cacheDir, 'vscode-editor');
const chromiumPath = process.env.REIKA_CHROMIUM || '/usr/bin/chromium';
const artifactsDir = path.join(process.env.REIKA_ARTIFACTS_DIR || path.join(repoRoot, 'artifacts'), 'vscode-editor');
/** How long any one wait may take before the test reports a hang. A hang
 * guard, not a speed requirement (REIKA_EDITOR_HANG_GUARD_MS lowers it to
 * debug the test). */
const hangGuardMs = Number(process.env.REIKA_EDITOR_HANG_GUARD_MS) || 120_000;
/** The engine's window, sized for the engine's own token counts: small, so
 * the first turn (big.txt read whole, the edit, the reply) leaves the context
 * past 80% of the shed point, and large enough that neither it nor the
 * second turn reaches the shed point (a shed there would leave the turn's
 * last message the shed notice, not the tool result the script answers). */
const engineWindow = 11000;
const chromiumFlags = [
	'--headless',
	'--no-sandbox',
	'--disable-gpu',
	'--disable-quic',
	'--no-first-run',
	'--disable-background-networking',
	'--disable-component-update',
	'--disable-sync',
];

/** Why the test cannot run here, or undefined. */
function unavailable() {
	if (!fs.existsSync(path.join(toolsDir, 'ready'))) {
		return `the editor tools are not installed in ${toolsDir} (run .ci/prepare-vscode)`;
	}
	if (!fs.existsSync(chromiumPath)) {
		return `${chromiumPath} does not exist (apt-get install chromium, or run .ci/prepare-vscode)`;
	}
	return undefined;
}

function run(cmd, args, opts = {}) {
	return new Promise((resolve, reject) => {
		execFile(cmd, args, { maxBuffer: 64 << 20, ...opts }, (err, stdout, stderr) => {
			if (err) {
				reject(new Error(`${cmd} ${args.join(' ')}: ${err.message}\n${stdout}${stderr}`));
				return;
			}
			resolve(`${stdout}${stderr}`);
		});
	});
}

/** The first line a child prints on stdout that matches re. */
function firstMatch(proc, stream, re, what) {
	return new Promise((resolve, reject) => {
		let seen = '';
		const timer = setTimeout(() => reject(new Error(`hang guard: no ${what}\n${seen.slice(-2000)}`)), hangGuardMs);
		readline.createInterface({ input: stream }).on('line', (line) => {
			seen += `${line}\n`;
			const m = re.exec(line);
			if (m !== null) {
				clearTimeout(timer);
				resolve(m);
			}
		});
		proc.once('exit', (code) => {
			clearTimeout(timer);
			reject(new Error(`${what}: the process exited with ${code}\n${seen.slice(-2000)}`));
		});
	});
}

/** The pids of processes whose command line is exactly argv. */
function pidsOf(argv) {
	const want = argv.join('\0');
	const out = [];
	for (const name of fs.readdirSync('/proc')) {
		if (!/^\d+$/.test(name)) {
			continue;
		}
		try {
			const cmd = fs.readFileSync(`/proc/${name}/cmdline`, 'utf8').replace(/\0$/, '');
			if (cmd === want) {
				out.push(Number(name));
			}
		} catch {
			// gone meanwhile
		}
	}
	return out;
}

/** Resolves with check()'s first truthy value, polling. */
async function until(what, check, everyMs = 100) {
	const deadline = Date.now() + hangGuardMs;
	for (;;) {
		const v = await check();
		if (v) {
			return v;
		}
		if (Date.now() > deadline) {
			throw new Error(`hang guard: ${what}`);
		}
		await new Promise((r) => setTimeout(r, everyMs));
	}
}

/** The editor session under test: code-server, the browser page, and the
 * processes and files around them. */
class Editor {
	constructor(scratch) {
		this.scratch = scratch;
		this.shots = [];
	}

	async waitFor(what, fn, ...args) {
		try {
			return await this.page.waitForFunction(fn, { timeout: hangGuardMs, polling: 100 }, ...args);
		} catch (e) {
			await this.shot(`hang-${what.replace(/\W+/g, '-').slice(0, 40)}`);
			throw new Error(`hang guard: ${what}: ${e.message}`);
		}
	}

	async shot(name) {
		const file = path.join(artifactsDir, `${String(this.shots.length + 1).padStart(2, '0')}-${name}.png`);
		await this.page.screenshot({ path: file });
		this.shots.push(file);
		return file;
	}

	async keys(...combo) {
		const key = combo.pop();
		for (const k of combo) {
			await this.page.keyboard.down(k);
		}
		await this.page.keyboard.press(key);
		for (const k of combo.reverse()) {
			await this.page.keyboard.up(k);
		}
	}

	/**
	 * Opens the command palette. F1 is pressed again when the palette does
	 * not show: a key that reaches the workbench while it moves focus (a
	 * quick open closing, a webview taking focus) is dropped, and the test
	 * hung on it in CI.
	 */
	async palette() {
		for (let attempt = 1; ; attempt++) {
			await this.keys('F1');
			try {
				await this.page.waitForSelector('.quick-input-widget input', { visible: true, timeout: attempt < 3 ? 10000 : hangGuardMs });
				return;
			} catch (e) {
				if (attempt >= 3) {
					throw e;
				}
				await this.page.keyboard.press('Escape');
			}
		}
	}

	/** Runs a command from the palette by its title. */
	async command(title) {
		await this.palette();
		await this.page.keyboard.type(title);
		await this.waitFor(`the palette to offer ${title}`, (t) => {
			const row = document.querySelector('.quick-input-list .monaco-list-row.focused');
			return row !== null && (row.getAttribute('aria-label') || '').startsWith(t);
		}, title);
		await this.page.keyboard.press('Enter');
	}

	/** Opens a workspace file with Quick Open. */
	async open(name) {
		await this.keys('Control', 'KeyP');
		await this.page.waitForSelector('.quick-input-widget input', { visible: true, timeout: hangGuardMs });
		await this.page.keyboard.type(name);
		await this.waitFor(`Quick Open to offer ${name}`, (n) => {
			const row = document.querySelector('.quick-input-list .monaco-list-row.focused');
			return row !== null && (row.getAttribute('aria-label') || '').startsWith(n);
		}, name);
		await this.page.keyboard.press('Enter');
		await this.waitFor(`${name} to be the active editor`, (n) => {
			const tab = document.querySelector('.tabs-container .tab.active');
			return tab !== null && (tab.getAttribute('aria-label') || '').startsWith(n);
		}, name);
		await this.page.waitForSelector('.editor-instance .monaco-editor textarea', { timeout: hangGuardMs });
		await this.page.focus('.editor-group-container.active .monaco-editor textarea');
	}

	/** The status item's text. */
	statusText() {
		return this.page.$eval('[id$="reika.statusItem"]', (e) => e.textContent.trim()).catch(() => '');
	}

	/** Whether the status item's background is the theme colour of the
	 * given status bar item kind (warning, error). */
	statusColouredAs(kind) {
		return this.page.evaluate((k) => {
			const item = document.querySelector('[id$="reika.statusItem"]');
			if (item === null) {
				return false;
			}
			const probe = document.createElement('div');
			probe.style.backgroundColor = `var(--vscode-statusBarItem-${k}Background)`;
			document.querySelector('.monaco-workbench').appendChild(probe);
			const want = getComputedStyle(probe).backgroundColor;
			probe.remove();
			return want !== '' && want !== 'rgba(0, 0, 0, 0)' && getComputedStyle(item).backgroundColor === want;
		}, kind);
	}

	/** The chat view's frame (the webview's inner document). */
	async chat() {
		return this.shotOnHang('the chat view', () => until('the chat view', async () => {
			for (const f of this.page.frames()) {
				try {
					// evaluate, not $: after a reload puppeteer's query world
					// of a restored webview's frame finds nothing.
					if (await f.evaluate(() => document.getElementById('input') !== null && document.getElementById('log') !== null)) {
						return f;
					}
				} catch {
					// a frame that went away
				}
			}
			return undefined;
		}));
	}

	/** Every chat view's frame (the editor tab's, the sidebar's). */
	async chats() {
		const out = [];
		for (const f of this.page.frames()) {
			try {
				if (await f.evaluate(() => document.getElementById('input') !== null && document.getElementById('log') !== null)) {
					out.push(f);
				}
			} catch {
				// a frame that went away
			}
		}
		return out;
	}

	/** Runs wait, saving a screenshot when it fails. */
	async shotOnHang(what, wait) {
		try {
			return await wait();
		} catch (e) {
			await this.shot(`hang-${what.replace(/\W+/g, '-').slice(0, 40)}`).catch(() => undefined);
			throw e;
		}
	}

	/** The texts of the notification toasts on screen. */
	toasts() {
		return this.page.$$eval('.notification-toast .notification-list-item-message', (els) => els.map((e) => e.textContent));
	}

	/** The labels of the editor tabs. */
	tabs() {
		return this.page.$$eval('.tabs-container .tab', (els) => els.map((e) => e.getAttribute('aria-label') || ''));
	}
}

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
	const puppeteer = require(path.join(toolsDir, 'node_modules', 'puppeteer-core'));
	const codeServer = path.join(toolsDir, 'node_modules', 'code-server', 'out', 'node', 'entry.js');
	const csVersion = JSON.parse(fs.readFileSync(path.join(toolsDir, 'node_modules', 'code-server', 'package.json'), 'utf8')).version;

	const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'reika-editor-'));
	fs.rmSync(artifactsDir, { recursive: true, force: true });
	fs.mkdirSync(artifactsDir, { recursive: true });
	const ed = new Editor(scratch);
	const children = [];
	let browser;
	// A run that is interrupted still ends what it started.
	const stopAll = () => {
		for (const c of children) {
			try {
				process.kill(c.spawnargs.includes('--bind-addr') ? -c.pid : c.pid, 'SIGKILL');
			} catch {
				// already gone
			}
		}
		browser?.process()?.kill('SIGKILL');
		process.exit(130);
	};
	process.once('SIGINT', stopAll);
	process.once('SIGTERM', stopAll);
	try {
		// The server binary, copied so that this test's server is the only
		// process with its path (the kill below must find no other).
		const bin = path.join(scratch, 'reika-lsp');
		if (process.env.REIKA_LSP_BIN) {
			fs.copyFileSync(process.env.REIKA_LSP_BIN, bin);
			fs.chmodSync(bin, 0o755);
		} else {
			await run('go', ['build', '-o', bin, './cmd/reika-lsp'], { cwd: repoRoot });
		}
		const engineBin = path.join(scratch, 'fakeengine');
		await run('go', ['build', '-o', engineBin, './agent/enginetest/cmd/fakeengine'], { cwd: repoRoot });
		const vsix = path.join(scratch, 'reika.vsix');
		await run('npx', ['vsce', 'package', '--skip-license', '--allow-missing-repository', '--out', vsix], { cwd: pkgDir });

		// The workspace, and a home of its own for everything started.
		const ws = path.join(scratch, 'ws');
		const home = path.join(scratch, 'home');
		const userData = path.join(scratch, 'user-data');
		const extensions = path.join(scratch, 'extensions');
		for (const d of [ws, home, path.join(userData, 'User'), extensions]) {
			fs.mkdirSync(d, { recursive: true });
		}
		const mainGo = path.join(ws, 'main.go');
		fs.writeFileSync(mainGo, 'package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Println("hi")\n}\n');
		const big = Array.from({ length: 220 }, (_, i) => `line ${i + 1}: the quick brown fox jumps over the lazy dog`).join('\n');
		fs.writeFileSync(path.join(ws, 'big.txt'), `${big}\n`);
		const env = { PATH: process.env.PATH, HOME: home, XDG_CONFIG_HOME: path.join(home, 'config'), XDG_STATE_HOME: path.join(home, 'state'), XDG_CACHE_HOME: path.join(home, 'cache'), TMPDIR: scratch };

		const engine = spawn(engineBin, ['-addr', '127.0.0.1:0', '-ctx', String(engineWindow), '-script', path.join(__dirname, 'fakeengine-editor.json'), '-stdin'], {
			env,
			stdio: ['pipe', 'pipe', 'pipe'],
		});
		children.push(engine);
		const engineURL = (await firstMatch(engine, engine.stdout, /^(http:\/\/\S+)$/, "the fake engine's URL"))[1];

		fs.writeFileSync(
			path.join(userData, 'User', 'settings.json'),
			JSON.stringify(
				{
					'workbench.startupEditor': 'none',
					'workbench.tips.enabled': false,
					'workbench.colorTheme': 'Default Dark Modern',
					'telemetry.telemetryLevel': 'off',
					'update.mode': 'none',
					'extensions.autoCheckUpdates': false,
					'extensions.autoUpdate': false,
					'git.enabled': false,
					'reika.serverPath': bin,
					// The chat in an editor tab for most steps; the sidebar
					// view (the default) has a step of its own at the end.
					'reika.chatLocation': 'editor',
					'reika.baseUrl': engineURL,
					// "The engine going down" expects its ask to fail at once, not
					// to wait for the engine (that wait is tested in the Go suite).
					'reika.engineRetry': 0,
				},
				null,
				2,
			),
		);
		const csArgs = ['--user-data-dir', userData, '--extensions-dir', extensions];
		await run(process.execPath, [codeServer, ...csArgs, '--install-extension', vsix], { env });
		const cs = spawn(
			process.execPath,
			[codeServer, ...csArgs, '--bind-addr', '127.0.0.1:0', '--auth', 'none', '--disable-telemetry', '--disable-update-check', '--disable-workspace-trust', '--disable-getting-started-override', ws],
			{ env, stdio: ['ignore', 'pipe', 'pipe'], detached: true },
		);
		children.push(cs);
		const url = (await firstMatch(cs, cs.stdout, /HTTP server listening on (http:\/\/127\.0\.0\.1:\d+\/)/, "code-server's address"))[1];

		const chromeHome = path.join(scratch, 'chromium');
		fs.mkdirSync(chromeHome);
		browser = await puppeteer.launch({
			executablePath: chromiumPath,
			headless: true,
			args: [...chromiumFlags, `--user-data-dir=${path.join(chromeHome, 'profile')}`],
			env: { ...env, HOME: chromeHome, XDG_CONFIG_HOME: path.join(chromeHome, 'config') },
			defaultViewport: { width: 1400, height: 900 },
		});
		const puppeteerVersion = JSON.parse(fs.readFileSync(path.join(toolsDir, 'node_modules', 'puppeteer-core', 'package.json'), 'utf8')).version;
		process.stderr.write(`editor test: code-server ${csVersion}, ${await browser.version()}, puppeteer-core ${puppeteerVersion}\n`);
		ed.page = await browser.newPage();
		await ed.page.goto(`${url}?folder=${encodeURIComponent(ws)}`, { waitUntil: 'domcontentloaded' });
		await ed.page.waitForSelector('.monaco-workbench .statusbar', { timeout: hangGuardMs });

		const chip = /^\S* ?Reika ctx [0-9.]+k?\/11k \((\d+)% of [0-9.]+k\)/;
		const percent = async () => Number((chip.exec(await ed.statusText()) ?? [])[1] ?? NaN);

		await t.test('the server starts and the status item shows the chip', async () => {
			await ed.waitFor('the status item to show the chip', (src) => {
				const e = document.querySelector('[id$="reika.statusItem"]');
				return e !== null && new RegExp(src).test(e.textContent.trim());
			}, chip.source);
			assert.match(await ed.statusText(), chip);
			await ed.shot('status-item');
		});

		await t.test('Ask opens the chat with the selection; the turn shows progress; the edit is approved in the diff editor and lands saved', async () => {
			await ed.open('main.go');
			await ed.keys('Control', 'KeyA');
			await ed.keys('Control', 'Alt', 'KeyR');
			const chat = await ed.chat();
			await chat.waitForFunction(() => document.activeElement?.id === 'input', { timeout: hangGuardMs });
			await chat.waitForFunction(() => !document.getElementById('attachment').hidden && /main\.go lines 1-7/.test(document.getElementById('attachment-label').textContent), { timeout: hangGuardMs });
			await ed.page.keyboard.type('Read big.txt, then change main.go.');
			await ed.page.keyboard.press('Enter');

			// The approval: the diff editor on the current and proposed text
			// (inline when the group is narrow), Allow / Allow for this
			// session / Deny on its title bar, in the chat and in a
			// notification.
			await ed.waitFor('the diff editor of the proposed edit', () => {
				// Editors render spaces as no-break spaces.
				const text = (document.querySelector('.monaco-diff-editor')?.textContent ?? '').replace(/\u00a0/g, ' ');
				return /Println\("hello from Reika"\)/.test(text) && /Println\("hi"\)/.test(text);
			});
			assert.ok((await ed.tabs()).some((l) => l.startsWith('main.go: current ↔ proposed by Reika')), JSON.stringify(await ed.tabs()));
			const activeTabs = await ed.page.$$eval('.editor-group-container .tab.active', (els) => els.map((e) => e.getAttribute('aria-label') || ''));
			assert.ok(activeTabs.some(isChatTab) && activeTabs.some((l) => l.startsWith('main.go: current ↔ proposed')), `the diff opens beside the chat, not over it: ${JSON.stringify(activeTabs)}`);
			await ed.waitFor('Allow and Deny on the diff editor title bar', () => {
				const labels = [...document.querySelectorAll('.editor-group-container .editor-actions .action-label')].map((a) => a.getAttribute('aria-label') || '');
				return ['Allow', 'Allow for This Session', 'Deny'].every((t) => labels.some((l) => l.startsWith(t)));
			});
			await chat.waitForFunction(() => {
				const a = document.getElementById('approval');
				return !a.hidden && /^Reika wants to edit main\.go \(1 hunk\)/.test(a.textContent) &&
					[...a.querySelectorAll('button')].map((b) => b.textContent).join('|') === 'Allow|Allow for this session|Deny';
			}, { timeout: hangGuardMs });
			// Progress: the round report in the chat while the turn runs.
			await chat.waitForFunction(() => {
				const p = document.getElementById('progress');
				return !p.hidden && /^round \d+ · read big\.txt · ctx /.test(p.textContent);
			}, { timeout: hangGuardMs });
			assert.match(await ed.statusText(), /approval needed/);
			await ed.shot('edit-approval-diff');
			// Hidden behind another file, the approval comes back from the
			// status item's "Show the approval…".
			await ed.page.click('.monaco-diff-editor .editor.modified .view-lines');
			await ed.open('big.txt');
			assert.ok(!(await ed.page.evaluate(diffInFront)), 'big.txt covers the diff');
			await ed.page.click('[id$="reika.statusItem"]');
			await ed.page.waitForSelector('.quick-input-widget input', { visible: true, timeout: hangGuardMs });
			await ed.page.keyboard.type('Show the approval');
			await ed.waitFor('the status menu to offer the approval', () => /Show the approval/.test(document.querySelector('.quick-input-list .monaco-list-row.focused')?.getAttribute('aria-label') ?? ''));
			await ed.page.keyboard.press('Enter');
			await ed.waitFor('the diff in front again', diffInFront);
			assert.equal((await ed.page.$$('.notifications-center.visible')).length, 0, 'not the notification centre');
			await chat.evaluate(() => [...document.querySelectorAll('#approval button')].find((b) => b.textContent === 'Allow').click());
			await chat.waitForFunction(() => document.getElementById('approval').hidden, { timeout: hangGuardMs });

			// The turn ends with the scripted reply, or, when the turn reached
			// the shed point (the fixture no longer fits the window), with a
			// shed block before some other reply.
			await chat.waitForFunction(() => {
				const l = document.getElementById('log');
				return document.getElementById('progress').hidden && (/commands that read it from disk see the new text\./.test(l.textContent) || l.querySelector('.block.shed') !== null);
			}, { timeout: hangGuardMs });
			const shed = await chat.evaluate(() => document.querySelector('#log .block.shed')?.textContent ?? '');
			assert.equal(shed, '', `the first turn reached the shed point (retune big.txt or the window: the scenario needs it to end at 80–99% of the shed point): ${await ed.statusText()}`);
			assert.match(await chat.evaluate(() => document.getElementById('log').textContent), /main\.go now prints hello from Reika[\s\S]*commands that read it from disk see the new text\./);
			assert.equal(fs.readFileSync(mainGo, 'utf8'), 'package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Println("hello from Reika")\n}\n', 'the edit is on disk');
			await ed.waitFor('main.go to be saved and the diff closed', () => {
				const tabs = [...document.querySelectorAll('.tabs-container .tab')];
				const main = tabs.find((t) => (t.getAttribute('aria-label') || '').startsWith('main.go,') || t.getAttribute('aria-label') === 'main.go');
				return main !== undefined && !main.classList.contains('dirty') && !tabs.some((t) => (t.getAttribute('aria-label') || '').includes('proposed by Reika'));
			});

			// The conversation: the request with its attachment, reasoning
			// and tool calls collapsed, the read shortened, the reply as
			// Markdown.
			const log = await chat.evaluate(() => {
				const l = document.getElementById('log');
				return {
					user: l.querySelector('.block.user')?.textContent ?? '',
					attachment: l.querySelector('.block.user details.attachment summary')?.textContent ?? '',
					reasoningClosed: l.querySelector('details.reasoning')?.open === false,
					tools: [...l.querySelectorAll('.block.tool .tool-name')].map((e) => e.textContent),
					callsClosed: [...l.querySelectorAll('.block.tool details.call')].every((d) => !d.open),
					expand: l.querySelector('.block.tool .expand')?.textContent ?? '',
					strong: [...l.querySelectorAll('.block.assistant strong')].map((e) => e.textContent),
					items: [...l.querySelectorAll('.block.assistant li')].length,
				};
			});
			assert.match(log.user, /Read big\.txt, then change main\.go\./);
			assert.equal(log.attachment, 'main.go lines 1-7');
			assert.ok(log.reasoningClosed, 'the reasoning is collapsed');
			assert.deepEqual(log.tools, ['read', 'edit']);
			assert.ok(log.callsClosed, 'the tool calls are collapsed');
			// The file's 220 lines, not its header line too.
			assert.equal(log.expand, 'Show all 220 lines');
			assert.match(await chat.evaluate(() => document.querySelector('.block.tool .result-head').textContent), /^result · 220 lines/);
			assert.deepEqual(log.strong, ['big.txt', '220', 'Undo']);
			assert.equal(log.items, 2);
			// The view follows the theme's colours and a strict content
			// security policy.
			const look = await chat.evaluate(() => {
				const probe = document.createElement('span');
				probe.style.color = 'var(--vscode-foreground)';
				document.body.appendChild(probe);
				const themed = getComputedStyle(probe).color;
				probe.remove();
				return {
					csp: document.querySelector('meta[http-equiv="Content-Security-Policy"]')?.getAttribute('content') ?? '',
					themed,
					body: getComputedStyle(document.body).color,
				};
			});
			assert.match(look.csp, /default-src 'none'/);
			assert.match(look.csp, /script-src 'nonce-[^']+'/);
			assert.doesNotMatch(look.csp, /unsafe-inline|unsafe-eval/);
			assert.ok(look.themed !== '' && look.body === look.themed, `the text has the theme's foreground: ${JSON.stringify(look)}`);
			await chat.click('.block.tool .expand');
			await chat.waitForFunction(() => {
				const r = document.querySelector('.block.tool .result');
				return r.classList.contains('expanded') && !r.querySelector('.whole').hidden && r.querySelector('.preview').hidden;
			}, { timeout: hangGuardMs });
			await ed.shot('chat-after-the-edit');
		});

		await t.test('the warning colour shows at 80% of the shed point', async () => {
			const pct = await percent();
			assert.ok(pct >= 80 && pct < 100, `the turn left the context at ${pct}% of the shed point; the scenario needs 80–99% (retune big.txt or the window)`);
			assert.ok(await ed.statusColouredAs('warning'), 'the status item has the warning background');
			const bar = await (await ed.chat()).$eval('#context', (e) => e.className);
			assert.match(bar, /\bwarning\b/, 'the chat context bar is in the warning colour too');
			await ed.shot('warning-colour');
		});

		await t.test('a command approval shows the whole command; another ask reuses the one chat panel', async () => {
			await ed.keys('Control', 'Alt', 'KeyR');
			const chat = await ed.chat();
			await chat.waitForFunction(() => document.activeElement?.id === 'input', { timeout: hangGuardMs });
			await chat.evaluate(() => document.getElementById('detach').click());
			const sheds = await chat.evaluate(() => document.querySelectorAll('#log .block.shed').length);
			await chat.focus('#input');
			await ed.page.keyboard.type('Now run the checks.');
			await ed.page.keyboard.press('Enter');
			await chat.waitForFunction(() => {
				const a = document.getElementById('approval');
				return !a.hidden && a.querySelector('#approval-message').textContent === 'Reika wants to run the 3-line command shown in the editor.';
			}, { timeout: hangGuardMs });
			await ed.waitFor('the whole command in an editor beside the chat', () =>
				[...document.querySelectorAll('.editor-group-container')].some((g) => {
					const active = g.querySelector('.tab.active')?.getAttribute('aria-label') ?? '';
					const lines = (g.querySelector('.monaco-editor .view-lines')?.textContent ?? '').replace(/\u00a0/g, ' ');
					return active.startsWith('command.sh') && /set -e/.test(lines) && /grep -c quick big\.txt/.test(lines) && /echo checks passed/.test(lines);
				}),
			);
			await ed.shot('command-approval');
			// Answered from the editor's title bar this time: VS Code shows
			// editor actions on the active group only, so into the editor first.
			const commandEditor = await ed.page.evaluateHandle(() =>
				[...document.querySelectorAll('.editor-group-container')]
					.find((g) => (g.querySelector('.tab.active')?.getAttribute('aria-label') ?? '').startsWith('command.sh'))
					?.querySelector('.monaco-editor .view-lines'),
			);
			await commandEditor.asElement().click();
			await ed.waitFor('Allow for This Session on the command editor', () =>
				[...document.querySelectorAll('.editor-group-container.active .editor-actions .action-label')].some((a) => (a.getAttribute('aria-label') || '').startsWith('Allow for This Session')),
			);
			const clicked = await ed.page.evaluate(() => {
				for (const g of document.querySelectorAll('.editor-group-container')) {
					if (!(g.querySelector('.tab.active')?.getAttribute('aria-label') ?? '').startsWith('command.sh')) {
						continue;
					}
					const b = [...g.querySelectorAll('.editor-actions .action-label')].find((a) => (a.getAttribute('aria-label') || '').startsWith('Allow for This Session'));
					b?.click();
					return b !== undefined;
				}
				return false;
			});
			assert.ok(clicked, 'an Allow for This Session button on the command editor');
			await chat.waitForFunction((n) => document.getElementById('progress').hidden && (/The checks passed\./.test(document.getElementById('log').textContent) || document.querySelectorAll('#log .block.shed').length > n), { timeout: hangGuardMs }, sheds);
			assert.equal(await chat.evaluate(() => document.querySelectorAll('#log .block.shed').length), sheds, `the second turn reached the shed point (retune big.txt or the window): ${await ed.statusText()}`);
			assert.match(await chat.evaluate(() => document.getElementById('log').textContent), /The checks passed\./);
			const chats = (await ed.tabs()).filter(isChatTab);
			assert.equal(chats.length, 1, `one chat panel: ${JSON.stringify(await ed.tabs())}`);
			assert.ok(!(await ed.tabs()).some((l) => l.startsWith('command.sh')), 'the command editor closed');
		});

		await t.test('a selection gets the lightbulb and "Ask Reika About the Selection" in the context menu', async () => {
			await ed.open('main.go');
			// Line 6, selected (VS Code shows the lightbulb on a line of code).
			await ed.keys('Control', 'KeyG');
			await ed.page.waitForSelector('.quick-input-widget input', { visible: true, timeout: hangGuardMs });
			await ed.page.keyboard.type('6');
			await ed.page.keyboard.press('Enter');
			await ed.keys('End');
			await ed.keys('Shift', 'Home');
			await ed.waitFor('the lightbulb', () =>
				[...document.querySelectorAll('.editor-group-container.active .monaco-editor [class*="lightBulb"], .editor-group-container.active .monaco-editor [class*="lightbulb"]')].some((e) => e.offsetParent !== null),
			);
			// Right click on the selected line, so the selection stays.
			const line = await ed.page.evaluateHandle(() =>
				[...document.querySelectorAll('.editor-group-container.active .monaco-editor .view-line')].find((l) => /hello/.test(l.textContent)),
			);
			await line.asElement().click({ button: 'right' });
			// The context menu lives in a shadow root.
			const items = await (
				await ed.waitFor('the editor context menu', () => {
					const out = [];
					for (const host of document.querySelectorAll('*')) {
						if (host.shadowRoot !== null) {
							out.push(...[...host.shadowRoot.querySelectorAll('.monaco-menu .action-label')].map((e) => e.textContent.trim()));
						}
					}
					return out.length > 0 ? out : undefined;
				})
			).jsonValue();
			assert.ok(items.includes('Ask Reika About the Selection'), JSON.stringify(items));
			await ed.shot('context-menu');
			await ed.keys('Escape');
		});

		await t.test('Ctrl+. offers Compact context, which folds and brings the context down', async () => {
			const before = await percent();
			await ed.open('main.go');
			await ed.keys('Control', 'Period');
			await ed.waitFor('Compact context in the Ctrl+. menu', () =>
				[...document.querySelectorAll('.action-widget .monaco-list-row')].some((r) => r.textContent.includes('Reika: Compact context')),
			);
			await ed.shot('quick-fix-menu');
			await ed.page.evaluate(() => {
				const row = [...document.querySelectorAll('.action-widget .monaco-list-row')].find((r) => r.textContent.includes('Reika: Compact context'));
				row.click();
			});
			// The fold shows in the chat, which is in view: no toast over it.
			const chat = await ed.chat();
			await chat.waitForFunction(() => /^⇊ Folded \d+ rounds? into a [0-9.]+k?-token recap$/.test(document.querySelector('#log .block.fold')?.textContent ?? ''), { timeout: hangGuardMs });
			assert.deepEqual((await ed.toasts()).filter((m) => /Folded/.test(m)), [], 'the fold message is in the chat, not a toast');
			assert.equal(await chat.evaluate(() => [...document.querySelectorAll('#log .block')].filter((b) => /Folded \d+ rounds?/.test(b.textContent)).length), 1, 'the fold said once');
			assert.ok(await chat.$('#log .block.note'), 'the note before the fold is a block of its own');
			await until('the status to drop below 80%', async () => (await percent()) < 80);
			assert.ok((await percent()) < before);
			assert.ok(!(await ed.statusColouredAs('warning')), 'no warning colour below 80%');
			await ed.keys('Control', 'Alt', 'KeyR');
			await ed.shot('compacted');
		});

		await t.test('kill -9 of the server mid-turn: the partial reply stays, the chat says the server stopped, the restart resumes the session', async () => {
			const chat = await ed.chat();
			await chat.focus('#input');
			await ed.page.keyboard.type('Tell me a long story.');
			await ed.page.keyboard.press('Enter');
			// The engine streams the start of the reply, then holds.
			await chat.waitForFunction(() => /Once upon a time/.test(document.querySelector('#log .block.assistant:last-child')?.textContent ?? ''), { timeout: hangGuardMs });
			const partial = await chat.evaluate(() => document.querySelector('#log .block.assistant:last-child .md').textContent);
			const argv = [bin, 'serve', '--stdio'];
			const [pid] = await until('the server process', () => {
				const p = pidsOf(argv);
				return p.length === 1 ? p : undefined;
			});
			process.kill(pid, 'SIGKILL');
			const [next] = await until('a new server process', () => {
				const p = pidsOf(argv).filter((x) => x !== pid);
				return p.length === 1 ? p : undefined;
			});
			assert.notEqual(next, pid);
			await ed.waitFor('the chip after the restart', (src) => {
				const e = document.querySelector('[id$="reika.statusItem"]');
				return e !== null && new RegExp(src).test(e.textContent.trim());
			}, chip.source);
			await chat.waitForFunction(() => /The server restarted; session \S+ continues\./.test(document.getElementById('log').textContent), { timeout: hangGuardMs });
			const after = await chat.evaluate(() => ({
				log: document.getElementById('log').textContent,
				cut: document.querySelector('#log .block.assistant .cut')?.textContent ?? '',
				stopped: [...document.querySelectorAll('#log .block.error')].map((b) => b.textContent).join('|'),
				progress: document.getElementById('progress').hidden,
			}));
			assert.ok(after.log.includes(partial), 'the partial reply is still there');
			assert.match(after.cut, /cut off: the server stopped/);
			assert.match(after.stopped, /The server stopped during the turn/);
			assert.ok(after.progress, 'the turn no longer shows as running');
			assert.match(after.log, /main\.go now prints hello from Reika/);
			assert.match(after.log, /The checks passed/);
			assert.equal(await chat.evaluate(() => document.querySelectorAll('#log .block.session').length), 0, 'the same session, not a new one');
			assert.deepEqual((await ed.toasts()).filter((m) => /stopped|restart/i.test(m)), [], 'no toast over the chat');
			await ed.shot('server-restarted');
		});

		await t.test('a window reload keeps the chat and its conversation (reika.transcript), a cancelled turn\'s "Cancelled." included', async () => {
			const before = await ed.chat();
			await before.focus('#input');
			await ed.page.keyboard.type('Tell me another long story.');
			await ed.page.keyboard.press('Enter');
			await before.waitForFunction(() => /Once upon a time/.test(document.querySelector('#log .block.assistant:last-child')?.textContent ?? '') && document.getElementById('send').textContent === 'Stop', { timeout: hangGuardMs });
			await before.click('#send');
			await before.waitForFunction(() => document.querySelector('#log .block:last-child')?.textContent === 'Cancelled.' && document.getElementById('progress').hidden, { timeout: hangGuardMs });
			await ed.command('Developer: Reload Window');
			await ed.page.waitForNavigation({ waitUntil: 'domcontentloaded', timeout: hangGuardMs }).catch(() => undefined);
			await ed.page.waitForSelector('.monaco-workbench .statusbar', { timeout: hangGuardMs });
			const chat = await ed.chat();
			await chat.waitForFunction(() => {
				const l = document.getElementById('log');
				return /main\.go now prints hello from Reika/.test(l.textContent) && /The checks passed/.test(l.textContent) && l.querySelector('.block.fold') !== null;
			}, { timeout: hangGuardMs });
			assert.equal(await chat.evaluate(() => document.querySelector('#log .block:last-child')?.textContent), 'Cancelled.', 'the cancelled turn still says so');
			assert.equal((await ed.tabs()).filter(isChatTab).length, 1, 'the chat panel came back, once');
			await ed.shot('after-reload');
		});

		await t.test('showing the chat after a reload that left its tab behind another shows that tab: no third editor group', async () => {
			const chat = await ed.chat();
			await chat.focus('#input');
			await ed.keys('Control', 'KeyP');
			await ed.page.waitForSelector('.quick-input-widget input', { visible: true, timeout: hangGuardMs });
			await ed.page.keyboard.type('big.txt');
			await ed.waitFor('Quick Open to offer big.txt', () => (document.querySelector('.quick-input-list .monaco-list-row.focused')?.getAttribute('aria-label') || '').startsWith('big.txt'));
			await ed.page.keyboard.press('Enter');
			const chatBehind = () =>
				[...document.querySelectorAll('.editor-group-container')].some((g) => {
					const tabs = [...g.querySelectorAll('.tab')];
					return tabs.some((t) => /^Reika(,|$)/.test(t.getAttribute('aria-label') || '') && !t.classList.contains('active')) && (g.querySelector('.tab.active')?.getAttribute('aria-label') || '').startsWith('big.txt');
				});
			await ed.waitFor('big.txt over the chat in its group', chatBehind);
			await ed.command('Developer: Reload Window');
			await ed.page.waitForNavigation({ waitUntil: 'domcontentloaded', timeout: hangGuardMs }).catch(() => undefined);
			await ed.page.waitForSelector('.monaco-workbench .statusbar', { timeout: hangGuardMs });
			await ed.waitFor('the chat tab restored behind big.txt', chatBehind);
			const groups = () => ed.page.$$eval('.editor-group-container', (els) => els.length);
			const before = await groups();
			// The editors come back before the extensions: a key pressed
			// before the extension's contributions are in is lost (the test
			// hung here on a loaded machine). Its status item says it is in.
			await ed.waitFor('the extension active again (its status item)', () =>
				[...document.querySelectorAll('.statusbar-item')].some((e) => /Reika/.test(e.textContent || '')));
			// Reika: Ask (Ctrl+Alt+R) shows the chat as Show Chat does. The
			// key is pressed again if nothing happened: one pressed while the
			// restored workbench moves focus is dropped (see palette).
			const chatInFront = () => [...document.querySelectorAll('.editor-group-container .tab.active')].some((t) => /^Reika(,|$)/.test(t.getAttribute('aria-label') || ''));
			for (let attempt = 1; attempt < 3; attempt++) {
				await ed.keys('Control', 'Alt', 'KeyR');
				if (await ed.page.waitForFunction(chatInFront, { timeout: 10000, polling: 100 }).then(() => true, () => false)) {
					break;
				}
			}
			await ed.waitFor('the chat tab in front', chatInFront);
			const shown = await ed.chat();
			await shown.waitForFunction(() => /The checks passed/.test(document.getElementById('log').textContent), { timeout: hangGuardMs });
			assert.equal(await groups(), before, 'no new editor group');
			assert.equal((await ed.tabs()).filter(isChatTab).length, 1, 'one chat tab');
			await ed.shot('show-chat-after-reload');
		});

		await t.test('the settings editor shows reika.serverPath in the User tab', async () => {
			await ed.command('Preferences: Open User Settings');
			await ed.page.waitForSelector('.settings-editor .suggest-input-container textarea, .settings-editor .search-container textarea', { timeout: hangGuardMs });
			await ed.page.keyboard.type('reika.serverPath');
			await ed.waitFor('the Server Path setting', () =>
				[...document.querySelectorAll('.settings-editor .setting-item-contents .setting-item-title')].some((e) => /Server Path/.test(e.textContent)),
			);
			const tab = await ed.page.$eval('.settings-editor .settings-tabs-widget .action-label.checked', (e) => e.textContent.trim()).catch(() => '');
			assert.match(tab, /^User/, 'the User tab');
			const noneFound = await ed.page.$$eval('.settings-editor .no-results-message', (els) =>
				els.some((e) => e.offsetParent !== null && /No Settings Found/.test(e.textContent)),
			);
			assert.ok(!noneFound, 'not "No Settings Found"');
			await ed.shot('settings-user-tab');
			await ed.keys('Control', 'KeyW');
		});

		await t.test('the engine going down: the red chip and the error in the chat, no toast over it', async () => {
			engine.kill();
			await new Promise((resolve) => (engine.exitCode !== null ? resolve() : engine.once('exit', resolve)));
			await ed.keys('Control', 'Alt', 'KeyR');
			const chat = await ed.chat();
			await chat.waitForFunction(() => document.activeElement?.id === 'input', { timeout: hangGuardMs });
			await ed.page.keyboard.type('Are you there?');
			await ed.page.keyboard.press('Enter');
			await chat.waitForFunction(() => document.querySelector('#log .block.error:last-child') !== null && document.getElementById('progress').hidden, { timeout: hangGuardMs });
			await ed.waitFor('the red chip', () => {
				const item = document.querySelector('[id$="reika.statusItem"]');
				const probe = document.createElement('div');
				probe.style.backgroundColor = 'var(--vscode-statusBarItem-errorBackground)';
				document.querySelector('.monaco-workbench').appendChild(probe);
				const want = getComputedStyle(probe).backgroundColor;
				probe.remove();
				return item !== null && getComputedStyle(item).backgroundColor === want;
			});
			assert.match(await chat.evaluate(() => document.querySelector('#log .block.error:last-child').textContent), /unreachable|connection refused/i);
			assert.equal(await chat.evaluate(() => [...document.querySelectorAll('#log .block.error')].filter((b) => /unreachable|connection refused/i.test(b.textContent)).length), 1, 'the error said once');
			assert.deepEqual((await ed.toasts()).filter((m) => /unreachable|connection refused/i.test(m)), [], 'the chat is in view: no toast over its input');
			await ed.shot('engine-down');
		});

		// The server probes the engine until it answers (agent/discovery.go);
		// a probe that fails keeps the chip red. Something on the engine's
		// port that drops every connection counts the probes.
		await t.test('the engine still down: the chip stays red through the server\'s probes', async () => {
			const port = Number(new URL(engineURL).port);
			let probes = 0;
			const dropper = net.createServer((sock) => {
				probes++;
				sock.destroy();
			});
			await new Promise((resolve, reject) => dropper.once('error', reject).listen(port, '127.0.0.1', resolve));
			try {
				let cleared = '';
				await until('four probes of the engine', async () => {
					if (!(await ed.statusColouredAs('error'))) {
						cleared ||= await ed.statusText();
					}
					return probes >= 4;
				});
				assert.equal(cleared, '', `the chip left the error colour while the engine was down (${probes} probes)`);
				await ed.shot('engine-still-down');
			} finally {
				await new Promise((resolve) => dropper.close(resolve));
			}
		});

		// The server finds the engine again by itself (the agent retries
		// discovery after a turn found it unreachable) and publishes its status.
		await t.test('the engine back: the chip leaves the error colour without another ask', async () => {
			const port = new URL(engineURL).port;
			const again = spawn(engineBin, ['-addr', `127.0.0.1:${port}`, '-ctx', String(engineWindow), '-script', path.join(__dirname, 'fakeengine-editor.json'), '-stdin'], {
				env,
				stdio: ['pipe', 'pipe', 'pipe'],
			});
			children.push(again);
			await firstMatch(again, again.stdout, /^http:\/\//, 'the fake engine back on its port');
			await until('the chip to leave the error colour', async () => !(await ed.statusColouredAs('error')) && chip.test(await ed.statusText()), 250);
			await ed.shot('engine-back');
		});

		await t.test('the sidebar view: the Reika container in the activity bar shows the same chat, and an ask from it shows in both', async () => {
			const tab = await ed.chat();
			const before = await ed.chats();
			await ed.page.click('.activitybar .action-item a[aria-label^="Reika"]');
			const sidebar = await ed.shotOnHang('the sidebar chat', () => until('the sidebar chat', async () => (await ed.chats()).find((f) => !before.includes(f))));
			const html = (f) => f.evaluate(() => document.getElementById('log').innerHTML);
			await sidebar.waitForFunction((want) => document.getElementById('log').innerHTML === want, { timeout: hangGuardMs }, await html(tab));
			const look = await sidebar.evaluate(() => {
				const probe = document.createElement('span');
				probe.style.color = 'var(--vscode-foreground)';
				document.body.appendChild(probe);
				const themed = getComputedStyle(probe).color;
				probe.remove();
				return { csp: document.querySelector('meta[http-equiv="Content-Security-Policy"]')?.getAttribute('content') ?? '', themed, body: getComputedStyle(document.body).color };
			});
			assert.match(look.csp, /default-src 'none'/);
			assert.doesNotMatch(look.csp, /unsafe-inline|unsafe-eval/);
			assert.ok(look.themed !== '' && look.body === look.themed, `the sidebar follows the theme: ${JSON.stringify(look)}`);
			await sidebar.focus('#input');
			await ed.page.keyboard.type('Hello from the sidebar.');
			await ed.page.keyboard.press('Enter');
			for (const f of [sidebar, tab]) {
				await ed.shotOnHang('the ask from the sidebar', () =>
					f.waitForFunction(() => {
						const users = [...document.querySelectorAll('#log .block.user')];
						const last = document.querySelector('#log > :last-child');
						return /Hello from the sidebar\./.test(users.pop()?.textContent ?? '') && last !== null && !last.classList.contains('user') && document.getElementById('progress').hidden;
					}, { timeout: hangGuardMs }),
				);
			}
			const last = await sidebar.evaluate(() => document.querySelector('#log > :last-child').className + ': ' + document.querySelector('#log > :last-child').textContent);
			assert.match(last, /^block assistant: /, 'the reply, in the sidebar');
			assert.equal(await html(sidebar), await html(tab), 'one conversation, rendered once, in both');
			await ed.shot('sidebar-chat');
		});

		await t.test('slash commands complete from reika.commands; /mode and the mode button switch the mode, which the chip and the chat show', async () => {
			const [chat] = await ed.chats();
			const items = () => chat.evaluate(() => (document.getElementById('slash').hidden ? [] : [...document.querySelectorAll('#slash .item')].map((i) => i.dataset.name)));
			await chat.focus('#input');
			await ed.page.keyboard.type('/');
			await until('the slash commands', async () => (await items()).length > 0);
			assert.deepEqual((await items()).slice(0, 6), ['compact', 'new', 'save', 'mode', 'skills', 'help'], 'the built-in commands, in the server\'s order');
			await ed.page.keyboard.type('mo');
			await until('only /mode', async () => (await items()).join() === 'mode');
			await ed.shot('slash-completion');
			await ed.page.keyboard.press('Tab');
			assert.equal(await chat.evaluate(() => document.getElementById('input').value), '/mode ');
			assert.deepEqual(await items(), [], 'the list closes once the name is complete');
			await ed.page.keyboard.type('plan');
			await ed.page.keyboard.press('Enter');
			await until('the chip in plan mode', async () => /Reika plan · ctx /.test(await ed.statusText()));
			await chat.waitForFunction(() => document.getElementById('mode').textContent === 'plan' && /Mode plan/.test(document.querySelector('#log > :last-child')?.textContent ?? ''), { timeout: hangGuardMs });
			await ed.shot('plan-mode');
			// Back to code from the mode button's picker.
			await chat.click('#mode');
			await ed.page.waitForSelector('.quick-input-widget input', { visible: true, timeout: hangGuardMs });
			await ed.page.keyboard.type('code');
			await ed.waitFor('the picker to offer code', () => /^code/.test(document.querySelector('.quick-input-list .monaco-list-row.focused')?.getAttribute('aria-label') ?? ''));
			await ed.page.keyboard.press('Enter');
			await until('the chip back in code mode', async () => chip.test(await ed.statusText()));
			await chat.waitForFunction(() => document.getElementById('mode').textContent === 'code', { timeout: hangGuardMs });
			// Up recalls the prompts sent from this view, Down goes back to
			// what was being typed.
			await chat.focus('#input');
			await ed.page.keyboard.type('draft');
			await ed.keys('Home');
			await ed.page.keyboard.press('ArrowUp');
			assert.equal(await chat.evaluate(() => document.getElementById('input').value), '/mode plan');
			await ed.page.keyboard.press('ArrowUp');
			const earlier = await chat.evaluate(() => document.getElementById('input').value);
			assert.ok(earlier !== '/mode plan' && earlier !== 'draft' && earlier !== '', `an earlier prompt: ${earlier}`);
			await ed.keys('End');
			await ed.page.keyboard.press('ArrowDown');
			await ed.page.keyboard.press('ArrowDown');
			assert.equal(await chat.evaluate(() => document.getElementById('input').value), 'draft');
			await chat.evaluate(() => {
				const i = document.getElementById('input');
				i.value = '';
				i.dispatchEvent(new Event('input'));
			});
		});

		await t.test('session history: the History button lists the sessions; one opens read-only, and an older one resumes in the chat', async () => {
			const [chat] = await ed.chats();
			const pickSession = async (which) => {
				await chat.click('[data-command="sessions"]');
				await ed.page.waitForSelector('.quick-input-widget input', { visible: true, timeout: hangGuardMs });
				const rows = await (await ed.waitFor('the session list', () => {
					const r = [...document.querySelectorAll('.quick-input-list .monaco-list-row')].map((e) => e.getAttribute('aria-label') || '');
					return r.length > 0 ? r : undefined;
				})).jsonValue();
				await ed.page.keyboard.type(which);
				await ed.waitFor(`the session ${which}`, (w) => (document.querySelector('.quick-input-list .monaco-list-row.focused')?.getAttribute('aria-label') ?? '').includes(w), which);
				await ed.page.keyboard.press('Enter');
				return rows;
			};
			const action = async (label) => {
				await ed.waitFor(`the action ${label}`, (l) => [...document.querySelectorAll('.quick-input-list .monaco-list-row')].some((e) => (e.getAttribute('aria-label') || '').includes(l)), label);
				await ed.page.keyboard.type(label);
				await ed.page.keyboard.press('Enter');
			};
			// A second session, so that there is an older one to go back to.
			await chat.click('[data-command="newSession"]');
			await chat.waitForFunction(() => /^New session /.test(document.querySelector('#log').textContent), { timeout: hangGuardMs });
			await chat.focus('#input');
			await ed.page.keyboard.type('A second session.');
			await ed.page.keyboard.press('Enter');
			await chat.waitForFunction(() => document.querySelector('#log > :last-child')?.classList.contains('assistant') && document.getElementById('progress').hidden, { timeout: hangGuardMs });
			const rows = await pickSession('Read big.txt');
			assert.ok(rows.length >= 2 && /A second session/.test(rows[0]) && rows.some((r) => /Read big\.txt, then change main\.go/.test(r)), `the sessions, newest first, titled by their first prompt: ${JSON.stringify(rows)}`);
			await action('Open read-only');
			await ed.waitFor('the session as Markdown', () => {
				const text = (document.querySelector('.editor-group-container.active .monaco-editor .view-lines')?.textContent ?? '').replace(/\u00a0/g, ' ');
				return /# Read big\.txt, then change main\.go/.test(text) && /## You/.test(text);
			});
			await ed.shot('session-read-only');
			await ed.keys('Control', 'KeyW');
			await pickSession('Read big.txt');
			await action('Resume in the chat');
			await chat.waitForFunction(() => {
				const l = document.getElementById('log').textContent;
				return /main\.go now prints hello from Reika/.test(l) && !/A second session/.test(l);
			}, { timeout: hangGuardMs });
			await ed.shot('session-resumed');
		});

		await t.test("@ completes a file the ask attaches; a reply's code block has Copy, Insert and Apply", async () => {
			const [chat] = await ed.chats();
			await codeBlockSteps(ed, chat, hangGuardMs);
		});

		await t.test("the server's log lines are not all errors", async () => {
			const logs = path.join(userData, 'logs');
			const file = await until('the Reika output log', () => findFile(logs, (f) => /\bReika\.log$/.test(f) && !/Extension/.test(f)));
			const text = fs.readFileSync(file, 'utf8');
			assert.match(text, /\[info\] lsp: initialize from/, text.slice(0, 2000));
			assert.doesNotMatch(text, /\[error\] lsp: initialize from/);
		});
	} finally {
		process.off('SIGINT', stopAll);
		process.off('SIGTERM', stopAll);
		await browser?.close().catch(() => undefined);
		for (const c of children.reverse()) {
			try {
				if (c.spawnargs.includes('--bind-addr')) {
					process.kill(-c.pid, 'SIGTERM'); // code-server and what it started
				} else {
					c.kill();
				}
			} catch {
				// already gone
			}
		}
		process.stderr.write(`editor test: screenshots in ${artifactsDir}:\n${ed.shots.map((s) => `  ${path.basename(s)}`).join('\n')}\n`);
		if (process.env.REIKA_EDITOR_KEEP === '1') {
			process.stderr.write(`editor test: kept ${scratch} (REIKA_EDITOR_KEEP=1)\n`);
		} else {
			fs.rmSync(scratch, { recursive: true, force: true });
		}
	}
});

/** Whether the approval's diff is the active editor of its group (runs
 * in the page). */
function diffInFront() {
	return [...document.querySelectorAll('.editor-group-container .tab.active')].some((t) => (t.getAttribute('aria-label') || '').startsWith('main.go: current ↔ proposed'));
}

/** Whether a tab's label is the chat panel's ("Reika", with ", Editor
 * Group N" when there are several groups). */
function isChatTab(label) {
	return /^Reika(,|$)/.test(label);
}

/** The first file under dir whose path passes want. */
function findFile(dir, want) {
	if (!fs.existsSync(dir)) {
		return undefined;
	}
	for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
		const p = path.join(dir, e.name);
		if (e.isDirectory()) {
			const f = findFile(p, want);
			if (f !== undefined) {
				return f;
			}
		} else if (want(p)) {
			return p;
		}
	}
	return undefined;
}
