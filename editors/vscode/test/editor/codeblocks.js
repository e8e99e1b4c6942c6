// The real-editor test's step for the chat's code blocks and @file (kept
// out of editor.test.js, which holds the session): `@` completes a
// workspace file, the ask attaches it whole, and the reply's code block
// has Copy, Insert and Apply. (What Insert and Apply do in the editor is
// not driven here yet.)
'use strict';

const assert = require('node:assert/strict');

/** ed: the Editor (editor.test.js); chat: the chat view's frame. */
async function codeBlockSteps(ed, chat, hangGuardMs) {
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
}

module.exports = { codeBlockSteps };
