// The real-editor test's step for the chat's code blocks and @file (views.js
// runs it): `@` completes a workspace file, the ask attaches it whole, and
// the reply's code block has Copy, Insert and Apply. Insert puts the code
// at the cursor of the last text editor; Apply opens the diff of the file
// the block names against the block, and its Apply button on the diff's
// title bar writes the block into the file's buffer.
'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { until } = require('./harness');

/** The text of the editor whose active tab's label starts with name, its
 * trailing empty lines left out (runs in the page, as window.reikaEditorText;
 * editors render spaces and tabs as no-break spaces). */
function editorText(name) {
	for (const g of document.querySelectorAll('.editor-group-container')) {
		if ((g.querySelector('.tab.active')?.getAttribute('aria-label') ?? '').startsWith(name)) {
			return [...g.querySelectorAll('.monaco-editor .view-line')]
				.sort((a, b) => parseFloat(a.style.top) - parseFloat(b.style.top))
				.map((l) => l.textContent.replace(/\u00a0/g, ' '))
				.join('\n')
				.replace(/\n+$/, '');
		}
	}
	return undefined;
}

/** ed: the Editor (harness.js); chat: the chat view's frame; ws: the
 * workspace folder. */
async function codeBlockSteps(ed, chat, hangGuardMs, ws) {
	const wait = (fn, ...args) => chat.waitForFunction(fn, { timeout: hangGuardMs, polling: 100 }, ...args);
	await chat.focus('#input');
	await ed.page.keyboard.type('Explain @mai');
	await wait(() => [...document.querySelectorAll('#files .item')].some((e) => e.textContent === '@main.go'));
	await ed.shot('at-file-completion');
	await ed.page.keyboard.press('Tab');
	assert.equal(await chat.evaluate(() => document.getElementById('input').value), 'Explain @main.go ');
	assert.ok(await chat.evaluate(() => document.getElementById('files').hidden), 'the list closes once a file is picked');
	await ed.page.keyboard.press('Enter');
	// The server got main.go whole: the ask shows it as its attachment.
	await wait(() => [...document.querySelectorAll('#log .block.user details.attachment summary')].some((s) => s.textContent === 'main.go lines 1-7'));
	await wait(() => document.querySelector('#log > :last-child .codeblock[data-path="notes/hello.txt"]') !== null && document.getElementById('progress').hidden);
	const buttons = await chat.evaluate(() => [...document.querySelectorAll('#log > :last-child .codeblock .code-actions button')].map((b) => b.textContent));
	assert.deepEqual(buttons, ['Copy', 'Insert', 'Apply']);
	await ed.shot('code-block-buttons');
	const click = (label) =>
		chat.evaluate((l) => [...document.querySelectorAll('#log > :last-child .codeblock .code-actions button')].find((b) => b.textContent === l).click(), label);

	// Insert: at the cursor of main.go, the last text editor, the chat
	// having the focus when the button is clicked.
	await ed.page.evaluate(`window.reikaEditorText = ${editorText.toString()}`);
	const mainGo = fs.readFileSync(path.join(ws, 'main.go'), 'utf8');
	assert.ok(mainGo.endsWith('}\n'));
	await ed.open('main.go');
	await ed.keys('Control', 'End');
	await click('Insert');
	await ed.waitFor('the code block inserted at the end of main.go', () => /^package main\n[\s\S]*\n}\nhello from a code block$/.test(window.reikaEditorText('main.go') ?? '')).catch(async (e) => {
		throw new Error(`${e.message}\nmain.go shows:\n${await ed.page.evaluate(editorText, 'main.go')}`);
	});
	assert.equal(fs.readFileSync(path.join(ws, 'main.go'), 'utf8'), mainGo, 'Insert changes the buffer, not the file');
	await ed.shot('code-block-inserted');
	await ed.keys('Control', 'KeyZ');
	await ed.waitFor('main.go back as it was', () => /\n}$/.test(window.reikaEditorText('main.go') ?? ''));
	await ed.waitFor('main.go not dirty', () => {
		const tab = [...document.querySelectorAll('.tabs-container .tab.active')].find((e) => (e.getAttribute('aria-label') || '').startsWith('main.go'));
		return tab !== undefined && !tab.classList.contains('dirty');
	});

	// Apply: the diff of notes/hello.txt (a new file) against the block,
	// with Apply on its title bar; applied, the file shows the block.
	const hello = path.join(ws, 'notes', 'hello.txt');
	assert.ok(!fs.existsSync(hello));
	await click('Apply');
	const diffTab = 'hello.txt: new file ↔ code block';
	await ed.waitFor('the code block diff', (t) => {
		const active = [...document.querySelectorAll('.editor-group-container .tab.active')].some((e) => (e.getAttribute('aria-label') || '').startsWith(t));
		const text = (document.querySelector('.monaco-diff-editor')?.textContent ?? '').replace(/\u00a0/g, ' ');
		return active && /hello from a code block/.test(text);
	}, diffTab);
	const diffEditor = await ed.page.evaluateHandle(() => document.querySelector('.monaco-diff-editor .editor.modified .view-lines'));
	await diffEditor.asElement().click();
	await ed.waitFor('Apply Code Block on the diff title bar', () =>
		[...document.querySelectorAll('.editor-group-container.active .editor-actions .action-label')].some((a) => (a.getAttribute('aria-label') || '').startsWith('Apply Code Block')),
	);
	await ed.shot('code-block-apply-diff');
	await ed.page.evaluate(() =>
		[...document.querySelectorAll('.editor-group-container.active .editor-actions .action-label')].find((a) => (a.getAttribute('aria-label') || '').startsWith('Apply Code Block')).click(),
	);
	await ed.waitFor('hello.txt with the block, the diff closed', (t) => {
		const tabs = [...document.querySelectorAll('.tabs-container .tab')].map((e) => e.getAttribute('aria-label') || '');
		return !tabs.some((l) => l.startsWith(t)) && window.reikaEditorText('hello.txt') === 'hello from a code block';
	}, diffTab);
	// Applied to the buffer (undoable); saved, it is on disk.
	await ed.keys('Control', 'KeyS');
	await ed.waitFor('hello.txt saved', () => {
		const tab = [...document.querySelectorAll('.tabs-container .tab.active')].find((e) => (e.getAttribute('aria-label') || '').startsWith('hello.txt'));
		return tab !== undefined && !tab.classList.contains('dirty');
	});
	// The tab's dirty mark can go before the write is on disk.
	let onDisk = '';
	await until('hello.txt on disk with the block', () => (onDisk = fs.readFileSync(hello, 'utf8')) === 'hello from a code block\n').catch((e) => {
		throw new Error(`${e.message}: it holds ${JSON.stringify(onDisk)}`);
	});
	await ed.shot('code-block-applied');
}

module.exports = { codeBlockSteps };
