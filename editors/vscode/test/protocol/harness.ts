// A small LSP client for the protocol test: it starts the real reika-lsp
// binary over stdio and drives it with vscode-jsonrpc and
// vscode-languageserver-protocol, the libraries the extension itself uses,
// recording everything the server sends.

import { ChildProcess, execFile, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { createMessageConnection, MessageConnection, StreamMessageReader, StreamMessageWriter } from 'vscode-jsonrpc/node';
import {
	ApplyWorkspaceEditRequest,
	ConfigurationRequest,
	ExitNotification,
	InitializedNotification,
	InitializeParams,
	InitializeRequest,
	InitializeResult,
	LogMessageNotification,
	MessageActionItem,
	ProgressToken,
	RegistrationRequest,
	ShowMessageNotification,
	ShowMessageParams,
	ShowMessageRequest,
	ShowMessageRequestParams,
	ShutdownRequest,
	UnregistrationRequest,
	WorkDoneProgressBegin,
	WorkDoneProgressCreateRequest,
	WorkDoneProgressEnd,
	WorkDoneProgressReport,
} from 'vscode-languageserver-protocol/node';
import { parseStatus } from '../../src/chip';
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

/** A reason to skip: the part of the system the test needs is not there. */
export class Unavailable extends Error {}

function run(cmd: string, args: string[], cwd: string): Promise<{ code: number; out: string }> {
	return new Promise((resolve) => {
		execFile(cmd, args, { cwd, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
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
	const r = await run('go', ['build', '-o', bin, './cmd/reika-lsp'], repoRoot).catch(() => ({ code: 127, out: '' }));
	if (r.code !== 0) {
		throw new Unavailable(`REIKA_LSP_BIN is not set and go build ./cmd/reika-lsp failed:\n${r.out}`);
	}
	return bin;
}

export interface FakeEngine {
	url: string;
	stop(): void;
}

export const fakeEnginePkg = './agent/enginetest/cmd/fakeengine';

/** Builds and starts the standalone fake engine; its first stdout line is
 * its base URL. */
export async function startFakeEngine(scratch: string, args: string[]): Promise<FakeEngine> {
	if (!fs.existsSync(path.join(repoRoot, fakeEnginePkg))) {
		throw new Unavailable(`the fake engine (${fakeEnginePkg}) is not in this tree`);
	}
	const bin = path.join(scratch, process.platform === 'win32' ? 'fakeengine.exe' : 'fakeengine');
	const built = await run('go', ['build', '-o', bin, fakeEnginePkg], repoRoot);
	if (built.code !== 0) {
		throw new Error(`go build ${fakeEnginePkg} failed:\n${built.out}`);
	}
	const proc = spawn(bin, ['-addr', '127.0.0.1:0', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
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
		this.proc = spawn(bin, ['serve'], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
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
		this.conn.onRequest(ApplyWorkspaceEditRequest.type, () => ({
			applied: false,
			failureReason: 'the test client does not apply edits',
		}));
		this.conn.listen();
	}

	/** initialize + initialized. Throws Unavailable when the binary does not
	 * serve LSP (it exits, answers with an error, or stays silent). */
	async initialize(params: InitializeParams): Promise<InitializeResult> {
		let result: InitializeResult;
		try {
			result = await this.race(this.conn.sendRequest(InitializeRequest.type, params), 'initialize', 30_000);
		} catch (e) {
			const msg = e instanceof Error ? e.message : String(e);
			throw new Unavailable(`reika-lsp does not serve LSP yet (initialize: ${msg}); stderr:\n${this.stderr.slice(-2000)}`);
		}
		await this.conn.sendNotification(InitializedNotification.type, {});
		return result;
	}

	execute<C extends ServerCommand>(
		command: C,
		args: CommandSignatures[C]['args'],
		workDoneToken?: ProgressToken,
	): Promise<CommandSignatures[C]['result']> {
		return this.race(
			this.conn.sendRequest(executeCommandType(command), executeCommandParams(command, args, workDoneToken)),
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
