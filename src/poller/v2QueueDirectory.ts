import type { V2MergeQueue } from '../trunk/v2Schemas.js';
import type { ReadOptions } from './trunkReader.js';

/** The v2 reads the directory makes. */
export interface V2QueueLister {
  listMergeQueues(options?: ReadOptions): Promise<V2MergeQueue[]>;
}

/** `host/owner/name` and branch of a v2 queue, the same key a configured target has. */
export interface V2QueueKey {
  /** `host/owner/name`, the `repo` label value. */
  readonly repo: string;
  readonly branch: string;
}

/** `github.com/acme/web` from `https://github.com/acme/web`; undefined when it is not host/owner/name. */
export function repoNameOfUrl(repositoryUrl: string): string | undefined {
  let url: URL;
  try {
    url = new URL(repositoryUrl);
  } catch {
    return undefined;
  }
  const parts = url.pathname
    .replace(/\.git$/, '')
    .split('/')
    .filter((part) => part !== '');
  if (parts.length !== 2 || url.host === '') return undefined;
  return `${url.host}/${parts.join('/')}`;
}

/**
 * The options of a read that serves every target of the organization: without the asking poll's
 * signal, whose abort must not fail the others' (closing the client still ends it).
 */
export function sharedRead(options: ReadOptions): ReadOptions {
  return {
    ...(options.deadlineMs === undefined ? {} : { deadlineMs: options.deadlineMs }),
  };
}

function keyOf(repo: string, branch: string): string {
  return `${repo}\u0000${branch}`;
}

/**
 * Every merge queue of the organization from `GET /v2/merge-queues`, read at most once per
 * `maxAgeSeconds` however many queue polls ask (they share the read in progress): each queue's id,
 * state and settings for a cycle cost a share of one walk instead of a call per queue.
 */
export class V2QueueDirectory {
  #queues: ReadonlyMap<string, V2MergeQueue> | undefined;
  #readAt = Number.NEGATIVE_INFINITY;
  #reading: Promise<ReadonlyMap<string, V2MergeQueue>> | undefined;

  constructor(
    private lister: V2QueueLister,
    private maxAgeSeconds: number,
    private readonly now: () => number = () => Date.now() / 1000,
  ) {}

  /** Follows a reload: a new client or interval; what was read stays until it is due. */
  configure(lister: V2QueueLister, maxAgeSeconds: number): void {
    this.lister = lister;
    this.maxAgeSeconds = maxAgeSeconds;
  }

  /** The queue of (repo, branch); undefined when Trunk lists none. Reads the list when due. */
  async find(key: V2QueueKey, options: ReadOptions = {}): Promise<V2MergeQueue | undefined> {
    const queues = await this.queues(options);
    return queues.get(keyOf(key.repo, key.branch));
  }

  /** The whole list by `repo\0branch`, read again once it is older than maxAgeSeconds. */
  async queues(options: ReadOptions = {}): Promise<ReadonlyMap<string, V2MergeQueue>> {
    if (this.#queues !== undefined && this.now() - this.#readAt < this.maxAgeSeconds) {
      return this.#queues;
    }
    this.#reading ??= this.#read(options).finally(() => {
      this.#reading = undefined;
    });
    return this.#reading;
  }

  /** A queue id answered 404: the next find() reads the list again (once, however many ask). */
  invalidate(): void {
    this.#readAt = Number.NEGATIVE_INFINITY;
  }

  /** The last list read, with each queue's repo and branch; empty before the first read. */
  latest(): readonly (V2QueueKey & { readonly queue: V2MergeQueue })[] {
    return [...(this.#queues?.values() ?? [])].flatMap((queue) => {
      const repo = repoNameOfUrl(queue.repositoryUrl);
      return repo === undefined ? [] : [{ repo, branch: queue.targetBranch, queue }];
    });
  }

  async #read(options: ReadOptions): Promise<ReadonlyMap<string, V2MergeQueue>> {
    const list = await this.lister.listMergeQueues(sharedRead(options));
    const queues = new Map<string, V2MergeQueue>();
    for (const queue of list) {
      const repo = repoNameOfUrl(queue.repositoryUrl);
      if (repo !== undefined) queues.set(keyOf(repo, queue.targetBranch), queue);
    }
    this.#queues = queues;
    this.#readAt = this.now();
    return queues;
  }
}
