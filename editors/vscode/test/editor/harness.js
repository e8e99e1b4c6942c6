// The real-editor test's harness (editor.test.js drives the steps):
// code-server and Chromium started for one editor session, the Editor
// that acts on the page as a user does, and the waits. Nothing here
// waits for time to pass: every wait is for something to show, under a
// hang guard.
'use strict';

const assert = require('node:assert/strict');
const { execFile, spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const readline = require('node:readline');

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

	/** Types text into the chat's input, which has the focus, and checks
	 * it arrived whole: on a loaded machine the workbench has dropped keys
	 * typed into a webview (CI sent "Write one." for "Write note one."). A
	 * short input is typed again once. */
	async typeInChat(chat, text) {
		for (let attempt = 0; ; attempt++) {
			await this.page.keyboard.type(text);
			const got = await chat.evaluate(() => document.getElementById('input').value);
			if (got === text || attempt > 0) {
				assert.equal(got, text, 'what reached the chat input');
				return;
			}
			process.stderr.write(`editor test: the chat input got ${JSON.stringify(got)} for ${JSON.stringify(text)}; typing it again\n`);
			await chat.evaluate(() => {
				const input = document.getElementById('input');
				input.value = '';
				input.dispatchEvent(new Event('input'));
			});
		}
	}

	/** Picks a workspace file in Quick Open, in the active editor group. */
	async quickOpen(name) {
		await this.keys('Control', 'KeyP');
		await this.page.waitForSelector('.quick-input-widget input', { visible: true, timeout: hangGuardMs });
		// Opened from a webview (the chat), the widget may show while the
		// focus stays in the webview, which then takes the keys (CI: Quick
		// Open never offered big.txt): give it the focus.
		await this.page.focus('.quick-input-widget input');
		await this.waitFor('Quick Open to have the focus', () => document.activeElement?.closest('.quick-input-widget') != null);
		await this.page.keyboard.type(name);
		await this.waitFor(`Quick Open to offer ${name}`, (n) => {
			const row = document.querySelector('.quick-input-list .monaco-list-row.focused');
			return row !== null && (row.getAttribute('aria-label') || '').startsWith(n);
		}, name);
		await this.page.keyboard.press('Enter');
	}

	/** Opens a workspace file with Quick Open. */
	async open(name) {
		await this.quickOpen(name);
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

/**
 * Starts the editor session: builds the server and the fake engine,
 * packages and installs the extension, starts the engine, code-server and
 * Chromium, and opens the workspace. Returns what the steps use; stop()
 * ends what it started (also on SIGINT and SIGTERM).
 */
async function startEditor() {
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
	const s = { ed, children, scratch, stopAll };
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
		// The MCP server a workspace's .mcp.json names (views.js).
		const mcpBin = path.join(scratch, 'mcptestserver');
		await run('go', ['build', '-o', mcpBin, './agent/mcp/mcptest/cmd/mcptestserver'], { cwd: repoRoot });
		const vsix = path.join(scratch, 'reika.vsix');
		await run('npx', ['vsce', 'package', '--skip-license', '--allow-missing-repository', '--no-rewrite-relative-links', '--out', vsix], { cwd: pkgDir });

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
		Object.assign(s, { browser, bin, engine, engineBin, mcpBin, engineURL, env, ws, mainGo, home, userData, chip, percent });
		return s;
	} catch (e) {
		s.browser = browser;
		await stopEditor(s);
		throw e;
	}
}

/** Ends what startEditor started and says where the screenshots are. */
async function stopEditor(s) {
	const { ed, children, scratch, stopAll, browser } = s;
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

module.exports = {
	artifactsDir,
	diffInFront,
	engineWindow,
	findFile,
	firstMatch,
	hangGuardMs,
	isChatTab,
	pidsOf,
	run,
	startEditor,
	stopEditor,
	strict,
	unavailable,
	until,
};
