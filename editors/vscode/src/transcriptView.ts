// The transcript as a read-only Markdown document (reika-transcript:) that
// the user can keep open beside the code; it follows the stream while its
// end is in view.

import * as vscode from 'vscode';
import { TranscriptPath, TranscriptScheme } from './ids';
import { TranscriptEvent } from './protocol';
import { Transcript } from './transcript';

/** How long updates are gathered before the document is redrawn. */
const redrawDelayMs = 80;

export class TranscriptView implements vscode.TextDocumentContentProvider, vscode.Disposable {
	readonly uri = vscode.Uri.from({ scheme: TranscriptScheme, path: `/${TranscriptPath}` });
	private readonly model = new Transcript();
	private readonly changed = new vscode.EventEmitter<vscode.Uri>();
	readonly onDidChange = this.changed.event;
	private timer: ReturnType<typeof setTimeout> | undefined;
	/** Editors that showed the end of the transcript before the last redraw. */
	private followers = new Set<vscode.TextEditor>();
	private readonly subscriptions: vscode.Disposable[] = [];

	constructor() {
		this.subscriptions.push(
			this.changed,
			vscode.workspace.onDidChangeTextDocument((e) => {
				if (e.document.uri.toString() === this.uri.toString()) {
					this.follow(e.document);
				}
			}),
		);
	}

	provideTextDocumentContent(): string {
		return this.model.render();
	}

	add(ev: TranscriptEvent): void {
		this.model.add(ev);
		this.schedule();
	}

	/** Adds a line of the extension's own (a new session, a save). */
	addLocal(text: string): void {
		this.model.addLocal(text);
		this.schedule();
	}

	isVisible(): boolean {
		return this.editors().length > 0;
	}

	async show(preserveFocus: boolean): Promise<void> {
		const doc = await vscode.workspace.openTextDocument(this.uri);
		const editor = await vscode.window.showTextDocument(doc, {
			viewColumn: vscode.ViewColumn.Beside,
			preserveFocus,
			preview: false,
		});
		revealEnd(editor, doc);
	}

	dispose(): void {
		if (this.timer !== undefined) {
			clearTimeout(this.timer);
		}
		for (const d of this.subscriptions) {
			d.dispose();
		}
	}

	private editors(): readonly vscode.TextEditor[] {
		const uri = this.uri.toString();
		return vscode.window.visibleTextEditors.filter((e) => e.document.uri.toString() === uri);
	}

	private schedule(): void {
		if (this.timer !== undefined) {
			return;
		}
		this.timer = setTimeout(() => {
			this.timer = undefined;
			this.followers = new Set(this.editors().filter(atEnd));
			this.changed.fire(this.uri);
		}, redrawDelayMs);
	}

	private follow(doc: vscode.TextDocument): void {
		for (const editor of this.followers) {
			if (vscode.window.visibleTextEditors.includes(editor)) {
				revealEnd(editor, doc);
			}
		}
		this.followers.clear();
	}
}

function atEnd(editor: vscode.TextEditor): boolean {
	const last = editor.visibleRanges[editor.visibleRanges.length - 1];
	return last === undefined || last.end.line >= editor.document.lineCount - 2;
}

function revealEnd(editor: vscode.TextEditor, doc: vscode.TextDocument): void {
	const end = doc.lineAt(doc.lineCount - 1).range.end;
	editor.revealRange(new vscode.Range(end, end), vscode.TextEditorRevealType.Default);
}
