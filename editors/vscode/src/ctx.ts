// The extension's state: the language client, the status item and the
// transcript view, and starting and stopping the server.

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as vscode from 'vscode';
import {
	CancellationToken,
	DidChangeConfigurationNotification,
	LanguageClient,
	LanguageClientOptions,
	ResponseError,
	MessageActionItem,
	MessageType,
	ServerOptions,
	ShowMessageRequest,
	ShowMessageRequestParams,
	State,
	TransportKind,
} from 'vscode-languageclient/node';
import { parseStatus } from './chip';
import { SaveAfterEdit, SaveAfterEditHost } from './editSave';
import { ClientId, ClientName, ExtensionCommands } from './ids';
import {
	executeCommandParams,
	executeCommandType,
	ServerCommands,
	SettingsSection,
	Status,
	StatusNotification,
	TranscriptNotification,
} from './protocol';
import { resolveServerPath, ServerPathResult } from './serverPath';
import {
	configurationItem,
	didChangeConfigurationParams,
	explicitValue,
	ExtensionSettings,
	initializationOptions,
	mapSettings,
	MappedSettings,
	RestartSettings,
} from './settings';
import { StatusItem } from './statusItem';
import { parseTranscriptEvent } from './transcript';
import { TranscriptView } from './transcriptView';

export class Ctx implements vscode.Disposable {
	readonly status = new StatusItem();
	readonly transcript = new TranscriptView();
	private client: LanguageClient | undefined;
	/** Problems already reported, so a setting is not complained about twice. */
	private reported = '';
	private readonly log: vscode.OutputChannel;
	/** Saves what the agent's edits change (see editSave.ts). */
	private readonly saveAfterEdit = new SaveAfterEdit(editorHost((m) => this.log.appendLine(m)));
	private readonly subscriptions: vscode.Disposable[] = [];

	constructor(readonly extension: vscode.ExtensionContext) {
		this.log = vscode.window.createOutputChannel(`${ClientName} Extension`);
		const forget = (d: vscode.TextDocument): void => this.saveAfterEdit.forget(d.uri.toString());
		this.subscriptions.push(vscode.workspace.onDidSaveTextDocument(forget), vscode.workspace.onDidCloseTextDocument(forget));
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

	revealOnAsk(): boolean {
		return this.config().get<boolean>(ExtensionSettings.revealOnAsk, true);
	}

	workspaceFolder(): vscode.Uri | undefined {
		return vscode.workspace.workspaceFolders?.[0]?.uri;
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
			this.log.appendLine(`${found.message}\nSearched:\n  ${found.searched.join('\n  ')}`);
			void this.explainMissing(found.message);
			return;
		}
		this.status.starting();
		const client = this.createClient(found.path);
		this.client = client;
		try {
			await client.start();
		} catch (e) {
			// The languageclient has shown its own message with a link to the
			// log; the status item keeps the reason.
			const msg = e instanceof Error ? e.message : String(e);
			this.status.problem('failed to start', `${found.path}: ${msg}`);
			this.log.appendLine(`${found.path} failed to start: ${msg}`);
			return;
		}
		// A late-attaching item asks once; the server also pushes it.
		try {
			const s = parseStatus(
				await client.sendRequest(
					executeCommandType(ServerCommands.status),
					executeCommandParams(ServerCommands.status, []),
				),
			);
			if (s !== undefined) {
				this.status.set(s);
			}
		} catch (e) {
			this.log.appendLine(`reika.status: ${e instanceof Error ? e.message : String(e)}`);
		}
		if (this.status.status === undefined && client.isRunning()) {
			this.status.noStatusYet();
		}
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
		this.transcript.dispose();
		this.log.dispose();
	}

	private config(): vscode.WorkspaceConfiguration {
		return vscode.workspace.getConfiguration(SettingsSection);
	}

