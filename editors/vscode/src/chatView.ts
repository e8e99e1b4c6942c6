// The chat view: one webview panel, reused (revealed where it is, never a
// second one), restored after a window reload by its serializer. The
// conversation is rendered by chatModel.ts; media/chat.js puts it in place
// and sends what the user asks.

import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import type { ApprovalShown } from './approvalView';
import { FocusGate } from './chatFocus';
import { ChatBlock, Conversation } from './chatModel';
import { ChatViewType } from './ids';
import { Status, TranscriptEvent } from './protocol';

/** What the chat asks of the extension. */
export interface ChatHandlers {
	/** The user sent text; attach says to attach the editor selection. */
	ask(text: string, attach: boolean): void;
	/** The user pressed Stop. */
	cancel(): void;
	/** A toolbar button: compact, newSession, save. */
	command(id: string): void;
	/** The view (re)loaded and shows what it is sent next. */
	ready(): void;
	/** The user answered the waiting approval with this action. */
	approve(title: string): void;
}

/** How long changes are gathered before they are sent to the view. */
const flushDelayMs = 50;

type ToView =
	| { type: 'reset'; blocks: ChatBlock[] }
	| { type: 'upsert'; blocks: ChatBlock[] }
	| { type: 'status'; status: Status | null; problem?: string }
	| { type: 'turn'; running: boolean; progress?: string }
	| { type: 'attachment'; label: string | null }
	| { type: 'approval'; approval: ApprovalShown | null }
	| { type: 'focus' };

export class ChatView implements vscode.WebviewPanelSerializer, vscode.Disposable {
	readonly conversation = new Conversation();
	private panel: vscode.WebviewPanel | undefined;
	private timer: ReturnType<typeof setTimeout> | undefined;
	private status: { status: Status | null; problem?: string } = { status: null };
	private turn: { running: boolean; progress?: string } = { running: false };
	private attachment: string | null = null;
	private approval: ApprovalShown | null = null;
	private readonly focus = new FocusGate();
	private readonly subscriptions: vscode.Disposable[] = [];

	constructor(
		private readonly extensionUri: vscode.Uri,
		private readonly handlers: ChatHandlers,
	) {}

	/** The column the panel is in; undefined when it is not open. */
	column(): vscode.ViewColumn | undefined {
		return this.panel?.viewColumn;
	}

	/** Whether the panel is open and visible. */
	isVisible(): boolean {
		return this.panel?.visible === true;
	}

	/** Shows the chat: the open panel where it is, else a new one beside
	 * the editor. With focusInput the cursor goes to the input. */
	show(focusInput: boolean): void {
		const restored = this.panel === undefined ? restoredChatTab() : undefined;
		if (restored !== undefined) {
			// A chat tab VS Code kept across a reload but has not restored yet
			// (it does so when the tab is shown): show that one, rather than
			// opening a second beside it.
			void openTab(restored);
		} else if (this.panel === undefined) {
			const panel = vscode.window.createWebviewPanel(
				ChatViewType,
				'Reika',
				{ viewColumn: vscode.ViewColumn.Beside, preserveFocus: !focusInput },
				this.options(),
			);
			this.adopt(panel);
		} else {
			this.panel.reveal(this.panel.viewColumn, !focusInput);
		}
		if (focusInput && this.focus.request()) {
			this.post({ type: 'focus' });
		}
	}

	/** Restores the panel VS Code kept across a reload. */
	async deserializeWebviewPanel(panel: vscode.WebviewPanel): Promise<void> {
		panel.webview.options = this.options();
		this.adopt(panel);
	}

	add(ev: TranscriptEvent): void {
		this.conversation.add(ev);
		this.schedule();
	}

	addLocal(text: string): void {
		this.conversation.addLocal(text);
		this.schedule();
	}

	/** Shows an error the transcript does not carry (see Conversation.addError). */
	addError(text: string): void {
		this.conversation.addError(text);
		this.schedule();
	}

	/** Shows a message of the server's in the conversation. */
	addInfo(text: string): void {
		this.conversation.addInfo(text);
		this.schedule();
	}

	/** Ends the turn the server never finished (see Conversation.interrupt). */
	interrupt(text: string): void {
		this.conversation.interrupt(text);
		this.schedule();
	}

	/** Shows these events instead of what the view had. */
	reset(events: readonly TranscriptEvent[]): void {
		this.conversation.reset(events);
		this.conversation.takeChanged();
		this.post({ type: 'reset', blocks: this.conversation.all() });
	}

	clear(): void {
		this.reset([]);
	}

	setStatus(status: Status | undefined, problem?: string): void {
		this.status = problem !== undefined ? { status: status ?? null, problem } : { status: status ?? null };
		this.post({ type: 'status', ...this.status });
	}

	setTurn(running: boolean, progress?: string): void {
		this.turn = progress !== undefined ? { running, progress } : { running };
		this.post({ type: 'turn', ...this.turn });
	}

	/** Shows the approval waiting for the user, with its actions, above the
	 * input; undefined clears it. */
	setApproval(a: ApprovalShown): void {
		this.approval = a ?? null;
		this.post({ type: 'approval', approval: this.approval });
	}

	setAttachment(label: string | undefined): void {
		this.attachment = label ?? null;
		this.post({ type: 'attachment', label: this.attachment });
	}

	dispose(): void {
		if (this.timer !== undefined) {
			clearTimeout(this.timer);
		}
		this.panel?.dispose();
		this.subscriptions.forEach((d) => d.dispose());
	}

