// The status bar item: the context chip, coloured by level, a spinner while
// busy, the budget breakdown as tooltip, and a click menu.

import * as vscode from 'vscode';
import { backgroundColorId, Icons, ProductName, statusBarText } from './chip';
import { ExtensionCommands, StatusItemId } from './ids';
import { Status } from './protocol';
import { escapeMarkdown, tooltipMarkdown } from './tooltip';

export class StatusItem implements vscode.Disposable {
	private readonly item: vscode.StatusBarItem;
	private current: Status | undefined;
	private approvals = 0;

	constructor() {
		this.item = vscode.window.createStatusBarItem(StatusItemId, vscode.StatusBarAlignment.Right, 100);
		this.item.name = 'Reika context';
		this.item.command = ExtensionCommands.statusActions;
		this.starting();
		this.item.show();
	}

	/** The last status the server sent; undefined before the first. */
	get status(): Status | undefined {
		return this.current;
	}

	set(s: Status): void {
		this.current = s;
		this.render();
	}

	/** Approvals (window/showMessageRequest) waiting for the user. */
	get approvalsWaiting(): number {
		return this.approvals;
	}

	/** Counts an approval prompt in (+1) or out (-1). */
	approval(delta: 1 | -1): void {
		this.approvals = Math.max(0, this.approvals + delta);
		this.render();
	}

	private render(): void {
		const s = this.current;
		if (s === undefined) {
			return;
		}
		this.item.text = statusBarText(s, this.approvals);
		this.item.tooltip = markdown(tooltipMarkdown(s, this.approvals));
		this.color(backgroundColorId(s.level));
	}

	starting(): void {
		this.current = undefined;
		this.item.text = `${Icons.busy} ${ProductName}`;
		this.item.tooltip = 'Reika: starting the server…';
		this.color(undefined);
	}

	/** The server runs but has not reported its context yet. */
	noStatusYet(): void {
		this.item.text = `${Icons.ok} ${ProductName}`;
		this.item.tooltip = 'Reika: the server is running and has not reported its context yet.';
		this.color(undefined);
	}

	/** Shows that the server is not serving, with the reason. */
	problem(short: string, detail: string): void {
		this.current = undefined;
		this.item.text = `${Icons.error} ${ProductName}: ${short}`;
		this.item.tooltip = markdown(`**Reika** · ${escapeMarkdown(short)}\n\n${escapeMarkdown(detail)}\n\nClick for actions.`);
		this.color('statusBarItem.errorBackground');
	}

	dispose(): void {
		this.item.dispose();
	}

	private color(id: string | undefined): void {
		this.item.backgroundColor = id === undefined ? undefined : new vscode.ThemeColor(id);
	}
}

function markdown(text: string): vscode.MarkdownString {
	const md = new vscode.MarkdownString(text, true);
	md.isTrusted = false;
	return md;
}
