// VS Code as the editor of SaveAfterEdit (editSave.ts): its documents, their
// saving, and the warning about an edit of a buffer with unsaved changes.

import * as vscode from 'vscode';
import { SaveAfterEditHost } from './editSave';

/** VS Code as the editor of SaveAfterEdit. Every spelling of a URI the
 * server sends maps to the document VS Code has open for it. */
export function editorHost(log: (line: string) => void): SaveAfterEditHost {
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
