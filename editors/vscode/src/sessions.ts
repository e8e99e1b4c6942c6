// Reika: Show Sessions — the workspace's session history (reika.sessions,
// docs/protocol.md §3.9): pick a session, then open it read-only (as
// Markdown), resume it in the chat, rename it or delete it.

import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import type { Ctx } from './ctx';
import { executeCommandParams, executeCommandType, ServerCommands, SessionInfo, SessionsArgs } from './protocol';
import { parseSessions, sessionItem, sessionMarkdown } from './sessionText';
import { parseTranscriptEvent } from './transcript';

/** The scheme of a session opened read-only. */
export const SessionScheme = 'reika-session';

/** The text of the sessions opened read-only, by URI. */
export class SessionDocs implements vscode.TextDocumentContentProvider {
	private readonly docs = new Map<string, string>();

	provideTextDocumentContent(uri: vscode.Uri): string {
		return this.docs.get(uri.toString()) ?? '';
	}

	set(uri: vscode.Uri, text: string): void {
		this.docs.set(uri.toString(), text);
	}
}

export const sessionDocs = new SessionDocs();

function call(client: LanguageClient, args: SessionsArgs): Promise<unknown> {
	return client.sendRequest(executeCommandType(ServerCommands.sessions), executeCommandParams(ServerCommands.sessions, [args]));
}

type Action = 'open' | 'resume' | 'rename' | 'delete';

/** The session picker, then what to do with the session picked. */
export async function showSessions(ctx: Ctx): Promise<void> {
	const client = await ctx.runningClient();
	if (client === undefined) {
		return;
	}
	const sessions = parseSessions(await call(client, { action: 'list' }));
	if (sessions.length === 0) {
		void vscode.window.showInformationMessage('Reika: this workspace has no sessions yet.');
		return;
	}
	const picked = await vscode.window.showQuickPick(
		sessions.map((s) => ({ ...sessionItem(s), session: s })),
		{ title: 'Reika: Sessions', placeHolder: 'A session of this workspace, newest first', matchOnDescription: true, matchOnDetail: true },
	);
	if (picked === undefined) {
		return;
	}
	const s = picked.session;
	const actions: { label: string; action: Action; description?: string }[] = [
		{ label: '$(book) Open read-only', action: 'open' },
		...(s.current ? [] : [{ label: '$(debug-continue) Resume in the chat', action: 'resume' as const, description: 'the next ask continues it' }]),
		{ label: '$(edit) Rename…', action: 'rename' },
		{ label: '$(trash) Delete…', action: 'delete', description: 'its log and saved results' },
	];
	const what = await vscode.window.showQuickPick(actions, { title: `Reika: ${picked.label.replace(/^\$\([^)]*\) /, '')}` });
	if (what === undefined) {
		return;
	}
	try {
		await run(ctx, client, s, what.action);
	} catch (e) {
		void vscode.window.showErrorMessage(`Reika: ${what.action} session ${s.id} failed: ${e instanceof Error ? e.message : String(e)}`);
	}
}

async function run(ctx: Ctx, client: LanguageClient, s: SessionInfo, action: Action): Promise<void> {
	switch (action) {
		case 'open': {
			const page = (await call(client, { action: 'open', id: s.id })) as { events?: unknown[]; omitted?: number } | null;
			const events = (page?.events ?? []).map(parseTranscriptEvent).filter((e) => e !== undefined);
			const uri = vscode.Uri.from({ scheme: SessionScheme, path: `/${s.id}.md` });
			sessionDocs.set(uri, sessionMarkdown(s, events, page?.omitted ?? 0));
			const doc = await vscode.workspace.openTextDocument(uri);
			await vscode.languages.setTextDocumentLanguage(doc, 'markdown');
			await vscode.window.showTextDocument(doc, { preview: true });
			return;
		}
		case 'resume':
			await call(client, { action: 'resume', id: s.id });
			await ctx.reloadTranscript();
			ctx.chat.show(false);
			vscode.window.setStatusBarMessage(`Reika: resumed session ${s.id}`, 5000);
			return;
		case 'rename': {
			const title = await vscode.window.showInputBox({ title: 'Reika: Rename Session', value: s.title, prompt: `The title of session ${s.id}` });
			if (title === undefined) {
				return;
			}
			await call(client, { action: 'rename', id: s.id, title });
			vscode.window.setStatusBarMessage(`Reika: renamed session ${s.id}`, 5000);
			return;
		}
		case 'delete': {
			const ok = await vscode.window.showWarningMessage(
				`Delete the session "${s.title !== '' ? s.title : s.id}"? Its log and saved results go.`,
				{ modal: true },
				'Delete',
			);
			if (ok !== 'Delete') {
				return;
			}
			await call(client, { action: 'delete', id: s.id });
			if (s.current) {
				ctx.chat.clear();
				ctx.chat.addLocal('The session was deleted; the next ask starts a new one.');
			}
			vscode.window.setStatusBarMessage(`Reika: deleted session ${s.id}`, 5000);
		}
	}
}
