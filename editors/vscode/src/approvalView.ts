// Approvals in VS Code: an edit or a write opens the diff editor on the
// current and the proposed text, a long or multi-line command opens in a
// read-only editor, and the decision (Allow / Allow for this session /
// Deny) is offered in the chat and on the editor's title bar, and by a
// notification when the chat is not in view — never modal, so a stray Enter
// allows nothing. (A notification hides itself after a while; the chat
// keeps the question until it is answered.) The editors open beside the
// chat, and close when the user has chosen.

import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { CancellationToken, MessageActionItem, MessageType, ShowMessageRequestParams } from 'vscode-languageclient/node';
import { commandFitsMessage, lineCount, parseApproval, ParsedApproval, proposedText } from './approval';
import { ApprovalScheme } from './ids';
import { TranscriptEvent } from './protocol';

/** What the chat shows of a waiting approval; undefined once answered. */
export type ApprovalShown = { message: string; actions: string[] } | undefined;

export class ApprovalView implements vscode.TextDocumentContentProvider {
	/** The text of each document shown for a waiting approval, by URI. */
	private readonly docs = new Map<string, string>();
	private counter = 0;
	/** The approval waiting for the user (the agent asks one at a time). */
	private pending:
		| { actions: MessageActionItem[]; settle: (pick: MessageActionItem | undefined) => void; reveal: (() => Thenable<unknown>) | undefined }
		| undefined;
	/** Opens again what the approval being asked showed (set while asking). */
	private reopen: (() => Thenable<unknown>) | undefined;

	constructor(
		/** The newest tool call of the transcript. */
		private readonly latestToolCall: () => TranscriptEvent | undefined,
		/** The workspace folder the server's paths are relative to. */
		private readonly root: () => string | undefined,
		private readonly log: (line: string) => void,
		/** Shows a waiting approval elsewhere (the chat, the title bar's
		 * buttons), or that none waits. */
		private readonly shown: (a: ApprovalShown) => void,
		/** Where the chat is: its column, and whether it is in view (then it
		 * asks, and no notification is needed). */
		private readonly chat: { column(): vscode.ViewColumn | undefined; visible(): boolean },
	) {}

	provideTextDocumentContent(uri: vscode.Uri): string {
		return this.docs.get(uri.toString()) ?? '';
	}

	/** Asks the user, showing what is to be approved; resolves with the
	 * action chosen — in the notification, the chat or the editor's title
	 * bar, whichever comes first — or undefined when the notification was
	 * dismissed or the server withdrew the request. */
	async ask(params: ShowMessageRequestParams, token: CancellationToken): Promise<MessageActionItem | undefined> {
		const a = parseApproval(params.message);
		const shown: vscode.Uri[] = [];
		let message = oneLine(params.message);
		this.reopen = undefined;
		try {
			if (a.kind === 'edit') {
				message = (await this.showChange(a, shown))
					? `Reika wants to ${a.summary}. The diff editor shows the change.`
					: `Reika wants to ${a.summary}.`;
			} else if (a.kind === 'command') {
				message = await this.showCommand(a, shown);
			}
		} catch (e) {
			this.log(`approval: could not show ${a.summary}: ${e instanceof Error ? e.message : String(e)}`);
		}
		const actions = params.actions ?? [];
		try {
			return await new Promise<MessageActionItem | undefined>((resolve) => {
				const settle = (pick: MessageActionItem | undefined): void => {
					if (this.pending?.settle === settle) {
						this.pending = undefined;
					}
					resolve(pick);
				};
				this.pending = { actions, settle, reveal: this.reopen };
				this.shown({ message, actions: actions.map((x) => x.title) });
				if (!this.chat.visible()) {
					void notify(params.type, message, actions).then(settle);
				}
				token.onCancellationRequested(() => settle(undefined));
			});
		} finally {
			this.shown(undefined);
			await this.close(shown);
		}
	}

	/** Answers the waiting approval with the action of that title (from the
	 * chat or the editor title bar); false when none waits or none has it. */
	answer(title: string): boolean {
		const p = this.pending;
		const action = p?.actions.find((x) => x.title === title);
		if (p === undefined || action === undefined) {
			return false;
		}
		p.settle(action);
		return true;
	}

	/** Brings what the waiting approval shows (its diff, its command) to the
	 * front, with the focus; false when no approval waits. */
	async reveal(): Promise<boolean> {
		const p = this.pending;
		if (p === undefined) {
			return false;
		}
		await p.reveal?.();
		return true;
	}

