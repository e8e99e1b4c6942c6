// The @file mentions of the chat's input: which words name a file, the
// glob that completes one, and the order completions are offered in. No
// 'vscode' import: unit-tested in plain node.

import * as path from 'node:path';

/** The paths the text mentions as @path, in order (a trailing full stop,
 * comma, colon, semicolon, ? ! or ) is not part of the path). */
export function mentions(text: string): string[] {
	const out: string[] = [];
	for (const m of text.matchAll(/(?:^|\s)@([^\s@]+)/g)) {
		const p = m[1]!.replace(/[.,;:!?)]+$/, '');
		if (p !== '') {
			out.push(p);
		}
	}
	return out;
}

/** The glob (relative to a workspace folder) of the files whose path
 * contains what was typed after @; glob characters typed are dropped. */
export function filesGlob(query: string): string {
	const q = query.replace(/[*?{}[\]!\\]/g, '').replace(/^\/+/, '');
	if (q === '') {
		return '**/*';
	}
	return q.includes('/') ? `**/${q}*` : `**/*${q}*`;
}

/** Orders completions: the name starting with the query first, then the
 * shorter path, then by path; at most max. */
export function rankFiles(paths: readonly string[], query: string, max = 20): string[] {
	const q = query.toLowerCase();
	const score = (p: string): number => (path.posix.basename(p).toLowerCase().startsWith(q) ? 0 : 1);
	return [...new Set(paths)]
		.sort((a, b) => score(a) - score(b) || a.length - b.length || (a < b ? -1 : a > b ? 1 : 0))
		.slice(0, max);
}

/** The absolute path of p (relative to root, or absolute) when it lies
 * inside root; undefined otherwise. */
export function insideRoot(root: string, p: string): string | undefined {
	const abs = path.resolve(root, p);
	const rel = path.relative(root, abs);
	if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) {
		return undefined;
	}
	return abs;
}
