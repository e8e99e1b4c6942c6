// When the chat view is told to focus its input. No 'vscode' import:
// unit-tested in plain node.

/** Whether a focus for the chat's input can be sent to the view now, or
 * must wait until the view says it is ready.
 *
 * A webview loses what is posted to it before its script listens: VS Code
 * holds messages while the page loads, but hands them to the page at the
 * latest 200 ms after writing its content, whether the page's script has
 * run by then or not (on a loaded machine it often has not). All else the
 * chat shows is sent again when the view says it is ready; a focus asked
 * for before that is held and sent then. */
export class FocusGate {
	private listening = false;
	private held = false;

	/** The view's page is (re)loading: what it is sent may be lost until
	 * ready(). A focus already held stays held. */
	loading(): void {
		this.listening = false;
	}

	/** Focus is asked for. True: send it now. False: it is held until the
	 * view is ready. */
	request(): boolean {
		if (this.listening) {
			return true;
		}
		this.held = true;
		return false;
	}

	/** The view listens now. True when a focus was held for it: send it. */
	ready(): boolean {
		this.listening = true;
		const held = this.held;
		this.held = false;
		return held;
	}
}
