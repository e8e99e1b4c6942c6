import * as assert from 'node:assert/strict';
import { test } from 'node:test';
import { Conversation, resultPreview, resultPreviewLines, splitSelection, toolSubject } from '../../src/chatModel';
import { TranscriptEvent } from '../../src/protocol';

function ev(over: Partial<TranscriptEvent>): TranscriptEvent {
	return { session: 's1', turn: 1, round: 1, kind: 'info', text: '', delta: false, ...over };
}

function htmlOf(c: Conversation): string[] {
	return c.all().map((b) => `${b.kind}: ${b.html}`);
}

test('streamed chunks grow one block, then the full message replaces it', () => {
	const c = new Conversation();
	c.add(ev({ kind: 'user', text: 'fix the bug' }));
	c.add(ev({ kind: 'assistant', text: 'Look', delta: true }));
	c.takeChanged();
	c.add(ev({ kind: 'assistant', text: 'ing at **a.go**', delta: true }));
	const changed = c.takeChanged();
	assert.equal(changed.length, 1, 'only the streamed block changed');
	assert.match(changed[0]!.html, /Looking at <strong>a\.go<\/strong>.*class="cursor"/s);
	c.add(ev({ kind: 'assistant', text: 'Looking at **a.go** now.' }));
	assert.equal(c.length, 2, 'user and assistant');
	const last = c.all()[1]!;
	assert.equal(last.id, changed[0]!.id, 'the same block');
	assert.equal(last.html, '<div class="md"><p>Looking at <strong>a.go</strong> now.</p></div>');
});

test('a new round opens a new stream; a round that only calls tools adds no empty reply', () => {
	const c = new Conversation();
	c.add(ev({ kind: 'assistant', round: 1, text: 'one' }));
	c.add(ev({ kind: 'assistant', round: 2, text: 'tw', delta: true }));
	c.add(ev({ kind: 'assistant', round: 2, text: 'o', delta: true }));
	c.add(ev({ kind: 'assistant', round: 3, text: '' }));
	c.add(ev({ kind: 'assistant', round: 4, text: 'three', delta: true }));
	assert.deepEqual(
		c.all().map((b) => b.html.replace(/<[^>]+>/g, '')),
		['one', 'two', 'three'],
	);
});

test('replies are Markdown; reasoning and tool calls collapse; results are shortened', () => {
	const c = new Conversation();
	c.add(ev({ kind: 'reasoning', text: 'I should *read* it' }));
	c.add(ev({ kind: 'tool_call', tool: 'read', args: { path: 'a.go' }, text: 'read' }));
	const lines = Array.from({ length: 30 }, (_, i) => `${i + 1}→line <${i + 1}>`).join('\n');
	c.add(ev({ kind: 'tool_result', tool: 'read', text: `a.go lines 1-30 of 30\n${lines}`, tokens: 1234 }));
	c.add(ev({ kind: 'assistant', text: '# Done\n\n- `a.go` read' }));
	const [reasoning, tool, reply] = c.all();
	assert.equal(reasoning!.html, '<details class="reasoning"><summary>Reasoning</summary><div class="md"><p>I should <em>read</em> it</p></div></details>');
	assert.equal(tool!.kind, 'tool', 'the result joined its call');
	assert.match(tool!.html, /^<details class="call"><summary><span class="tool-name">read<\/span> <span class="tool-subject">a\.go<\/span><\/summary><pre class="args">\{\n {2}&quot;path&quot;: &quot;a\.go&quot;\n\}<\/pre><\/details>/);
	assert.match(tool!.html, /result · 30 lines · 1\.2k tokens/);
	const preview = /<pre class="preview">([\s\S]*?)<\/pre>/.exec(tool!.html)![1]!;
	assert.equal(preview.split('\n').length, resultPreviewLines);
	assert.ok(preview.includes('line &lt;7&gt;') && !preview.includes('line &lt;8&gt;'), preview);
	assert.match(tool!.html, /<pre class="whole" hidden>[\s\S]*line &lt;30&gt;<\/pre><button class="expand" type="button" data-lines="30">Show all 30 lines<\/button>/);
	assert.equal(reply!.html, '<div class="md"><h1>Done</h1>\n<ul><li><code>a.go</code> read</li></ul></div>');
});

