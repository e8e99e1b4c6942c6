// The extension's state: the language client, the status item, the chat
// and the approvals, and starting and stopping the server.

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import {
	CancellationTokenSource,
	CodeActionRequest,
	LanguageClient,
	MessageType,
	State,
	StateChangeEvent,
} from 'vscode-languageclient/node';
import { Selection, selectionLabel } from './ask';
import { ApprovalView } from './approvalView';
import { ClientHost, createClient } from './client';
import { ChatView } from './chatView';
import { CodeBlocks } from './codeBlocks';
import { CutTurns } from './cutTurns';
import { parseCommands, parseStatus } from './chip';
import { SaveAfterEdit } from './editSave';
import { editorHost } from './editorHost';
import { ApprovalWaitingContext, ClientName, ExtensionCommands } from './ids';
import { ErrorToasts } from './errorToasts';
import {
	CompactCodeAction,
	executeCommandParams,
	executeCommandType,
	ServerCommands,
	SettingsSection,
	Status,
} from './protocol';
import { QuickActionKinds, quickActions } from './quickActions';
import { resolveServerPath, ServerPathResult } from './serverPath';
import { explicitValue, ExtensionSettings, mapSettings, MappedSettings, RestartSettings } from './settings';
import { StatusItem } from './statusItem';
import { parseTranscriptEvent } from './transcript';
import { runTurn } from './turn';

export class Ctx implements vscode.Disposable {
	readonly status = new StatusItem();
	readonly chat: ChatView;
	readonly approvals: ApprovalView;
	/** Code blocks' Copy, Insert and Apply; @file mentions. */
	readonly code: CodeBlocks;
	private client: LanguageClient | undefined;
	/** Problems already reported, so a setting is not complained about twice. */
	private reported = '';
	private readonly log: vscode.OutputChannel;
	/** Saves what the agent's edits change (see editSave.ts). */
	private readonly saveAfterEdit = new SaveAfterEdit(editorHost((m) => this.log.appendLine(m)));
	private readonly toasts = new ErrorToasts(() => this.chat.show(false), () => this.showLog(), (m) => this.log.appendLine(m));
	/** The turns a dead server cut off, for the chat after a reload. */
	readonly cuts: CutTurns;
	/** The turn this window runs; undefined when none. */
	private turn: CancellationTokenSource | undefined;
	/** The last non-empty selection of a text editor, to attach to an ask. */
	private selection: Selection | undefined;
	/** Counts transcript events, so a transcript that arrives after live
	 * events does not replace them. */
	private liveEvents = 0;
	/** Whether the client has run before: a start after that is a restart
	 * (the languageclient restarts a server that died). */
	private restarted = false;
	private readonly subscriptions: vscode.Disposable[] = [];

	constructor(readonly extension: vscode.ExtensionContext) {
		this.log = vscode.window.createOutputChannel(`${ClientName} Extension`);
		this.cuts = new CutTurns(extension.workspaceState);
		this.chat = new ChatView(extension.extensionUri, {
			// An @file of the input is attached instead of the selection (one uri per ask).
			ask: (text, attach) => void this.code.mentioned(text).then((f) => this.ask(text, f ?? (attach ? this.selection : undefined))),
			code: (action, code, file) => void this.code.run(action, code, file),
			files: (query) => this.code.files(query),
			cancel: () => void this.cancel(),
			command: (id) => void this.chatCommand(id),
			approve: (title) => this.approvals.answer(title),
			ready: () => this.chat.setAttachment(this.selection?.label),
		}, () => (this.config().get<string>(ExtensionSettings.chatLocation) === 'editor' ? 'editor' : 'sidebar'));
		this.approvals = new ApprovalView(
			() => this.chat.conversation.latestToolCall,
			() => this.workspaceFolderPath(),
			(m) => this.log.appendLine(m),
			(a) => {
				this.chat.setApproval(a);
				void vscode.commands.executeCommand('setContext', ApprovalWaitingContext, a !== undefined);
			},
			{ column: () => this.chat.column(), visible: () => this.chat.isVisible() },
		);
		this.code = new CodeBlocks(() => this.workspaceFolderPath(), (m) => this.log.appendLine(m));
		const forget = (d: vscode.TextDocument): void => this.saveAfterEdit.forget(d.uri.toString());
		this.subscriptions.push(
			this.chat,
			this.code,
			vscode.workspace.onDidSaveTextDocument(forget),
			vscode.workspace.onDidCloseTextDocument(forget),
			vscode.window.onDidChangeTextEditorSelection((e) => this.trackSelection(e.textEditor)),
			vscode.window.onDidChangeActiveTextEditor((e) => {
				if (e !== undefined) {
					this.trackSelection(e);
				}
			}),
		);
		if (vscode.window.activeTextEditor !== undefined) {
			this.trackSelection(vscode.window.activeTextEditor);
		}
	}

