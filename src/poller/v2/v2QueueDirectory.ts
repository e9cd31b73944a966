import { repositoryKey } from '../../config/repositoryKey.js';
import type { V2MergeQueue } from '../../trunk/v2Schemas.js';
import { isOverlong } from '../../trunk/labelText.js';
import { SharedRead, type SharedReadTiming } from '../sharedRead.js';
import type { ReadOptions } from '../readOptions.js';

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
  // Owner and name become the `repo` label: past MAX_LABEL_TEXT_LENGTH each, no repository's.
  if (parts.length !== 2 || url.host === '' || parts.some(isOverlong)) return undefined;
  return `${url.host}/${parts.join('/')}`;
}

/** The longest target branch a discovered queue may have (a branch label value). */
const MAX_BRANCH_LENGTH = 1_000;

/** One repository and branch however the repository's name is cased (repositoryKey). */
function keyOf(repo: string, branch: string): string {
  return `${repositoryKey(repo)}\u0000${branch}`;
}

/** The organization's queues as read: by key, each with its repo as Trunk spells it. */
interface QueueList {
  readonly byKey: ReadonlyMap<string, V2MergeQueue>;
  readonly named: readonly (V2QueueKey & { readonly queue: V2MergeQueue })[];
  /** Queues no target can be made of, and the first of them (its id). */
  readonly leftOut: { readonly count: number; readonly first: string };
}

/**
 * Every merge queue of the organization from `GET /v2/merge-queues`, read at most once per
 * merge-queue interval however many queue polls ask (SharedRead: a failed read too): each queue's
 * id, state and settings for a cycle cost a share of one walk instead of a call per queue. While
 * reads fail, polls go on with the last list read until it is older than `staleAfterSeconds`.
 */
export class V2QueueDirectory {
  readonly #list: SharedRead<QueueList>;

  constructor(
    lister: V2QueueLister,
    maxAgeSeconds: number,
    now?: () => number,
    options: {
      /** How long the last list outlives failed reads; 0 (the default) not at all. */
      readonly staleAfterSeconds?: number;
      /** Told of each failed read, once. */
      readonly onFailure?: (error: Error) => void;
      /**
       * Told when the number of queues a read left out (no `host/owner/name` repository, or a
       * branch too long to be a label) differs from the previous read's, with the first of them.
       */
      readonly onLeftOut?: (count: number, first: string) => void;
    } = {},
  ) {
    const timing = { maxAgeSeconds, staleAfterSeconds: options.staleAfterSeconds ?? 0 };
    this.#onLeftOut = options.onLeftOut;
    this.#list = new SharedRead(this.#readWith(lister), timing, now, options.onFailure);
  }

  readonly #onLeftOut: ((count: number, first: string) => void) | undefined;
  /** How many queues the last read left out: one line when it changes, not one per read. */
  #leftOut = 0;

  /** Follows a reload: a new client or timing; what was read stays until it is due. */
  configure(lister: V2QueueLister, timing: SharedReadTiming): void {
    this.#list.configure(this.#readWith(lister), timing);
  }

  #readWith(lister: V2QueueLister): (options: ReadOptions) => Promise<QueueList> {
    const read = readWith(lister);
    return async (options) => {
      const list = await read(options);
      if (list.leftOut.count !== this.#leftOut) {
        this.#leftOut = list.leftOut.count;
        if (list.leftOut.count > 0) this.#onLeftOut?.(list.leftOut.count, list.leftOut.first);
      }
      return list;
    };
  }

  /**
   * The queue of (repo, branch), the repository compared without regard to letter case; undefined
   * when Trunk lists none. Reads the list when due; fails when no list younger than
   * staleAfterSeconds was read.
   */
  async find(key: V2QueueKey, options: ReadOptions = {}): Promise<V2MergeQueue | undefined> {
    const { value } = await this.#list.get(options);
    return value.byKey.get(keyOf(key.repo, key.branch));
  }

  /**
   * Reads the list when due; fails with the error of the latest read when it failed (latest()
   * still gives the last good list).
   */
  async refresh(options: ReadOptions = {}): Promise<void> {
    const { failure } = await this.#list.get(options);
    if (failure !== undefined) throw failure;
  }

  /**
   * The list is out of date (a queue id answered 404, or the credentials changed): the next find()
   * reads it again (once, however many ask).
   */
  invalidate(): void {
    this.#list.invalidate();
  }

  /** The last list read successfully, each queue with its repo and branch; empty before the first. */
  latest(): readonly (V2QueueKey & { readonly queue: V2MergeQueue })[] {
    return this.#list.latest()?.named ?? [];
  }
}

function readWith(lister: V2QueueLister): (options: ReadOptions) => Promise<QueueList> {
  return async (options) => {
    const byKey = new Map<string, V2MergeQueue>();
    const named: (V2QueueKey & { readonly queue: V2MergeQueue })[] = [];
    let leftOut = 0;
    let first = '';
    for (const queue of await lister.listMergeQueues(options)) {
      const repo = repoNameOfUrl(queue.repositoryUrl);
      // The branch becomes the `branch` label; git's refs are far shorter than 1,000 characters.
      if (repo === undefined || queue.targetBranch.length > MAX_BRANCH_LENGTH) {
        if (leftOut === 0) first = queue.id.slice(0, 100);
        leftOut += 1;
        continue;
      }
      // Two queues for one repository and branch (Trunk keeps one): the smaller id is polled, so
      // a list whose order changes does not switch the target's polls from one to the other.
      const key = keyOf(repo, queue.targetBranch);
      const listed = byKey.get(key);
      if (listed !== undefined && listed.id < queue.id) continue;
      byKey.set(key, queue);
      named.push({ repo, branch: queue.targetBranch, queue });
    }
    return { byKey, named, leftOut: { count: leftOut, first } };
  };
}
