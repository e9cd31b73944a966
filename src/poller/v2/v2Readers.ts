import type { V2PullRequestLister } from './v2MergeQueuePoll.js';
import type { V2QueueDirectory } from './v2QueueDirectory.js';
import type { V2TestDirectory } from './v2TestDirectory.js';
import type { V2TestingResultLister } from './v2TestingResultsRead.js';
import type { V2VerificationRunLister } from './v2VerificationRunsRead.js';
import type { QueueEntryHistoryReads } from './v2QueueEntryHistoryRead.js';

/** What the API v2 sources read with: the client, and the organization-wide shared reads. */
export interface V2Readers {
  readonly reader: V2PullRequestLister & V2TestingResultLister & V2VerificationRunLister;
  readonly directory: V2QueueDirectory;
  readonly tests: V2TestDirectory;
  /** The organization's queue-entry history reads. */
  readonly history?: QueueEntryHistoryReads;
}
