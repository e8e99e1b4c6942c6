// The chat view's script (a VS Code webview). The extension renders every
// block to HTML (src/chatModel.ts, escaped) and sends whole blocks; this
// script puts them in place, keeps what the user opened open, follows the
// end of the conversation, and sends what the user asks.
// @ts-check
(function () {
	// @ts-ignore acquireVsCodeApi is provided by VS Code to webviews.
	const vscode = acquireVsCodeApi();
	const $ = (/** @type {string} */ id) => /** @type {HTMLElement} */ (document.getElementById(id));
	const log = $('log');
	const empty = $('empty');
	const input = /** @type {HTMLTextAreaElement} */ ($('input'));
	const send = /** @type {HTMLButtonElement} */ ($('send'));
	const attachment = $('attachment');
	const attachmentLabel = $('attachment-label');
	const progress = $('progress');
	const approval = $('approval');
	const approvalMessage = $('approval-message');
	const approvalActions = $('approval-actions');
	const ctxBar = $('context');
	const ctxFill = $('context-fill');
	const ctxShed = $('context-shed');
	const ctxLabel = $('context-label');

	const slash = $('slash');
	const fileList = $('files');
	const modeButton = $('mode');

	let running = false;
	/** @type {{name: string, description: string, argumentHint?: string}[]} */
	let commands = [];
	/** @type {{name: string, description: string, argumentHint?: string}[]} */
	let matches = [];
	let selected = 0;
	let attachLabel = '';
	/** The @ being typed at the cursor ({start, query}), and its completions. */
	/** @type {{start: number, query: string} | null} */
	let mention = null;
	/** @type {string[]} */
	let files = [];
	let fileSelected = 0;
	/** @type {ReturnType<typeof setTimeout> | undefined} */
	let fileTimer;
	let attachOn = true;

	const saved = vscode.getState() || {};
	input.value = typeof saved.draft === 'string' ? saved.draft : '';
	/** The prompts sent from this view, oldest first, for Up and Down. */
	const sent = Array.isArray(saved.sent) ? saved.sent.filter((p) => typeof p === 'string') : [];
	/** Where Up and Down are in sent (sent.length: the draft). */
	let recall = sent.length;
	let draft = '';

	function saveState() {
		vscode.setState({ draft: input.value, sent: sent.slice(-50) });
	}

	/** Up at the start of the input shows the previous prompt, Down at its
	 * end the next one, then what was being typed. */
	function recallPrompt(step) {
		const next = recall + step;
		if (next < 0 || next > sent.length) {
			return false;
		}
		if (recall === sent.length) {
			draft = input.value;
		}
		recall = next;
		input.value = recall === sent.length ? draft : sent[recall];
		const at = step < 0 ? 0 : input.value.length;
		input.setSelectionRange(at, at);
		saveState();
		autosize();
		return true;
	}

	const scroller = /** @type {HTMLElement} */ (document.querySelector('main'));

	function atEnd() {
		return scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 40;
	}

	function scrollToEnd() {
		scroller.scrollTop = scroller.scrollHeight;
	}

	/** Puts a block's HTML in place, keeping the open details and the
	 * expanded results the user chose. */
	function upsert(/** @type {{id: number, kind: string, html: string}} */ b) {
		let el = /** @type {HTMLElement | null} */ (log.querySelector(`[data-id="${b.id}"]`));
		const open = [];
		const expanded = [];
		if (el !== null) {
			el.querySelectorAll('details').forEach((d, i) => {
				if (d.dataset.touched === '1') {
					open[i] = d.open;
				}
			});
			el.querySelectorAll('.result').forEach((r, i) => {
				expanded[i] = r.classList.contains('expanded');
			});
		} else {
			el = document.createElement('div');
			el.dataset.id = String(b.id);
			log.appendChild(el);
		}
		el.className = `block ${b.kind}`;
		el.innerHTML = b.html;
		el.querySelectorAll('details').forEach((d, i) => {
			if (open[i] !== undefined) {
				d.open = open[i];
				d.dataset.touched = '1';
			}
		});
		el.querySelectorAll('.result').forEach((r, i) => {
			if (expanded[i]) {
				expand(/** @type {HTMLElement} */ (r), true);
			}
		});
	}

	function expand(/** @type {HTMLElement} */ result, on) {
		const preview = result.querySelector('.preview');
		const whole = result.querySelector('.whole');
		const button = /** @type {HTMLButtonElement | null} */ (result.querySelector('.expand'));
		if (preview === null || whole === null || button === null) {
			return;
		}
		result.classList.toggle('expanded', on);
		preview.toggleAttribute('hidden', on);
		whole.toggleAttribute('hidden', !on);
		button.textContent = on ? 'Show less' : `Show all ${button.dataset.lines} lines`;
	}

	function setBlocks(blocks, replace) {
		const follow = replace || atEnd();
		if (replace) {
			log.textContent = '';
		}
		blocks.forEach(upsert);
		empty.hidden = log.childElementCount > 0;
		if (follow) {
			scrollToEnd();
		}
	}

	function setStatus(s, problem) {
		ctxBar.classList.remove('warning', 'error');
		if (problem) {
			ctxBar.classList.add('error');
			ctxLabel.textContent = `Reika: ${problem}`;
			ctxFill.style.width = '0';
			ctxShed.hidden = true;
			return;
		}
		if (!s) {
			ctxLabel.textContent = 'Reika: starting…';
			ctxFill.style.width = '0';
			ctxShed.hidden = true;
			return;
		}
		if (s.level === 'warning' || s.level === 'error') {
			ctxBar.classList.add(s.level);
		}
		ctxLabel.textContent = s.text;
		modeButton.textContent = s.mode || 'code';
		ctxBar.title = s.tooltip || s.text;
		if (typeof s.window === 'number' && s.window > 0) {
			ctxFill.style.width = `${Math.min(100, (100 * s.size) / s.window).toFixed(1)}%`;
			if (typeof s.shedPoint === 'number') {
				ctxShed.hidden = false;
				ctxShed.style.left = `${Math.min(100, (100 * s.shedPoint) / s.window).toFixed(1)}%`;
			} else {
				ctxShed.hidden = true;
			}
		} else {
			ctxFill.style.width = '0';
			ctxShed.hidden = true;
		}
	}

	function setRunning(on, text) {
		running = on;
		send.textContent = on ? 'Stop' : 'Send';
		send.classList.toggle('stop', on);
		send.title = on ? 'Stop the running turn' : 'Send (Enter)';
		progress.hidden = !on;
		progress.textContent = on ? text || 'Working…' : '';
	}

	function setAttachment(label) {
		if (label !== attachLabel) {
			attachOn = true;
		}
		attachLabel = label || '';
		attachment.hidden = attachLabel === '' || !attachOn;
		attachmentLabel.textContent = attachLabel;
	}

	/** Shows the approval waiting for the user, with a button per action
	 * (the first one primary); null hides it. */
	function setApproval(a) {
		approvalActions.textContent = '';
		approval.hidden = !a;
		if (!a) {
			return;
		}
		approvalMessage.textContent = a.message;
		a.actions.forEach((title, i) => {
			const b = document.createElement('button');
			b.type = 'button';
			b.textContent = title;
			if (i > 0) {
				b.className = 'secondary';
			}
			b.addEventListener('click', () => vscode.postMessage({ type: 'approve', title }));
			approvalActions.appendChild(b);
		});
		if (atEnd()) {
			scrollToEnd();
		}
	}

	/** The slash commands the input's first word completes: it starts
	 * with / and holds no space yet. */
	function updateSlash() {
		const m = /^\/(\S*)$/.exec(input.value);
		matches = m === null ? [] : commands.filter((c) => c.name.startsWith(m[1]));
		selected = Math.min(selected, Math.max(0, matches.length - 1));
		slash.textContent = '';
		slash.hidden = matches.length === 0;
		matches.forEach((c, i) => {
			const row = document.createElement('div');
			row.className = i === selected ? 'item selected' : 'item';
			row.setAttribute('role', 'option');
			row.dataset.name = c.name;
			row.textContent = `/${c.name}`;
			if (c.argumentHint) {
				const h = document.createElement('span');
				h.className = 'hint-arg';
				h.textContent = c.argumentHint;
				row.appendChild(h);
			}
			const d = document.createElement('span');
			d.className = 'desc';
			d.textContent = c.description;
			row.appendChild(d);
			row.addEventListener('mousedown', (e) => {
				e.preventDefault();
				complete(c.name);
			});
			slash.appendChild(row);
		});
	}

	/** Puts `/name ` in the input, ready for its argument. */
	function complete(name) {
		input.value = `/${name} `;
		input.setSelectionRange(input.value.length, input.value.length);
		saveState();
		updateSlash();
		input.focus();
	}

	/** The @word before the cursor, when the cursor ends one. */
	function mentionAtCursor() {
		if (input.selectionStart !== input.selectionEnd) {
			return null;
		}
		const before = input.value.slice(0, input.selectionStart);
		const m = /(^|\s)@([^\s@]*)$/.exec(before);
		return m === null ? null : { start: before.length - m[2].length - 1, query: m[2] };
	}

	/** Asks the extension for the files an @ at the cursor completes to. */
	function updateFiles() {
		mention = mentionAtCursor();
		if (mention === null) {
			showFiles([]);
			return;
		}
		const query = mention.query;
		clearTimeout(fileTimer);
		fileTimer = setTimeout(() => vscode.postMessage({ type: 'files', query }), 80);
	}

	function showFiles(/** @type {string[]} */ list) {
		files = list;
		fileSelected = Math.min(fileSelected, Math.max(0, files.length - 1));
		fileList.textContent = '';
		fileList.hidden = files.length === 0;
		files.forEach((f, i) => {
			const row = document.createElement('div');
			row.className = i === fileSelected ? 'item selected' : 'item';
			row.setAttribute('role', 'option');
			row.textContent = `@${f}`;
			row.addEventListener('mousedown', (e) => {
				e.preventDefault();
				pickFile(f);
			});
			fileList.appendChild(row);
		});
	}

	/** Puts `@path ` in place of the @ being typed. */
	function pickFile(/** @type {string} */ f) {
		if (mention === null) {
			return;
		}
		const end = input.selectionStart;
		const text = `@${f} `;
		input.value = input.value.slice(0, mention.start) + text + input.value.slice(end);
		const at = mention.start + text.length;
		input.setSelectionRange(at, at);
		mention = null;
		showFiles([]);
		saveState();
		autosize();
		input.focus();
	}

	/** Sends the input; while a turn runs, Enter keeps the text (the Stop
	 * button stops the turn). */
	function submit() {
		if (running) {
			return;
		}
		const text = input.value.trim();
		if (text === '') {
			return;
		}
		vscode.postMessage({ type: 'ask', text, attach: attachLabel !== '' && attachOn });
		if (sent[sent.length - 1] !== text) {
			sent.push(text);
		}
		recall = sent.length;
		input.value = '';
		saveState();
		autosize();
		updateSlash();
		showFiles([]);
	}

	function autosize() {
		input.style.height = 'auto';
		input.style.height = `${Math.min(input.scrollHeight, 240)}px`;
	}

	input.addEventListener('keydown', (e) => {
		if (files.length > 0 && !e.isComposing) {
			if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
				e.preventDefault();
				fileSelected = (fileSelected + (e.key === 'ArrowDown' ? 1 : files.length - 1)) % files.length;
				showFiles(files);
				return;
			}
			if (e.key === 'Tab' || (e.key === 'Enter' && !e.shiftKey)) {
				e.preventDefault();
				pickFile(files[fileSelected]);
				return;
			}
			if (e.key === 'Escape') {
				e.preventDefault();
				showFiles([]);
				return;
			}
		}
		if (matches.length > 0 && !e.isComposing) {
			if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
				e.preventDefault();
				selected = (selected + (e.key === 'ArrowDown' ? 1 : matches.length - 1)) % matches.length;
				updateSlash();
				return;
			}
			const pick = matches[selected];
			// Tab completes; so does Enter, unless the name is typed out
			// (then Enter sends it).
			if (pick && (e.key === 'Tab' || (e.key === 'Enter' && !e.shiftKey && input.value !== `/${pick.name}`))) {
				e.preventDefault();
				complete(pick.name);
				return;
			}
			if (e.key === 'Escape') {
				e.preventDefault();
				matches = [];
				slash.hidden = true;
				return;
			}
		}
		const plain = !e.shiftKey && !e.altKey && !e.ctrlKey && !e.metaKey && !e.isComposing;
		if (plain && e.key === 'ArrowUp' && input.selectionStart === 0 && input.selectionEnd === 0 && recallPrompt(-1)) {
			e.preventDefault();
			return;
		}
		if (plain && e.key === 'ArrowDown' && input.selectionStart === input.value.length && recallPrompt(1)) {
			e.preventDefault();
			return;
		}
		if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
			e.preventDefault();
			submit();
		}
	});
	input.addEventListener('input', () => {
		saveState();
		autosize();
		updateSlash();
		updateFiles();
	});
	input.addEventListener('blur', () => {
		slash.hidden = true;
		showFiles([]);
	});
	send.addEventListener('click', () => {
		if (running) {
			vscode.postMessage({ type: 'cancel' });
		} else {
			submit();
		}
	});
	$('detach').addEventListener('click', () => {
		attachOn = false;
		attachment.hidden = true;
		input.focus();
	});
	document.querySelectorAll('[data-command]').forEach((b) => {
		b.addEventListener('click', () => vscode.postMessage({ type: 'command', id: /** @type {HTMLElement} */ (b).dataset.command }));
	});
	log.addEventListener('click', (e) => {
		const target = /** @type {HTMLElement} */ (e.target);
		const code = /** @type {HTMLElement | null} */ (target.closest('[data-code]'));
		if (code !== null) {
			codeAction(code);
			return;
		}
		const button = target.closest('.expand');
		if (button !== null) {
			const result = /** @type {HTMLElement} */ (button.closest('.result'));
			expand(result, !result.classList.contains('expanded'));
			return;
		}
		const summary = target.closest('summary');
		if (summary !== null && summary.parentElement !== null) {
			summary.parentElement.dataset.touched = '1';
		}
	});

	/** A code block's Copy, Insert or Apply: the extension does it, with
	 * the block's text and the file it names. */
	function codeAction(/** @type {HTMLElement} */ button) {
		const block = /** @type {HTMLElement | null} */ (button.closest('.codeblock'));
		const code = block?.querySelector('code');
		if (!block || !code) {
			return;
		}
		const action = button.dataset.code;
		vscode.postMessage({ type: 'code', action, code: code.textContent || '', path: block.dataset.path || '' });
		if (action === 'copy') {
			button.textContent = 'Copied';
			setTimeout(() => {
				button.textContent = 'Copy';
			}, 1500);
		}
	}

	window.addEventListener('message', (event) => {
		const m = event.data;
		switch (m.type) {
			case 'reset':
				setBlocks(m.blocks, true);
				break;
			case 'upsert':
				setBlocks(m.blocks, false);
				break;
			case 'status':
				setStatus(m.status, m.problem);
				break;
			case 'turn':
				setRunning(m.running, m.progress);
				break;
			case 'attachment':
				setAttachment(m.label);
				break;
			case 'approval':
				setApproval(m.approval);
				break;
			case 'focus':
				input.focus();
				break;
			case 'files':
				if (mention !== null && m.query === mention.query && Array.isArray(m.files)) {
					fileSelected = 0;
					showFiles(m.files);
				}
				break;
			case 'commands':
				commands = Array.isArray(m.commands) ? m.commands : [];
				updateSlash();
				break;
		}
	});

	autosize();
	vscode.postMessage({ type: 'ready' });
})();
