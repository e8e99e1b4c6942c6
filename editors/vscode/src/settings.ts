// Settings mapping: VS Code's `reika.*` settings to the server's settings
// object (docs/design.md §5), sent as initializationOptions, on change and as the
// answer to workspace/configuration. No 'vscode' import: unit-tested in plain
// node.
//
// Only settings the user set are sent. The server ranks editor settings
// above REIKA_* variables and profiles, so sending a default would silently
// override a user's environment or profile.

import { SettingsSection } from './protocol';

export type SettingKind = 'string' | 'url' | 'envName' | 'count' | 'boolean' | 'approve' | 'cacheReuse';

/** The server's settings, in the order of docs/design.md §5 (agent.SettingNames). */
export const ServerSettings = [
	{ key: 'baseUrl', kind: 'url' },
	{ key: 'model', kind: 'string' },
	{ key: 'apiKeyEnv', kind: 'envName' },
	{ key: 'apiKeyFile', kind: 'string' },
	{ key: 'profile', kind: 'string' },
	{ key: 'contextWindow', kind: 'count' },
	{ key: 'minGenTokens', kind: 'count' },
	{ key: 'maxTokens', kind: 'count' },
	{ key: 'repoMapBudget', kind: 'count' },
	{ key: 'reasoningRounds', kind: 'count' },
	{ key: 'minimal', kind: 'boolean' },
	{ key: 'debug', kind: 'boolean' },
	{ key: 'approve', kind: 'approve' },
	{ key: 'modelsUrl', kind: 'url' },
	{ key: 'fetchAllowHosts', kind: 'string' },
	{ key: 'cacheReuse', kind: 'cacheReuse' },
	{ key: 'mode', kind: 'string' },
	{ key: 'engineRetry', kind: 'count' },
	{ key: 'mcpAllow', kind: 'string' },
] as const satisfies readonly { key: string; kind: SettingKind }[];

export type ServerSettingKey = (typeof ServerSettings)[number]['key'];

/** Settings of the extension itself, never sent to the server (it rejects
 * unknown keys). */
export const ExtensionSettings = {
	serverPath: 'serverPath',
	trace: 'trace.server',
	chatLocation: 'chatLocation',
} as const;

/** Changing these needs a server restart (the languageclient applies
 * trace.server by itself). */
export const RestartSettings: readonly string[] = [ExtensionSettings.serverPath];

export const ApproveModes = ['ask', 'edits', 'all'] as const;

/** The words cacheReuse takes besides a chunk size (agent/settings.go). */
export const CacheReuseWords = ['auto', 'off'] as const;

export type SettingValue = string | number | boolean;

/** The server's settings object: only the keys the user set. */
export type ServerSettingsObject = Partial<Record<ServerSettingKey, SettingValue>>;

/** What VS Code's WorkspaceConfiguration.inspect returns, in part. */
export interface Inspected {
	globalValue?: unknown;
	workspaceValue?: unknown;
	workspaceFolderValue?: unknown;
}

/** The value the user set at the most specific scope; undefined when the
 * setting is at its default. A null set at a scope (a cleared number field)
 * means unset there, and hides the values of wider scopes, as in VS Code. */
export function explicitValue(i: Inspected | undefined): unknown {
	if (i === undefined) {
		return undefined;
	}
	for (const v of [i.workspaceFolderValue, i.workspaceValue, i.globalValue]) {
		if (v !== undefined) {
			return v;
		}
	}
	return undefined;
}

export interface MappedSettings {
	settings: ServerSettingsObject;
	/** One line per setting that was set but could not be used. */
	problems: string[];
}

