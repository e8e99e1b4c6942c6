// A small Markdown renderer for the chat view: the CommonMark blocks a
// model writes (paragraphs, headings, fenced and indented code, lists,
// block quotes, tables, rules) and inline code, emphasis, strikethrough and
// links. Everything is HTML-escaped first and raw HTML is shown as text, so
// nothing the model writes can add markup or script to the view; links keep
// only http, https and mailto targets. No 'vscode' import: unit-tested in
// plain node.

/** Escapes text for HTML content and attribute values. */
export function escapeHtml(s: string): string {
	return s.replace(/[&<>"']/g, (c) => {
		switch (c) {
			case '&':
				return '&amp;';
			case '<':
				return '&lt;';
			case '>':
				return '&gt;';
			case '"':
				return '&quot;';
			default:
				return '&#39;';
		}
	});
}

/** Renders Markdown to HTML. */
export function renderMarkdown(src: string): string {
	return renderBlocks(src.replace(/\r\n?/g, '\n').split('\n'));
}

/** NUL and SOH mark placeholders while spans are rendered. */
const placeholderChars = /[\u0000\u0001]/g;

const fenceOpen = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)([^`]*)$/;
const heading = /^ {0,3}(#{1,6})(?:\s+(.*?))?(?:\s+#+)?\s*$/;
const rule = /^ {0,3}([-*_])(?:\s*\1){2,}\s*$/;
const quote = /^ {0,3}> ?(.*)$/;
const listItem = /^( {0,3})([-*+]|\d{1,9}[.)])(\s+|$)(.*)$/;
const tableDelimiter = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;

function isBlank(line: string): boolean {
	return line.trim() === '';
}

function indentOf(line: string): number {
	const m = /^ */.exec(line.replace(/\t/g, '    '));
	return m === null ? 0 : m[0].length;
}

/** Whether a line starts a block other than a paragraph (so it ends one). */
function startsBlock(line: string, next: string | undefined): boolean {
	return (
		fenceOpen.test(line) ||
		heading.test(line) ||
		rule.test(line) ||
		quote.test(line) ||
		listItem.test(line) ||
		(line.includes('|') && next !== undefined && tableDelimiter.test(next) && next.includes('-'))
	);
}

function renderBlocks(lines: string[]): string {
	const out: string[] = [];
	let i = 0;
	while (i < lines.length) {
		const line = lines[i]!;
		if (isBlank(line)) {
			i++;
			continue;
		}
		let m: RegExpExecArray | null;
		if ((m = fenceOpen.exec(line)) !== null) {
			const marker = m[1]!;
			const lang = m[2] ?? '';
			const body: string[] = [];
			i++;
			while (i < lines.length) {
				const l = lines[i]!;
				const close = /^ {0,3}(`{3,}|~{3,})\s*$/.exec(l);
				if (close !== null && close[1]![0] === marker[0] && close[1]!.length >= marker.length) {
					i++;
					break;
				}
				body.push(l);
				i++;
			}
			const info = fenceInfo(lang, m[3] ?? '');
			const cls = info.lang !== '' ? ` class="language-${escapeHtml(info.lang)}"` : '';
			const file = info.path !== undefined ? ` data-path="${escapeHtml(info.path)}"` : '';
			out.push(`<pre${file}><code${cls}>${escapeHtml(body.join('\n'))}</code></pre>`);
			continue;
		}
		if ((m = heading.exec(line)) !== null) {
			const level = m[1]!.length;
			out.push(`<h${level}>${renderInline(m[2] ?? '')}</h${level}>`);
			i++;
			continue;
		}
		if (rule.test(line)) {
			out.push('<hr>');
			i++;
			continue;
		}
		if (quote.test(line)) {
			const body: string[] = [];
			while (i < lines.length && !isBlank(lines[i]!) && (m = quote.exec(lines[i]!)) !== null) {
				body.push(m[1]!);
				i++;
			}
			out.push(`<blockquote>${renderBlocks(body)}</blockquote>`);
			continue;
		}
		if (listItem.test(line)) {
			i = renderList(lines, i, out);
			continue;
		}
		if (indentOf(line) >= 4) {
			const body: string[] = [];
			while (i < lines.length && (indentOf(lines[i]!) >= 4 || (isBlank(lines[i]!) && i + 1 < lines.length && indentOf(lines[i + 1]!) >= 4))) {
				body.push(lines[i]!.replace(/\t/g, '    ').slice(4));
				i++;
			}
			out.push(`<pre><code>${escapeHtml(body.join('\n'))}</code></pre>`);
			continue;
		}
		const next = lines[i + 1];
		if (line.includes('|') && next !== undefined && next.includes('-') && tableDelimiter.test(next)) {
			i = renderTable(lines, i, out);
			continue;
		}
		const para: string[] = [line];
		i++;
		while (i < lines.length && !isBlank(lines[i]!) && !startsBlock(lines[i]!, lines[i + 1])) {
			para.push(lines[i]!);
			i++;
		}
		out.push(`<p>${renderInline(para.map((l) => l.trim()).join('\n'))}</p>`);
	}
	return out.join('\n');
}

