// The extension's own command ids (package.json contributes.commands). They
// differ from the server's (protocol.ts ServerCommands), which the
// languageclient registers; registering an id twice makes VS Code throw.
// No 'vscode' import.

export const ExtensionCommands = {
	ask: 'reika.askPrompt',
	compact: 'reika.compactContext',
	cancel: 'reika.cancelTurn',
	save: 'reika.saveTranscript',
	newSession: 'reika.startNewSession',
	showTranscript: 'reika.showTranscript',
	statusActions: 'reika.statusActions',
	restart: 'reika.restartServer',
	showLog: 'reika.showServerLog',
} as const;

export type ExtensionCommandKey = keyof typeof ExtensionCommands;

/** The status bar item's id and the transcript document's URI. */
export const StatusItemId = 'reika.statusItem';
export const TranscriptScheme = 'reika-transcript';
export const TranscriptPath = 'Reika transcript.md';
export const ClientId = 'reika';
export const ClientName = 'Reika';