test('a short result shows whole, an error result is marked, and a running call says so', () => {
	const c = new Conversation();
	c.add(ev({ kind: 'tool_call', tool: 'bash', args: { command: 'go test ./...\necho done' } }));
	assert.match(c.all()[0]!.html, /<span class="tool-subject">go test \.\/\.\.\. …<\/span> <span class="running">running…<\/span>/);
	c.add(ev({ kind: 'tool_call', tool: 'grep', args: { pattern: 'TODO', path: 'src' } }));
	c.add(ev({ kind: 'tool_result', tool: 'bash', text: 'ok\n' }));
	c.add(ev({ kind: 'tool_result', tool: 'grep', text: 'Error: no such directory: src' }));
	const [bash, grep] = c.all();
	assert.ok(!bash!.html.includes('running…') && bash!.html.includes('<pre>ok\n</pre>') && !bash!.html.includes('expand'), bash!.html);
	assert.match(grep!.html, /TODO in src/);
	assert.match(grep!.html, /<div class="result failed">/);
});

test('a result without a waiting call is a block of its own', () => {
	const c = new Conversation();
	c.add(ev({ kind: 'tool_result', tool: 'read', text: 'x' }));
	assert.equal(c.all()[0]!.kind, 'result');
});

test('notes, folds, sheds and errors are blocks of their own, their text once', () => {
	const c = new Conversation();
	c.add(ev({ kind: 'note', text: 'a.go declares **package a**' }));
	c.add(ev({ kind: 'fold', text: 'Folded 8 rounds into a 914-token recap', tokens: 914 }));
	c.add(ev({ kind: 'shed', text: 'Shed 2 old results to summaries (13k → 8.1k tokens, shed point)' }));
	c.add(ev({ kind: 'error', text: 'engine <unreachable>' }));
	c.add(ev({ kind: 'info', text: 'Cancelled.' }));
	assert.deepEqual(htmlOf(c), [
		'note: <div class="label">Note · what has been established</div><div class="md"><p>a.go declares <strong>package a</strong></p></div>',
		'fold: <span class="glyph">⇊</span> Folded 8 rounds into a 914-token recap',
		'shed: <span class="glyph">✂</span> Shed 2 old results to summaries (13k → 8.1k tokens, shed point)',
		'error: <span class="glyph">✖</span> engine &lt;unreachable&gt;',
		'info: Cancelled.',
	]);
});

test('the user block shows the prompt and the attached selection apart', () => {
	const c = new Conversation();
	c.add(ev({ kind: 'user', text: 'Explain this.\n\n<selection file="src/a b.go" lines="5-7">\nfunc main() {\n\t<-ch\n}\n</selection>' }));
	assert.equal(
		c.all()[0]!.html,
		'<div class="who">You</div><div class="md"><p>Explain this.</p></div>' +
			'<details class="attachment"><summary>src/a b.go lines 5-7</summary><pre>func main() {\n\t&lt;-ch\n}</pre></details>',
	);
	assert.deepEqual(splitSelection('no selection'), { text: 'no selection' });
});

test('a new session gets a divider; reset replaces everything; changes are taken once', () => {
	const c = new Conversation();
	c.add(ev({ session: 'a', kind: 'user', text: 'one' }));
	c.addLocal('New session b');
	c.add(ev({ session: 'b', kind: 'user', text: 'two' }));
	assert.deepEqual(
		c.all().map((b) => b.kind),
		['user', 'local', 'session', 'user'],
	);
	assert.equal(c.session, 'b');
	assert.equal(c.takeChanged().length, 4);
	assert.equal(c.takeChanged().length, 0);
	c.reset([ev({ session: 'c', kind: 'user', text: 'three' })]);
	assert.deepEqual(
		c.all().map((b) => b.kind),
		['user'],
		'the first session of a reset has no divider',
	);
	assert.equal(c.latestToolCall, undefined);
});

test('the newest tool call is known, for the approval it may wait for', () => {
	const c = new Conversation();
	c.add(ev({ kind: 'tool_call', tool: 'read', args: { path: 'a' } }));
	c.add(ev({ kind: 'tool_call', tool: 'edit', args: { path: 'b', old_string: 'x', new_string: 'y' } }));
	assert.equal(c.latestToolCall?.tool, 'edit');
});

test('an error the transcript lacks is added once', () => {
	const c = new Conversation();
	c.add(ev({ kind: 'error', text: 'engine unreachable at http://127.0.0.1:8080/v1: connection refused' }));
	c.addError('engine unreachable at http://127.0.0.1:8080/v1: connection refused');
	c.addError('the prompt is empty');
	assert.deepEqual(
		c.all().map((b) => b.kind),
		['error', 'error'],
	);
});

test('toolSubject names what a call is about', () => {
	assert.equal(toolSubject('read', { path: 'a.go', start_line: 3, end_line: 9 }), 'a.go lines 3-9');
	assert.equal(toolSubject('edit', { path: 'b.go' }), 'b.go');
	assert.equal(toolSubject('glob', { pattern: '**/*.ts' }), '**/*.ts');
	assert.equal(toolSubject('fetch_url', { url: 'https://go.dev' }), 'https://go.dev');
	assert.equal(toolSubject('subagent', { task: 'x'.repeat(100) }).length, 80);
	assert.equal(toolSubject('read', 'not an object'), '');
});

