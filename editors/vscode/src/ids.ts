// The extension's own ids (package.json contributes). Its command ids differ
// from the server's (protocol.ts ServerCommands), which the languageclient
// registers; registering an id twice makes VS Code throw. No 'vscode' import.

export const ExtensionCommands = {
	ask: 'reika.askPrompt',
	askAboutSelection: 'reika.askAboutSelection',
	compact: 'reika.compactContext',
	cancel: 'reika.cancelTurn',
	save: 'reika.saveTranscript',
	newSession: 'reika.startNewSession',
	showTranscript: 'reika.showTranscript',
	openChatInEditor: 'reika.openChatInEditor',
	switchMode: 'reika.switchMode',
	showSessions: 'reika.showSessions',
	statusActions: 'reika.statusActions',
	restart: 'reika.restartServer',
	showLog: 'reika.showServerLog',
	approvalAllow: 'reika.approvalAllow',
	approvalAllowSession: 'reika.approvalAllowSession',
	approvalDeny: 'reika.approvalDeny',
	applyCodeBlock: 'reika.applyCodeBlock',
} as const;

export type ExtensionCommandKey = keyof typeof ExtensionCommands;

/** The status bar item's id. */
export const StatusItemId = 'reika.statusItem';
/** The chat's sidebar view (in the Reika activity bar container). */
export const ChatSidebarViewId = 'reika.chatView';
/** The extension setting that says where the chat opens. */
export const ChatLocationSetting = 'chatLocation';
/** The chat panel's view type (its serializer restores it after a reload). */
export const ChatViewType = 'reika.chat';
/** The context key that is true while an approval waits for the user. */
export const ApprovalWaitingContext = 'reika.approvalWaiting';
/** The scheme of the read-only documents an approval shows. */
export const ApprovalScheme = 'reika-approval';
/** The scheme of the documents a code block's Apply diff shows. */
export const ApplyScheme = 'reika-apply';
export const ClientId = 'reika';
export const ClientName = 'Reika';
