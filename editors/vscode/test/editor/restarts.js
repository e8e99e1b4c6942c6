// The real-editor test's steps where something stops: kill -9 of the
// server mid-turn, window reloads, the settings editor, and the engine
// going down and coming back.
'use strict';

const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const { engineWindow, firstMatch, hangGuardMs, isChatTab, pidsOf, until } = require('./harness');

/** s: the editor session (harness.js startEditor); t: the test. */
async function restartSteps(t, s) {
	const { ed, chip, bin, engine, engineBin, engineURL, env, children, ws } = s;
	/** The engine on its port again (the first one killed). */
	const startEngine = async () => {
		const port = new URL(engineURL).port;
		const e = spawn(engineBin, ['-addr', `127.0.0.1:${port}`, '-ctx', String(engineWindow), '-script', path.join(__dirname, 'fakeengine-editor.json'), '-stdin'], {
			env,
			stdio: ['pipe', 'pipe', 'pipe'],
		});
		children.push(e);
		await firstMatch(e, e.stdout, /^http:\/\//, 'the fake engine back on its port');
		return e;
	};
	/** The reply the killed server had streamed. */
	let killedPartial = '';
	await t.test('kill -9 of the server mid-turn: the partial reply stays, the chat says the server stopped, the restart resumes the session', async () => {
		const chat = await ed.chat();
		await chat.focus('#input');
		await ed.page.keyboard.type('Tell me a long story.');
		await ed.page.keyboard.press('Enter');
		// The engine streams the start of the reply, then holds.
		await chat.waitForFunction(() => /Once upon a time/.test(document.querySelector('#log .block.assistant:last-child')?.textContent ?? ''), { timeout: hangGuardMs });
		const partial = await chat.evaluate(() => document.querySelector('#log .block.assistant:last-child .md').textContent);
		killedPartial = partial;
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

	await t.test('a window reload keeps the chat and its conversation (reika.transcript), a cancelled turn\'s reply and "Cancelled." included', async () => {
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
		// The reply the cancel cut off is there too, before "Cancelled."
		// (the server logs it with the cancel).
		assert.match(await chat.evaluate(() => document.querySelector('#log .block:nth-last-child(2)')?.textContent ?? ''), /^Once upon a time/, 'the cancelled reply is kept');
		assert.equal((await ed.tabs()).filter(isChatTab).length, 1, 'the chat panel came back, once');
		// The turn the killed server cut off: its partial reply, marked cut
		// off, and the line saying so, between its prompt and the next
		// (the server's log has the prompt only).
		const blocks = await chat.evaluate(() => [...document.querySelectorAll('#log .block')].map((b) => b.textContent));
		const killedAsk = blocks.findIndex((b) => /Tell me a long story\./.test(b));
		const nextAsk = blocks.findIndex((b) => /Tell me another long story\./.test(b));
		const cut = blocks.findIndex((b) => b.includes(killedPartial) && /cut off: the server stopped/.test(b));
		const said = blocks.findIndex((b) => /The server stopped during the turn/.test(b));
		assert.ok(killedPartial !== '' && killedAsk >= 0 && killedAsk < cut && cut < said && said < nextAsk, `the cut-off turn after the reload, in its place: ${JSON.stringify(blocks.slice(Math.max(0, killedAsk)))}`);
		await ed.shot('after-reload');
	});

	await t.test('showing the chat after a reload that left its tab behind another shows that tab: no third editor group', async () => {
		const chat = await ed.chat();
		await chat.focus('#input');
		await ed.quickOpen('big.txt');
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

	let current = engine;
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
		current = await startEngine();
		await until('the chip to leave the error colour', async () => !(await ed.statusColouredAs('error')) && chip.test(await ed.statusText()), 250);
		await ed.shot('engine-back');
	});

	await t.test('an error toast from a failed turn leaves the screen when a later turn succeeds with the chat out of view', async () => {
		// A turn that writes a file, up to its approval; then big.txt over
		// the chat in its group, so the chat is out of view.
		const writeTurn = async (prompt, file) => {
			await ed.keys('Control', 'Alt', 'KeyR');
			const chat = await ed.chat();
			await chat.waitForFunction(() => document.activeElement?.id === 'input', { timeout: hangGuardMs });
			await ed.typeInChat(chat, prompt);
			await ed.page.keyboard.press('Enter');
			await chat.waitForFunction((f) => !document.getElementById('approval').hidden && document.getElementById('approval').textContent.includes(f), { timeout: hangGuardMs }, file);
			// Into the chat's group (the approval's diff has the focus), then
			// big.txt there.
			const chatTab = await ed.page.evaluateHandle(() => [...document.querySelectorAll('.tabs-container .tab')].find((e) => /^Reika(,|$)/.test(e.getAttribute('aria-label') || '')));
			await chatTab.asElement().click();
			await ed.waitFor("the chat's group active", () => /^Reika(,|$)/.test(document.querySelector('.editor-group-container.active .tab.active')?.getAttribute('aria-label') ?? ''));
			await ed.quickOpen('big.txt');
			await ed.waitFor('big.txt over the chat', chatCovered);
		};
		// Allow, from the palette (the chat is out of view).
		const allow = async () => {
			await ed.palette();
			await ed.page.keyboard.type('Reika: Allow');
			await ed.waitFor('the palette to offer Reika: Allow', () => /^Reika: Allow(,|$)/.test(document.querySelector('.quick-input-list .monaco-list-row.focused')?.getAttribute('aria-label') ?? ''));
			await ed.page.keyboard.press('Enter');
		};
		const failed = (m) => /unreachable|connection refused/i.test(m);
		await writeTurn('Write note one.', 'notes/one.txt');
		current.kill();
		await new Promise((resolve) => (current.exitCode !== null ? resolve() : current.once('exit', resolve)));
		await allow();
		// The round after the write finds the engine gone: a toast, since
		// the chat is out of view.
		await until('the error toast', async () => (await ed.toasts()).some(failed));
		await ed.shot('error-toast');
		current = await startEngine();
		await until('the chip to leave the error colour', async () => !(await ed.statusColouredAs('error')) && chip.test(await ed.statusText()), 250);
		await writeTurn('Write note two.', 'notes/two.txt');
		assert.ok((await ed.toasts()).some(failed), 'the error toast is still up while the next turn runs');
		await allow();
		await until('the turn to end (its toast, the chat being out of view)', async () => (await ed.toasts()).some((m) => /Reika finished the turn/.test(m)));
		assert.deepEqual((await ed.toasts()).filter(failed), [], 'the error toast left when the turn succeeded');
		assert.equal(fs.readFileSync(path.join(ws, 'notes', 'two.txt'), 'utf8'), 'two\n');
		await ed.shot('error-toast-gone');
		// The chat back in front for the steps after this one.
		await ed.keys('Control', 'Alt', 'KeyR');
		const chat = await ed.chat();
		await chat.waitForFunction(() => /The second note is written\./.test(document.getElementById('log').textContent), { timeout: hangGuardMs });
	});
}

/** Whether a group shows big.txt over the chat's tab (runs in the page). */
function chatCovered() {
	return [...document.querySelectorAll('.editor-group-container')].some((g) => {
		const tabs = [...g.querySelectorAll('.tab')];
		return tabs.some((t) => /^Reika(,|$)/.test(t.getAttribute('aria-label') || '') && !t.classList.contains('active')) && (g.querySelector('.tab.active')?.getAttribute('aria-label') || '').startsWith('big.txt');
	});
}

module.exports = { restartSteps };
