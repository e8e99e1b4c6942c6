// The chat's page, the same for the editor tab and the sidebar view: the
// conversation, the context bar, the approval, the input; a strict content
// security policy (no inline script or style, the script by nonce).

import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';

export function chatHtml(webview: vscode.Webview, extensionUri: vscode.Uri): string {
	const media = (f: string): vscode.Uri => webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'media', f));
	const nonce = randomBytes(16).toString('base64');
	const csp = [
		"default-src 'none'",
		`style-src ${webview.cspSource}`,
		`font-src ${webview.cspSource}`,
		`img-src ${webview.cspSource} data:`,
		`script-src 'nonce-${nonce}'`,
	].join('; ');
	return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="${media('chat.css').toString()}">
<title>Reika</title>
</head>
<body>
<header>
<div id="context" class="context" title="The context window"><div class="bar"><div id="context-fill" class="fill"></div><div id="context-shed" class="shed" hidden></div></div><span id="context-label" class="label">Reika: starting…</span></div>
<div class="tools">
	<button type="button" id="mode" data-command="mode" title="The agent's mode: click to switch (/mode NAME does too)">code</button>
	<button type="button" data-command="compact" title="Write a note and fold old turns into a recap">Compact</button>
	<button type="button" data-command="newSession" title="Start a new session">New</button>
	<button type="button" data-command="sessions" title="The sessions of this workspace: open, resume, rename, delete">History</button>
</div>
</header>
<main>
<div id="empty">Ask Reika to read, change or run something in this workspace. A selection in the editor is attached to what you send.</div>
<div id="log" role="log" aria-live="polite"></div>
</main>
<footer>
<div id="approval" class="approval" role="alertdialog" aria-labelledby="approval-message" hidden><div id="approval-message"></div><div id="approval-actions" class="approval-actions"></div></div>
<div id="progress" hidden></div>
<div id="attachment" class="attachment-chip" hidden><span id="attachment-label"></span><button id="detach" type="button" title="Do not attach the selection">×</button></div>
<div id="slash" class="slash" role="listbox" aria-label="Slash commands" hidden></div>
<div id="files" class="slash" role="listbox" aria-label="Files to attach" hidden></div>
<div class="composer">
	<textarea id="input" rows="2" placeholder="Ask Reika…" aria-label="Ask Reika"></textarea>
	<button id="send" type="button" title="Send (Enter)">Send</button>
</div>
<div class="hint">Enter to send · Shift+Enter for a new line · ↑ earlier prompts · / commands · @ attach a file</div>
</footer>
<script nonce="${nonce}" src="${media('chat.js').toString()}"></script>
</body>
</html>`;
}
