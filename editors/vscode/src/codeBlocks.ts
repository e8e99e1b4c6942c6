// The actions on a reply's code blocks and the chat input's @file
// mentions. Copy puts the code on the clipboard; Insert puts it at the
// cursor of the last text editor; Apply opens VS Code's diff editor on the
// file the block names (its current text against the block), with an Apply
// button on the title bar that makes the change through a WorkspaceEdit
// (unsaved, so it can be undone). The agent's approvals cannot carry it:
// they answer the server's requests, and this change is the user's own.
// @path in the input attaches that workspace file to the ask (docs/protocol.md
// §3.1: one uri, the whole document).

import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { Selection } from './ask';
import { ApplyScheme } from './ids';
import { filesGlob, insideRoot, mentions, rankFiles } from './mention';

/** A change waiting in a diff editor for its Apply button. */
interface Proposed {
	target: vscode.Uri;
	text: string;
	exists: boolean;
}

export class CodeBlocks implements vscode.TextDocumentContentProvider, vscode.Disposable {
	/** The text of the documents the diffs show, by URI. */
	private readonly docs = new Map<string, string>();
	/** The proposals, by the URI of their right-hand side. */
	private readonly proposed = new Map<string, Proposed>();
	private counter = 0;
	/** The last text editor the user was in (the chat has the focus when a
	 * button is clicked). */
	private lastEditor: vscode.TextEditor | undefined;
	private readonly subscription: vscode.Disposable;

	constructor(
		/** The workspace folder a block's path is relative to. */
		private readonly root: () => string | undefined,
		private readonly log: (line: string) => void,
	) {
		this.track(vscode.window.activeTextEditor);
		this.subscription = vscode.window.onDidChangeActiveTextEditor((e) => this.track(e));
	}

	provideTextDocumentContent(uri: vscode.Uri): string {
		return this.docs.get(uri.toString()) ?? '';
	}

	/** A click on a code block's button in the chat. */
	async run(action: string, code: string, file: string | undefined): Promise<void> {
		try {
			switch (action) {
				case 'copy':
					await vscode.env.clipboard.writeText(code);
					vscode.window.setStatusBarMessage('Reika: code copied.', 3000);
					return;
				case 'insert':
					await this.insert(code);
					return;
				case 'apply':
					if (file !== undefined) {
						await this.showApply(code, file);
					}
					return;
			}
		} catch (e) {
			const msg = e instanceof Error ? e.message : String(e);
			this.log(`code block: ${action}: ${msg}`);
			void vscode.window.showErrorMessage(`Reika: ${action} failed: ${msg}`);
		}
	}

	/** Inserts code at the cursor of the last text editor, replacing what
	 * is selected there. */
	private async insert(code: string): Promise<void> {
		const last = this.lastEditor;
		if (last === undefined || last.document.isClosed) {
			void vscode.window.showInformationMessage('Reika: open a file and place the cursor where the code should go, then press Insert.');
			return;
		}
		const editor = await vscode.window.showTextDocument(last.document, { viewColumn: last.viewColumn, selection: last.selection });
		await editor.edit((b) => b.replace(editor.selection, code));
	}

	/** Opens the diff of the file a block names against the block. */
	private async showApply(code: string, file: string): Promise<void> {
		const root = this.root();
		const abs = root === undefined ? undefined : insideRoot(root, file);
		if (root === undefined || abs === undefined) {
			void vscode.window.showWarningMessage(`Reika: ${file} is not a file of this workspace; nothing to apply to.`);
			return;
		}
		const rel = path.relative(root, abs).split(path.sep).join('/');
		const target = vscode.Uri.file(abs);
		const exists = await isFile(abs);
		this.counter++;
		const text = code.endsWith('\n') || code === '' ? code : `${code}\n`;
		const right = vscode.Uri.from({ scheme: ApplyScheme, path: `/${this.counter}/${rel}` });
		this.docs.set(right.toString(), text);
		this.proposed.set(right.toString(), { target, text, exists });
		let left = target;
		if (!exists) {
			left = vscode.Uri.from({ scheme: ApplyScheme, path: `/${this.counter}/new/${rel}` });
			this.docs.set(left.toString(), '');
		}
		const title = `${path.basename(rel)}: ${exists ? 'current' : 'new file'} ↔ code block (Apply on the title bar)`;
		await vscode.commands.executeCommand('vscode.diff', left, right, title, { preview: false });
	}

	/** The Apply button of a code block's diff: writes the block into the
	 * file's buffer, closes the diff, shows the file. */
	async apply(uri?: vscode.Uri): Promise<boolean> {
		const key = (uri ?? activeDiffRight())?.toString();
		const p = key === undefined ? undefined : this.proposed.get(key);
		if (key === undefined || p === undefined) {
			vscode.window.setStatusBarMessage('Reika: no code block diff is in front.', 5000);
			return false;
		}
		const edit = new vscode.WorkspaceEdit();
		if (p.exists) {
			const doc = await vscode.workspace.openTextDocument(p.target);
			edit.replace(p.target, doc.validateRange(new vscode.Range(0, 0, doc.lineCount, 0)), p.text);
		} else {
			edit.createFile(p.target, { ignoreIfExists: true });
			edit.insert(p.target, new vscode.Position(0, 0), p.text);
		}
		if (!(await vscode.workspace.applyEdit(edit))) {
			void vscode.window.showErrorMessage(`Reika: could not apply the code block to ${p.target.fsPath}.`);
			return false;
		}
		await closeDiffs(key);
		this.proposed.delete(key);
		this.docs.delete(key);
		await vscode.window.showTextDocument(p.target, { preview: false });
		return true;
	}

	/** Workspace files whose path contains query, for @ completion. */
	async files(query: string): Promise<string[]> {
		const found = await vscode.workspace.findFiles(filesGlob(query), '**/{node_modules,.git}/**', 200);
		return rankFiles(
			found.map((u) => vscode.workspace.asRelativePath(u, false)),
			query,
		);
	}

	/** The first workspace file the text mentions as @path, to attach whole;
	 * undefined when it mentions none. */
	async mentioned(text: string): Promise<Selection | undefined> {
		const root = this.root();
		if (root === undefined) {
			return undefined;
		}
		for (const m of mentions(text)) {
			const abs = insideRoot(root, m);
			if (abs !== undefined && (await isFile(abs))) {
				return { uri: vscode.Uri.file(abs).toString(), label: m };
			}
		}
		return undefined;
	}

	dispose(): void {
		this.subscription.dispose();
	}

	private track(e: vscode.TextEditor | undefined): void {
		if (e !== undefined && (e.document.uri.scheme === 'file' || e.document.uri.scheme === 'untitled')) {
			this.lastEditor = e;
		}
	}
}

async function isFile(p: string): Promise<boolean> {
	try {
		return (await fs.promises.stat(p)).isFile();
	} catch {
		return false;
	}
}

/** The right-hand side of the diff editor in front, if any. */
function activeDiffRight(): vscode.Uri | undefined {
	const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
	return input instanceof vscode.TabInputTextDiff ? input.modified : undefined;
}

async function closeDiffs(right: string): Promise<void> {
	const tabs = vscode.window.tabGroups.all
		.flatMap((g) => g.tabs)
		.filter((t) => t.input instanceof vscode.TabInputTextDiff && t.input.modified.toString() === right);
	await vscode.window.tabGroups.close(tabs, true);
}
