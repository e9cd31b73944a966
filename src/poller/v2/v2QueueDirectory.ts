import { repositoryKey } from '../../config/repositoryKey.js';
import { DEFAULT_DISCOVERY_MAX_TARGETS } from '../../config/schema.js';
import type { V2PageBound } from '../../trunk/v2Client.js';
import { V2_MAX_PAGES } from '../../trunk/v2Paging.js';
import { V2_MAX_LIMIT, type V2MergeQueue } from '../../trunk/v2Schemas.js';
import { isOverlong } from '../../trunk/labelText.js';
import { SharedRead, type SharedReadTiming } from '../sharedRead.js';
import type { ReadOptions } from '../readOptions.js';

/** The v2 reads the directory makes. */
export interface V2QueueLister {
  listMergeQueues(options?: ReadOptions, bound?: V2PageBound): Promise<V2MergeQueue[]>;
}

/**
 * The pages of the organization's list of merge queues a read takes at most with discovery on:
 * those of `maxTargets` queues (of 10,000 at least) at 100 a page, and a tenth more, at most
 * V2_MAX_PAGES. A walk holds every queue until it ends, and discovery keeps
 * `maxTargets` of them: an endless list is not read to 1,000 pages for 10,000 targets. The tenth
 * more is for queues no discovered target is made of (configured ones, another repository's or
 * branch's, no `host/owner/name`); never fewer than 10,000 queues' pages, since discovery's globs
 * choose after the walk, and a small `maxTargets` does not make the organization's list short.
 */
export function queueListPageBound(maxTargets: number): V2PageBound {
  const pages = Math.ceil(Math.max(maxTargets, DEFAULT_DISCOVERY_MAX_TARGETS) / V2_MAX_LIMIT);
  const wanted = pages + Math.ceil(pages / 10);
  if (wanted >= V2_MAX_PAGES) {
    return {
      pages: V2_MAX_PAGES,
      why: `the list is read to ${String(V2_MAX_PAGES * V2_MAX_LIMIT)} queues at most, as every v2 list`,
    };
  }
  return {
    pages: wanted,
    why:
      `with discovery on the list is read to ${String(wanted * V2_MAX_LIMIT)} queues at most: ` +
      `discovery.maxTargets (${String(maxTargets)}), at least ` +
      `${String(DEFAULT_DISCOVERY_MAX_TARGETS)}, and a tenth more; ` +
      'raise discovery.maxTargets to read a longer list',
  };
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
      /** The most pages a read of the list takes (queueListPageBound); V2_MAX_PAGES when absent. */
      readonly bound?: V2PageBound | undefined;
      /**
       * Told when the number of queues a read left out (no `host/owner/name` repository, or a
       * branch empty or too long to be a label) differs from the previous read's, with the first of them.
       */
      readonly onLeftOut?: (count: number, first: string) => void;
    } = {},
  ) {
    const timing = { maxAgeSeconds, staleAfterSeconds: options.staleAfterSeconds ?? 0 };
    this.#onLeftOut = options.onLeftOut;
    this.#maxAgeSeconds = maxAgeSeconds;
    this.#now = now ?? (() => Date.now() / 1000);
    this.#list = new SharedRead(
      this.#readWith(lister, options.bound),
      timing,
      this.#now,
      options.onFailure,
    );
  }

  readonly #now: () => number;
  #maxAgeSeconds: number;
  /** When a queue's 404 last had the list read again. */
  #notFoundReadAt = Number.NEGATIVE_INFINITY;

  readonly #onLeftOut: ((count: number, first: string) => void) | undefined;
  /** How many queues the last read left out: one line when it changes, not one per read. */
  #leftOut = 0;

  /**
   * Follows a reload: a new client, timing or bound of pages; what was read stays until it is due.
   */
  configure(lister: V2QueueLister, timing: SharedReadTiming, bound?: V2PageBound): void {
    this.#maxAgeSeconds = timing.maxAgeSeconds;
    this.#list.configure(this.#readWith(lister, bound), timing);
  }

  #readWith(
    lister: V2QueueLister,
    bound: V2PageBound | undefined,
  ): (options: ReadOptions) => Promise<QueueList> {
    const read = readWith(lister, bound);
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

  /**
   * A queue's id answered 404 (deleted, or re-created under another id): the next find() reads the
   * list again, at most once per interval however many queues answer so (true when it will), since
   * every queue's 404 would otherwise cost a walk of the organization's list per poll.
   */
  queueNotFound(): boolean {
    const now = this.#now();
    if (now - this.#notFoundReadAt < this.#maxAgeSeconds) return false;
    this.#notFoundReadAt = now;
    this.invalidate();
    return true;
  }

  /** The last list read successfully, each queue with its repo and branch; empty before the first. */
  latest(): readonly (V2QueueKey & { readonly queue: V2MergeQueue })[] {
    return this.#list.latest()?.named ?? [];
  }
}

function readWith(
  lister: V2QueueLister,
  bound: V2PageBound | undefined,
): (options: ReadOptions) => Promise<QueueList> {
  return async (options) => {
    const byKey = new Map<string, V2MergeQueue>();
    const named: (V2QueueKey & { readonly queue: V2MergeQueue })[] = [];
    let leftOut = 0;
    let first = '';
    for (const queue of latestById(await lister.listMergeQueues(options, bound))) {
      const repo = repoNameOfUrl(queue.repositoryUrl);
      // The branch becomes the `branch` label: an empty one is no label to Prometheus (the
      // definition sets no minLength), and git's refs are far shorter than 1,000 characters.
      if (
        repo === undefined ||
        queue.targetBranch === '' ||
        queue.targetBranch.length > MAX_BRANCH_LENGTH
      ) {
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

/**
 * Each queue once by its id ("Ids never change"): a list that moves while it is walked may list a
 * queue on two pages, which would count it twice in the organization's size (the API budget). The
 * later page is the newer read of its state and settings, kept in the place of its first.
 */
function latestById(queues: readonly V2MergeQueue[]): V2MergeQueue[] {
  const byId = new Map<string, V2MergeQueue>();
  for (const queue of queues) byId.set(queue.id, queue);
  return byId.size === queues.length ? [...queues] : [...byId.values()];
}
