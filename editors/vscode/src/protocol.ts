// The server's custom names and shapes (docs/protocol.md), mirrored in one place.
// Changing a name here means changing docs/protocol.md, the server and the
// Neovim plugin (editors/nvim/lua/reika/protocol.lua) too.
//
// This module must not import 'vscode': the unit tests and the protocol test
// load it in plain node.

import {
	ExecuteCommandParams,
	ExecuteCommandRequest,
	NotificationType,
	ProgressToken,
	Range,
	RequestType,
} from 'vscode-languageserver-protocol';

/** The server's command ids (`executeCommandProvider.commands`). The
 * languageclient registers these with VS Code itself; the extension must
 * never register them again. */
export const ServerCommands = {
	ask: 'reika.ask',
	compact: 'reika.compact',
	cancel: 'reika.cancel',
	status: 'reika.status',
	save: 'reika.save',
	newSession: 'reika.newSession',
	transcript: 'reika.transcript',
	commands: 'reika.commands',
	sessions: 'reika.sessions',
} as const;

export type ServerCommand = (typeof ServerCommands)[keyof typeof ServerCommands];

/** The code action the server offers once a session has a turn. */
export const CompactCodeAction = {
	title: 'Compact context',
	kind: 'source.compactContext',
	command: ServerCommands.compact,
} as const;

/** The actions of an approval (window/showMessageRequest). */
export const ApprovalActions = {
	allow: 'Allow',
	allowSession: 'Allow for this session',
	deny: 'Deny',
} as const;

/** The settings section of initializationOptions and workspace/configuration. */
export const SettingsSection = 'reika';

export type Level = 'ok' | 'warning' | 'error';

export type WindowSource = 'setting' | 'endpoint' | 'catalog' | 'overflow' | 'none';

/** The params of `reika/status` and the result of `reika.status`. `window`,
 * `shedPoint` and `percent` are null when no window is known. */
export interface Status {
	text: string;
	tooltip: string;
	level: Level;
	busy: boolean;
	size: number;
	window: number | null;
	shedPoint: number | null;
	percent: number | null;
	windowSource: WindowSource;
	model: string;
	session: string;
	/** The session's mode; the server sends it only when it is not `code`. */
	mode?: string;
}

export type TranscriptKind =
	| 'user'
	| 'assistant'
	| 'reasoning'
	| 'tool_call'
	| 'tool_result'
	| 'note'
	| 'shed'
	| 'fold'
	| 'info'
	| 'error';

/** The params of `reika/transcript`. */
export interface TranscriptEvent {
	session: string;
	turn: number;
	round: number;
	kind: TranscriptKind;
	text: string;
	/** A streamed chunk; the full message follows with delta false. */
	delta: boolean;
	tool?: string;
	args?: unknown;
	tokens?: number;
}

export const StatusNotification = new NotificationType<Status>('reika/status');
export const TranscriptNotification = new NotificationType<TranscriptEvent>('reika/transcript');

/** The argument of `reika.ask`. `uri` and `range` attach a selection. */
export interface AskArgs {
	prompt: string;
	uri?: string;
	range?: Range;
}

export type AskStatus = 'done' | 'cancelled' | 'error';

export interface AskResult {
	session: string;
	status: AskStatus;
	message?: string;
}

export interface CompactResult {
	folded: boolean;
	recapTokens?: number;
	message: string;
}

export interface CancelResult {
	cancelled: boolean;
}

export interface SaveArgs {
	path?: string;
}

export interface SaveResult {
	path: string;
}

export interface NewSessionResult {
	session: string;
}

/** The argument of `reika.transcript`: at most maxChars characters of event
 * text and arguments (the server's default when left out). */
export interface TranscriptArgs {
	maxChars?: number;
}

/** The result of `reika.transcript`: the session's transcript events as
 * reika/transcript sent them (full events only, oldest first), rebuilt from
 * the session log; omitted counts the older ones left out. session is ''
 * when there is no session yet. */
export interface TranscriptPage {
	session: string;
	events: TranscriptEvent[];
	omitted: number;
}

/** One slash command of `reika.commands` (docs/protocol.md §3.8). */
export interface SlashCommand {
	name: string;
	description: string;
	argumentHint?: string;
	source?: string;
}

export interface CommandsResult {
	commands: SlashCommand[];
}

/** One session of `reika.sessions` list (docs/protocol.md §3.9). */
export interface SessionInfo {
	id: string;
	title: string;
	started: string;
	updated: string;
	turns: number;
	bytes: number;
	current: boolean;
}

/** The argument of `reika.sessions`. */
export type SessionsArgs =
	| { action: 'list' }
	| { action: 'open'; id: string; maxChars?: number }
	| { action: 'resume'; id: string }
	| { action: 'rename'; id: string; title: string }
	| { action: 'delete'; id: string };

/** What each server command takes and answers. */
export interface CommandSignatures {
	'reika.ask': { args: [AskArgs]; result: AskResult };
	'reika.compact': { args: []; result: CompactResult };
	'reika.cancel': { args: []; result: CancelResult };
	'reika.status': { args: []; result: Status };
	'reika.save': { args: [SaveArgs]; result: SaveResult };
	'reika.newSession': { args: []; result: NewSessionResult };
	'reika.transcript': { args: [TranscriptArgs] | []; result: TranscriptPage };
	'reika.commands': { args: []; result: CommandsResult };
	'reika.sessions': { args: [SessionsArgs]; result: unknown };
}

/** workspace/executeCommand typed by the command's result. */
export function executeCommandType<C extends ServerCommand>(
	_command: C,
): RequestType<ExecuteCommandParams, CommandSignatures[C]['result'], void> {
	return ExecuteCommandRequest.type as unknown as RequestType<
		ExecuteCommandParams,
		CommandSignatures[C]['result'],
		void
	>;
}

/** The params of workspace/executeCommand for a server command. */
export function executeCommandParams<C extends ServerCommand>(
	command: C,
	args: CommandSignatures[C]['args'],
	workDoneToken?: ProgressToken,
): ExecuteCommandParams {
	const params: ExecuteCommandParams = { command, arguments: [...args] };
	if (workDoneToken !== undefined) {
		params.workDoneToken = workDoneToken;
	}
	return params;
}
