import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseCommands } from '../../src/chip';
import { formatBytes, parseSessions, sessionItem, sessionMarkdown } from '../../src/sessionText';

test('sessions from a list result: what is not one is left out', () => {
	const got = parseSessions({
		sessions: [
			{ id: 'b', title: 'Fix the build', started: '2026-12-03T12:00:00Z', updated: '2026-12-03T13:05:00Z', turns: 3, bytes: 4100, current: true },
			{ id: '', title: 'no id' },
			null,
			{ id: 'a' },
		],
	});
	assert.deepEqual(got.map((s) => [s.id, s.title, s.turns, s.current]), [
		['b', 'Fix the build', 3, true],
		['a', '', 0, false],
	]);
	assert.deepEqual(parseSessions({}), []);
});

test("a session's line: title, when, turns, size; the current one marked", () => {
	const [s] = parseSessions({ sessions: [{ id: 'b', title: 'Fix the build', started: '2026-12-03T12:00:00Z', updated: '2026-12-03T13:05:00Z', turns: 1, bytes: 4100, current: true }] });
	assert.deepEqual(sessionItem(s!, true), {
		label: '$(arrow-right) Fix the build',
		description: '2026-12-03 13:05 · 1 turn · 4.1 kB · current',
		detail: 'b · started 2026-12-03 12:00',
	});
	const [u] = parseSessions({ sessions: [{ id: 'c', title: '', updated: 'later', turns: 0, bytes: 812 }] });
	assert.equal(sessionItem(u!, true).label, '(no prompt yet)');
	assert.match(sessionItem(u!, true).description, /^later · 0 turns · 812 B$/);
	assert.equal(formatBytes(2_345_678), '2.3 MB');
});

test('a session opened read-only is Markdown: prompts, replies, tools, results fenced', () => {
	const ev = (kind: string, text: string, over: object = {}) => ({ session: 'b', turn: 1, round: 1, kind, text, delta: false, ...over }) as never;
	const md = sessionMarkdown({ id: 'b', title: 'Fix the build' }, [
		ev('user', 'Fix it.'),
		ev('reasoning', 'hidden'),
		ev('tool_call', '', { tool: 'read', args: { path: 'a_b.go' } }),
		ev('tool_result', 'x := `y`\n'),
		ev('assistant', 'Done.'),
		ev('info', 'Cancelled.'),
	]);
	assert.equal(md, '# Fix the build\n\n_Session b, read-only._\n\n## You\n\nFix it.\n\n- **read** a\\_b.go\n\n```\nx := `y`\n```\n\n## Reika\n\nDone.\n\n_Cancelled._\n');
});

test('slash commands from reika.commands', () => {
	assert.deepEqual(
		parseCommands({ commands: [{ name: 'mode', description: 'switch', argumentHint: '[NAME]' }, { name: '' }, { description: 'x' }, { name: 'review', description: 'r', source: '.reika/commands/review.md' }] }),
		[
			{ name: 'mode', description: 'switch', argumentHint: '[NAME]' },
			{ name: 'review', description: 'r', source: '.reika/commands/review.md' },
		],
	);
	assert.deepEqual(parseCommands(null), []);
});
