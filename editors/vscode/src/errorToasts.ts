// The extension's error toasts: one per problem (messages.ts), with Show
// Chat and Show Log, and gone from the screen once a later turn succeeds.

import * as vscode from 'vscode';
import { Toasts } from './messages';

export class ErrorToasts {
	private readonly recent = new Toasts();
	/** The toasts on screen (not yet answered or closed), by number. */
	private readonly open = new Set<number>();
	private counter = 0;

	constructor(
		private readonly showChat: () => void,
		private readonly showLog: () => void,
		private readonly log: (line: string) => void,
	) {}

	/** Shows an error toast unless the same message was just shown. */
	show(message: string): void {
		if (!this.recent.shouldShow(message)) {
			return;
		}
		const id = ++this.counter;
		this.open.add(id);
		void vscode.window.showErrorMessage(message, 'Show Chat', 'Show Log').then((pick) => {
			this.open.delete(id);
			if (pick === 'Show Chat') {
				this.showChat();
			} else if (pick === 'Show Log') {
				this.showLog();
			}
		});
	}

	/** A turn succeeded: the toasts of earlier failures leave the screen,
	 * whether or not the chat is in view, and a failure after this toasts
	 * again. VS Code has no way to close one notification, so the toasts
	 * are hidden (notifications.hideToasts): they stay in the notification
	 * centre, and so do those of other extensions shown at that moment. */
	async succeeded(): Promise<void> {
		this.recent.reset();
		if (this.open.size === 0) {
			return;
		}
		this.open.clear();
		try {
			await vscode.commands.executeCommand('notifications.hideToasts');
		} catch (e) {
			this.log(`notifications.hideToasts: ${e instanceof Error ? e.message : String(e)}`);
		}
	}
}
