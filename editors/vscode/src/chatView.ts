// The chat: one conversation shown in up to two webviews — the sidebar view
// in the Reika activity bar container, and an editor tab (one panel,
// reused, revealed where it is, restored after a window reload by its
// serializer). Both get the same page (chatHtml.ts) and every update; the
// conversation is rendered once, by chatModel.ts; media/chat.js puts it in
// place and sends what the user asks.

import * as vscode from 'vscode';
import type { ApprovalShown } from './approvalView';
import { FocusGate } from './chatFocus';
import { ChatBlock, Conversation, CutTurn } from './chatModel';
import { chatHtml } from './chatHtml';
import { ChatSidebarViewId, ChatViewType } from './ids';
import { SlashCommand, Status, TranscriptEvent } from './protocol';

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
	/** A code block's button: copy, insert or apply (file: the path it names). */
	code(action: string, code: string, file: string | undefined): void;
	/** The workspace files an @ in the input may complete to. */
	files(query: string): Promise<string[]>;
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
	| { type: 'commands'; commands: SlashCommand[] }
	| { type: 'files'; query: string; files: string[] }
	| { type: 'focus' };

/** Where the chat opens when it is not open yet (the reika.chatLocation setting). */
export type ChatLocation = 'sidebar' | 'editor';

export class ChatView implements vscode.WebviewPanelSerializer, vscode.WebviewViewProvider, vscode.Disposable {
	readonly conversation = new Conversation();
	private panel: vscode.WebviewPanel | undefined;
	private view: vscode.WebviewView | undefined;
	private timer: ReturnType<typeof setTimeout> | undefined;
	private status: { status: Status | null; problem?: string } = { status: null };
	private turn: { running: boolean; progress?: string } = { running: false };
	private attachment: string | null = null;
	private approval: ApprovalShown | null = null;
	private commands: SlashCommand[] = [];
	private readonly focus = new FocusGate();
	private readonly viewFocus = new FocusGate();
	private readonly subscriptions: vscode.Disposable[] = [];

	constructor(
		private readonly extensionUri: vscode.Uri,
		private readonly handlers: ChatHandlers,
		private readonly location: () => ChatLocation = () => 'editor',
	) {}

	/** The column the editor tab is in; undefined when it is not open. */
	column(): vscode.ViewColumn | undefined {
		return this.panel?.viewColumn;
	}

	/** Whether the chat is in view, in the sidebar or in its tab. */
	isVisible(): boolean {
		return this.panel?.visible === true || this.view?.visible === true;
	}

	/** Shows the chat: the open panel where it is, else a new one beside
	 * the editor. With focusInput the cursor goes to the input. */
	show(focusInput: boolean): void {
		if (this.panel === undefined && this.location() === 'sidebar') {
			this.showSidebar(focusInput);
			return;
		}
		this.showTab(focusInput);
	}

	/** Shows the chat in the sidebar view. */
	showSidebar(focusInput: boolean): void {
		if (this.view !== undefined) {
			this.view.show(!focusInput);
		} else {
			// Opens the container and resolves the view (resolveWebviewView).
			void vscode.commands.executeCommand(`${ChatSidebarViewId}.focus`);
		}
		if (focusInput && this.viewFocus.request()) {
			void this.view?.webview.postMessage({ type: 'focus' });
		}
	}

	/** Shows the chat in its editor tab: the open one where it is, else a
	 * new one beside the editor. */
	showTab(focusInput: boolean): void {
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
			void this.panel?.webview.postMessage({ type: 'focus' });
		}
	}

	/** The sidebar view, when VS Code first shows it. */
	resolveWebviewView(view: vscode.WebviewView): void {
		this.view = view;
		this.viewFocus.loading();
		view.webview.options = { enableScripts: true, localResourceRoots: [vscode.Uri.joinPath(this.extensionUri, 'media')] };
		view.webview.html = chatHtml(view.webview, this.extensionUri);
		this.subscriptions.push(
			view.onDidDispose(() => {
				if (this.view === view) {
					this.view = undefined;
				}
			}),
			view.webview.onDidReceiveMessage((m: unknown) => this.receive(m, view.webview, this.viewFocus)),
		);
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
	interrupt(text: string): CutTurn | undefined {
		const cut = this.conversation.interrupt(text);
		this.schedule();
		return cut;
	}

	/** Shows these events instead of what the view had, with the turns cut
	 * off in them (see Conversation.reset). */
	reset(events: readonly TranscriptEvent[], cuts: readonly CutTurn[] = []): void {
		this.conversation.reset(events, cuts);
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

	/** The slash commands the input completes (reika.commands). */
	setCommands(commands: SlashCommand[]): void {
		this.commands = commands;
		this.post({ type: 'commands', commands });
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
		panel.webview.html = chatHtml(panel.webview, this.extensionUri);
		this.subscriptions.push(
			panel.onDidDispose(() => {
				if (this.panel === panel) {
					this.panel = undefined;
				}
			}),
			panel.webview.onDidReceiveMessage((m: unknown) => this.receive(m, panel.webview, this.focus)),
		);
	}

	/** A message from one of the chat's webviews; a ready one is sent what
	 * the chat shows, and the focus its gate held. */
	private receive(raw: unknown, from: vscode.Webview, focus: FocusGate): void {
		if (raw === null || typeof raw !== 'object') {
			return;
		}
		const m = raw as { type?: unknown; text?: unknown; attach?: unknown; id?: unknown; title?: unknown; action?: unknown; code?: unknown; path?: unknown; query?: unknown };
		switch (m.type) {
			case 'ready': {
				this.flush();
				const send = (m: ToView): void => void from.postMessage(m);
				send({ type: 'reset', blocks: this.conversation.all() });
				send({ type: 'status', ...this.status });
				send({ type: 'turn', ...this.turn });
				send({ type: 'attachment', label: this.attachment });
				send({ type: 'approval', approval: this.approval });
				send({ type: 'commands', commands: this.commands });
				if (focus.ready()) {
					send({ type: 'focus' });
				}
				this.handlers.ready();
				break;
			}
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
			case 'code':
				if (typeof m.action === 'string' && typeof m.code === 'string') {
					this.handlers.code(m.action, m.code, typeof m.path === 'string' && m.path !== '' ? m.path : undefined);
				}
				break;
			case 'files':
				if (typeof m.query === 'string') {
					const query = m.query;
					void this.handlers.files(query).then(
						(files) => from.postMessage({ type: 'files', query, files } satisfies ToView),
						() => from.postMessage({ type: 'files', query, files: [] } satisfies ToView),
					);
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
		if (m.type !== 'upsert' && m.type !== 'reset') {
			this.flush();
		}
		this.send(m);
	}

	/** Sends the blocks still waiting to every webview now. */
	private flush(): void {
		if (this.timer === undefined) {
			return;
		}
		clearTimeout(this.timer);
		this.timer = undefined;
		const blocks = this.conversation.takeChanged();
		if (blocks.length > 0) {
			this.send({ type: 'upsert', blocks });
		}
	}

	private send(m: ToView): void {
		void this.panel?.webview.postMessage(m);
		void this.view?.webview.postMessage(m);
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
