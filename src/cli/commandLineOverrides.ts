import { ConfigError } from '../config/problems.js';
import type { ExporterConfig } from '../config/types.js';
import { shardingProblem } from '../sharding/shardAssignment.js';
import type { ShardFlags } from './arguments.js';
import { loadExporterConfig } from './checkConfig.js';

/** The flags of `trunk-exporter --config …` that override the file's keys of the same meaning. */
export interface CommandLineOverrides {
  readonly configPath: string;
  readonly port: number | undefined;
  readonly sharding: ShardFlags;
}

/**
 * Loads the configuration file with the command line's `--port` and `--shard`/`--total-shards`
 * merged over it: they win over the file at start and on every reload.
 */
export async function loadWithOverrides(flags: CommandLineOverrides): Promise<ExporterConfig> {
  const config = await loadExporterConfig(flags.configPath);
  const sharding = { ...config.sharding, ...flags.sharding };
  const shardingError = shardingProblem(sharding);
  if (shardingError !== undefined) {
    throw new ConfigError(flags.configPath, [
      {
        path: 'sharding',
        message: `${shardingError} (--shard/--total-shards override sharding in ${flags.configPath})`,
      },
    ]);
  }
  return {
    ...config,
    server: { ...config.server, port: flags.port ?? config.server.port },
    sharding,
  };
}
