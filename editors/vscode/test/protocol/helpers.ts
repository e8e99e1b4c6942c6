// Helpers of the protocol tests (protocol.test.ts, turns.test.ts): the
// initialize params VS Code's languageclient sends, the settings as the
// extension maps them, and waits on the statuses the server sends.

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { TestContext } from 'node:test';
import { pathToFileURL } from 'node:url';
import { CodeAction, CodeActionParams, Command, InitializeParams, InitializeResult } from 'vscode-languageserver-protocol/node';
import { chipText } from '../../src/chip';
import { CompactCodeAction, ServerCommands, Status } from '../../src/protocol';
import { mapSettings, ServerSettingKey, ServerSettingsObject } from '../../src/settings';
import { FakeEngine, isolatedEnv, LspSession, mkTemp, pkgDir, serverBinary, startFakeEngine, strict, Unavailable } from './harness';

export const script = (name: string): string => path.join(pkgDir, 'test', 'protocol', name);

/** Skips on Unavailable (no Go toolchain) unless strict; rethrows the rest. */
export function skipIfUnavailable(t: TestContext, e: unknown): void {
	if (e instanceof Unavailable && !strict) {
		const msg = `SKIPPED: ${e.message}`;
		process.stderr.write(`protocol test: ${msg}\n`);
		t.skip(msg.split('\n')[0]);
		return;
	}
	throw e;
}

/** What a protocol test starts: a server (kill) or a fake engine (stop). */
type Started = { kill(): void } | { stop(): void };

/** A protocol test's workspace: scratch holds it (root) and what the test
 * writes; own(x) returns x and ends it when the test ends. */
export interface Scratch {
	scratch: string;
	root: string;
	own<T extends Started>(x: T): T;
}

/**
 * Runs a protocol test in a fresh workspace: a server or engine that
 * cannot run here skips the test (fails it under REIKA_TEST_STRICT), and
 * whatever it owns is ended, and the scratch directory removed, when it
 * ends.
 */
export async function inScratch(t: TestContext, body: (w: Scratch) => Promise<void>): Promise<void> {
	const { scratch, root } = workspace();
	const owned: Started[] = [];
	try {
		await body({
			scratch,
			root,
			own: (x) => {
				owned.push(x);
				return x;
			},
		});
	} catch (e) {
		skipIfUnavailable(t, e);
	} finally {
		for (const x of owned.reverse()) {
			if ('kill' in x) {
				x.kill();
			} else {
				x.stop();
			}
		}
		fs.rmSync(scratch, { recursive: true, force: true });
	}
}

/**
 * Starts a fake engine with engineArgs and a server on it, with the user's
 * settings as the extension maps them (baseUrl the engine's), and
 * initializes it as VS Code does, checking the capabilities; both end
 * when the test ends.
 */
export async function startOnFakeEngine(
	w: Scratch,
	engineArgs: string[],
	user: Partial<Record<ServerSettingKey, unknown>> = {},
): Promise<{ s: LspSession; engine: FakeEngine; settings: ServerSettingsObject; bin: string }> {
	const bin = await serverBinary(w.scratch);
	const engine = w.own(await startFakeEngine(w.scratch, engineArgs));
	const settings = settingsFor({ baseUrl: engine.url, ...user });
	const s = w.own(new LspSession(bin, w.root, isolatedEnv(w.scratch), settings));
	checkCapabilities(await s.initialize(initParams(w.root, settings)));
	return { s, engine, settings, bin };
}

/** The server's settings built the way the extension builds them. */
export function settingsFor(user: Partial<Record<ServerSettingKey, unknown>>): ServerSettingsObject {
	const mapped = mapSettings((k) => user[k]);
	assert.deepEqual(mapped.problems, []);
	return mapped.settings;
}

/** initialize params with the capabilities VS Code's languageclient sends
 * for what the server uses. */
export function initParams(root: string, settings: ServerSettingsObject): InitializeParams {
	const rootUri = pathToFileURL(root).href;
	return {
		processId: process.pid,
		clientInfo: { name: 'reika protocol test' },
		rootUri,
		workspaceFolders: [{ uri: rootUri, name: path.basename(root) }],
		initializationOptions: { reika: settings },
		capabilities: {
			window: { workDoneProgress: true, showMessage: { messageActionItem: { additionalPropertiesSupport: true } } },
			workspace: {
				configuration: true,
				workspaceFolders: true,
				applyEdit: true,
				workspaceEdit: { documentChanges: true, resourceOperations: ['create', 'rename', 'delete'] },
			},
			textDocument: {
				synchronization: { dynamicRegistration: true, didSave: true, willSave: true, willSaveWaitUntil: true },
				codeAction: {
					codeActionLiteralSupport: {
						codeActionKind: { valueSet: ['', 'quickfix', 'refactor', 'source', CompactCodeAction.kind] },
					},
				},
			},
		},
	};
}

export async function codeActions(session: LspSession, file: string, only?: string[]): Promise<(Command | CodeAction)[]> {
	const params: CodeActionParams = {
		textDocument: { uri: pathToFileURL(file).href },
		range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } },
		context: { diagnostics: [], ...(only !== undefined ? { only } : {}) },
	};
	return (await session.sendRequest<CodeActionParams, (Command | CodeAction)[] | null>('textDocument/codeAction', params)) ?? [];
}

export function compactAction(actions: (Command | CodeAction)[]): CodeAction | undefined {
	return actions.find((a): a is CodeAction => 'kind' in a && a.title === CompactCodeAction.title);
}

export function lastStatus(session: LspSession): Status | undefined {
	return session.statuses[session.statuses.length - 1];
}

/** The status the server sends before the engine has answered: while
 * the agent starts, `ctx –` with no size; then, until discovery finds the
 * window, the fixed prefix's size with no window (`ctx 2.4k`). */
export function isStartingPlaceholder(st: Status): boolean {
	if (st.text === 'ctx –') {
		return st.size === 0 && st.window === null;
	}
	return st.window === null && st.windowSource === 'none' && st.size > 0 && st.text === chipText(st);
}

/** Resolves once the server's last status is not busy. */
export function idle(s: LspSession): Promise<Status> {
	return s.waitFor('an idle status', () => {
		const st = lastStatus(s);
		return st !== undefined && !st.busy ? st : undefined;
	});
}

/** A workspace in a fresh temp folder; cleanup removes it. */
export function workspace(): { scratch: string; root: string } {
	const scratch = mkTemp('reika-proto-');
	const root = path.join(scratch, 'ws');
	fs.mkdirSync(root);
	return { scratch, root };
}

export function checkCapabilities(init: InitializeResult): void {
	const cmds = init.capabilities.executeCommandProvider?.commands ?? [];
	for (const c of Object.values(ServerCommands)) {
		assert.ok(cmds.includes(c), `executeCommandProvider lacks ${c}: ${JSON.stringify(cmds)}`);
	}
	assert.ok(init.capabilities.codeActionProvider, 'no codeActionProvider');
	assert.ok(init.capabilities.textDocumentSync !== undefined, 'no textDocumentSync');
}