	/** The running client (waiting for one that is starting), or undefined
	 * after telling the user why not. */
	async runningClient(): Promise<LanguageClient | undefined> {
		if (this.client?.state === State.Starting) {
			// start() returns the start in progress; its failure is shown.
			await this.client.start().catch(() => undefined);
		}
		if (this.client !== undefined && this.client.isRunning()) {
			return this.client;
		}
		void vscode.window
			.showErrorMessage('Reika: the server is not running.', 'Restart', 'Show Log')
			.then((pick) => {
				if (pick === 'Restart') {
					void this.restart();
				} else if (pick === 'Show Log') {
					this.showLog();
				}
			});
		return undefined;
	}

	isRunning(): boolean {
		return this.client?.isRunning() === true;
	}

	currentStatus(): Status | undefined {
		return this.status.status;
	}

	approvalsWaiting(): number {
		return this.status.approvalsWaiting;
	}

	workspaceFolder(): vscode.Uri | undefined {
		return vscode.workspace.workspaceFolders?.[0]?.uri;
	}

	/** The selection an ask attaches: the editor's, else the last one the
	 * user made in a text editor (the chat has the focus while they type). */
	currentSelection(): Selection | undefined {
		const editor = vscode.window.activeTextEditor;
		if (editor !== undefined) {
			this.trackSelection(editor);
		}
		return this.selection;
	}

	/** Runs a turn with the prompt; selection is attached. */
	async ask(prompt: string, selection: Selection | undefined): Promise<void> {
		const client = await this.runningClient();
		if (client === undefined) {
			return;
		}
		await runTurn(this, client, prompt, selection);
	}

	/** Claims the window's one turn; false when one runs. */
	beginTurn(source: CancellationTokenSource): boolean {
		if (this.turn !== undefined) {
			return false;
		}
		this.turn = source;
		return true;
	}

	endTurn(source: CancellationTokenSource): void {
		if (this.turn === source) {
			this.turn = undefined;
		}
		this.chat.setTurn(this.status.status?.busy === true);
	}

	/** Stops the running turn: this window's by cancelling its request,
	 * another's with reika.cancel. */
	async cancel(): Promise<boolean> {
		if (this.turn !== undefined) {
			this.turn.cancel();
			return true;
		}
		const client = await this.runningClient();
		if (client === undefined) {
			return false;
		}
		const r = await client.sendRequest(executeCommandType(ServerCommands.cancel), executeCommandParams(ServerCommands.cancel, []));
		return r.cancelled;
	}

	/** Shows an error toast unless the same message was just shown. */
	toastError(message: string): void {
		this.toasts.show(message);
	}

	/** A turn succeeded: the error toasts of earlier failures go (see
	 * ErrorToasts.succeeded). */
	turnSucceeded(): Promise<void> {
		return this.toasts.succeeded();
	}

	/** The server's settings from the user's, reporting unusable values once. */
	settings(): MappedSettings {
		const cfg = this.config();
		const mapped = mapSettings((key) => explicitValue(cfg.inspect(key)));
		const problems = mapped.problems.join('\n');
		if (problems !== this.reported) {
			this.reported = problems;
			if (problems !== '') {
				this.log.appendLine(problems);
				void vscode.window
					.showWarningMessage(`Reika: some settings were not used: ${mapped.problems.join('; ')}`, 'Open Settings')
					.then((pick) => {
						if (pick === 'Open Settings') {
							void vscode.commands.executeCommand('workbench.action.openSettings', SettingsSection);
						}
					});
			}
		}
		return mapped;
	}