/** Renders the list starting at lines[start]; returns the line after it. */
function renderList(lines: string[], start: number, out: string[]): number {
	const first = listItem.exec(lines[start]!)!;
	const ordered = /\d/.test(first[2]!);
	const baseIndent = first[1]!.length;
	const items: string[][] = [];
	let loose = false;
	let i = start;
	while (i < lines.length) {
		const m = listItem.exec(lines[i]!);
		if (m === null || m[1]!.length !== baseIndent || /\d/.test(m[2]!) !== ordered) {
			break;
		}
		const contentIndent = baseIndent + m[2]!.length + Math.max(1, Math.min(m[3]!.length, 4));
		const item: string[] = [m[4]!];
		i++;
		while (i < lines.length) {
			const l = lines[i]!;
			if (isBlank(l)) {
				// A blank line continues the item when the next line is
				// indented into it; then the list is loose.
				const nextLine = lines[i + 1];
				if (nextLine !== undefined && !isBlank(nextLine) && indentOf(nextLine) >= contentIndent) {
					item.push('');
					loose = true;
					i++;
					continue;
				}
				break;
			}
			if (indentOf(l) >= contentIndent) {
				item.push(l.replace(/\t/g, '    ').slice(contentIndent));
			} else if (listItem.test(l) && indentOf(l) <= baseIndent) {
				break;
			} else if (indentOf(l) > baseIndent) {
				// A nested item indented less than the content: keep it nested.
				item.push(l.replace(/\t/g, '    ').slice(baseIndent + 1));
			} else if (startsBlock(l, lines[i + 1])) {
				break;
			} else {
				item.push(l.trim()); // a lazy continuation of the paragraph
			}
			i++;
		}
		items.push(item);
		// A blank line between items makes the list loose too.
		if (i < lines.length && isBlank(lines[i]!)) {
			const after = lines[i + 1];
			const m2 = after !== undefined ? listItem.exec(after) : null;
			if (m2 !== null && m2[1]!.length === baseIndent && /\d/.test(m2[2]!) === ordered) {
				loose = true;
				i++;
			}
		}
	}
	const tag = ordered ? 'ol' : 'ul';
	const startNum = ordered ? parseInt(first[2]!, 10) : 1;
	const startAttr = ordered && startNum !== 1 ? ` start="${startNum}"` : '';
	const rendered = items.map((item) => {
		let html = renderBlocks(item);
		if (!loose) {
			html = html.replace(/^<p>([\s\S]*?)<\/p>/, '$1');
		}
		return `<li>${html}</li>`;
	});
	out.push(`<${tag}${startAttr}>${rendered.join('')}</${tag}>`);
	return i;
}

