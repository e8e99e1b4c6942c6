// A small LSP client for the protocol test: it starts the real reika-lsp
// binary over stdio and drives it with vscode-jsonrpc and
// vscode-languageserver-protocol, the libraries the extension itself uses,
// recording everything the server sends. It plays the editor too: open
// documents with versions and unsaved changes, workspace/applyEdit applied
// to them with didChange, and the extension's SaveAfterEdit on top, saving
// to disk with didSave.

import { ChildProcess, execFile, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createMessageConnection, MessageConnection, StreamMessageReader, StreamMessageWriter } from 'vscode-jsonrpc/node';
import {
	ApplyWorkspaceEditParams,
	ApplyWorkspaceEditRequest,
	ApplyWorkspaceEditResult,
	CancellationToken,
	ConfigurationRequest,
	CreateFile,
	DidChangeTextDocumentNotification,
	DidChangeTextDocumentParams,
	DidOpenTextDocumentNotification,
	DidOpenTextDocumentParams,
	DidSaveTextDocumentNotification,
	ExitNotification,
	InitializedNotification,
	InitializeParams,
	InitializeRequest,
	InitializeResult,
	LogMessageNotification,
	MessageActionItem,
	Position,
	ProgressToken,
	RegistrationRequest,
	ResponseError,
	ShowMessageNotification,
	ShowMessageParams,
	ShowMessageRequest,
	ShowMessageRequestParams,
	ShutdownRequest,
	TextDocumentEdit,
	TextEdit,
	UnregistrationRequest,
	WorkDoneProgressBegin,
	WorkDoneProgressCreateRequest,
	WorkDoneProgressEnd,
	WorkDoneProgressReport,
} from 'vscode-languageserver-protocol/node';
import { parseStatus } from '../../src/chip';
import { SaveAfterEdit, SaveAfterEditHost } from '../../src/editSave';
import {
	CommandSignatures,
	executeCommandParams,
	executeCommandType,
	ServerCommand,
	Status,
	StatusNotification,
	TranscriptEvent,
	TranscriptNotification,
} from '../../src/protocol';
import { configurationItem, ServerSettingsObject } from '../../src/settings';
import { parseTranscriptEvent } from '../../src/transcript';

export const pkgDir = path.resolve(__dirname, '../../..');
export const repoRoot = path.resolve(pkgDir, '../..');

/** How long any single wait may take before the test reports a hang. This
 * is a hang guard, not a speed requirement. */
export const hangGuardMs = 90_000;

/** Whether a missing toolchain fails the tests instead of skipping them:
 * REIKA_TEST_STRICT=1 (CI) or REIKA_PROTOCOL_TEST_REQUIRED=1. */
export const strict = process.env.REIKA_TEST_STRICT === '1' || process.env.REIKA_PROTOCOL_TEST_REQUIRED === '1';

/** The one reason to skip: no Go toolchain to build the fake engine (and
 * the server, when REIKA_LSP_BIN is not set). Anything else that goes wrong
 * with the server or the engine is a failure. */
export class Unavailable extends Error {}

function run(cmd: string, args: string[], cwd: string): Promise<{ code: number; out: string }> {
	return new Promise((resolve, reject) => {
		execFile(cmd, args, { cwd, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
			if (err !== null && err.code === 'ENOENT') {
				reject(new Unavailable(`${cmd} is not on PATH`));
				return;
			}
			const code = err === null ? 0 : typeof err.code === 'number' ? err.code : 1;
			resolve({ code, out: `${stdout}${stderr}` });
		});
	});
}

