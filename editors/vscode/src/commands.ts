// The palette commands. Each sends one of the server's commands with
// workspace/executeCommand; none registers a server command id.

import * as path from 'node:path';
import * as vscode from 'vscode';
import {
	CancellationTokenSource,
	LanguageClient,
	LSPErrorCodes,
	ProgressToken,
	ResponseError,
	WorkDoneProgress,
} from 'vscode-languageclient/node';
import { askArgs, askOutcome, selectionLabel, Selection, shorten } from './ask';
import { Ctx } from './ctx';
import { ExtensionCommandKey } from './ids';
import { CommandSignatures, executeCommandParams, executeCommandType, ServerCommand, ServerCommands } from './protocol';
import { statusMenu } from './tooltip';

type Factory = (ctx: Ctx) => (...args: unknown[]) => unknown;

let tokenCounter = 0;

function newToken(): ProgressToken {
	tokenCounter++;
	return `reika-vscode-${process.pid}-${Date.now()}-${tokenCounter}`;
}

function isCancelled(e: unknown): boolean {
	return e instanceof ResponseError && e.code === LSPErrorCodes.RequestCancelled;
}

function reportError(ctx: Ctx, what: string, e: unknown): void {
	const msg = e instanceof Error ? e.message : String(e);
	void vscode.window.showErrorMessage(`Reika: ${what} failed: ${msg}`, 'Show Log').then((pick) => {
		if (pick === 'Show Log') {
			ctx.showLog();
		}
	});
}

/**
 * Runs a server command under a cancellable notification progress. The
 * server reports on our work-done token; the cancel button sends
 * $/cancelRequest, which stops the turn. Resolves undefined when cancelled.
 */
async function runWithProgress<C extends ServerCommand>(
	client: LanguageClient,
	title: string,
	first: string,
	command: C,
	args: CommandSignatures[C]['args'],
): Promise<CommandSignatures[C]['result'] | undefined> {
	return vscode.window.withProgress(
		{ location: vscode.ProgressLocation.Notification, title, cancellable: true },
		async (progress, cancel) => {
			progress.report({ message: first });
			const token = newToken();
			const sub = client.onProgress(WorkDoneProgress.type, token, (v) => {
				if (v.kind !== 'end' && v.message !== undefined && v.message !== '') {
					progress.report({ message: v.message });
				}
			});
			const source = new CancellationTokenSource();
			const onCancel = cancel.onCancellationRequested(() => source.cancel());
			try {
				return await client.sendRequest(
					executeCommandType(command),
					executeCommandParams(command, args, token),
					source.token,
				);
			} catch (e) {
				if (isCancelled(e) || source.token.isCancellationRequested) {
					return undefined;
				}
				throw e;
			} finally {
				onCancel.dispose();
				source.dispose();
				sub.dispose();
			}
		},
	);
}

function currentSelection(client: LanguageClient): Selection | undefined {
	const editor = vscode.window.activeTextEditor;
	if (editor === undefined || editor.selection.isEmpty) {
		return undefined;
	}
	const range = client.code2ProtocolConverter.asRange(editor.selection);
	return {
		uri: client.code2ProtocolConverter.asUri(editor.document.uri),
		range,
		label: selectionLabel(path.basename(editor.document.fileName), range),
	};
}

const ask: Factory = (ctx) => async (prompt?: unknown) => {
	const client = await ctx.runningClient();
	if (client === undefined) {
		return;
	}
	const selection = currentSelection(client);
	let text = typeof prompt === 'string' ? prompt : undefined;
	if (text === undefined) {
		text = await vscode.window.showInputBox({
			title: 'Reika: Ask',
			prompt: selection !== undefined ? `Attached: ${selection.label}` : 'What should Reika do?',
			placeHolder: 'e.g. find why the tests in a_test.go fail and fix them',
			ignoreFocusOut: true,
		});
	}
	if (text === undefined || text.trim() === '') {
		return;
	}
	if (ctx.revealOnAsk()) {
		await ctx.transcript.show(true);
	}
	try {
		const result = await runWithProgress(
			client,
			'Reika',
			shorten(text),
			ServerCommands.ask,
			[askArgs(text, selection)],
		);
		const outcome = askOutcome(result ?? { session: '', status: 'cancelled' });
		if (outcome.kind === 'info') {
			vscode.window.setStatusBarMessage(outcome.message, 5000);
		} else if (outcome.kind === 'error') {
			void vscode.window.showErrorMessage(outcome.message);
		} else if (!ctx.transcript.isVisible()) {
			const pick = await vscode.window.showInformationMessage('Reika finished the turn.', 'Show Transcript');
			if (pick !== undefined) {
				await ctx.transcript.show(false);
			}
		}
	} catch (e) {
		reportError(ctx, 'Ask', e);
	}
};

const compact: Factory = (ctx) => async () => {
	const client = await ctx.runningClient();
	if (client === undefined) {
		return;
	}
	try {
		const r = await runWithProgress(client, 'Reika', 'compacting context…', ServerCommands.compact, []);
		if (r === undefined) {
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
	const client = await ctx.runningClient();
	if (client === undefined) {
		return;
	}
	try {
		const r = await client.sendRequest(
			executeCommandType(ServerCommands.cancel),
			executeCommandParams(ServerCommands.cancel, []),
		);
		vscode.window.setStatusBarMessage(
			r.cancelled ? 'Reika: cancelling the turn…' : 'Reika: no turn is running.',
			5000,
		);
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
		ctx.transcript.addLocal(`New session ${r.session}`);
		vscode.window.setStatusBarMessage(`Reika: started session ${r.session}`, 5000);
	} catch (e) {
		reportError(ctx, 'New Session', e);
	}
};

const showTranscript: Factory = (ctx) => () => ctx.transcript.show(false);

const restart: Factory = (ctx) => () => ctx.restart();

const showLog: Factory = (ctx) => () => ctx.showLog();

const statusActions: Factory = (ctx) => async () => {
	const items = statusMenu(ctx.currentStatus(), ctx.isRunning(), ctx.approvalsWaiting());
	const pick = await vscode.window.showQuickPick(items, { title: 'Reika', placeHolder: ctx.currentStatus()?.text });
	if (pick === undefined) {
		return;
	}
	const run: Record<typeof pick.id, () => unknown> = {
		approvals: () => vscode.commands.executeCommand('notifications.showList'),
		compact: compact(ctx),
		cancel: cancel(ctx),
		transcript: showTranscript(ctx),
		ask: ask(ctx),
		restart: restart(ctx),
		log: showLog(ctx),
		settings: () => ctx.openServerPathSetting(),
	};
	await run[pick.id]();
};

/** The command table: every id in ExtensionCommands has its handler. */
export const commandTable: Record<ExtensionCommandKey, Factory> = {
	ask,
	compact,
	cancel,
	save,
	newSession,
	showTranscript,
	statusActions,
	restart,
	showLog,
};
