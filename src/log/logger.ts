import { Writable } from 'node:stream';
import { pino, type Logger, type LevelWithSilent } from 'pino';
import { redactUrlCredentials } from '../secrets/redactUrlCredentials.js';
import { scrubSecrets } from '../secrets/scrubSecrets.js';

export type { Logger } from 'pino';

/** Log levels accepted by `--log-level`. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** Where the logger gets the secrets to scrub; read per line so a rotated token is covered too. */
export type SecretSource = () => readonly string[];

interface LoggerOptions {
  readonly level: LevelWithSilent;
  readonly secrets: SecretSource;
  /** Defaults to standard output. */
  readonly destination?: NodeJS.WritableStream;
}

/**
 * A pino JSON logger whose every line passes through a scrubber: key-based redaction cannot know
 * where a token might end up (an error message, a URL, a body excerpt), so the bytes are checked.
 */
export function createLogger(options: LoggerOptions): Logger {
  const destination = options.destination ?? process.stdout;
  // A line that cannot be written (standard output closed by its reader, such as a log collector
  // that restarted) is dropped: the exporter keeps serving metrics rather than dying with its log.
  if (destination.listenerCount('error') === 0) destination.on('error', dropLine);
  const scrubbing = new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      const line = redactUrlCredentials(scrubSecrets(chunk.toString(), options.secrets()));
      destination.write(line, () => {
        callback();
      });
    },
  });
  return pino(
    {
      level: options.level,
      base: { name: 'trunk-exporter' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: ['token', '*.token', 'headers["x-api-token"]', '*.headers["x-api-token"]'],
        censor: '<redacted>',
      },
    },
    scrubbing,
  );
}

function dropLine(): void {
  // Nowhere left to report it.
}

/** A logger that drops everything, for tests and library callers that do not log. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