function splitRow(line: string): string[] {
	let s = line.trim();
	if (s.startsWith('|')) {
		s = s.slice(1);
	}
	if (s.endsWith('|') && !s.endsWith('\\|')) {
		s = s.slice(0, -1);
	}
	const cells: string[] = [];
	let cell = '';
	for (let k = 0; k < s.length; k++) {
		const c = s[k]!;
		if (c === '\\' && s[k + 1] === '|') {
			cell += '|';
			k++;
		} else if (c === '|') {
			cells.push(cell.trim());
			cell = '';
		} else {
			cell += c;
		}
	}
	cells.push(cell.trim());
	return cells;
}

/** Renders the table starting at lines[start]; returns the line after it. */
function renderTable(lines: string[], start: number, out: string[]): number {
	const head = splitRow(lines[start]!);
	const aligns = splitRow(lines[start + 1]!).map((d) => {
		const left = d.startsWith(':');
		const right = d.endsWith(':');
		return left && right ? 'center' : right ? 'right' : left ? 'left' : '';
	});
	const cell = (tag: string, text: string, k: number): string => {
		const a = aligns[k] ?? '';
		// A class, not a style attribute: the view's content security policy
		// allows no inline styles.
		return `<${tag}${a !== '' ? ` class="align-${a}"` : ''}>${renderInline(text)}</${tag}>`;
	};
	const rows: string[] = [];
	let i = start + 2;
	while (i < lines.length && !isBlank(lines[i]!) && lines[i]!.includes('|')) {
		const cells = splitRow(lines[i]!);
		rows.push(`<tr>${head.map((_, k) => cell('td', cells[k] ?? '', k)).join('')}</tr>`);
		i++;
	}
	out.push(
		`<table><thead><tr>${head.map((h, k) => cell('th', h, k)).join('')}</tr></thead><tbody>${rows.join('')}</tbody></table>`,
	);
	return i;
}

/** Renders inline Markdown: code spans first, then the rest. */
export function renderInline(source: string): string {
	const text = source.replace(placeholderChars, '');
	let out = '';
	let i = 0;
	while (i < text.length) {
		const tick = text.indexOf('`', i);
		if (tick < 0) {
			out += renderSpans(text.slice(i));
			break;
		}
		let run = tick;
		while (text[run] === '`') {
			run++;
		}
		const fence = text.slice(tick, run);
		const close = findClosingTicks(text, run, fence.length);
		if (close < 0) {
			out += renderSpans(text.slice(i, run));
			i = run;
			continue;
		}
		out += renderSpans(text.slice(i, tick));
		let code = text.slice(run, close).replace(/\n/g, ' ');
		if (code.length > 2 && code.startsWith(' ') && code.endsWith(' ') && code.trim() !== '') {
			code = code.slice(1, -1);
		}
		out += `<code>${escapeHtml(code)}</code>`;
		i = close + fence.length;
	}
	return out;
}

function findClosingTicks(text: string, from: number, n: number): number {
	let k = from;
	while (k < text.length) {
		const t = text.indexOf('`', k);
		if (t < 0) {
			return -1;
		}
		let e = t;
		while (text[e] === '`') {
			e++;
		}
		if (e - t === n) {
			return t;
		}
		k = e;
	}
	return -1;
}

/** Whether a link target may be followed from the view. */
export function safeUrl(url: string): boolean {
	return /^(https?:\/\/|mailto:)/i.test(url.trim());
}

/** Emphasis, strikethrough, links and line breaks, on text without code
 * spans. The text is escaped first; the patterns only add tags. */
