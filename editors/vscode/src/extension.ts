// The extension's entry point: build the context, register the command
// table, the chat's serializer and the approval documents, start the server.

import * as vscode from 'vscode';
import { commandTable } from './commands';
import { Ctx } from './ctx';
import { ApplyScheme, ApprovalScheme, ChatSidebarViewId, ChatViewType, ExtensionCommandKey, ExtensionCommands } from './ids';
import { QuickActionKinds } from './quickActions';
import { SessionScheme, sessionDocs } from './sessions';

let ctx: Ctx | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
	const c = new Ctx(context);
	ctx = c;
	context.subscriptions.push(
		c,
		vscode.window.registerWebviewPanelSerializer(ChatViewType, c.chat),
		vscode.window.registerWebviewViewProvider(ChatSidebarViewId, c.chat, { webviewOptions: { retainContextWhenHidden: true } }),
		vscode.workspace.registerTextDocumentContentProvider(ApprovalScheme, c.approvals),
		vscode.workspace.registerTextDocumentContentProvider(SessionScheme, sessionDocs),
		vscode.workspace.registerTextDocumentContentProvider(ApplyScheme, c.code),
		vscode.languages.registerCodeActionsProvider(
			[{ scheme: 'file' }, { scheme: 'untitled' }],
			{ provideCodeActions: (doc, range, context) => c.provideQuickActions(doc, range, context) },
			{ providedCodeActionKinds: Object.values(QuickActionKinds).map((k) => vscode.CodeActionKind.Empty.append(k)) },
		),
		vscode.workspace.onDidChangeConfiguration((e) => c.onConfigurationChange(e)),
	);
	for (const key of Object.keys(commandTable) as ExtensionCommandKey[]) {
		context.subscriptions.push(vscode.commands.registerCommand(ExtensionCommands[key], commandTable[key](c)));
	}
	await c.start();
}

export async function deactivate(): Promise<void> {
	const c = ctx;
	ctx = undefined;
	await c?.stop();
}
