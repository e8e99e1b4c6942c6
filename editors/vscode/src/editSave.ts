// Saving what the agent edited. The server edits files that are open in the
// editor with workspace/applyEdit, so the buffer and its undo stay right;
// an applied edit leaves the buffer modified but unsaved, and the commands
// the agent runs next (a build, the tests) read the disk. So after an edit
// is applied, each document it changed is saved when it had no unsaved
// changes before the edit. One that had is left alone (saving it would
// write the user's unfinished work too), and the user is told once.
//
// No 'vscode' import: the extension plugs VS Code in through
// SaveAfterEditHost, and the protocol test plugs in its own editor.

import {
	ApplyWorkspaceEditParams,
	ApplyWorkspaceEditResult,
	ResponseError,
	TextDocumentEdit,
	WorkspaceEdit,
} from 'vscode-languageserver-protocol';

/** What SaveAfterEdit needs of the editor. URIs are the server's. */
export interface SaveAfterEditHost {
	/** The document's identity, equal for every spelling of its URI. */
	key(uri: string): string;
	/** Whether the document is open with unsaved changes (false when it
	 * is not open: then it is what the disk holds). */
	isDirty(uri: string): boolean;
	/** Saves the document. Resolves true when it is saved (or was not
	 * modified after all), false or a rejection when saving failed. */
	save(uri: string): Promise<boolean>;
	/** The name to show for the document, e.g. its workspace-relative path. */
	label(uri: string): string;
	/** Tells the user about the document (a Save action makes sense). */
	warn(uri: string, message: string): void;
}

/** The documents a workspace edit changes the text of, in order, each once. */
export function editedDocuments(edit: WorkspaceEdit): string[] {
	const uris: string[] = [];
	const add = (uri: string): void => {
		if (!uris.includes(uri)) {
			uris.push(uri);
		}
	};
	for (const change of edit.documentChanges ?? []) {
		if (TextDocumentEdit.is(change) && change.edits.length > 0) {
			add(change.textDocument.uri);
		}
	}
	for (const [uri, edits] of Object.entries(edit.changes ?? {})) {
		if (edits.length > 0) {
			add(uri);
		}
	}
	return uris;
}

/** The message for an edited document that keeps the user's unsaved changes. */
export function unsavedEditMessage(label: string): string {
	return `Reika edited ${label}, which has unsaved changes: save it so commands see the edit.`;
}

/** The message for an edited document that could not be saved. */
export function saveFailedMessage(label: string, reason?: string): string {
	const why = reason !== undefined && reason !== '' ? ` (${reason})` : '';
	return `Reika edited ${label} but could not save it${why}: save it so commands see the edit.`;
}

export type ApplyEditNext = (params: ApplyWorkspaceEditParams) => Promise<ApplyWorkspaceEditResult | ResponseError<void>>;

export class SaveAfterEdit {
	/** Documents the user was told about, until they are saved or closed. */
	private readonly told = new Set<string>();

	constructor(private readonly host: SaveAfterEditHost) {}

	/**
	 * Applies the edit with next and then saves the documents it changed
	 * that had no unsaved changes before it. The answer goes back to the
	 * server only after the saves, so the next command it runs sees them.
	 * A refused edit is answered as it is, and nothing is saved.
	 */
	async apply(params: ApplyWorkspaceEditParams, next: ApplyEditNext): Promise<ApplyWorkspaceEditResult | ResponseError<void>> {
		const docs = editedDocuments(params.edit).map((uri) => ({ uri, dirty: this.host.isDirty(uri) }));
		const result = await next(params);
		if (result instanceof ResponseError || !result.applied) {
			return result;
		}
		for (const d of docs) {
			await this.settle(d.uri, d.dirty);
		}
		return result;
	}

	/** Forgets that the user was told about a document (it was saved or
	 * closed), so a later edit of unsaved changes tells them again. */
	forget(key: string): void {
		this.told.delete(key);
	}

	private async settle(uri: string, wasDirty: boolean): Promise<void> {
		if (wasDirty) {
			this.tellOnce(uri, unsavedEditMessage(this.host.label(uri)));
			return;
		}
		let saved = false;
		let reason = '';
		try {
			saved = await this.host.save(uri);
		} catch (e) {
			reason = e instanceof Error ? e.message : String(e);
		}
		if (!saved) {
			this.tellOnce(uri, saveFailedMessage(this.host.label(uri), reason));
		}
	}

	private tellOnce(uri: string, message: string): void {
		const key = this.host.key(uri);
		if (this.told.has(key)) {
			return;
		}
		this.told.add(key);
		this.host.warn(uri, message);
	}
}