	private findServer(): ServerPathResult {
		const folder = this.workspaceFolder();
		return resolveServerPath({
			setting: this.config().get<string>(ExtensionSettings.serverPath, ''),
			platform: process.platform,
			env: process.env,
			home: os.homedir(),
			...(folder?.scheme === 'file' ? { workspaceFolder: folder.fsPath } : {}),
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

	private createClient(command: string): LanguageClient {
		const folder = this.workspaceFolder();
		const serverOptions: ServerOptions = {
			command,
			args: ['serve'],
			transport: TransportKind.stdio,
			...(folder?.scheme === 'file' ? { options: { cwd: folder.fsPath } } : {}),
		};
		const clientOptions: LanguageClientOptions = {
			documentSelector: [{ scheme: 'file' }, { scheme: 'untitled' }],
			initializationOptions: () => initializationOptions(this.settings().settings),
			synchronize: { configurationSection: SettingsSection },
			middleware: {
				// Compact context from the Source Action menu runs through our
				// command, for the same cancellable progress as the palette's.
				provideCodeActions: async (document, range, context, token, next) => {
					const actions = await next(document, range, context, token);
					return actions?.map((a) => {
						if (a instanceof vscode.CodeAction && a.command?.command === ServerCommands.compact) {
							a.command = { title: a.command.title, command: ExtensionCommands.compact };
						}
						return a;
					});
				},
				workspace: {
					// The agent's edits of open files: saved when they had
					// no unsaved changes, before the server is answered.
					handleApplyEdit: (params, next) => this.saveAfterEdit.apply(params, async (p) => next(p, CancellationToken.None)),
					// Answer for our section with the mapped settings: the raw
					// configuration holds keys (serverPath, trace) and defaults
					// the server must not see.
					configuration: async (params, token, next) => {
						const settings = this.settings().settings;
						const own = params.items.map((item) => configurationItem(item.section, settings));
						if (own.every((o) => o.handled)) {
							return own.map((o) => o.value);
						}
						const theirs = await next(params, token);
						if (theirs instanceof ResponseError) {
							return theirs;
						}
						return own.map((o, i) => (o.handled ? o.value : theirs[i]));
					},
					didChangeConfiguration: async () => {
						await client.sendNotification(
							DidChangeConfigurationNotification.type,
							didChangeConfigurationParams(this.settings().settings),
						);
					},
				},
			},
		};
		const client = new LanguageClient(ClientId, ClientName, serverOptions, clientOptions);
		client.onNotification(StatusNotification, (raw: unknown) => {
			const s = parseStatus(raw);
			if (s !== undefined) {
				this.status.set(s);
			}
		});
		client.onNotification(TranscriptNotification, (raw: unknown) => {
			const ev = parseTranscriptEvent(raw);
			if (ev !== undefined) {
				this.transcript.add(ev);
			}
		});
		// Approvals: shown as the languageclient would (a notification with
		// the actions, never modal, so a stray Enter cannot allow anything),
		// and counted on the status item while they wait.
		client.onRequest(ShowMessageRequest.type, async (params) => {
			this.status.approval(1);
			try {
				return (await showMessageRequest(params)) ?? null;
			} finally {
				this.status.approval(-1);
			}
		});
		client.onDidChangeState((e) => {
			if (this.client !== client) {
				return;
			}
			if (e.newState === State.Starting) {
				this.status.starting();
			} else if (e.newState === State.Stopped) {
				this.status.problem('stopped', 'The server stopped. Run Reika: Restart Server, or see the server log.');
			}
		});
		return client;
	}
}

function showMessageRequest(params: ShowMessageRequestParams): Thenable<MessageActionItem | undefined> {
	const actions = params.actions ?? [];
	switch (params.type) {
		case MessageType.Error:
			return vscode.window.showErrorMessage(params.message, ...actions);
		case MessageType.Warning:
			return vscode.window.showWarningMessage(params.message, ...actions);
		default:
			return vscode.window.showInformationMessage(params.message, ...actions);
	}
}

/** VS Code as the editor of SaveAfterEdit. Every spelling of a URI the
 * server sends maps to the document VS Code has open for it. */
function editorHost(log: (line: string) => void): SaveAfterEditHost {
	const uriOf = (uri: string): vscode.Uri => vscode.Uri.parse(uri);
	const doc = (uri: string): vscode.TextDocument | undefined => {
		const key = uriOf(uri).toString();
		return vscode.workspace.textDocuments.find((d) => d.uri.toString() === key);
	};
	return {
		key: (uri) => uriOf(uri).toString(),
		isDirty: (uri) => doc(uri)?.isDirty === true,
		save: async (uri) => {
			const d = doc(uri);
			if (d === undefined || !d.isDirty) {
				return true;
			}
			if (d.isUntitled) {
				return false;
			}
			const saved = await d.save();
			return saved || !d.isDirty;
		},
		label: (uri) => vscode.workspace.asRelativePath(uriOf(uri), false),
		warn: (uri, message) => {
			log(message);
			void vscode.window.showWarningMessage(message, 'Save', 'Open').then(async (pick) => {
				if (pick === 'Save') {
					await doc(uri)?.save();
				} else if (pick === 'Open') {
					await vscode.window.showTextDocument(uriOf(uri));
				}
			});
		},
	};
}