	/** Opens the diff of an edit or a write: the current text against the
	 * proposed one from the tool call, else the server's diff. */
	private async showChange(a: ParsedApproval, shown: vscode.Uri[]): Promise<boolean> {
		const call = this.latestToolCall();
		const file = a.path !== undefined ? this.resolve(a.path) : undefined;
		const args = (call?.args ?? {}) as Record<string, unknown>;
		if (call !== undefined && call.tool === a.tool && file !== undefined && typeof args.path === 'string' && this.resolve(args.path) === file) {
			const current = await currentText(file);
			const proposal = proposedText(a.tool ?? '', args, current);
			if (proposal.ok) {
				const rel = a.path ?? path.basename(file);
				const left = this.doc(`current/${rel}`, current ?? '');
				const right = this.doc(`proposed/${rel}`, proposal.text);
				shown.push(left, right);
				const title = `${path.basename(rel)}: ${current === undefined ? 'new file' : 'current'} ↔ proposed by Reika`;
				await vscode.commands.executeCommand('vscode.diff', left, right, title, this.showOptions());
				this.reopen = () => vscode.commands.executeCommand('vscode.diff', left, right, title, { ...this.showOptions(), preserveFocus: false });
				return true;
			}
			this.log(`approval: ${a.summary}: cannot show the proposed text (${proposal.reason}); showing the server's diff`);
		}
		if (a.detail === '') {
			return false;
		}
		const diff = this.doc(`diff/${a.path ?? 'change'}.diff`, a.detail);
		shown.push(diff);
		await vscode.window.showTextDocument(diff, this.showOptions());
		this.reopen = () => vscode.window.showTextDocument(diff, { ...this.showOptions(), preserveFocus: false });
		return true;
	}

	/** The message of a command approval: the whole command when it fits on
	 * a line, else it opens in an editor and the message says so. */
	private async showCommand(a: ParsedApproval, shown: vscode.Uri[]): Promise<string> {
		const call = this.latestToolCall();
		const fromCall = call?.tool === 'bash' ? (call.args as { command?: unknown } | undefined)?.command : undefined;
		const command = typeof fromCall === 'string' && fromCall.trim() !== '' ? fromCall : a.detail;
		if (command.trim() === '') {
			return `Reika wants to ${a.summary}.`;
		}
		if (commandFitsMessage(command)) {
			return `Reika wants to run: ${command.trim()}`;
		}
		const uri = this.doc('command/command.sh', command.endsWith('\n') ? command : `${command}\n`);
		shown.push(uri);
		await vscode.window.showTextDocument(uri, this.showOptions());
		this.reopen = () => vscode.window.showTextDocument(uri, { ...this.showOptions(), preserveFocus: false });
		const n = lineCount(command);
		return `Reika wants to run the ${n === 1 ? 'long command' : `${n}-line command`} shown in the editor.`;
	}

	/** Approval editors open beside the chat, never over it: in the first
	 * group, or the second when the chat is in the first. They are no
	 * preview, so they do not replace the user's preview tab (they close
	 * once answered). */
	private showOptions(): vscode.TextDocumentShowOptions {
		const chat = this.chat.column();
		const viewColumn = chat === undefined ? vscode.ViewColumn.Active : chat === vscode.ViewColumn.One ? vscode.ViewColumn.Two : vscode.ViewColumn.One;
		return { preview: false, preserveFocus: true, viewColumn };
	}

	private doc(name: string, text: string): vscode.Uri {
		this.counter++;
		const uri = vscode.Uri.from({ scheme: ApprovalScheme, path: `/${this.counter}/${name}` });
		this.docs.set(uri.toString(), text);
		return uri;
	}

	private resolve(p: string): string {
		const root = this.root();
		return path.resolve(root ?? '/', p);
	}

	/** Closes the editors of an answered approval and forgets their text. */
	private async close(uris: vscode.Uri[]): Promise<void> {
		if (uris.length === 0) {
			return;
		}
		const keys = new Set(uris.map((u) => u.toString()));
		const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) => {
			const input = t.input;
			if (input instanceof vscode.TabInputTextDiff) {
				return keys.has(input.original.toString()) || keys.has(input.modified.toString());
			}
			return input instanceof vscode.TabInputText && keys.has(input.uri.toString());
		});
		try {
			await vscode.window.tabGroups.close(tabs, true);
		} catch (e) {
			this.log(`approval: closing its editors: ${e instanceof Error ? e.message : String(e)}`);
		}
		for (const k of keys) {
			this.docs.delete(k);
		}
	}
}

/** The open buffer's text, else the file's; undefined when there is no
 * such file. */
async function currentText(file: string): Promise<string | undefined> {
	const open = vscode.workspace.textDocuments.find((d) => d.uri.scheme === 'file' && d.uri.fsPath === file);
	if (open !== undefined) {
		return open.getText();
	}
	try {
		return await fs.promises.readFile(file, 'utf8');
	} catch {
		return undefined;
	}
}

function oneLine(message: string): string {
	return message.replace(/\s*\n+\s*/g, ' ').trim();
}

function notify(type: MessageType, message: string, actions: MessageActionItem[]): Thenable<MessageActionItem | undefined> {
	switch (type) {
		case MessageType.Error:
			return vscode.window.showErrorMessage(message, ...actions);
		case MessageType.Warning:
			return vscode.window.showWarningMessage(message, ...actions);
		default:
			return vscode.window.showInformationMessage(message, ...actions);
	}
}