	async start(): Promise<void> {
		const found = this.findServer();
		if (!found.ok) {
			this.status.problem('server not found', found.message);
			this.chat.setStatus(undefined, 'server not found');
			this.log.appendLine(`${found.message}\nSearched:\n  ${found.searched.join('\n  ')}`);
			void this.explainMissing(found.message);
			return;
		}
		this.status.starting();
		const client = createClient(this.clientHost(), found.path, this.workspaceFolderPath());
		this.client = client;
		this.restarted = false;
		try {
			await client.start();
		} catch (e) {
			// The languageclient has shown its own message with a link to the
			// log; the status item keeps the reason.
			const msg = e instanceof Error ? e.message : String(e);
			this.status.problem('failed to start', `${found.path}: ${msg}`);
			this.chat.setStatus(undefined, 'the server failed to start');
			this.log.appendLine(`${found.path} failed to start: ${msg}`);
			return;
		}
		await this.afterStart(client);
	}

	async stop(): Promise<void> {
		const client = this.client;
		this.client = undefined;
		if (client !== undefined && client.needsStop()) {
			await client.stop();
		}
	}

	async restart(): Promise<void> {
		await this.stop();
		await this.start();
	}

	openServerPathSetting(): void {
		this.handleProblemPick('Open Settings');
	}

	showLog(): void {
		if (this.client !== undefined) {
			this.client.outputChannel.show(true);
		} else {
			this.log.show(true);
		}
	}

	onConfigurationChange(e: vscode.ConfigurationChangeEvent): void {
		if (!e.affectsConfiguration(SettingsSection)) {
			return;
		}
		if (RestartSettings.some((k) => e.affectsConfiguration(`${SettingsSection}.${k}`))) {
			void this.restart();
			return;
		}
		// The languageclient sends didChangeConfiguration through the
		// middleware below; this only reports unusable values.
		this.settings();
	}

	dispose(): void {
		void this.stop();
		this.subscriptions.forEach((d) => d.dispose());
		this.status.dispose();
		this.log.dispose();
	}

	/** What a started (or restarted) server tells a window that attaches:
	 * its status, and the session's transcript for the chat. */
	private async afterStart(client: LanguageClient, restart = false): Promise<void> {
		try {
			const s = parseStatus(
				await client.sendRequest(executeCommandType(ServerCommands.status), executeCommandParams(ServerCommands.status, [])),
			);
			if (s !== undefined) {
				this.setStatus(s);
			}
		} catch (e) {
			this.log.appendLine(`reika.status: ${e instanceof Error ? e.message : String(e)}`);
		}
		if (this.status.status === undefined && client.isRunning()) {
			this.status.noStatusYet();
		}
		await this.loadTranscript(client, restart);
		await this.loadCommands(client);
	}

	/** The slash commands the chat's input completes (reika.commands). */
	private async loadCommands(client: LanguageClient): Promise<void> {
		try {
			const r: unknown = await client.sendRequest(executeCommandType(ServerCommands.commands), executeCommandParams(ServerCommands.commands, []));
			this.chat.setCommands(parseCommands(r));
		} catch (e) {
			this.log.appendLine(`reika.commands: ${e instanceof Error ? e.message : String(e)}`);
		}
	}

	/** Shows the current session's transcript in the chat instead of what
	 * it shows (a session resumed from the history). */
	async reloadTranscript(): Promise<void> {
		const client = await this.runningClient();
		if (client !== undefined) {
			this.chat.clear();
			await this.loadTranscript(client, false);
		}
	}

