// The language client: how the server is started, the middleware that maps
// settings and saves the agent's edits, and the server's notifications and
// requests handed to a host. It imports nothing of the extension's state
// (ctx.ts gives it a ClientHost), so there is no import circle.

import * as readline from 'node:readline';
import * as vscode from 'vscode';
import {
	ApplyWorkspaceEditParams,
	ApplyWorkspaceEditResult,
	CancellationToken,
	DidChangeConfigurationNotification,
	LanguageClient,
	LanguageClientOptions,
	MessageActionItem,
	MessageType,
	ResponseError,
	ServerOptions,
	ShowMessageNotification,
	ShowMessageRequest,
	ShowMessageRequestParams,
	StateChangeEvent,
	TransportKind,
} from 'vscode-languageclient/node';
import { parseStatus } from './chip';
import { ClientId, ClientName, ExtensionCommands } from './ids';
import { ServerCommands, SettingsSection, Status, StatusNotification, TranscriptEvent, TranscriptNotification } from './protocol';
import { parseServerLine } from './serverLog';
import { configurationItem, didChangeConfigurationParams, initializationOptions, MappedSettings } from './settings';
import { parseTranscriptEvent } from './transcript';

/** What the client needs of the extension. */
export interface ClientHost {
	/** The server's settings from the user's. */
	settings(): MappedSettings;
	/** Applies an edit of the agent's (saving what it changes). */
	applyEdit(
		params: ApplyWorkspaceEditParams,
		next: (p: ApplyWorkspaceEditParams) => Promise<ApplyWorkspaceEditResult | ResponseError<void>>,
	): Promise<ApplyWorkspaceEditResult | ResponseError<void>>;
	status(s: Status): void;
	transcript(ev: TranscriptEvent): void;
	/** window/showMessage. */
	message(type: MessageType, text: string): void;
	/** window/showMessageRequest: an approval. */
	approval(params: ShowMessageRequestParams, token: CancellationToken): Promise<MessageActionItem | null>;
	state(client: LanguageClient, e: StateChangeEvent): void;
}

/** How the server is started: `reika-lsp serve` over stdio. The
 * languageclient appends --stdio to the arguments of an executable started
 * with TransportKind.stdio, which the server accepts. */
function serverOptions(command: string, cwd: string | undefined): ServerOptions {
	return {
		command,
		args: ['serve'],
		transport: TransportKind.stdio,
		...(cwd !== undefined ? { options: { cwd } } : {}),
	};
}

/** A language client for the server at command, started in cwd. */
export function createClient(host: ClientHost, command: string, cwd: string | undefined): LanguageClient {
	const clientOptions: LanguageClientOptions = {
		documentSelector: [{ scheme: 'file' }, { scheme: 'untitled' }],
		initializationOptions: () => initializationOptions(host.settings().settings),
		synchronize: { configurationSection: SettingsSection },
		// The server's stderr is its log: each line at its own level,
		// not all of them as errors (the languageclient's default).
		stdioOptions: { stdout: pipeLog, stderr: pipeLog },
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
				// The agent's edits of open files: saved when they had no
				// unsaved changes, before the server is answered.
				handleApplyEdit: (params, next) => host.applyEdit(params, async (p) => next(p, CancellationToken.None)),
				// Answer for our section with the mapped settings: the raw
				// configuration holds keys (serverPath, trace) and defaults
				// the server must not see.
				configuration: async (params, token, next) => {
					const settings = host.settings().settings;
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
					await client.sendNotification(DidChangeConfigurationNotification.type, didChangeConfigurationParams(host.settings().settings));
				},
			},
		},
	};
	const client = new LanguageClient(ClientId, ClientName, serverOptions(command, cwd), clientOptions);
	client.onNotification(StatusNotification, (raw: unknown) => {
		const s = parseStatus(raw);
		if (s !== undefined) {
			host.status(s);
		}
	});
	client.onNotification(TranscriptNotification, (raw: unknown) => {
		const ev = parseTranscriptEvent(raw);
		if (ev !== undefined) {
			host.transcript(ev);
		}
	});
	client.onNotification(ShowMessageNotification.type, (p) => host.message(p.type, p.message));
	client.onRequest(ShowMessageRequest.type, (params, token) => host.approval(params, token));
	client.onDidChangeState((e) => host.state(client, e));
	return client;
}

/** Writes each line of a server output stream to the log at its level. */
function pipeLog(input: NodeJS.ReadableStream, channel: vscode.LogOutputChannel): void {
	readline.createInterface({ input, crlfDelay: Infinity, terminal: false, historySize: 0 }).on('line', (raw: string) => {
		const { level, text } = parseServerLine(raw);
		channel[level](text);
	});
}
