import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';

/** One response as read off the wire. */
export interface CollectedResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  /** The whole body of a 2xx; at most about `maxErrorBodyBytes` of any other ("" if it failed). */
  readonly text: string;
}

/**
 * An undici dispatch handler that gathers one response into a string. Used instead of
 * `request()`, whose body is a stream with its own promise, buffers and events per response: at a
 * thousand calls a second that machinery was a tenth of the client's CPU, and more of its garbage.
 *
 * `done` settles once: with the response, or with the error that ended the exchange. `abort()` ends
 * it at once, even while the request still waits for a connection.
 */
export class ResponseCollector implements Dispatcher.DispatchHandler {
  readonly done: Promise<CollectedResponse>;
  /** The response headers once they have arrived, for the request id of a later failure. */
  headers: IncomingHttpHeaders | undefined;
  readonly #maxErrorBodyBytes: number;
  #resolve: (response: CollectedResponse) => void = () => undefined;
  #reject: (error: unknown) => void = () => undefined;
  #status = 0;
  #chunks: Buffer[] = [];
  #size = 0;
  #controller: Dispatcher.DispatchController | undefined;
  #abortReason: Error | undefined;
  #settled = false;

  constructor(maxErrorBodyBytes: number) {
    this.#maxErrorBodyBytes = maxErrorBodyBytes;
    this.done = new Promise<CollectedResponse>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
  }

  /** Ends the exchange: `done` rejects with `reason`, or keeps an error status without its body. */
  abort(reason: Error): void {
    this.#abortReason ??= reason;
    this.#controller?.abort(reason);
    this.#fail(reason);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    if (this.#abortReason !== undefined) controller.abort(this.#abortReason);
  }

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    status: number,
    headers: IncomingHttpHeaders,
  ): void {
    this.#status = status;
    this.headers = headers;
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#settled) return;
    this.#chunks.push(chunk);
    this.#size += chunk.length;
    if (!this.#succeeded() && this.#size >= this.#maxErrorBodyBytes) {
      // Enough for the excerpt: aborting closes the connection instead of draining the rest.
      this.#finish(this.#text());
      controller.abort(new Error('error body read up to the excerpt size'));
    }
  }

  onResponseEnd(): void {
    this.#finish(this.#text());
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.#fail(error);
  }

  #succeeded(): boolean {
    return this.#status >= 200 && this.#status < 300;
  }

  #fail(error: unknown): void {
    // Once an error status has arrived, the status decides what happens next; a body that fails
    // mid-way only loses the excerpt.
    if (this.headers !== undefined && !this.#succeeded()) this.#finish('');
    else if (!this.#settled) {
      this.#settled = true;
      this.#chunks = [];
      this.#reject(error);
    }
  }

  #finish(text: string): void {
    if (this.#settled || this.headers === undefined) return;
    this.#settled = true;
    this.#chunks = [];
    this.#resolve({ status: this.#status, headers: this.headers, text });
  }

  #text(): string {
    const [only] = this.#chunks;
    const text =
      this.#chunks.length === 1 && only !== undefined
        ? only.toString('utf8')
        : Buffer.concat(this.#chunks).toString('utf8');
    // As undici's body.text(): a UTF-8 byte order mark is not part of the text.
    return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  }
}
