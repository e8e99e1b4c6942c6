import * as assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApplyWorkspaceEditParams, ApplyWorkspaceEditResult, ResponseError, WorkspaceEdit } from 'vscode-languageserver-protocol';
import { editedDocuments, SaveAfterEdit, SaveAfterEditHost, saveFailedMessage, unsavedEditMessage } from '../../src/editSave';

const range = { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } };

function edit(...uris: string[]): WorkspaceEdit {
	return {
		documentChanges: uris.map((uri) => ({ textDocument: { uri, version: 1 }, edits: [{ range, newText: 'x' }] })),
	};
}

function params(e: WorkspaceEdit): ApplyWorkspaceEditParams {
	return { label: 'Reika: write a.go', edit: e };
}

/** An editor of open documents: applying an edit makes them dirty, saving
 * makes them clean. Everything it is asked is logged in order. */
class FakeEditor implements SaveAfterEditHost {
	readonly dirty = new Map<string, boolean>();
	readonly log: string[] = [];
	readonly warnings: { uri: string; message: string }[] = [];
	saveResult: boolean | Error = true;

	key(uri: string): string {
		return uri.toLowerCase();
	}
	isDirty(uri: string): boolean {
		return this.dirty.get(uri) === true;
	}
	async save(uri: string): Promise<boolean> {
		this.log.push(`save ${uri}`);
		if (this.saveResult instanceof Error) {
			throw this.saveResult;
		}
		if (this.saveResult) {
			this.dirty.set(uri, false);
		}
		return this.saveResult;
	}
	label(uri: string): string {
		return uri.replace('file:///ws/', '');
	}
	warn(uri: string, message: string): void {
		this.log.push(`warn ${uri}`);
		this.warnings.push({ uri, message });
	}
	/** The languageclient's own handler: applies and marks dirty. */
	next = async (p: ApplyWorkspaceEditParams): Promise<ApplyWorkspaceEditResult | ResponseError<void>> => {
		this.log.push(`apply ${editedDocuments(p.edit).join(',')}`);
		for (const uri of editedDocuments(p.edit)) {
			this.dirty.set(uri, true);
		}
		return { applied: true };
	};
}

test('editedDocuments lists each text-edited document once, in order', () => {
	const e: WorkspaceEdit = {
		documentChanges: [
			{ kind: 'create', uri: 'file:///ws/new.go' },
			{ textDocument: { uri: 'file:///ws/b.go', version: 3 }, edits: [{ range, newText: 'b' }] },
			{ textDocument: { uri: 'file:///ws/a.go', version: null }, edits: [{ range, newText: 'a' }] },
			{ textDocument: { uri: 'file:///ws/b.go', version: 4 }, edits: [{ range, newText: 'b2' }] },
			{ textDocument: { uri: 'file:///ws/empty.go', version: 1 }, edits: [] },
			{ kind: 'delete', uri: 'file:///ws/old.go' },
		],
		changes: { 'file:///ws/c.go': [{ range, newText: 'c' }], 'file:///ws/a.go': [{ range, newText: 'a' }], 'file:///ws/none.go': [] },
	};
	assert.deepEqual(editedDocuments(e), ['file:///ws/b.go', 'file:///ws/a.go', 'file:///ws/c.go']);
	assert.deepEqual(editedDocuments({}), []);
});

test('a document without unsaved changes is saved before the server hears the edit applied', async () => {
	const ed = new FakeEditor();
	const s = new SaveAfterEdit(ed);
	const r = await s.apply(params(edit('file:///ws/a.go')), async (p) => {
		const res = await ed.next(p);
		ed.log.push('answered by the languageclient');
		return res;
	});
	assert.deepEqual(r, { applied: true });
	assert.deepEqual(ed.log, ['apply file:///ws/a.go', 'answered by the languageclient', 'save file:///ws/a.go']);
	assert.equal(ed.isDirty('file:///ws/a.go'), false);
	assert.deepEqual(ed.warnings, []);
});

test('a document with unsaved changes stays unsaved and the user is told once', async () => {
	const ed = new FakeEditor();
	ed.dirty.set('file:///ws/a.go', true);
	const s = new SaveAfterEdit(ed);
	for (let i = 0; i < 3; i++) {
		assert.deepEqual(await s.apply(params(edit('file:///ws/a.go')), ed.next), { applied: true });
	}
	assert.ok(!ed.log.some((l) => l.startsWith('save')), `saved the user's work: ${ed.log.join('; ')}`);
	assert.deepEqual(ed.warnings, [{ uri: 'file:///ws/a.go', message: unsavedEditMessage('a.go') }]);
	assert.equal(
		unsavedEditMessage('a.go'),
		'Reika edited a.go, which has unsaved changes: save it so commands see the edit.',
	);
	// Another spelling of the same document is the same document.
	ed.dirty.set('file:///ws/A.go', true);
	await s.apply(params(edit('file:///ws/A.go')), ed.next);
	assert.equal(ed.warnings.length, 1);

	// Once the user saved (or closed) it, a new edit of new unsaved changes
	// tells them again.
	s.forget(ed.key('file:///ws/a.go'));
	await s.apply(params(edit('file:///ws/a.go')), ed.next);
	assert.equal(ed.warnings.length, 2);
});

test('the state before the edit decides, per document', async () => {
	const ed = new FakeEditor();
	ed.dirty.set('file:///ws/dirty.go', true);
	const s = new SaveAfterEdit(ed);
	await s.apply(params(edit('file:///ws/clean.go', 'file:///ws/dirty.go', 'file:///ws/closed.go')), ed.next);
	assert.deepEqual(
		ed.log.filter((l) => !l.startsWith('apply')),
		['save file:///ws/clean.go', 'warn file:///ws/dirty.go', 'save file:///ws/closed.go'],
	);
	assert.equal(ed.isDirty('file:///ws/clean.go'), false);
	assert.equal(ed.isDirty('file:///ws/dirty.go'), true);
});

test('a refused edit is answered as it is and saves nothing', async () => {
	const ed = new FakeEditor();
	const s = new SaveAfterEdit(ed);
	const refused = await s.apply(params(edit('file:///ws/a.go')), async () => ({ applied: false, failureReason: 'version mismatch' }));
	assert.deepEqual(refused, { applied: false, failureReason: 'version mismatch' });
	const err = new ResponseError<void>(-32603, 'boom');
	assert.equal(await s.apply(params(edit('file:///ws/a.go')), async () => err), err);
	assert.deepEqual(ed.log, []);
});

test('a failed save is reported once, with the reason when there is one', async () => {
	const ed = new FakeEditor();
	const s = new SaveAfterEdit(ed);
	ed.saveResult = false;
	assert.deepEqual(await s.apply(params(edit('file:///ws/a.go')), ed.next), { applied: true });
	assert.deepEqual(ed.warnings, [{ uri: 'file:///ws/a.go', message: saveFailedMessage('a.go') }]);
	assert.equal(saveFailedMessage('a.go'), 'Reika edited a.go but could not save it: save it so commands see the edit.');

	ed.saveResult = new Error('EACCES: permission denied');
	await s.apply(params(edit('file:///ws/b.go')), ed.next);
	assert.equal(ed.warnings[1]?.message, 'Reika edited b.go but could not save it (EACCES: permission denied): save it so commands see the edit.');
});