export function mkTemp(prefix: string): string {
	return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/** The reika-lsp binary: REIKA_LSP_BIN (test.sh sets it), else built from
 * the repository into a temp folder. */
export async function serverBinary(scratch: string): Promise<string> {
	const env = process.env.REIKA_LSP_BIN;
	if (env !== undefined && env !== '') {
		if (!fs.existsSync(env)) {
			throw new Error(`REIKA_LSP_BIN=${env} does not exist`);
		}
		return env;
	}
	const bin = path.join(scratch, process.platform === 'win32' ? 'reika-lsp.exe' : 'reika-lsp');
	const r = await run('go', ['build', '-o', bin, './cmd/reika-lsp'], repoRoot);
	if (r.code !== 0) {
		throw new Error(`REIKA_LSP_BIN is not set and go build ./cmd/reika-lsp failed:\n${r.out}`);
	}
	return bin;
}

export interface FakeEngine {
	url: string;
	stop(): void;
}

export const fakeEnginePkg = './agent/enginetest/cmd/fakeengine';

/** Builds and starts the standalone fake engine
 * (agent/enginetest/cmd/fakeengine/README.md); its first stdout line is its
 * base URL. With -stdin it exits when this process dies. */
export async function startFakeEngine(scratch: string, args: string[]): Promise<FakeEngine> {
	const bin = path.join(scratch, process.platform === 'win32' ? 'fakeengine.exe' : 'fakeengine');
	const built = await run('go', ['build', '-o', bin, fakeEnginePkg], repoRoot);
	if (built.code !== 0) {
		throw new Error(`go build ${fakeEnginePkg} failed:\n${built.out}`);
	}
	const proc = spawn(bin, ['-addr', '127.0.0.1:0', '-stdin', ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
	let stderr = '';
	proc.stderr?.on('data', (d: Buffer) => {
		stderr += d.toString();
	});
	const url = await new Promise<string>((resolve, reject) => {
		const timer = setTimeout(() => reject(new Error(`fake engine printed no URL (hang guard)\n${stderr}`)), hangGuardMs);
		const lines = readline.createInterface({ input: proc.stdout! });
		lines.once('line', (line) => {
			clearTimeout(timer);
			resolve(line.trim());
		});
		proc.once('exit', (code) => {
			clearTimeout(timer);
			reject(new Error(`fake engine exited with ${code} before printing its URL:\n${stderr}`));
		});
	});
	if (!/^https?:\/\//.test(url)) {
		proc.kill();
		throw new Error(`fake engine's first line is not a URL: ${JSON.stringify(url)}\n${stderr}`);
	}
	return { url, stop: () => proc.kill() };
}

/** An address where nothing listens: an engine that is down. */
export async function deadURL(): Promise<string> {
	const srv = net.createServer();
	await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
	const port = (srv.address() as net.AddressInfo).port;
	await new Promise<void>((resolve) => srv.close(() => resolve()));
	return `http://127.0.0.1:${port}/v1`;
}

/** A document open in the test editor. */
export interface OpenDocument {
	path: string;
	uri: string;
	text: string;
	version: number;
	/** The buffer holds changes the disk does not. */
	dirty: boolean;
}

/** The offset of an LSP position (UTF-16, as JS strings count) in text. */
export function offsetAt(text: string, pos: Position): number {
	let start = 0;
	for (let line = 0; line < pos.line; line++) {
		const nl = text.indexOf('\n', start);
		if (nl < 0) {
			return text.length;
		}
		start = nl + 1;
	}
	let end = text.indexOf('\n', start);
	if (end < 0) {
		end = text.length;
	} else if (end > start && text[end - 1] === '\r') {
		end--;
	}
	return Math.min(start + pos.character, end);
}

type ProgressValue = WorkDoneProgressBegin | WorkDoneProgressReport | WorkDoneProgressEnd;

/** The environment of a server under test: nothing of the user's. */
export function isolatedEnv(home: string): NodeJS.ProcessEnv {
	const env: NodeJS.ProcessEnv = {};
	for (const [k, v] of Object.entries(process.env)) {
		if (!k.startsWith('REIKA_') && !k.startsWith('XDG_')) {
			env[k] = v;
		}
	}
	env.HOME = home;
	env.XDG_STATE_HOME = path.join(home, 'state');
	env.XDG_CONFIG_HOME = path.join(home, 'config');
	env.XDG_CACHE_HOME = path.join(home, 'cache');
	return env;
}

/** One server process and what it sent. */
export class LspSession {
	readonly statuses: Status[] = [];
	readonly transcript: TranscriptEvent[] = [];
	readonly progress = new Map<string, ProgressValue[]>();
	readonly messages: ShowMessageParams[] = [];
	readonly prompts: ShowMessageRequestParams[] = [];
	readonly logs: string[] = [];
	/** The edits the server asked the editor to apply. */
	readonly applyEdits: ApplyWorkspaceEditParams[] = [];
	/** Files a workspace edit loaded because they were not open. */
	readonly loaded: string[] = [];
	/** What the extension told the user about edited documents. */
	readonly warnings: { uri: string; message: string }[] = [];
	/** Documents saved after an edit, in order. */
	readonly saved: string[] = [];
	/** The documents open in the editor, by URI. */
	readonly docs = new Map<string, OpenDocument>();
	/** The action picked for approvals (window/showMessageRequest). */
	approvalAnswer = 'Allow for this session';
	stderr = '';
	exitCode: number | null = null;
	private readonly conn: MessageConnection;
	private readonly proc: ChildProcess;
	private readonly waiters = new Set<() => void>();
	private exited: Promise<number | null>;

	constructor(
		bin: string,
		cwd: string,
		env: NodeJS.ProcessEnv,
		private readonly settings: ServerSettingsObject,
	) {
		// As vscode-languageclient starts it: the extension's arguments, then
		// the --stdio it appends for TransportKind.stdio.
		this.proc = spawn(bin, ['serve', '--stdio'], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
		this.proc.stderr!.on('data', (d: Buffer) => {
			this.stderr += d.toString();
		});
		this.exited = new Promise((resolve) => {
			this.proc.once('exit', (code) => {
				this.exitCode = code;
				this.wake();
				resolve(code);
			});
		});
		this.conn = createMessageConnection(
			new StreamMessageReader(this.proc.stdout!),
			new StreamMessageWriter(this.proc.stdin!),
		);
		this.conn.onNotification(StatusNotification, (raw: unknown) => {
			const s = parseStatus(raw);
			if (s === undefined) {
				throw new Error(`bad reika/status: ${JSON.stringify(raw)}`);
			}
			this.record(() => this.statuses.push(s));
		});
		this.conn.onNotification(TranscriptNotification, (raw: unknown) => {
			const ev = parseTranscriptEvent(raw);
			if (ev === undefined) {
				throw new Error(`bad reika/transcript: ${JSON.stringify(raw)}`);
			}
			this.record(() => this.transcript.push(ev));
		});
		this.conn.onUnhandledProgress((p) => {
			this.record(() => {
				const key = String(p.token);
				const list = this.progress.get(key) ?? [];
				list.push(p.value as ProgressValue);
				this.progress.set(key, list);
			});
		});
		this.conn.onNotification(ShowMessageNotification.type, (p) => this.record(() => this.messages.push(p)));
		this.conn.onNotification(LogMessageNotification.type, (p) => this.record(() => this.logs.push(p.message)));
		this.conn.onRequest(ShowMessageRequest.type, (p): MessageActionItem | null => {
			this.record(() => this.prompts.push(p));
			return p.actions?.find((a) => a.title === this.approvalAnswer) ?? null;
		});
		this.conn.onRequest(WorkDoneProgressCreateRequest.type, (p) => {
			this.record(() => this.progress.set(String(p.token), this.progress.get(String(p.token)) ?? []));
		});
		// Answered as the extension's configuration middleware answers.
		this.conn.onRequest(ConfigurationRequest.type, (p) =>
			p.items.map((item) => configurationItem(item.section, this.settings).value),
		);
		this.conn.onRequest(RegistrationRequest.type, () => undefined);
		this.conn.onRequest(UnregistrationRequest.type, () => undefined);
		// Edits go through the extension's SaveAfterEdit, as in VS Code.
		const saveAfterEdit = new SaveAfterEdit(this.editorHost(cwd));
		this.conn.onRequest(ApplyWorkspaceEditRequest.type, async (p) => {
			this.record(() => this.applyEdits.push(p));
			const r = await saveAfterEdit.apply(p, (q) => this.applyToBuffers(q));
			if (r instanceof ResponseError) {
				throw r;
			}
			return r;
		});
		this.conn.listen();
	}

	/** initialize + initialized. */
	async initialize(params: InitializeParams): Promise<InitializeResult> {
		let result: InitializeResult;
		try {
			result = await this.race(this.conn.sendRequest(InitializeRequest.type, params), 'initialize', hangGuardMs);
		} catch (e) {
			const msg = e instanceof Error ? e.message : String(e);
			throw new Error(`initialize: ${msg}; stderr:\n${this.stderr.slice(-2000)}`);
		}
		await this.conn.sendNotification(InitializedNotification.type, {});
		return result;
	}

	/** workspace/executeCommand; cancelling token sends $/cancelRequest, as
	 * the extension's progress Cancel button does. */
	execute<C extends ServerCommand>(
		command: C,
		args: CommandSignatures[C]['args'],
		workDoneToken?: ProgressToken,
		token?: CancellationToken,
	): Promise<CommandSignatures[C]['result']> {
		return this.race(
			this.conn.sendRequest(executeCommandType(command), executeCommandParams(command, args, workDoneToken), token),
			command,
			hangGuardMs,
		);
	}

	sendRequest<P, R>(method: string, params: P): Promise<R> {
		return this.race(this.conn.sendRequest<R>(method, params), method, hangGuardMs);
	}

	sendNotification<P>(method: string, params: P): Promise<void> {
		return this.conn.sendNotification(method, params);
	}

	/** Resolves with check()'s first defined value, re-checked on every
	 * message from the server. */
	waitFor<T>(what: string, check: () => T | undefined): Promise<T> {
		return new Promise<T>((resolve, reject) => {
			const attempt = (): void => {
				const v = check();
				if (v !== undefined) {
					done();
					resolve(v);
				} else if (this.exitCode !== null) {
					done();
					reject(new Error(`server exited (${this.exitCode}) while waiting for ${what}\n${this.stderr.slice(-2000)}`));
				}
			};
			const timer = setTimeout(() => {
				done();
				reject(new Error(`hang guard: no ${what}\nstderr:\n${this.stderr.slice(-2000)}`));
			}, hangGuardMs);
			const done = (): void => {
				clearTimeout(timer);
				this.waiters.delete(attempt);
			};
			this.waiters.add(attempt);
			attempt();
		});
	}

	/** shutdown, exit, and the exit code. */
	async shutdown(): Promise<number | null> {
		await this.race(this.conn.sendRequest(ShutdownRequest.type), 'shutdown', hangGuardMs);
		await this.conn.sendNotification(ExitNotification.type);
		const timer = setTimeout(() => this.proc.kill(), hangGuardMs);
		const code = await this.exited;
		clearTimeout(timer);
		this.conn.dispose();
		return code;
	}

	kill(): void {
		this.conn.dispose();
		if (this.exitCode === null) {
			this.proc.kill();
		}
	}

	private record(f: () => void): void {
		f();
		this.wake();
	}

	private wake(): void {
		for (const w of [...this.waiters]) {
			w();
		}
	}

	/**
	 * Opens a file as the editor does. text is the buffer: the file's
	 * content when left out, else unsaved changes of the user.
	 */
	async open(file: string, languageId: string, text?: string): Promise<OpenDocument> {
		const disk = fs.readFileSync(file, 'utf8');
		const doc: OpenDocument = {
			path: file,
			uri: pathToFileURL(file).href,
			text: text ?? disk,
			version: 1,
			dirty: text !== undefined && text !== disk,
		};
		this.docs.set(doc.uri, doc);
		const params: DidOpenTextDocumentParams = {
			textDocument: { uri: doc.uri, languageId, version: doc.version, text: doc.text },
		};
		await this.conn.sendNotification(DidOpenTextDocumentNotification.type, params);
		return doc;
	}

	/** The editor's own application of an edit (the languageclient's, in
	 * VS Code): versions checked, open buffers changed, didChange sent. As
	 * in VS Code, a file that is not open is loaded into a (hidden) document
	 * first, and CreateFile makes a new, empty one; both are opened to the
	 * server with didOpen. */
	private async applyToBuffers(p: ApplyWorkspaceEditParams): Promise<ApplyWorkspaceEditResult> {
		const edits: { doc: OpenDocument; edits: TextEdit[] }[] = [];
		for (const change of p.edit.documentChanges ?? []) {
			if (CreateFile.is(change)) {
				const file = fileURLToPath(change.uri);
				if (!fs.existsSync(file) || !change.options?.ignoreIfExists) {
					fs.mkdirSync(path.dirname(file), { recursive: true });
					fs.writeFileSync(file, '');
				}
				await this.load(change.uri);
				continue;
			}
			if (!TextDocumentEdit.is(change)) {
				return { applied: false, failureReason: `the test editor does not do ${JSON.stringify(change)}` };
			}
			const doc = this.docs.get(change.textDocument.uri) ?? (await this.load(change.textDocument.uri));
			if (doc === undefined) {
				return { applied: false, failureReason: `${change.textDocument.uri} does not exist` };
			}
			if (change.textDocument.version !== null && change.textDocument.version !== doc.version) {
				return { applied: false, failureReason: `version ${change.textDocument.version} of ${doc.uri}, open at ${doc.version}` };
			}
			const plain = change.edits.filter((e): e is TextEdit => TextEdit.is(e));
			if (plain.length !== change.edits.length) {
				return { applied: false, failureReason: 'the test editor does not do snippet edits' };
			}
			edits.push({ doc, edits: plain });
		}
		for (const [uri, list] of Object.entries(p.edit.changes ?? {})) {
			const doc = this.docs.get(uri) ?? (await this.load(uri));
			if (doc === undefined) {
				return { applied: false, failureReason: `${uri} does not exist` };
			}
			edits.push({ doc, edits: list });
		}
		for (const { doc, edits: list } of edits) {
			// Back to front, so each edit's range is still where the server
			// computed it; didChange sends them in that order.
			const sorted = [...list].sort((a, b) => offsetAt(doc.text, b.range.start) - offsetAt(doc.text, a.range.start));
			for (const e of sorted) {
				doc.text = doc.text.slice(0, offsetAt(doc.text, e.range.start)) + e.newText + doc.text.slice(offsetAt(doc.text, e.range.end));
			}
			doc.version++;
			doc.dirty = true;
			const change: DidChangeTextDocumentParams = {
				textDocument: { uri: doc.uri, version: doc.version },
				contentChanges: sorted.map((e) => ({ range: e.range, text: e.newText })),
			};
			await this.conn.sendNotification(DidChangeTextDocumentNotification.type, change);
		}
		return { applied: true };
	}

	/** Loads a file that is not open into a document, as VS Code does for
	 * a workspace edit, and opens it to the server; undefined when there is
	 * no such file. */
	private async load(uri: string): Promise<OpenDocument | undefined> {
		const file = fileURLToPath(uri);
		if (!fs.existsSync(file)) {
			return undefined;
		}
		const ext = path.extname(file).slice(1);
		const doc = await this.open(file, ext === 'go' ? 'go' : 'plaintext');
		this.loaded.push(uri);
		return doc;
	}

	/** The editor side of SaveAfterEdit: buffers saved to disk with didSave. */
	private editorHost(root: string): SaveAfterEditHost {
		return {
			key: (uri) => uri,
			isDirty: (uri) => this.docs.get(uri)?.dirty === true,
			save: async (uri) => {
				const doc = this.docs.get(uri);
				if (doc === undefined) {
					return false;
				}
				fs.writeFileSync(doc.path, doc.text);
				doc.dirty = false;
				this.saved.push(uri);
				await this.conn.sendNotification(DidSaveTextDocumentNotification.type, { textDocument: { uri } });
				return true;
			},
			label: (uri) => path.relative(root, fileURLToPath(uri)).split(path.sep).join('/'),
			warn: (uri, message) => this.record(() => this.warnings.push({ uri, message })),
		};
	}

	private race<T>(p: Promise<T>, what: string, ms: number): Promise<T> {
		return new Promise<T>((resolve, reject) => {
			const timer = setTimeout(() => reject(new Error(`hang guard: no answer to ${what}`)), ms);
			void this.exited.then((code) => {
				clearTimeout(timer);
				reject(new Error(`server exited (${code}) before answering ${what}`));
			});
			p.then(
				(v) => {
					clearTimeout(timer);
					resolve(v);
				},
				(e: unknown) => {
					clearTimeout(timer);
					reject(e instanceof Error ? e : new Error(String(e)));
				},
			);
		});
	}
}
