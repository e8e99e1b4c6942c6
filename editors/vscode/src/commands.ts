// The palette commands. Each sends one of the server's commands with
// workspace/executeCommand; none registers a server command id.

import * as vscode from 'vscode';
import { Ctx } from './ctx';
import { ExtensionCommandKey } from './ids';
import { ApprovalActions, executeCommandParams, executeCommandType, ServerCommands } from './protocol';
import { modeOf } from './chip';
import { showSessions } from './sessions';
import { statusMenu } from './tooltip';
import { runCompact } from './turn';

type Factory = (ctx: Ctx) => (...args: unknown[]) => unknown;

function reportError(ctx: Ctx, what: string, e: unknown): void {
	const msg = e instanceof Error ? e.message : String(e);
	void vscode.window.showErrorMessage(`Reika: ${what} failed: ${msg}`, 'Show Log').then((pick) => {
		if (pick === 'Show Log') {
			ctx.showLog();
		}
	});
}

/** Reika: Ask. With a prompt (from a keybinding's args or another
 * extension) it runs the turn; else it opens the chat with the cursor in
 * its input, the selection attached. */
const ask: Factory = (ctx) => async (prompt?: unknown) => {
	if (typeof prompt === 'string' && prompt.trim() !== '') {
		ctx.chat.show(false);
		await ctx.ask(prompt, ctx.currentSelection());
		return;
	}
	ctx.currentSelection();
	ctx.chat.show(true);
};

/** The editor context menu's and the lightbulb's Ask: the chat with the
 * selection attached. */
const askAboutSelection: Factory = (ctx) => async () => {
	ctx.currentSelection();
	ctx.chat.show(true);
};

/** Compact context: the note round and a fold, shown in the chat as a turn
 * is (its progress, and Stop to cancel it). */
const compact: Factory = (ctx) => async () => {
	const client = await ctx.runningClient();
	if (client === undefined) {
		return;
	}
	try {
		const r = await runCompact(ctx, client);
		if (r === 'busy') {
			return;
		}
		if (r === 'cancelled') {
			vscode.window.setStatusBarMessage('Reika: compact cancelled.', 5000);
			return;
		}
		// The server shows the outcome as a message too (a fold, or nothing
		// to fold), so this only lingers in the status bar.
		vscode.window.setStatusBarMessage(`Reika: ${r.message}`, 8000);
	} catch (e) {
		reportError(ctx, 'Compact context', e);
	}
};

const cancel: Factory = (ctx) => async () => {
	try {
		const cancelled = await ctx.cancel();
		vscode.window.setStatusBarMessage(cancelled ? 'Reika: cancelling the turn…' : 'Reika: no turn is running.', 5000);
	} catch (e) {
		reportError(ctx, 'Cancel', e);
	}
};

const save: Factory = (ctx) => async () => {
	const client = await ctx.runningClient();
	if (client === undefined) {
		return;
	}
	const folder = ctx.workspaceFolder();
	const target = await vscode.window.showSaveDialog({
		title: 'Reika: Save Transcript',
		saveLabel: 'Save Transcript',
		filters: { Markdown: ['md'] },
		...(folder !== undefined ? { defaultUri: vscode.Uri.joinPath(folder, 'reika-transcript.md') } : {}),
	});
	if (target === undefined) {
		return;
	}
	if (target.scheme !== 'file') {
		void vscode.window.showErrorMessage('Reika: the transcript can only be saved to a local file.');
		return;
	}
	try {
		const r = await client.sendRequest(
			executeCommandType(ServerCommands.save),
			executeCommandParams(ServerCommands.save, [{ path: target.fsPath }]),
		);
		const pick = await vscode.window.showInformationMessage(`Reika: saved the transcript to ${r.path}`, 'Open');
		if (pick === 'Open') {
			await vscode.window.showTextDocument(vscode.Uri.file(r.path));
		}
	} catch (e) {
		reportError(ctx, 'Save Transcript', e);
	}
};

const newSession: Factory = (ctx) => async () => {
	const client = await ctx.runningClient();
	if (client === undefined) {
		return;
	}
	try {
		const r = await client.sendRequest(
			executeCommandType(ServerCommands.newSession),
			executeCommandParams(ServerCommands.newSession, []),
		);
		ctx.chat.clear();
		ctx.chat.addLocal(`New session ${r.session}`);
		vscode.window.setStatusBarMessage(`Reika: started session ${r.session}`, 5000);
	} catch (e) {
		reportError(ctx, 'New Session', e);
	}
};

