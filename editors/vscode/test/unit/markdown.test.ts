import * as assert from 'node:assert/strict';
import { test } from 'node:test';
import { escapeHtml, fenceInfo, renderInline, renderMarkdown, safeUrl, withCodeActions } from '../../src/markdown';

test('paragraphs, headings and rules', () => {
	assert.equal(renderMarkdown('# Title\n\nOne line\nand the next.\n\n---\n\nAfter.'), '<h1>Title</h1>\n<p>One line\nand the next.</p>\n<hr>\n<p>After.</p>');
	assert.equal(renderMarkdown('### Sub ###'), '<h3>Sub</h3>');
});

test('inline code, emphasis, strikethrough and breaks', () => {
	assert.equal(renderInline('use `a < b` and ``x ` y``'), 'use <code>a &lt; b</code> and <code>x ` y</code>');
	assert.equal(renderInline('**bold** and *it* and _it_ and ~~gone~~'), '<strong>bold</strong> and <em>it</em> and <em>it</em> and <del>gone</del>');
	assert.equal(renderInline('snake_case_name stays'), 'snake_case_name stays');
	assert.equal(renderInline('2 * 3 * 4'), '2 * 3 * 4');
	assert.equal(renderInline('`**not bold**`'), '<code>**not bold**</code>');
	assert.equal(renderInline('\\*literal\\*'), '*literal*');
	assert.equal(renderInline('end  \nnext'), 'end<br>\nnext');
});