	private options(): vscode.WebviewPanelOptions & vscode.WebviewOptions {
		return {
			enableScripts: true,
			retainContextWhenHidden: true,
			localResourceRoots: [vscode.Uri.joinPath(this.extensionUri, 'media')],
		};
	}

	private adopt(panel: vscode.WebviewPanel): void {
		this.panel?.dispose();
		this.panel = panel;
		this.focus.loading();
		panel.iconPath = vscode.Uri.joinPath(this.extensionUri, 'media', 'reika.svg');
		panel.webview.html = this.html(panel.webview);
		this.subscriptions.push(
			panel.onDidDispose(() => {
				if (this.panel === panel) {
					this.panel = undefined;
				}
			}),
			panel.webview.onDidReceiveMessage((m: unknown) => this.receive(m)),
		);
	}

	private receive(raw: unknown): void {
		if (raw === null || typeof raw !== 'object') {
			return;
		}
		const m = raw as { type?: unknown; text?: unknown; attach?: unknown; id?: unknown; title?: unknown };
		switch (m.type) {
			case 'ready':
				this.conversation.takeChanged();
				this.post({ type: 'reset', blocks: this.conversation.all() });
				this.post({ type: 'status', ...this.status });
				this.post({ type: 'turn', ...this.turn });
				this.post({ type: 'attachment', label: this.attachment });
				this.post({ type: 'approval', approval: this.approval });
				if (this.focus.ready()) {
					this.post({ type: 'focus' });
				}
				this.handlers.ready();
				break;
			case 'ask':
				if (typeof m.text === 'string' && m.text.trim() !== '') {
					this.handlers.ask(m.text, m.attach === true);
				}
				break;
			case 'cancel':
				this.handlers.cancel();
				break;
			case 'approve':
				if (typeof m.title === 'string') {
					this.handlers.approve(m.title);
				}
				break;
			case 'command':
				if (typeof m.id === 'string') {
					this.handlers.command(m.id);
				}
				break;
		}
	}

	private schedule(): void {
		if (this.timer !== undefined) {
			return;
		}
		this.timer = setTimeout(() => {
			this.timer = undefined;
			const blocks = this.conversation.takeChanged();
			if (blocks.length > 0) {
				this.post({ type: 'upsert', blocks });
			}
		}, flushDelayMs);
	}

	/** Sends a message to the view. Blocks still waiting to be sent go
	 * first, so the view never shows a turn ended before its last words. */
	private post(m: ToView): void {
		if (m.type !== 'upsert' && m.type !== 'reset' && this.timer !== undefined) {
			clearTimeout(this.timer);
			this.timer = undefined;
			const blocks = this.conversation.takeChanged();
			if (blocks.length > 0) {
				void this.panel?.webview.postMessage({ type: 'upsert', blocks });
			}
		}
		void this.panel?.webview.postMessage(m);
	}

	private html(webview: vscode.Webview): string {
		const media = (f: string): vscode.Uri => webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'media', f));
		const nonce = randomBytes(16).toString('base64');
		const csp = [
			"default-src 'none'",
			`style-src ${webview.cspSource}`,
			`font-src ${webview.cspSource}`,
			`img-src ${webview.cspSource} data:`,
			`script-src 'nonce-${nonce}'`,
		].join('; ');
		return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="${media('chat.css').toString()}">
<title>Reika</title>
</head>
<body>
<header>
	<div id="context" class="context" title="The context window"><div class="bar"><div id="context-fill" class="fill"></div><div id="context-shed" class="shed" hidden></div></div><span id="context-label" class="label">Reika: starting…</span></div>
	<div class="tools">
		<button type="button" data-command="compact" title="Write a note and fold old turns into a recap">Compact</button>
		<button type="button" data-command="newSession" title="Start a new session">New</button>
	</div>
</header>
<main>
	<div id="empty">Ask Reika to read, change or run something in this workspace. A selection in the editor is attached to what you send.</div>
	<div id="log" role="log" aria-live="polite"></div>
</main>
<footer>
	<div id="approval" class="approval" role="alertdialog" aria-labelledby="approval-message" hidden><div id="approval-message"></div><div id="approval-actions" class="approval-actions"></div></div>
	<div id="progress" hidden></div>
	<div id="attachment" class="attachment-chip" hidden><span id="attachment-label"></span><button id="detach" type="button" title="Do not attach the selection">×</button></div>
	<div class="composer">
		<textarea id="input" rows="2" placeholder="Ask Reika…" aria-label="Ask Reika"></textarea>
		<button id="send" type="button" title="Send (Enter)">Send</button>
	</div>
	<div class="hint">Enter to send · Shift+Enter for a new line</div>
</footer>
<script nonce="${nonce}" src="${media('chat.js').toString()}"></script>
</body>
</html>`;
	}
}

/** The chat's tab when VS Code shows one whose panel is not ours yet. */
function restoredChatTab(): vscode.Tab | undefined {
	return vscode.window.tabGroups.all
		.flatMap((g) => g.tabs)
		.find((t) => t.input instanceof vscode.TabInputWebview && (t.input.viewType === ChatViewType || t.input.viewType.endsWith(`-${ChatViewType}`)));
}

const groupFocus = ['First', 'Second', 'Third', 'Fourth', 'Fifth', 'Sixth', 'Seventh', 'Eighth'];

/** Makes tab the active editor of its group, and that group the active one. */
async function openTab(tab: vscode.Tab): Promise<void> {
	const which = groupFocus[tab.group.viewColumn - 1];
	if (which !== undefined) {
		await vscode.commands.executeCommand(`workbench.action.focus${which}EditorGroup`);
	}
	await vscode.commands.executeCommand('workbench.action.openEditorAtIndex', tab.group.tabs.indexOf(tab));
}
