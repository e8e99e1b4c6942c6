// What an approval asks, read from the server's window/showMessageRequest,
// and the proposed text of an edit or a write, so the extension can show it
// in VS Code's diff editor. The server's message is "Reika wants to
// SUMMARY" and, after a blank line, a detail (the diff, the command, the
// URL), cut at 2000 characters; the whole proposal comes from the tool call
// the agent is running, which the transcript announced just before it asked.
// No 'vscode' import: unit-tested in plain node.

export type ApprovalKind = 'edit' | 'command' | 'fetch' | 'outside' | 'other';

export interface ParsedApproval {
	kind: ApprovalKind;
	/** "edit main.go (1 hunk)", "run `go test`", … */
	summary: string;
	/** The diff, the command or the URL; '' when there is none. */
	detail: string;
	/** The tool that asks: edit, write, bash or fetch_url. */
	tool?: string;
	/** The file an edit or a write changes, as the server names it. */
	path?: string;
}

const prefix = 'Reika wants to ';

/** Reads an approval request's message. */
export function parseApproval(message: string): ParsedApproval {
	let text = message;
	if (text.startsWith(prefix)) {
		text = text.slice(prefix.length);
	}
	const cut = text.indexOf('\n\n');
	const summary = (cut < 0 ? text : text.slice(0, cut)).trim();
	const detail = cut < 0 ? '' : text.slice(cut + 2);
	if (/ \(outside the workspace\)$/.test(summary)) {
		return { kind: 'outside', summary, detail };
	}
	const change = /^(edit|write) (.+) \([^()]*\)$/.exec(summary);
	if (change !== null) {
		return { kind: 'edit', summary, detail, tool: change[1]!, path: change[2]! };
	}
	if (summary.startsWith('run ')) {
		return { kind: 'command', summary, detail, tool: 'bash' };
	}
	if (summary.startsWith('fetch ')) {
		return { kind: 'fetch', summary, detail, tool: 'fetch_url' };
	}
	return { kind: 'other', summary, detail };
}

/** The arguments of an edit or write tool call that matter here. */
export interface ChangeArgs {
	path?: unknown;
	content?: unknown;
	old_string?: unknown;
	new_string?: unknown;
	replace_all?: unknown;
}

export type Proposal = { ok: true; text: string } | { ok: false; reason: string };

function occurrences(s: string, sub: string): number[] {
	const out: number[] = [];
	for (let at = 0; ; ) {
		const i = s.indexOf(sub, at);
		if (i < 0) {
			return out;
		}
		out.push(i);
		at = i + sub.length;
	}
}

/**
 * The text a write or an edit would leave, from the current text (the open
 * buffer, else the file; undefined when there is no such file) and the
 * tool's arguments. It follows the edit tool: old_string must occur once
 * unless replace_all, and a file with Windows line endings matches an
 * old_string written with \n.
 */
export function proposedText(tool: string, args: ChangeArgs, current: string | undefined): Proposal {
	if (tool === 'write') {
		return typeof args.content === 'string' ? { ok: true, text: args.content } : { ok: false, reason: 'no content' };
	}
	if (tool !== 'edit') {
		return { ok: false, reason: `${tool} changes no file` };
	}
	if (current === undefined) {
		return { ok: false, reason: 'the file does not exist' };
	}
	if (typeof args.old_string !== 'string' || typeof args.new_string !== 'string' || args.old_string === '') {
		return { ok: false, reason: 'no old_string and new_string' };
	}
	let oldStr: string = args.old_string;
	let newStr: string = args.new_string;
	let at = occurrences(current, oldStr);
	if (at.length === 0 && current.includes('\r\n') && !oldStr.includes('\r\n')) {
		oldStr = oldStr.replace(/\n/g, '\r\n');
		newStr = newStr.replace(/\r\n/g, '\n').replace(/\n/g, '\r\n');
		at = occurrences(current, oldStr);
	}
	if (at.length === 0) {
		return { ok: false, reason: 'old_string is not in the file' };
	}
	if (at.length > 1 && args.replace_all !== true) {
		return { ok: false, reason: `old_string occurs ${at.length} times` };
	}
	let out = '';
	let from = 0;
	for (const i of at) {
		out += current.slice(from, i) + newStr;
		from = i + oldStr.length;
	}
	return { ok: true, text: out + current.slice(from) };
}

/** Whether a command fits in the approval's one-line message. */
export function commandFitsMessage(command: string): boolean {
	return !command.trim().includes('\n') && command.trim().length <= 160;
}

/** The number of lines of a command. */
export function lineCount(text: string): number {
	return text.trimEnd().split('\n').length;
}