	/** Shows the session's transcript in the chat (after a window reload, or
	 * a server that restarted), unless live events came in meanwhile. After
	 * a restart that resumed the session the chat shows, it keeps what it
	 * has (more than the log holds: the streamed words of a turn the dead
	 * server never finished) and says that the session goes on. */
	private async loadTranscript(client: LanguageClient, restart: boolean): Promise<void> {
		const before = this.liveEvents;
		try {
			const page = await client.sendRequest(
				executeCommandType(ServerCommands.transcript),
				executeCommandParams(ServerCommands.transcript, [{}]),
			);
			if (this.liveEvents !== before || page.session === '') {
				return;
			}
			if (restart && this.chat.conversation.length > 0 && page.session === this.chat.conversation.session) {
				this.chat.addLocal(`The server restarted; session ${page.session} continues.`);
				return;
			}
			const events = page.events.map(parseTranscriptEvent).filter((e) => e !== undefined);
			this.chat.reset(events, this.cuts.all());
			if (page.omitted > 0) {
				this.log.appendLine(`reika.transcript: the chat shows the newest ${events.length} events; ${page.omitted} older ones were left out`);
			}
		} catch (e) {
			this.log.appendLine(`reika.transcript: ${e instanceof Error ? e.message : String(e)}`);
		}
	}

	private clientHost(): ClientHost {
		return {
			settings: () => this.settings(),
			applyEdit: (params, next) => this.saveAfterEdit.apply(params, next),
			status: (s) => this.setStatus(s),
			transcript: (ev) => {
				this.liveEvents++;
				this.chat.add(ev);
			},
			message: (type, text) => this.serverMessage(type, text),
			// Approvals: the diff or the command in an editor, the decision
			// in the chat, the editor title bar, or a notification when the
			// chat is not in view (never modal), counted on the status item.
			approval: async (params, token) => {
				this.status.approval(1);
				try {
					return (await this.approvals.ask(params, token)) ?? null;
				} finally {
					this.status.approval(-1);
				}
			},
			state: (client, e) => this.clientState(client, e),
		};
	}

	/** window/showMessage: in the chat when it is in view (a toast would
	 * cover its input), else a toast. The server says each condition once;
	 * a turn that fails for the same reason does not say it again. */
	private serverMessage(type: MessageType, text: string): void {
		if (this.chat.isVisible()) {
			if (type === MessageType.Error) {
				this.chat.addError(text);
			} else {
				this.chat.addInfo(text);
			}
			return;
		}
		switch (type) {
			case MessageType.Error:
				this.toastError(text);
				break;
			case MessageType.Warning:
				void vscode.window.showWarningMessage(text);
				break;
			default:
				void vscode.window.showInformationMessage(text);
		}
	}

	private clientState(client: LanguageClient, e: StateChangeEvent): void {
		if (this.client !== client) {
			return;
		}
		if (e.newState === State.Starting) {
			this.status.starting();
			this.chat.setStatus(undefined);
		} else if (e.newState === State.Stopped) {
			this.status.problem('stopped', 'The server stopped. Run Reika: Restart Server, or see the server log.');
			this.chat.setStatus(undefined, 'the server stopped');
		} else if (e.newState === State.Running && e.oldState === State.Starting) {
			// The languageclient restarted a server that died: show what the
			// new one knows.
			if (this.restarted) {
				void this.afterStart(client, true);
			}
			this.restarted = true;
		}
	}

	private setStatus(s: Status): void {
		this.status.set(s);
		this.chat.setStatus(s);
		if (this.turn === undefined) {
			this.chat.setTurn(s.busy);
		}
	}

	private async chatCommand(id: string): Promise<void> {
		switch (id) {
			case 'compact':
				await vscode.commands.executeCommand(ExtensionCommands.compact);
				break;
			case 'newSession':
				await vscode.commands.executeCommand(ExtensionCommands.newSession);
				break;
			case 'mode':
				await vscode.commands.executeCommand(ExtensionCommands.switchMode);
				break;
			case 'sessions':
				await vscode.commands.executeCommand(ExtensionCommands.showSessions);
				break;
		}
	}

	private trackSelection(editor: vscode.TextEditor): void {
		const scheme = editor.document.uri.scheme;
		if (scheme !== 'file' && scheme !== 'untitled') {
			return;
		}
		const sel = editor.selection;
		let next: Selection | undefined;
		if (!sel.isEmpty) {
			const range = {
				start: { line: sel.start.line, character: sel.start.character },
				end: { line: sel.end.line, character: sel.end.character },
			};
			next = {
				uri: editor.document.uri.toString(),
				range,
				label: selectionLabel(path.basename(editor.document.fileName), range),
			};
		}
		if (next?.label !== this.selection?.label || next?.uri !== this.selection?.uri) {
			this.selection = next;
			this.chat.setAttachment(next?.label);
		} else {
			this.selection = next;
		}
	}