test('resultPreview counts lines and knows when the preview is all of it', () => {
	assert.deepEqual(resultPreview('a\nb\n'), { preview: 'a\nb\n', whole: true, lines: 2 });
	const ten = Array.from({ length: 10 }, (_, i) => `l${i}`).join('\n');
	assert.equal(resultPreview(ten).whole, true, 'a line or two more than the preview shows whole');
	assert.equal(resultPreview(`${ten}\nl10`).whole, false);
	const long = 'x'.repeat(5000);
	const p = resultPreview(long);
	assert.equal(p.whole, false);
	assert.equal(p.lines, 1);
	assert.ok(p.preview.length < long.length);
});

test("a server's message is said once: not again after its block, and a fold that follows takes its place", () => {
	const c = new Conversation();
	c.add(ev({ kind: 'fold', text: 'Folded 2 rounds into a 300-token recap' }));
	c.addInfo('Folded 2 rounds into a 300-token recap');
	c.addInfo('Folded 3 rounds into a 400-token recap');
	c.add(ev({ kind: 'fold', text: 'Folded 3 rounds into a 400-token recap' }));
	assert.deepEqual(
		c.all().map((b) => b.kind),
		['fold', 'fold'],
	);
});

test('a turn the server never finished keeps what streamed, marked cut off, and says why', () => {
	const c = new Conversation();
	c.add(ev({ kind: 'user', text: 'go' }));
	c.add(ev({ kind: 'tool_call', tool: 'read', args: { path: 'a.go' } }));
	c.add(ev({ kind: 'assistant', text: 'Once upon', delta: true, round: 2 }));
	c.takeChanged();
	c.interrupt('The server stopped during the turn.');
	const changed = c.takeChanged().map((b) => b.kind);
	assert.deepEqual(changed, ['tool', 'assistant', 'error']);
	const [, tool, reply, error] = c.all();
	assert.match(tool!.html, /no result: the server stopped/);
	assert.match(reply!.html, /Once upon<\/p><\/div><div class="cut">… \(cut off: the server stopped\)<\/div>$/);
	assert.doesNotMatch(reply!.html, /cursor/);
	assert.match(error!.html, /The server stopped during the turn\./);
});

test("a reply's code blocks carry Copy, Insert and Apply; the user's own do not", () => {
	const c = new Conversation();
	c.add(ev({ kind: 'user', text: 'like this?\n\n```go a.go\nx\n```' }));
	c.add(ev({ kind: 'assistant', text: 'Yes:\n\n```go a.go\ny\n```' }));
	const [user, reply] = c.all();
	assert.ok(!user!.html.includes('data-code='), user!.html);
	assert.match(reply!.html, /<div class="codeblock" data-path="a\.go">.*data-code="copy".*data-code="insert".*data-code="apply".*<code class="language-go">y<\/code>/s);
});

test('a cut turn comes back after its turn when the chat is rebuilt from the transcript, which lacks it', () => {
	const live = new Conversation();
	live.add(ev({ kind: 'user', turn: 3, text: 'tell a story' }));
	live.add(ev({ kind: 'assistant', turn: 3, text: 'Once upon', delta: true }));
	const cut = live.interrupt('The server stopped during the turn.');
	assert.deepEqual(cut, {
		session: 's1',
		turn: 3,
		texts: [ev({ kind: 'assistant', turn: 3, text: 'Once upon' })],
		error: 'The server stopped during the turn.',
	});
	// The log has turn 3's prompt, not its reply, and the turn after it.
	const log = [ev({ kind: 'user', turn: 2, text: 'hi' }), ev({ kind: 'assistant', turn: 2, text: 'hello' }), ev({ kind: 'user', turn: 3, text: 'tell a story' }), ev({ kind: 'user', turn: 4, text: 'again' })];
	const other = { ...cut!, session: 's0' };
	const c = new Conversation();
	c.reset(log, [other, cut!]);
	const text = c.all().map((b) => `${b.kind}: ${b.html.replace(/<[^>]+>/g, '')}`);
	assert.deepEqual(text, [
		'user: Youhi',
		'assistant: hello',
		'user: Youtell a story',
		'assistant: Once upon… (cut off: the server stopped)',
		'error: ✖ The server stopped during the turn.',
		'user: Youagain',
	]);
	const plain = new Conversation();
	plain.reset(log);
	assert.equal(plain.length, 4, 'without the cut turn, the log alone');
});