/** Converts one value; a string is a problem, undefined means unset. */
function convert(key: string, kind: SettingKind, v: unknown): { value?: SettingValue; problem?: string } {
	if (v === undefined || v === null) {
		return {};
	}
	const name = `reika.${key}`;
	switch (kind) {
		case 'string':
		case 'url':
		case 'envName': {
			if (typeof v !== 'string') {
				return { problem: `${name}: want a string, got ${JSON.stringify(v)}` };
			}
			const s = v.trim();
			if (s === '') {
				return {};
			}
			if (kind === 'url' && !/^https?:\/\/\S+$/i.test(s)) {
				return { problem: `${name}: want an http:// or https:// URL, got ${JSON.stringify(s)}` };
			}
			if (kind === 'envName' && !/^[A-Za-z_][A-Za-z0-9_]*$/.test(s)) {
				// Never echo it: it may be the key itself pasted by mistake.
				return {
					problem: `${name}: want the name of an environment variable (like OPENAI_API_KEY), not the key itself`,
				};
			}
			return { value: s };
		}
		case 'count': {
			let n = v;
			if (typeof n === 'string' && /^\s*\d+\s*$/.test(n)) {
				n = Number(n);
			}
			if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) {
				return { problem: `${name}: want a whole number ≥ 0, got ${JSON.stringify(v)}` };
			}
			return { value: n };
		}
		case 'boolean':
			if (typeof v !== 'boolean') {
				return { problem: `${name}: want true or false, got ${JSON.stringify(v)}` };
			}
			return { value: v };
		case 'approve':
			if (typeof v !== 'string' || !(ApproveModes as readonly string[]).includes(v)) {
				return { problem: `${name}: want one of ${ApproveModes.join(', ')}, got ${JSON.stringify(v)}` };
			}
			return { value: v };
		case 'cacheReuse':
			return cacheReuse(name, v);
	}
}

/** Converts cacheReuse as the server parses it: "auto" or "off" (any case),
 * or a chunk size of at least 1 token, as a number or its digits (sent as
 * a number). An empty string is unset, like the other strings. */
function cacheReuse(name: string, v: unknown): { value?: SettingValue; problem?: string } {
	const problem = `${name}: want auto, off or a chunk size in tokens (a whole number ≥ 1), got ${JSON.stringify(v)}`;
	let n = v;
	if (typeof v === 'string') {
		const s = v.trim().toLowerCase();
		if (s === '') {
			return {};
		}
		if ((CacheReuseWords as readonly string[]).includes(s)) {
			return { value: s };
		}
		if (!/^\d+$/.test(s)) {
			return { problem };
		}
		n = Number(s);
	}
	if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1) {
		return { problem };
	}
	return { value: n };
}

/** Maps the user's settings to the server's. read(key) returns the value the
 * user set for `reika.<key>`, or undefined (see explicitValue). Values that
 * cannot be used are left out and reported, so the server still starts. */
export function mapSettings(read: (key: ServerSettingKey) => unknown): MappedSettings {
	const settings: ServerSettingsObject = {};
	const problems: string[] = [];
	for (const { key, kind } of ServerSettings) {
		const { value, problem } = convert(key, kind, read(key));
		if (problem !== undefined) {
			problems.push(problem);
		} else if (value !== undefined) {
			settings[key] = value;
		}
	}
	return { settings, problems };
}

/** The initializationOptions of the server: `{ "reika": { ...settings } }`. */
export function initializationOptions(settings: ServerSettingsObject): { reika: ServerSettingsObject } {
	return { [SettingsSection]: { ...settings } } as { reika: ServerSettingsObject };
}

/** The params of workspace/didChangeConfiguration. */
export function didChangeConfigurationParams(settings: ServerSettingsObject): {
	settings: { reika: ServerSettingsObject };
} {
	return { settings: initializationOptions(settings) };
}

/** Answers one workspace/configuration item. Sections other than ours are
 * not ours to answer (handled false). */
export function configurationItem(
	section: string | null | undefined,
	settings: ServerSettingsObject,
): { handled: boolean; value: unknown } {
	if (section === undefined || section === null || section === '') {
		return { handled: true, value: initializationOptions(settings) };
	}
	if (section === SettingsSection) {
		return { handled: true, value: { ...settings } };
	}
	const prefix = `${SettingsSection}.`;
	if (section.startsWith(prefix)) {
		const key = section.slice(prefix.length);
		const known = ServerSettings.some((s) => s.key === key);
		return { handled: true, value: known ? (settings[key as ServerSettingKey] ?? null) : null };
	}
	return { handled: false, value: null };
}