	private workspaceFolderPath(): string | undefined {
		const f = this.workspaceFolder();
		return f?.scheme === 'file' ? f.fsPath : undefined;
	}

	private config(): vscode.WorkspaceConfiguration {
		return vscode.workspace.getConfiguration(SettingsSection);
	}

	private findServer(): ServerPathResult {
		const folder = this.workspaceFolderPath();
		return resolveServerPath({
			setting: this.config().get<string>(ExtensionSettings.serverPath, ''),
			platform: process.platform,
			env: process.env,
			home: os.homedir(),
			...(folder !== undefined ? { workspaceFolder: folder } : {}),
			extensionPath: this.extension.extensionPath,
			isExecutable: (p) => {
				try {
					if (!fs.statSync(p).isFile()) {
						return false;
					}
					fs.accessSync(p, process.platform === 'win32' ? fs.constants.F_OK : fs.constants.X_OK);
					return true;
				} catch {
					return false;
				}
			},
		});
	}

	private async explainMissing(message: string): Promise<void> {
		const pick = await vscode.window.showErrorMessage(
			`Reika: ${message} Build it (go build -o bin/reika-lsp ./cmd/reika-lsp) and set reika.serverPath to it; the README says how.`,
			'Open Settings',
			'Open README',
		);
		this.handleProblemPick(pick);
	}

	private handleProblemPick(pick: string | undefined): void {
		switch (pick) {
			case 'Open Settings':
				void vscode.commands.executeCommand(
					'workbench.action.openSettings',
					`${SettingsSection}.${ExtensionSettings.serverPath}`,
				);
				break;
			case 'Open README':
				void vscode.commands.executeCommand(
					'markdown.showPreview',
					vscode.Uri.joinPath(this.extension.extensionUri, 'README.md'),
				);
				break;
			case 'Show Log':
				this.showLog();
				break;
		}
	}

	/** The extension's lightbulb and Ctrl+. actions (quickActions.ts). VS
	 * Code never asks the languageclient's provider for them: it offers
	 * source actions only, which Ctrl+. leaves out. */
	async provideQuickActions(
		document: vscode.TextDocument,
		range: vscode.Range | vscode.Selection,
		context: vscode.CodeActionContext,
	): Promise<vscode.CodeAction[]> {
		const invoked = context.triggerKind === vscode.CodeActionTriggerKind.Invoke;
		const picked = quickActions({
			hasSelection: !range.isEmpty,
			invoked,
			compactOffered: invoked && (await this.serverOffersCompact(document, range)),
			...(context.only !== undefined ? { only: [context.only.value] } : {}),
		});
		return picked.map((which) => {
			if (which === 'ask') {
				const a = new vscode.CodeAction('Ask Reika about the selection…', vscode.CodeActionKind.Empty.append(QuickActionKinds.ask));
				a.command = { title: a.title, command: ExtensionCommands.askAboutSelection };
				return a;
			}
			const a = new vscode.CodeAction('Reika: Compact context', vscode.CodeActionKind.Empty.append(QuickActionKinds.compact));
			a.command = { title: a.title, command: ExtensionCommands.compact };
			return a;
		});
	}

	/** Whether the server offers Compact context (its session has a turn). */
	private async serverOffersCompact(document: vscode.TextDocument, range: vscode.Range): Promise<boolean> {
		const client = this.client;
		if (client === undefined || !client.isRunning()) {
			return false;
		}
		try {
			const actions = await client.sendRequest(CodeActionRequest.type, {
				textDocument: { uri: client.code2ProtocolConverter.asUri(document.uri) },
				range: client.code2ProtocolConverter.asRange(range),
				context: { diagnostics: [], only: [CompactCodeAction.kind] },
			});
			return (actions ?? []).some((a) => a.title === CompactCodeAction.title);
		} catch (e) {
			this.log.appendLine(`textDocument/codeAction: ${e instanceof Error ? e.message : String(e)}`);
			return false;
		}
	}
}
