import { Mem01Error } from '@mem01/engine';

/**
 * A run config from {@link MemSession.runConfig} was used for a second run, or for two runs at once.
 * Each run needs a fresh `session.runConfig()`: the config holds that run's recall query and cached block.
 */
export class RunConfigReusedError extends Mem01Error {
  constructor() {
    super(
      'run_config_reused',
      'this run config was already used by another run; call session.runConfig() again for every run',
    );
  }
}
