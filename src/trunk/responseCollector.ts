import type { Dispatcher } from 'undici';

/**
 * A response's headers as undici gives them: a header sent on several lines arrives as a list,
 * whatever its name (node:http's type says a string for the ones it knows, such as
 * Content-Encoding, which an edge may send twice).
 */
export type IncomingHttpHeaders = Readonly<Record<string, string | readonly string[] | undefined>>;

/** One response as read off the wire. */
export interface CollectedResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  /** The whole body of a 2xx; at most about `maxErrorBodyBytes` of any other ("" if it failed). */
  readonly text: string;
}

/** Told the final status and headers as they arrive, before any of the body (a 429's Retry-After). */
export type FinalStatusListener = (status: number, headers: IncomingHttpHeaders) => void;

/** A 2xx body (announced or read so far) larger than the cap: the exchange ends unread. */
export class ResponseTooLargeError extends Error {
  constructor(readonly maxBodyBytes: number) {
    super(`response body larger than ${maxBodyBytes} bytes`);
    this.name = 'ResponseTooLargeError';
  }
}

/**
 * An undici dispatch handler that gathers one response into a string. Used instead of
 * `request()`, whose body is a stream with its own promise, buffers and events per response: at a
 * thousand calls a second that machinery was a tenth of the client's CPU, and more of its garbage.
 *
 * `done` settles once: with the response, or with the error that ended the exchange. `abort()` ends
 * it at once, even while the request still waits for a connection. A 2xx body over `maxBodyBytes`
 * ends it with a ResponseTooLargeError as soon as its Content-Length or its bytes so far say so.
 */
export class ResponseCollector implements Dispatcher.DispatchHandler {
  readonly done: Promise<CollectedResponse>;
  /** The response headers once they have arrived, for the request id of a later failure. */
  headers: IncomingHttpHeaders | undefined;
  readonly #maxErrorBodyBytes: number;
  readonly #maxBodyBytes: number;
  readonly #onFinalStatus: FinalStatusListener | undefined;
  #resolve: (response: CollectedResponse) => void = () => undefined;
  #reject: (error: unknown) => void = () => undefined;
  #status = 0;
  #chunks: Buffer[] = [];
  /** A 2xx body of announced length is copied into one buffer as it arrives: one copy, not two. */
  #whole: Buffer | undefined;
  #size = 0;
  #controller: Dispatcher.DispatchController | undefined;
  #abortReason: Error | undefined;
  #settled = false;

  constructor(
    maxErrorBodyBytes: number,
    maxBodyBytes = Number.POSITIVE_INFINITY,
    onFinalStatus?: FinalStatusListener,
  ) {
    this.#maxErrorBodyBytes = maxErrorBodyBytes;
    this.#maxBodyBytes = maxBodyBytes;
    this.#onFinalStatus = onFinalStatus;
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
    controller: Dispatcher.DispatchController,
    status: number,
    headers: IncomingHttpHeaders,
  ): void {
    // An informational answer (102, 103) is interim: the exchange goes on until the final status,
    // and one that ends before it is a network error or a timeout, not an error status.
    if (status < 200) return;
    this.#status = status;
    this.headers = headers;
    this.#onFinalStatus?.(status, headers);
    if (!this.#succeeded()) return;
    const announced = Number(headers['content-length']);
    if (!Number.isSafeInteger(announced) || announced < 0) return;
    // Refused before a byte of it is read; a server that lies about the length is caught below.
    if (announced > this.#maxBodyBytes) this.#tooLarge(controller);
    else if (announced > 0) this.#whole = Buffer.allocUnsafeSlow(announced);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#settled) return;
    const size = this.#size + chunk.length;
    if (this.#succeeded()) {
      if (size > this.#maxBodyBytes) {
        this.#tooLarge(controller);
        return;
      }
      if (this.#whole !== undefined && size <= this.#whole.length) {
        chunk.copy(this.#whole, this.#size);
        this.#size = size;
        return;
      }
      if (this.#whole !== undefined) {
        // More than announced: gathered as chunks from here on, still under the cap.
        this.#chunks.push(this.#whole.subarray(0, this.#size));
        this.#whole = undefined;
      }
    }
    this.#chunks.push(chunk);
    this.#size = size;
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

  #tooLarge(controller: Dispatcher.DispatchController): void {
    const error = new ResponseTooLargeError(this.#maxBodyBytes);
    // Rejected first: the status alone must not turn the refusal into a response.
    this.#settled = true;
    this.#chunks = [];
    this.#whole = undefined;
    this.#reject(error);
    controller.abort(error);
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
      this.#whole = undefined;
      this.#reject(error);
    }
  }

  #finish(text: string): void {
    if (this.#settled || this.headers === undefined) return;
    this.#settled = true;
    this.#chunks = [];
    this.#whole = undefined;
    this.#resolve({ status: this.#status, headers: this.headers, text });
  }

  /** The body as text; the bytes are let go before decoding, so at most one other copy is held. */
  #text(): string {
    let bytes: Buffer;
    if (this.#whole !== undefined) bytes = this.#whole.subarray(0, this.#size);
    else {
      const [only] = this.#chunks;
      bytes = this.#chunks.length === 1 && only !== undefined ? only : Buffer.concat(this.#chunks);
    }
    this.#chunks = [];
    this.#whole = undefined;
    const text = bytes.toString('utf8');
    // As undici's body.text(): a UTF-8 byte order mark is not part of the text.
    return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  }
}