const showTranscript: Factory = (ctx) => () => ctx.chat.show(false);

/** The built-in modes (docs: the reika.mode setting); custom ones are typed. */
const builtinModes = [
	{ name: 'code', detail: 'every tool' },
	{ name: 'plan', detail: 'read-only tools; ends with a plan' },
	{ name: 'ask', detail: 'read-only; answers questions' },
];

/** Switch Mode: pick a mode (or type a custom one's name) and send
 * `/mode NAME`, which the server applies from the next request. */
const switchMode: Factory = (ctx) => async () => {
	const current = modeOf(ctx.currentStatus());
	const other = '$(edit) Another mode…';
	const items = [
		...builtinModes.map((m) => ({ label: m.name, description: m.name === current ? `${m.detail} · current` : m.detail })),
		...(builtinModes.some((m) => m.name === current) ? [] : [{ label: current, description: 'current' }]),
		{ label: other, description: 'a custom mode of .reika/modes/NAME.md' },
	];
	const pick = await vscode.window.showQuickPick(items, { title: 'Reika: Switch Mode', placeHolder: `The mode is ${current}` });
	let name = pick?.label;
	if (name === other) {
		name = await vscode.window.showInputBox({ title: 'Reika: Switch Mode', prompt: 'The name of a custom mode', validateInput: (v) => (/^[a-z0-9][a-z0-9_-]*$/.test(v) ? undefined : 'lowercase letters, digits, - and _') });
	}
	if (name === undefined || name === '' || name === current) {
		return;
	}
	await ctx.ask(`/mode ${name}`, undefined);
};

/** The chat in an editor tab, whatever reika.chatLocation says. */
const openChatInEditor: Factory = (ctx) => () => ctx.chat.showTab(true);

const restart: Factory = (ctx) => () => ctx.restart();

const showLog: Factory = (ctx) => () => ctx.showLog();

const statusActions: Factory = (ctx) => async () => {
	const items = statusMenu(ctx.currentStatus(), ctx.isRunning(), ctx.approvalsWaiting());
	const pick = await vscode.window.showQuickPick(items, { title: 'Reika', placeHolder: ctx.currentStatus()?.text });
	if (pick === undefined) {
		return;
	}
	const run: Record<typeof pick.id, () => unknown> = {
		approvals: () => showApproval(ctx),
		compact: compact(ctx),
		cancel: cancel(ctx),
		transcript: showTranscript(ctx),
		mode: switchMode(ctx),
		ask: ask(ctx),
		restart: restart(ctx),
		log: showLog(ctx),
		settings: () => ctx.openServerPathSetting(),
	};
	await run[pick.id]();
};

/** "Show the approval…": the chat, where its buttons are, and the diff or
 * the command it is about, in front. */
async function showApproval(ctx: Ctx): Promise<void> {
	ctx.chat.show(false);
	if (!(await ctx.approvals.reveal())) {
		vscode.window.setStatusBarMessage('Reika: no approval is waiting.', 5000);
	}
}

/** The title bar buttons of an approval's editor (and the palette while
 * one waits): answer it with that action. */
const answer =
	(title: string): Factory =>
	(ctx) =>
	() => {
		if (!ctx.approvals.answer(title)) {
			vscode.window.setStatusBarMessage('Reika: no approval is waiting.', 5000);
		}
	};

/** The command table: every id in ExtensionCommands has its handler. */
export const commandTable: Record<ExtensionCommandKey, Factory> = {
	ask,
	askAboutSelection,
	compact,
	cancel,
	save,
	newSession,
	showTranscript,
	openChatInEditor,
	switchMode,
	showSessions: (ctx) => () => showSessions(ctx),
	statusActions,
	restart,
	showLog,
	approvalAllow: answer(ApprovalActions.allow),
	approvalAllowSession: answer(ApprovalActions.allowSession),
	approvalDeny: answer(ApprovalActions.deny),
	applyCodeBlock: (ctx) => (uri?: unknown) => ctx.code.apply(uri instanceof vscode.Uri ? uri : undefined),
};