test('raw HTML is text, and only safe links are links', () => {
	assert.equal(renderMarkdown('<script>alert(1)</script>'), '<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>');
	assert.equal(renderInline('<img src=x onerror=alert(1)>'), '&lt;img src=x onerror=alert(1)&gt;');
	assert.equal(renderInline('[docs](https://example.com/a?b=1&c="2")'), '<a href="https://example.com/a?b=1&amp;c=&quot;2&quot;">docs</a>');
	assert.equal(renderInline('[bad](javascript:alert(1))'), 'bad)');
	assert.equal(renderInline('[bad](javascript:alert)'), 'bad');
	assert.equal(renderInline('<https://go.dev>'), '<a href="https://go.dev">https://go.dev</a>');
	assert.equal(renderInline('[**b**](mailto:a@b.c)'), '<a href="mailto:a@b.c"><strong>b</strong></a>');
	assert.ok(safeUrl('HTTPS://x') && !safeUrl('vscode://x') && !safeUrl('data:text/html,x'));
	assert.equal(escapeHtml(`<a href="x">'&'</a>`), '&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
	// Placeholder characters in the text cannot forge a link.
	assert.equal(renderInline('\u00000\u0000 [x](https://a)'), '0 <a href="https://a">x</a>');
});

test('fenced and indented code keep their text', () => {
	assert.equal(
		renderMarkdown('Look:\n\n```go\nfunc main() {\n\tif a < b {}\n}\n```\nafter'),
		'<p>Look:</p>\n<pre><code class="language-go">func main() {\n\tif a &lt; b {}\n}</code></pre>\n<p>after</p>',
	);
	assert.equal(renderMarkdown('````\n```\ninner\n```\n````'), '<pre><code>```\ninner\n```</code></pre>');
	assert.equal(renderMarkdown('~~~\nunclosed'), '<pre><code>unclosed</code></pre>');
	assert.equal(renderMarkdown('text\n\n    indented\n    code'), '<p>text</p>\n<pre><code>indented\ncode</code></pre>');
});

test('lists: tight, loose, ordered, nested', () => {
	assert.equal(renderMarkdown('- one\n- two **b**'), '<ul><li>one</li><li>two <strong>b</strong></li></ul>');
	assert.equal(renderMarkdown('3. three\n4. four'), '<ol start="3"><li>three</li><li>four</li></ol>');
	assert.equal(renderMarkdown('- a\n\n- b'), '<ul><li><p>a</p></li><li><p>b</p></li></ul>');
	assert.equal(renderMarkdown('- outer\n  - inner\n- next'), '<ul><li>outer\n<ul><li>inner</li></ul></li><li>next</li></ul>');
	assert.equal(renderMarkdown('1. step\n   ```sh\n   go test\n   ```'), '<ol><li>step\n<pre><code class="language-sh">go test</code></pre></li></ol>');
	assert.equal(renderMarkdown('Intro:\n- a\n- b'), '<p>Intro:</p>\n<ul><li>a</li><li>b</li></ul>');
});

test('block quotes and tables', () => {
	assert.equal(renderMarkdown('> quoted **x**\n> more'), '<blockquote><p>quoted <strong>x</strong>\nmore</p></blockquote>');
	assert.equal(
		renderMarkdown('| name | n |\n|:-----|--:|\n| `a\\|b` | 1 |\n| c | 2 |'),
		'<table><thead><tr><th class="align-left">name</th><th class="align-right">n</th></tr></thead>' +
			'<tbody><tr><td class="align-left"><code>a|b</code></td><td class="align-right">1</td></tr>' +
			'<tr><td class="align-left">c</td><td class="align-right">2</td></tr></tbody></table>',
	);
});

test('a fence names its file in the forms models write', () => {
	assert.deepEqual(fenceInfo('go', ' main.go'), { lang: 'go', path: 'main.go' });
	assert.deepEqual(fenceInfo('go:cmd/x/main.go', ''), { lang: 'go', path: 'cmd/x/main.go' });
	assert.deepEqual(fenceInfo('ts', ' title="src/a.ts"'), { lang: 'ts', path: 'src/a.ts' });
	assert.deepEqual(fenceInfo('python', ' file=tools/run.py'), { lang: 'python', path: 'tools/run.py' });
	assert.deepEqual(fenceInfo('Makefile.mk', ''), { lang: '', path: 'Makefile.mk' });
	assert.deepEqual(fenceInfo('go', ''), { lang: 'go' });
	assert.deepEqual(fenceInfo('sh', ' {.numberLines}'), { lang: 'sh' });
	assert.deepEqual(fenceInfo('', ''), { lang: '' });
	assert.deepEqual(fenceInfo('c++', ' ..'), { lang: 'c++' });
});

test('code blocks get Copy and Insert, and Apply when they name a file', () => {
	const named = withCodeActions(renderMarkdown('```go main.go\nfunc a() {}\n```'));
	assert.equal(
		named,
		'<div class="codeblock" data-path="main.go"><div class="code-actions">' +
			'<button type="button" data-code="copy" title="Copy the code">Copy</button>' +
			'<button type="button" data-code="insert" title="Insert the code at the cursor of the last editor">Insert</button>' +
			'<button type="button" data-code="apply" title="Show the change to this file in the diff editor, to apply">Apply</button>' +
			'</div><pre><code class="language-go">func a() {}</code></pre></div>',
	);
	const plain = withCodeActions(renderMarkdown('Run:\n\n```sh\necho "<hi>"\n```\n\nand\n\n    indented'));
	assert.equal((plain.match(/data-code="copy"/g) ?? []).length, 2);
	assert.ok(!plain.includes('data-code="apply"'));
	assert.ok(plain.includes('<code class="language-sh">echo &quot;&lt;hi&gt;&quot;</code>'));
	// Code that looks like the markup stays text: one block, escaped.
	const tricky = withCodeActions(renderMarkdown('```x.go\n</code></pre><pre data-path="/etc/passwd"><code>\n```'));
	assert.equal((tricky.match(/class="codeblock"/g) ?? []).length, 1);
	assert.ok(tricky.includes('data-path="x.go"') && !tricky.includes('data-path="/etc'));
	// A path with a quote is escaped in the attribute.
	assert.ok(!withCodeActions(renderMarkdown('```go a".go\nx\n```')).includes('a".go'));
});
