// Finding the reika-lsp binary. No 'vscode' import: unit-tested in plain
// node with an injected file system.

import * as path from 'node:path';

export interface ServerPathEnv {
	/** The reika.serverPath setting, '' when unset. */
	setting: string;
	platform: NodeJS.Platform;
	/** PATH (and PATHEXT on Windows). */
	env: Record<string, string | undefined>;
	home: string;
	/** The first workspace folder, for relative paths and ${workspaceFolder}. */
	workspaceFolder?: string;
	/** Where the extension is installed; a bundled binary lives in server/. */
	extensionPath: string;
	/** Reports whether p is an executable file. */
	isExecutable: (p: string) => boolean;
}

export type ServerPathSource = 'setting' | 'bundled' | 'PATH';

export type ServerPathResult =
	| { ok: true; path: string; source: ServerPathSource }
	| { ok: false; message: string; searched: string[] };

export const BinaryName = 'reika-lsp';

function exeNames(platform: NodeJS.Platform, env: Record<string, string | undefined>): string[] {
	if (platform !== 'win32') {
		return [BinaryName];
	}
	const exts = (env.PATHEXT ?? '.EXE;.CMD;.BAT').split(';').filter((e) => e !== '');
	return [`${BinaryName}.exe`, ...exts.map((e) => BinaryName + e.toLowerCase())].filter(
		(v, i, a) => a.indexOf(v) === i,
	);
}

/** Expands ~ and ${workspaceFolder}, and resolves a relative path against
 * the workspace folder. */
export function expandSetting(setting: string, e: Pick<ServerPathEnv, 'home' | 'workspaceFolder' | 'platform'>): string {
	const p = e.platform === 'win32' ? path.win32 : path.posix;
	let s = setting.trim();
	if (s.includes('${workspaceFolder}')) {
		s = s.split('${workspaceFolder}').join(e.workspaceFolder ?? '');
	}
	if (s === '~' || s.startsWith('~/') || (e.platform === 'win32' && s.startsWith('~\\'))) {
		s = p.join(e.home, s.slice(1));
	}
	if (!p.isAbsolute(s) && e.workspaceFolder !== undefined) {
		s = p.resolve(e.workspaceFolder, s);
	}
	return s;
}

/**
 * Finds the server: the reika.serverPath setting when set (a set path that
 * does not work is an error, never silently replaced), else a binary bundled
 * in the extension's server/ folder, else reika-lsp on PATH.
 */
export function resolveServerPath(e: ServerPathEnv): ServerPathResult {
	const p = e.platform === 'win32' ? path.win32 : path.posix;
	if (e.setting.trim() !== '') {
		const full = expandSetting(e.setting, e);
		if (e.isExecutable(full)) {
			return { ok: true, path: full, source: 'setting' };
		}
		return {
			ok: false,
			message: `reika.serverPath is set to ${full}, but that is not an executable file.`,
			searched: [full],
		};
	}
	const searched: string[] = [];
	for (const name of exeNames(e.platform, e.env)) {
		const bundled = p.join(e.extensionPath, 'server', name);
		searched.push(bundled);
		if (e.isExecutable(bundled)) {
			return { ok: true, path: bundled, source: 'bundled' };
		}
	}
	const dirs = (e.env.PATH ?? e.env.Path ?? '').split(e.platform === 'win32' ? ';' : ':').filter((d) => d !== '');
	for (const dir of dirs) {
		for (const name of exeNames(e.platform, e.env)) {
			const candidate = p.join(dir, name);
			searched.push(candidate);
			if (e.isExecutable(candidate)) {
				return { ok: true, path: candidate, source: 'PATH' };
			}
		}
	}
	return {
		ok: false,
		message: `${BinaryName} was not found: reika.serverPath is not set and ${BinaryName} is not on PATH.`,
		searched,
	};
}
