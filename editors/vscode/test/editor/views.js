// The real-editor test's steps on the chat's views and input: the sidebar,
// slash commands and modes, session history, @file and code blocks, and
// the server's log.
'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { codeBlockSteps } = require('./codeblocks');
const { findFile, hangGuardMs, pidsOf, until } = require('./harness');

/** s: the editor session (harness.js startEditor); t: the test. */
async function viewSteps(t, s) {
	const { ed, chip, userData, ws, bin, home, mcpBin } = s;
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
		await codeBlockSteps(ed, chat, hangGuardMs, ws);
	});

	await t.test("a workspace's .mcp.json: the server asks in a notification before it starts the servers; Start servers starts them", async () => {
		fs.writeFileSync(path.join(ws, '.mcp.json'), JSON.stringify({ mcpServers: { probe: { command: mcpBin } } }));
		// The chat out of view (the question then comes as a notification):
		// no editors, no sidebar.
		await ed.command('View: Close All Editors');
		if (await ed.page.evaluate(() => document.querySelector('.part.sidebar')?.offsetParent != null)) {
			await ed.command('View: Toggle Primary Side Bar Visibility');
			await ed.waitFor('the sidebar closed', () => document.querySelector('.part.sidebar')?.offsetParent == null);
		}
		// A server that starts reads .mcp.json at its first session.
		const argv = [bin, 'serve', '--stdio'];
		const [pid] = await until('the server process', () => {
			const p = pidsOf(argv);
			return p.length === 1 ? p : undefined;
		});
		await ed.command('Reika: Restart Server');
		await until('a new server process', () => {
			const p = pidsOf(argv).filter((x) => x !== pid);
			return p.length === 1 ? p : undefined;
		});
		await ed.waitFor('the chip after the restart', (src) => new RegExp(src).test(document.querySelector('[id$="reika.statusItem"]')?.textContent.trim() ?? ''), chip.source);
		await ed.command('Reika: New Session');
		const question = await (
			await ed.waitFor('the question about .mcp.json', () => {
				for (const n of document.querySelectorAll('.notification-toast')) {
					const message = n.querySelector('.notification-list-item-message')?.textContent ?? '';
					if (/\.mcp\.json/.test(message)) {
						return { message, buttons: [...n.querySelectorAll('.monaco-button')].map((b) => b.textContent.trim()).filter((b) => b !== '') };
					}
				}
				return undefined;
			})
		).jsonValue();
		assert.match(question.message, /start the MCP servers of this workspace's \.mcp\.json \(probe\)/);
		assert.deepEqual(question.buttons, ['Start servers', 'Not now', 'Never for this workspace']);
		await ed.shot('mcp-trust-question');
		await ed.page.evaluate(() => {
			for (const n of document.querySelectorAll('.notification-toast')) {
				if (/\.mcp\.json/.test(n.textContent)) {
					[...n.querySelectorAll('.monaco-button')].find((b) => b.textContent.trim() === 'Start servers').click();
				}
			}
		});
		// The answer reached the server: it remembers the trust, and the
		// status tooltip lists the server with its tools.
		const trust = await until('the trust file', () => findFile(home, (f) => path.basename(f) === 'mcp-trust.json'));
		assert.ok(fs.readFileSync(trust, 'utf8').includes(JSON.stringify(ws).slice(1, -1)), 'the workspace is trusted');
		await until('the MCP server in the status tooltip', async () => {
			await ed.page.mouse.move(0, 0);
			await ed.page.hover('[id$="reika.statusItem"]');
			return ed.page.waitForFunction(
				() => [...document.querySelectorAll('.monaco-hover, .workbench-hover')].some((h) => /MCP servers:[\s\S]*probe \(workspace\): \d+ tools/.test(h.textContent)),
				{ timeout: 10_000, polling: 200 },
			).then(() => true, () => false);
		});
		await ed.shot('mcp-status-tooltip');
		await ed.page.mouse.move(0, 0);
	});

	await t.test("the server's log lines are not all errors", async () => {
		const logs = path.join(userData, 'logs');
		const file = await until('the Reika output log', () => findFile(logs, (f) => /\bReika\.log$/.test(f) && !/Extension/.test(f)));
		const text = fs.readFileSync(file, 'utf8');
		assert.match(text, /\[info\] lsp: initialize from/, text.slice(0, 2000));
		assert.doesNotMatch(text, /\[error\] lsp: initialize from/);
	});
}

module.exports = { viewSteps };