function renderSpans(raw: string): string {
	// Backslash escapes and links become placeholders (renderInline took
	// NUL and SOH out of the text), so the patterns below cannot see into
	// them.
	let s = raw.replace(/\\([!-/:-@[-`{-~])/g, (_, c: string) => `\u0001${c.charCodeAt(0)}\u0001`);
	const links: string[] = [];
	const hold = (html: string): string => {
		links.push(html);
		return `\u0000${links.length - 1}\u0000`;
	};
	s = s.replace(/\[([^\]\n]*)\]\(\s*<?([^\s)>]*)>?(?:\s+"[^"]*")?\s*\)/g, (_, label: string, url: string) => {
		const inner = renderSpans(label);
		const target = restoreEscapes(url, false);
		return hold(safeUrl(target) ? `<a href="${escapeHtml(target)}">${inner}</a>` : inner);
	});
	s = s.replace(/<((?:https?:\/\/|mailto:)[^\s<>]+)>/gi, (_, url: string) => {
		const target = restoreEscapes(url, false);
		return hold(`<a href="${escapeHtml(target)}">${escapeHtml(target)}</a>`);
	});
	s = escapeHtml(s)
		.replace(/(\*\*|__)(?=\S)([\s\S]*?\S)\1/g, '<strong>$2</strong>')
		.replace(/(^|[^\w*])\*(?=[^\s*])([\s\S]*?[^\s*])\*(?![*])/g, '$1<em>$2</em>')
		.replace(/(^|[^\w_])_(?=[^\s_])([\s\S]*?[^\s_])_(?![\w_])/g, '$1<em>$2</em>')
		.replace(/~~(?=\S)([\s\S]*?\S)~~/g, '<del>$1</del>')
		.replace(/(?: {2,}|\\)\n/g, '<br>\n');
	s = s.replace(/\u0000(\d+)\u0000/g, (_, n: string) => links[Number(n)] ?? '');
	return restoreEscapes(s, true);
}

/** Puts back the characters of backslash escapes, escaped for HTML when
 * html is true. */
function restoreEscapes(s: string, html: boolean): string {
	return s.replace(/\u0001(\d+)\u0001/g, (_, n: string) => {
		const c = String.fromCharCode(Number(n));
		return html ? escapeHtml(c) : c;
	});
}

/** Whether a word of a fence's info string reads as a file path: a name
 * with an extension or a directory, no scheme, no spaces. */
function looksLikePath(w: string): boolean {
	return /^[\w.\-/]+$/.test(w) && /[./]/.test(w) && !/^\.+$/.test(w) && /[\w]/.test(w);
}

/**
 * The language and the file a fence's info string names, in the forms
 * models write: ```go main.go, ```go:main.go, ```go title="main.go"
 * (also file=, path=, filename=), or ```main.go alone.
 */
export function fenceInfo(first: string, rest: string): { lang: string; path?: string } {
	let lang = first;
	const words: string[] = [];
	const colon = /^([\w+#-]+):(.+)$/.exec(first);
	if (colon !== null) {
		lang = colon[1]!;
		words.push(colon[2]!);
	}
	for (const w of rest.trim().split(/\s+/)) {
		words.push(w.replace(/^(?:title|file|path|filename)=/i, '').replace(/^["']|["']$/g, ''));
	}
	let path = words.find((w) => w !== '' && looksLikePath(w));
	if (path === undefined && colon === null && /\.\w+$/.test(first) && looksLikePath(first)) {
		path = first;
		lang = '';
	}
	return path !== undefined ? { lang, path } : { lang };
}

/**
 * Adds Copy, Insert and Apply buttons to every code block of rendered
 * Markdown (Apply only where the block names its file). Plain buttons, no
 * handlers: the chat's script acts on their clicks, so the view's content
 * security policy stays as strict.
 */
export function withCodeActions(html: string): string {
	return html.replace(/<pre( data-path="[^"]*")?><code([^>]*)>([\s\S]*?)<\/code><\/pre>/g, (_all, file: string | undefined, cls: string, body: string) => {
		const apply = file !== undefined ? '<button type="button" data-code="apply" title="Show the change to this file in the diff editor, to apply">Apply</button>' : '';
		return (
			`<div class="codeblock"${file ?? ''}><div class="code-actions">` +
			'<button type="button" data-code="copy" title="Copy the code">Copy</button>' +
			'<button type="button" data-code="insert" title="Insert the code at the cursor of the last editor">Insert</button>' +
			`${apply}</div><pre><code${cls}>${body}</code></pre></div>`
		);
	});
}
