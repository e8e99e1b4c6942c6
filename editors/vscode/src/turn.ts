// A turn (reika.ask) or a compaction (reika.compact) on a progress token of
// ours, with the chat showing the server's reports and a Stop button that
// cancels the request ($/cancelRequest, which stops it).

import * as vscode from 'vscode';
import {
	CancellationTokenSource,
	ErrorCodes,
	LanguageClient,
	LSPErrorCodes,
	ProgressToken,
	ResponseError,
	WorkDoneProgress,
} from 'vscode-languageclient/node';
import { askArgs, askOutcome, Selection, shorten } from './ask';
import type { ChatView } from './chatView';
import type { CutTurns } from './cutTurns';
import { CompactResult, executeCommandParams, executeCommandType, ServerCommands } from './protocol';

/** What a turn needs of the extension's state (ctx.ts's Ctx is one): the
 * chat it reports in, the claim on the one running turn, and the toasts.
 * Declared here, so that this module does not import ctx.ts, which imports
 * it. */
export interface TurnHost {
	readonly chat: ChatView;
	readonly cuts: CutTurns;
	beginTurn(source: CancellationTokenSource): boolean;
	endTurn(source: CancellationTokenSource): void;
	turnSucceeded(): Promise<void>;
	toastError(message: string): void;
}

let tokenCounter = 0;

/** A progress token of this window's own. */
export function newToken(): ProgressToken {
	tokenCounter++;
	return `reika-vscode-${process.pid}-${Date.now()}-${tokenCounter}`;
}

/** Whether e is the answer to a cancelled request. */
export function isCancelled(e: unknown): boolean {
	return e instanceof ResponseError && e.code === LSPErrorCodes.RequestCancelled;
}

/** Whether e is the answer to a request the server never answered because
 * it stopped (the languageclient rejects what is pending when the
 * connection closes). */
export function isServerGone(e: unknown): boolean {
	return e instanceof ResponseError && e.code === ErrorCodes.PendingResponseRejected;
}

/** What the chat says of a turn the server stopped in. */
export const serverStoppedText = 'The server stopped during the turn; what it had sent is above. It is restarted, and the session continues.';

/** Runs one turn; resolves when it has ended. */
export async function runTurn(ctx: TurnHost, client: LanguageClient, prompt: string, selection: Selection | undefined): Promise<void> {
	const source = new CancellationTokenSource();
	if (!ctx.beginTurn(source)) {
		source.dispose();
		void vscode.window.showInformationMessage('Reika: a turn is running. Wait for it to end, or press Stop.');
		return;
	}
	const token = newToken();
	ctx.chat.setTurn(true, shorten(prompt, 80));
	const sub = client.onProgress(WorkDoneProgress.type, token, (v) => {
		if (v.kind !== 'end' && v.message !== undefined && v.message !== '') {
			ctx.chat.setTurn(true, v.message);
		}
	});
	let message: string | undefined;
	let done = false;
	let stopped = false;
	try {
		const r = await client.sendRequest(
			executeCommandType(ServerCommands.ask),
			executeCommandParams(ServerCommands.ask, [askArgs(prompt, selection)], token),
			source.token,
		);
		const outcome = askOutcome(r);
		done = outcome.kind === 'none';
		if (outcome.kind === 'error') {
			message = outcome.message;
		} else if (outcome.kind === 'info') {
			vscode.window.setStatusBarMessage(outcome.message, 5000);
		}
	} catch (e) {
		if (isServerGone(e)) {
			stopped = true;
		} else if (!isCancelled(e) && !source.token.isCancellationRequested) {
			message = `Reika: Ask failed: ${e instanceof Error ? e.message : String(e)}`;
		}
	} finally {
		sub.dispose();
		ctx.endTurn(source);
		source.dispose();
	}
	if (done) {
		await ctx.turnSucceeded();
	}
	if (stopped) {
		const cut = ctx.chat.interrupt(serverStoppedText);
		if (cut !== undefined) {
			void ctx.cuts.add(cut);
		}
		if (!ctx.chat.isVisible()) {
			ctx.toastError(`Reika: ${serverStoppedText}`);
		}
	} else if (message !== undefined) {
		ctx.chat.addError(message.replace(/^Reika: /, ''));
		if (!ctx.chat.isVisible()) {
			ctx.toastError(message);
		}
	} else if (done && !ctx.chat.isVisible()) {
		const pick = await vscode.window.showInformationMessage('Reika finished the turn.', 'Show Chat');
		if (pick !== undefined) {
			ctx.chat.show(false);
		}
	}
}

/** Runs reika.compact as the window's turn: its result, 'cancelled', or
 * 'busy' when a turn runs (the user is told). */
export async function runCompact(ctx: TurnHost, client: LanguageClient): Promise<CompactResult | 'cancelled' | 'busy'> {
	const source = new CancellationTokenSource();
	if (!ctx.beginTurn(source)) {
		source.dispose();
		void vscode.window.showInformationMessage('Reika: a turn is running. Compact context when it has ended.');
		return 'busy';
	}
	const token = newToken();
	ctx.chat.setTurn(true, 'Compacting context…');
	const sub = client.onProgress(WorkDoneProgress.type, token, (v) => {
		if (v.kind !== 'end' && v.message !== undefined && v.message !== '') {
			ctx.chat.setTurn(true, v.message);
		}
	});
	try {
		return await client.sendRequest(
			executeCommandType(ServerCommands.compact),
			executeCommandParams(ServerCommands.compact, [], token),
			source.token,
		);
	} catch (e) {
		if (isCancelled(e) || source.token.isCancellationRequested) {
			return 'cancelled';
		}
		throw e;
	} finally {
		sub.dispose();
		ctx.endTurn(source);
		source.dispose();
	}
}
